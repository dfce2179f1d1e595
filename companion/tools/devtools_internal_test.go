package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestURLMatcher(t *testing.T) {
	for _, c := range []struct {
		pattern, url string
		want         bool
	}{
		{"/api/order", "http://127.0.0.1:1/api/order?x=1", true},
		{"/dt/api?", "http://127.0.0.1:1/dt/apipage", false}, // not a regexp: ? is text
		{"/dt/api?", "http://127.0.0.1:1/dt/api?code=1", true},
		{"a.b", "http://axb/", false},
		{`/orders/\d+$/`, "http://h/orders/42", true},
		{`/orders/\d+$/`, "http://h/orders/x", false},
		{"/(/", "http://h/(/", true}, // not a valid regexp: text
		{"view=settings", "http://a.test/spa?view=settings", true},
		{"view=settings", "http://a.test/spa?view=orders", false},
		{"*/checkout", "http://a.test/task-slow/checkout", true}, // '*' spans '/'
		{"*/checkout", "http://a.test/checkout/done", false},     // the whole URL
		{"http://a.test/*/42", "http://a.test/wait/route/42", true},
		{"http://a.test/*/42", "http://b.test/wait/route/42", false},
		{"*", "anything", true},
		{"a*b*b", "ab", false},
		{"a*b*b", "abxb", true},
		{"*route*", "http://a.test/wait/route/42", true},
	} {
		if got := urlMatcher(c.pattern)(c.url); got != c.want {
			t.Errorf("urlMatcher(%q)(%q) = %v", c.pattern, c.url, got)
		}
	}
}

func TestCookieDomainMatching(t *testing.T) {
	for _, c := range []struct {
		host, domain string
		want         bool
	}{
		{"a.example.com", ".example.com", true},
		{"example.com", "example.com", true},
		{"badexample.com", "example.com", false},
		{"example.com", "a.example.com", false},
		{"", "example.com", false},
		{"example.com", "", false},
	} {
		if got := domainMatches(c.host, c.domain); got != c.want {
			t.Errorf("domainMatches(%q, %q) = %v", c.host, c.domain, got)
		}
	}
	if !sameCookieSite("http://127.0.0.1:1/x", "https://127.0.0.1:9/") || sameCookieSite("http://localhost/", "http://127.0.0.1/") || sameCookieSite("file:///etc/passwd", "file:///etc/") {
		t.Error("sameCookieSite")
	}
}

func TestDevtoolsBounds(t *testing.T) {
	// Headers: each way cut at maxNetHeaderBytes, with a marker.
	big := map[string]string{}
	for i := range 100 {
		big[fmt.Sprintf("X-Header-%03d", i)] = strings.Repeat("v", 200)
	}
	raw, _ := json.Marshal(big)
	h := headerText(raw)
	if len(h) > maxNetHeaderBytes+len("…") || !strings.HasSuffix(h, "…") || !strings.HasPrefix(h, "X-Header-000: vvv") {
		t.Fatalf("headers: %d bytes, ends %q", len(h), h[max(0, len(h)-20):])
	}
	// Stacks: at most maxStackFrames frames and a line for the rest.
	var st stackTrace
	for i := range 12 {
		st.CallFrames = append(st.CallFrames, struct {
			Function string `json:"functionName"`
			URL      string `json:"url"`
			Line     int    `json:"lineNumber"`
			Column   int    `json:"columnNumber"`
		}{fmt.Sprint("f", i), "http://h/a.js", i, 0})
	}
	frames := st.frames()
	if len(frames) != maxStackFrames+1 || frames[0] != "f0 (http://h/a.js:1:1)" || frames[maxStackFrames] != "… 4 more frames" {
		t.Fatalf("frames %q", frames)
	}
	// Storage answers: capped at a byte count, saying how much was left out.
	var lines []string
	for i := range 100 {
		lines = append(lines, strings.Repeat("k", 1000)+fmt.Sprint(i))
	}
	capped := capLines(lines, maxStorageShown)
	n := 0
	for _, l := range capped {
		n += len(l) + 1
	}
	if n > maxStorageShown+200 || !strings.Contains(capped[len(capped)-1], "more line(s) not shown") {
		t.Fatalf("capLines kept %d bytes, last %q", n, capped[len(capped)-1])
	}
}
