package tools

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

// storage reaches the page state of a tab's own site: its cookies (those
// the browser would send to the tab's URL, never the rest of the cookie
// jar) and its local and session storage.

const (
	// maxStorageValue bounds a value the agent stores: a cookie is
	// refused by browsers past 4 KiB anyway, and storage areas hold a few
	// MiB in all.
	maxStorageValue = 1 << 20
	// maxStorageShown bounds a storage answer; each local or session value
	// is cut at 10,000 characters in the page (page.js).
	maxStorageShown = 50_000
)

type storageArgs struct {
	TabID  int    `json:"tabId" jsonschema:"tab id"`
	Action string `json:"action" jsonschema:"what to do"`
	Area   string `json:"area" jsonschema:"where"`
	Name   string `json:"name,omitempty" jsonschema:"cookie or key (default: all)"`
	Value  string `json:"value,omitempty" jsonschema:"for set"`
}

func registerStorage(e *Engine) {
	define(e, Info{
		Name:        "storage",
		Description: "Read, set or clear the cookies, localStorage or sessionStorage of a tab's own site, e.g. to check a login or seed state.",
		Destructive: true, Mutating: true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "action", "get", "set", "clear")
		enum(s, "area", "cookies", "local", "session")
	}, runStorage)
}

func runStorage(ctx context.Context, c *call, in *storageArgs) (*Result, error) {
	if in.Action != "get" && in.Action != "set" && in.Action != "clear" {
		return nil, wire.Errorf(wire.CodeBadParams, "action must be get, set or clear")
	}
	if in.Action == "set" && in.Name == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "set needs a name")
	}
	if len(in.Value) > maxStorageValue {
		return nil, wire.Errorf(wire.CodeBadParams, "value is %d bytes; at most %d may be stored", len(in.Value), maxStorageValue)
	}
	a := accessRead
	if in.Action != "get" {
		a = accessAct
	}
	ts, _, err := c.page(ctx, in.TabID, a)
	if err != nil {
		return nil, err
	}
	// The page's own URL, asked now: the tab's listing may lag behind a
	// navigation, and cookies are scoped to where the tab really is.
	href, err := ts.helper(ctx, c.s.Label, "info", nil)
	if err != nil {
		return nil, err
	}
	if in.Action == "get" {
		c.observe(in.TabID, href)
	} else if err := c.guard(in.TabID, href); err != nil {
		return nil, err
	}
	switch in.Area {
	case "cookies":
		return c.cookies(ctx, in, href)
	case "local", "session":
		var rep struct {
			Origin  string  `json:"origin"`
			Items   [][]any `json:"items"`
			Total   int     `json:"total"`
			Removed int     `json:"removed"`
		}
		if _, err := ts.helper(ctx, c.s.Label, "storage", &rep, in.Area, in.Action, in.Name, in.Value, c.s.observed(in.TabID)); err != nil {
			return nil, err
		}
		area := in.Area + "Storage of " + rep.Origin
		switch in.Action {
		case "clear":
			return textResult(fmt.Sprintf("Removed %d key(s) from the %s; %d left.", rep.Removed, area, rep.Total)), nil
		case "set":
			return textResult(fmt.Sprintf("Stored %s in the %s (%d key(s) now).", in.Name, area, rep.Total)), nil
		}
		lines := []string{fmt.Sprintf("%d key(s) in the %s:", rep.Total, area)}
		if in.Name != "" && len(rep.Items) == 0 {
			lines = []string{fmt.Sprintf("No key %q in the %s (%d key(s) in all).", in.Name, area, rep.Total)}
		}
		for _, it := range rep.Items {
			if len(it) != 3 {
				continue
			}
			k, _ := it[0].(string)
			v, _ := it[1].(string)
			n, _ := it[2].(float64)
			line := k + " = " + v
			if int(n) > len([]rune(v)) {
				line += fmt.Sprintf(" [cut: %d characters in all]", int(n))
			}
			lines = append(lines, line)
		}
		if len(rep.Items) < rep.Total && in.Name == "" {
			lines = append(lines, fmt.Sprintf("[the first %d keys by name are shown]", len(rep.Items)))
		}
		return textResult(capLines(lines, maxStorageShown)...), nil
	}
	return nil, wire.Errorf(wire.CodeBadParams, "area must be cookies, local or session")
}

// cookie is the DevTools protocol's Network.Cookie.
type cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	Session  bool    `json:"session"`
	SameSite string  `json:"sameSite,omitempty"`
}

func (ck cookie) String() string {
	s := fmt.Sprintf("%s=%s; Domain=%s; Path=%s", ck.Name, ck.Value, ck.Domain, ck.Path)
	if !ck.Session && ck.Expires > 0 {
		s += "; Expires=" + time.Unix(int64(ck.Expires), 0).UTC().Format(time.RFC1123)
	}
	if ck.HTTPOnly {
		s += "; HttpOnly"
	}
	if ck.Secure {
		s += "; Secure"
	}
	if ck.SameSite != "" {
		s += "; SameSite=" + ck.SameSite
	}
	return s
}

// cookies answers the cookies area. Every command names the tab's own URL,
// so the browser scopes it to the cookies that URL would carry; with no
// URL, Network.getCookies would also return the cookies of the page's
// third-party frames.
func (c *call) cookies(ctx context.Context, in *storageArgs, href string) (*Result, error) {
	u, err := url.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, wire.Errorf(wire.CodeUnsupported, "tab %d is on %s, which has no cookies; cookies belong to http and https pages", in.TabID, truncate(href, 200))
	}
	site := u.Scheme + "://" + u.Host
	var got struct {
		Cookies []cookie `json:"cookies"`
	}
	list := func() error {
		return c.cdp(ctx, in.TabID, "Network.getCookies", map[string]any{"urls": []string{href}}, &got)
	}
	switch in.Action {
	case "set":
		// A session cookie for the whole site, as a page's own
		// document.cookie = "name=value; path=/" would set.
		const path = "/"
		p := map[string]any{"name": in.Name, "value": in.Value, "url": site + path, "path": path, "secure": u.Scheme == "https"}
		var res struct {
			Success *bool `json:"success"`
		}
		if err := c.cdp(ctx, in.TabID, "Network.setCookie", p, &res); err != nil {
			return nil, err
		}
		if res.Success != nil && !*res.Success {
			return nil, wire.Errorf(wire.CodeBadParams, "the browser refused the cookie %s for %s (a bad name, value or path?)", in.Name, site)
		}
		return textResult(fmt.Sprintf("Set cookie %s for %s%s.", in.Name, site, path)), nil
	case "clear":
		if err := list(); err != nil {
			return nil, err
		}
		n := 0
		for _, ck := range got.Cookies {
			if in.Name != "" && ck.Name != in.Name {
				continue
			}
			if err := c.cdp(ctx, in.TabID, "Network.deleteCookies", map[string]any{
				"name": ck.Name, "url": site + ck.Path, "domain": ck.Domain, "path": ck.Path,
			}, nil); err != nil {
				return nil, err
			}
			n++
		}
		return textResult(fmt.Sprintf("Deleted %d cookie(s) of %s.", n, href)), nil
	}
	if err := list(); err != nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("%d cookie(s) for %s:", len(got.Cookies), truncate(href, 300))}
	for _, ck := range got.Cookies {
		if in.Name != "" && ck.Name != in.Name {
			continue
		}
		lines = append(lines, ck.String())
	}
	if in.Name != "" && len(lines) == 1 {
		lines = []string{fmt.Sprintf("No cookie named %q for %s (%d other cookie(s)).", in.Name, truncate(href, 300), len(got.Cookies))}
	}
	return textResult(capLines(lines, maxStorageShown)...), nil
}

// capLines keeps lines up to about max bytes and says how many it left out.
func capLines(lines []string, max int) []string {
	n := 0
	for i, l := range lines {
		n += len(l) + 1
		if n > max {
			return append(lines[:i:i], fmt.Sprintf("[%d more line(s) not shown: the answer is capped at %d bytes]", len(lines)-i, max))
		}
	}
	return lines
}
