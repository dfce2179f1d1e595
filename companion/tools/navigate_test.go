package tools_test

import (
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

func TestNavigate(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:navigator", "navigator")
	tab := r.newTab(s, "/nav/a")

	out := r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/nav/b"})
	if !strings.Contains(out, "Title: Page B") || !strings.Contains(out, r.url+"/nav/b") {
		t.Fatalf("navigate: %s", out)
	}
	out = r.ok(s, "navigate", map[string]any{"tabId": tab, "url": "back"})
	if !strings.Contains(out, "Title: Page A") {
		t.Fatalf("back: %s", out)
	}
	out = r.ok(s, "navigate", map[string]any{"tabId": tab, "url": "forward"})
	if !strings.Contains(out, "Title: Page B") {
		t.Fatalf("forward: %s", out)
	}
	r.fails(s, "navigate", map[string]any{"tabId": tab, "url": "forward"}, wire.CodeBadParams)

	t.Run("no scheme on a loopback host means http", func(t *testing.T) {
		out := r.ok(s, "navigate", map[string]any{"tabId": tab, "url": strings.TrimPrefix(r.url, "http://") + "/nav/a"})
		if !strings.Contains(out, "Title: Page A") {
			t.Fatal(out)
		}
	})

	t.Run("same-document navigation", func(t *testing.T) {
		out := r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/nav/a#section"})
		if !strings.Contains(out, "#section") {
			t.Fatal(out)
		}
		out = r.ok(s, "navigate", map[string]any{"tabId": tab, "url": "back"})
		if !strings.Contains(out, "Page A") || strings.Contains(out, "#section") {
			t.Fatal(out)
		}
	})

	t.Run("waits for the load event", func(t *testing.T) {
		slow.mu.Lock()
		requested, release := make(chan struct{}), make(chan struct{})
		slow.requested, slow.release = requested, release
		slow.mu.Unlock()
		defer func() {
			slow.mu.Lock()
			slow.requested, slow.release = nil, nil
			slow.mu.Unlock()
		}()
		done := make(chan *tools.Result, 1)
		go func() {
			done <- r.e.Call(ctxFor(t), s, "navigate", []byte(`{"tabId":`+itoa(tab)+`,"url":"`+r.url+`/slow"}`))
		}()
		<-requested
		select {
		case res := <-done:
			t.Fatalf("navigate returned before the page loaded: %s", text(res))
		default:
		}
		close(release)
		res := <-done
		if res.IsError || !strings.Contains(text(res), "Title: Slow loaded") {
			t.Fatalf("slow navigate: %s", text(res))
		}
	})

	t.Run("http errors are reported", func(t *testing.T) {
		out := r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/missing"})
		if !strings.Contains(out, "HTTP status 404") {
			t.Fatal(out)
		}
	})

	t.Run("unreachable host", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		r.fails(s, "navigate", map[string]any{"tabId": tab, "url": "http://" + addr + "/"}, wire.CodeNavigationFailed)
	})

	t.Run("restricted URLs", func(t *testing.T) {
		for _, u := range []string{"chrome://settings", "chrome-extension://abcdefghijklmnop/options.html", "https://chromewebstore.google.com/detail/x", "view-source:" + r.url} {
			r.fails(s, "navigate", map[string]any{"tabId": tab, "url": u}, wire.CodeRestrictedURL)
		}
		r.fails(s, "navigate", map[string]any{"tabId": tab, "url": "javascript:alert(1)"}, wire.CodeBadParams)
		r.fails(s, "tabs_create_mcp", map[string]any{"url": "chrome://version"}, wire.CodeRestrictedURL)
	})

	// Agents go to http, https and about:blank only: not to local files
	// (the data dir's secrets.json), Windows shares or app schemes, in a
	// batch step either.
	t.Run("only web pages", func(t *testing.T) {
		for _, u := range []string{"file:///etc/passwd", "file://fileserver/share/x.html", "vscode://x"} {
			r.fails(s, "navigate", map[string]any{"tabId": tab, "url": u}, wire.CodeRestrictedURL)
			r.fails(s, "tabs_create_mcp", map[string]any{"url": u}, wire.CodeRestrictedURL)
			res := r.call(s, "browser_batch", map[string]any{"steps": []map[string]any{
				{"tool": "navigate", "args": map[string]any{"tabId": tab, "url": u}},
			}})
			if !res.IsError || res.Code != wire.CodeRestrictedURL {
				t.Fatalf("batch step to %s: isError=%v code=%q: %s", u, res.IsError, res.Code, text(res))
			}
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestClickThatNavigates(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:linker", "linker")
	tab := r.newTab(s, "/nav/a")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	out := r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Go to B"`)})
	if !strings.Contains(out, "navigated to "+r.url+"/nav/b") || !strings.Contains(out, "Page B") {
		t.Fatalf("click result: %s", out)
	}
	// The page is loaded when the click returns: its recorder is there.
	if evs := r.log(s, tab); evs == nil {
		t.Fatal("page B not loaded")
	}
	out = r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{60, 160}})
	if strings.Contains(out, "navigated") {
		t.Fatalf("a button that stays reported a navigation: %s", out)
	}
	r.ok(s, "navigate", map[string]any{"tabId": tab, "url": "back"})
	tree = r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Jump"`)})
	var hash string
	r.js(s, tab, "location.hash", &hash)
	if hash != "#section" {
		t.Fatalf("hash = %q", hash)
	}
}

// A new document of a Chromium tab starts with the helper's world in it
// (the helper is a new-document script), so after a navigation the tools
// make no world of their own. navigate itself asks the browser's session
// history where the tab landed, not the page, whose thread is busy with the
// load; the first tool after it calls the document's own world, with the
// world's setup.
func TestANavigatedDocumentStartsWithTheHelperWorld(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:navigator", "navigator")
	tab := r.newTab(s, "/nav/a")
	steps := func(tool string, args map[string]any) []string {
		t.Helper()
		var tr hub.Trace
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		res := r.e.Call(hub.WithTrace(ctxFor(t), &tr), s, tool, raw)
		if res.IsError {
			t.Fatalf("%s: %s", tool, text(res))
		}
		if tool == "navigate" && !strings.Contains(text(res), "Title: Page B") {
			t.Fatalf("navigate: %s", text(res))
		}
		var out []string
		for _, st := range tr.Steps() {
			out = append(out, st.Method)
		}
		return out
	}
	nav := steps("navigate", map[string]any{"tabId": tab, "url": r.url + "/nav/b"})
	if i := slices.Index(nav, "Page.navigate"); i < 0 || !slices.Equal(nav[i+1:], []string{"Page.getNavigationHistory"}) {
		t.Fatalf("navigate's requests: %v; want the session history after Page.navigate", nav)
	}
	if read := steps("read_page", map[string]any{"tabId": tab}); !slices.Equal(read, []string{"Runtime.callFunctionOn"}) {
		t.Fatalf("read_page's requests after the navigation: %v; want one call, in the document's own world", read)
	}
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab})
	if !strings.Contains(tree, "Stay") {
		t.Fatalf("read_page after the navigation: %s", tree)
	}
}
