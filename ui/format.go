package ui

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/idna"
)

// untrusted makes text that came from a web page or a remote product safe to
// put in a label: control and format characters go (bidi overrides and
// zero-width characters are how a name pretends to be something else), runs
// of whitespace collapse to one space, and the result is cut to max runes.
func untrusted(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r), unicode.In(r, unicode.Cf), r == unicode.ReplacementChar:
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return truncate(b.String(), max)
}

// punycodeURL shows a URL or origin with its host in ASCII: a host spelled
// with look-alike letters (bаnk.example with a Cyrillic а) appears as the
// punycode it is (xn--bnk-6cd.example), never as the name it imitates. Text
// that is no URL with a host is shown as untrusted text.
func punycodeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return untrusted(s, 0)
	}
	host := u.Hostname()
	if !strings.Contains(host, ":") { // an IPv6 literal is ASCII already
		a, err := idna.Punycode.ToASCII(host)
		if err != nil {
			return untrusted(s, 0)
		}
		host = a
	}
	if port := u.Port(); port != "" {
		u.Host = host + ":" + port
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	} else {
		u.Host = host
	}
	return untrusted(u.String(), 0)
}

// truncate cuts s to at most max runes, marking the cut with an ellipsis.
func truncate(s string, max int) string {
	if max <= 0 {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return strings.TrimRightFunc(string(r[:max-1]), unicode.IsSpace) + "…"
}

// plural formats a count with its noun: "1 agent", "3 agents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func transportName(t string) string {
	switch strings.ToLower(t) {
	case "sse", "sse+http", "http":
		return "SSE + HTTP"
	case "ws", "websocket":
		return "WebSocket"
	case "":
		return "unknown"
	}
	return untrusted(t, 24)
}

func engineName(e string) string {
	switch e {
	case EngineChromium:
		return "Chromium"
	case EngineFirefox:
		return "Firefox"
	}
	return "Unknown engine"
}

// clock formats a time of day; earlier days get a date too.
func clock(t, now time.Time) string {
	t = t.Local()
	now = now.Local()
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	if t.Year() == now.Year() {
		return t.Format("Jan 2 15:04")
	}
	return t.Format("Jan 2 2006 15:04")
}

func lastSeen(connected bool, seen, now time.Time) string {
	switch {
	case connected:
		return "connected"
	case seen.IsZero():
		return "never connected"
	}
	return "last seen " + clock(seen, now)
}

func duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1 ms"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}
