package tools

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/reinshq/reins/companion/wire"
)

type navigateArgs struct {
	URL   string `json:"url" jsonschema:"URL (https:// added without a scheme), or \"back\" or \"forward\""`
	TabID int    `json:"tabId" jsonschema:"tab id"`
}

func registerNavigate(e *Engine) {
	define(e, Info{
		Name: "navigate",
		Description: "Load a URL in a tab, or go \"back\"/\"forward\" in its history, and wait for the page to load. " +
			"Browser-internal pages, extension pages and web stores are refused.",
		Destructive: true, Mutating: true, Batchable: true,
	}, nil, runNavigate)
}

func runNavigate(ctx context.Context, c *call, in *navigateArgs) (*Result, error) {
	target := strings.TrimSpace(in.URL)
	if target == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "url is required")
	}
	switch strings.ToLower(target) {
	case "back", "forward":
		return c.history(ctx, in.TabID, strings.ToLower(target) == "back")
	}
	u, err := normalizeURL(target)
	if err != nil {
		return nil, err
	}
	return c.navigateTo(ctx, in.TabID, u)
}

var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// normalizeURL adds a scheme when there is none: http for loopback hosts
// (dev servers rarely speak TLS), https for everything else.
func normalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if m := schemeRE.FindString(s); m != "" {
		scheme := strings.ToLower(strings.TrimSuffix(m, ":"))
		rest := s[len(m):]
		// "localhost:3000/x" parses as scheme "localhost"; a real scheme is
		// followed by // or is one of the opaque ones.
		if strings.HasPrefix(rest, "//") || opaqueSchemes[scheme] {
			if scheme == "javascript" {
				return "", wire.Errorf(wire.CodeBadParams, "javascript: URLs are not navigations; use javascript_tool")
			}
			return s, nil
		}
	}
	host := s
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	scheme := "https://"
	if isLoopback(host) {
		scheme = "http://"
	}
	u := scheme + s
	if _, err := url.Parse(u); err != nil {
		return "", wire.Errorf(wire.CodeBadParams, "%q is not a URL: %w", raw, err)
	}
	return u, nil
}

var opaqueSchemes = map[string]bool{
	"about": true, "data": true, "javascript": true, "blob": true, "mailto": true, "view-source": true,
	"chrome": true, "edge": true, "brave": true, "opera": true, "vivaldi": true, "file": true, "tel": true,
}

func isLoopback(host string) bool {
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originOf reduces a URL to the origin the TOCTOU guard compares. Opaque
// pages (about:blank, data:) compare by scheme.
func originOf(href string) string {
	u, err := url.Parse(href)
	if err != nil || u.Scheme == "" {
		return href
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https", "ws", "wss", "ftp":
		host := strings.ToLower(u.Hostname())
		port := u.Port()
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			port = ""
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if port != "" {
			return scheme + "://" + host + ":" + port
		}
		return scheme + "://" + host
	case "file":
		return "file://"
	}
	return scheme + ":"
}

// navigateTo loads u in the tab and waits for its load event.
func (c *call) navigateTo(ctx context.Context, tabID int, u string) (*Result, error) {
	t, b, err := c.tab(tabID, accessAct)
	if err != nil {
		return nil, err
	}
	if reason := wire.NavigationRefusal(u, b.Engine()); reason != "" {
		return nil, wire.Errorf(wire.CodeRestrictedURL, "refusing to open %s: %s", u, reason)
	}
	if wire.IsNewTab(t.URL) {
		// The extension cannot attach to a New Tab page; it moves the tab to
		// about:blank first.
		if err := c.e.hub.TabsPrepare(ctx, tabID); err != nil {
			return nil, fmt.Errorf("preparing tab %d for navigation: %w", tabID, err)
		}
	}
	ts, _, err := c.page(ctx, tabID, accessAct)
	if err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	var nav struct {
		FrameID    string `json:"frameId"`
		LoaderID   string `json:"loaderId"`
		ErrorText  string `json:"errorText"`
		IsDownload bool   `json:"isDownload"`
	}
	if err := c.cdp(ctx, tabID, "Page.navigate", map[string]any{"url": u, "transitionType": "typed"}, &nav); err != nil {
		return nil, err
	}
	if nav.IsDownload {
		return textResult(fmt.Sprintf("%s started a download in tab %d; the page did not change.", u, tabID)), nil
	}
	if nav.ErrorText != "" && nav.ErrorText != "net::ERR_ABORTED" {
		return nil, wire.Errorf(wire.CodeNavigationFailed, "loading %s failed: %s", u, nav.ErrorText)
	}
	n := &navState{mainFrame: ts.frame(), loaderID: nav.LoaderID}
	if nav.LoaderID == "" {
		n.done = true // a same-document navigation has nothing to load
	}
	ok := true
	if !n.done {
		if ok, err = w.waitLoad(ctx, n, c.e.opts.NavigationTimeout); err != nil {
			return nil, err
		}
	}
	return c.landed(ctx, ts, tabID, nav.LoaderID, ok, nav.LoaderID == "")
}

// landed reports where a tab ended up and records it as observed.
func (c *call) landed(ctx context.Context, ts *tabState, tabID int, loader string, loaded, sameDoc bool) (*Result, error) {
	var href, title string
	if sameDoc {
		// The move stayed in its document: the page knows at once, while
		// the browser's history may not have recorded it yet.
		var info struct {
			Title string `json:"title"`
		}
		h, err := ts.helper(ctx, c.s.Label, "info", &info)
		if err != nil {
			return nil, err
		}
		href, title = h, info.Title
	} else {
		// A new document: the browser's session history says, without
		// waiting for the page's thread, still busy with what it just loaded.
		var h navHistory
		if err := c.cdp(ctx, tabID, "Page.getNavigationHistory", nil, &h); err != nil {
			return nil, err
		}
		if h.CurrentIndex < 0 || h.CurrentIndex >= len(h.Entries) {
			return nil, wire.Errorf(wire.CodeInternal, "tab %d has no current history entry", tabID)
		}
		href, title = h.Entries[h.CurrentIndex].URL, h.Entries[h.CurrentIndex].Title
	}
	c.observe(tabID, href)
	lines := []string{fmt.Sprintf("Tab %d is at %s", tabID, href), "Title: " + title}
	if status := ts.status(loader); status >= 400 {
		lines = append(lines, fmt.Sprintf("HTTP status %d", status))
	}
	if !loaded {
		lines = append(lines, fmt.Sprintf("The page was still loading after %s; it may not be complete.", c.e.opts.NavigationTimeout))
	}
	return textResult(lines...), nil
}

// navHistory is Page.getNavigationHistory's answer.
type navHistory struct {
	CurrentIndex int `json:"currentIndex"`
	Entries      []struct {
		ID    int    `json:"id"`
		URL   string `json:"url"`
		Title string `json:"title"`
	} `json:"entries"`
}

func (c *call) history(ctx context.Context, tabID int, back bool) (*Result, error) {
	ts, _, err := c.page(ctx, tabID, accessAct)
	if err != nil {
		return nil, err
	}
	var h navHistory
	if err := c.cdp(ctx, tabID, "Page.getNavigationHistory", nil, &h); err != nil {
		return nil, err
	}
	i := h.CurrentIndex + 1
	word := "forward"
	if back {
		i, word = h.CurrentIndex-1, "back"
	}
	if i < 0 || i >= len(h.Entries) {
		return nil, wire.Errorf(wire.CodeBadParams, "tab %d has no page to go %s to", tabID, word)
	}
	entry := h.Entries[i]
	_, b, err := c.tab(tabID, accessAct)
	if err != nil {
		return nil, err
	}
	if reason := wire.NavigationRefusal(entry.URL, b.Engine()); reason != "" {
		return nil, wire.Errorf(wire.CodeRestrictedURL, "going %s would open %s: %s", word, entry.URL, reason)
	}
	w := ts.watch()
	defer w.stop()
	if err := c.cdp(ctx, tabID, "Page.navigateToHistoryEntry", map[string]any{"entryId": entry.ID}, nil); err != nil {
		return nil, err
	}
	// History moves are either same-document, restored from the
	// back/forward cache, or a real load; the watcher sees which.
	n := &navState{mainFrame: ts.frame()}
	loaded := true
	waitCtx, cancel := context.WithTimeout(ctx, c.e.opts.NavigationTimeout)
	defer cancel()
	for !n.done && !n.sameDoc {
		ev, err := w.next(waitCtx)
		if err != nil {
			if waitCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
				loaded = false
				break
			}
			return nil, err
		}
		n.feed(ev)
		if n.sameDoc && n.started {
			n.sameDoc = false // a same-document event on the way to a new document
		}
	}
	if n.closed {
		return nil, wire.Errorf(wire.CodeNoSuchTab, "tab %d closed", tabID)
	}
	return c.landed(ctx, ts, tabID, n.committedLoader, loaded, n.sameDoc)
}
