package e2e

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

// TestFirefoxAndChromiumTogether connects a Chromium and a Firefox profile
// to one reins: both are in the graph with their engines, and their tabs get
// distinct public ids.
func TestFirefoxAndChromiumTogether(t *testing.T) {
	s := newStack(t) // reins + Chromium with the unpacked extension
	ctx := within(t, harness.FirefoxHelloTimeout+30*time.Second)
	ff, err := harness.StartFirefox(ctx, s.Reins.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("--- web-ext/firefox output (tail):\n" + harness.Tail(ff.Output(), 40))
		}
		ff.Close()
	})
	fb, err := harness.WaitBrowser(ctx, s.Watch, wire.EngineFirefox, ff.Exited(), s.Browser.ID)
	if err != nil {
		t.Fatalf("firefox never joined: %v", err)
	}

	bs, err := s.Reins.Client.Browsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	engines := map[wire.Engine]hub.BrowserInfo{}
	for _, b := range bs {
		engines[b.Engine] = b
	}
	if len(bs) != 2 || engines[wire.EngineChromium].ID != s.Browser.ID || engines[wire.EngineFirefox].ID != fb.ID {
		t.Fatalf("/browsers = %+v, want one Chromium (%s) and one Firefox (%s)", bs, s.Browser.ID, fb.ID)
	}
	if h := engines[wire.EngineFirefox].Hello; h.Browser != "Firefox" || h.BrowserEngine != wire.EngineFirefox {
		t.Errorf("firefox hello %+v", h)
	}
	if h := engines[wire.EngineChromium].Hello; h.BrowserEngine != wire.EngineChromium {
		t.Errorf("chromium hello %+v", h)
	}

	ct, err := s.Reins.Client.CreateTab(ctx, s.Browser.ID, s.Pages.URL("both-c"), false)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := s.Reins.Client.CreateTab(ctx, fb.ID, s.Pages.URL("both-f"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"both-c", "both-f"} {
		if _, err := s.Pages.Wait(ctx, id, "load"); err != nil {
			t.Fatal(err)
		}
	}
	if ct.ID == ft.ID {
		t.Fatalf("both tabs got public id %d", ct.ID)
	}
	snap, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool {
		seen := 0
		for _, tb := range snap.Tabs {
			if (tb.ID == ct.ID && tb.BrowserEngine == wire.EngineChromium) || (tb.ID == ft.ID && tb.BrowserEngine == wire.EngineFirefox) {
				seen++
			}
		}
		return seen == 2
	})
	if err != nil {
		t.Fatalf("tabs with engines never listed: %v; last %+v", err, s.Watch.Last().Tabs)
	}
	ids := map[int]bool{}
	for _, tb := range snap.Tabs {
		if ids[tb.ID] {
			t.Fatalf("public id %d used twice: %+v", tb.ID, snap.Tabs)
		}
		ids[tb.ID] = true
	}
	// Each tab is driven through its own browser.
	for _, c := range []struct {
		tab  int
		page string
	}{{ct.ID, "both-c"}, {ft.ID, "both-f"}} {
		raw, err := s.Reins.Client.CDP(ctx, c.tab, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})
		if err != nil {
			t.Fatal(err)
		}
		var title string
		if err := decodeEvaluate(raw, &title); err != nil || title != harness.TestPageTitle(c.page) {
			t.Fatalf("tab %d title %q, %v", c.tab, title, err)
		}
	}
}

// TestFirefoxOrigins dials the extension socket as Firefox does and as a
// web page would: a moz-extension:// origin gets to the link handshake (and
// no further without the key: anyone can claim that origin), a web origin is
// refused before the upgrade.
func TestFirefoxOrigins(t *testing.T) {
	t.Parallel()
	ctx := within(t, 60*time.Second)
	r := startReins(ctx, t)
	w, err := r.Client.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	hello := wire.Hello{
		Version: wire.ProtocolVersion, ExtensionVersion: "0.0.1", Browser: "Firefox", BrowserEngine: wire.EngineFirefox,
		InstanceID: "5b0e8a4e-1111-4c6a-9d34-5f1c2d3e4f50", BrowserSessionID: "5b0e8a4e-2222-4c6a-9d34-5f1c2d3e4f50",
	}
	origin := "moz-extension://0c3c6bd5-3d9a-4f3e-9d0e-6a1f2b3c4d5e"
	forged, err := hubtest.Dial(ctx, r.WSURL(), hello, hubtest.Options{Origin: origin})
	if err != nil {
		t.Fatalf("moz-extension origin refused before the handshake: %v", err)
	}
	if got := forged.CloseStatus(); got != hub.StatusUnauthorized {
		t.Fatalf("a moz-extension origin without the key: close %v, want %v", got, hub.StatusUnauthorized)
	}
	x, err := hubtest.Dial(ctx, r.WSURL(), hello, hubtest.Options{Origin: origin, DataDir: r.DataDir})
	if err != nil {
		t.Fatalf("moz-extension origin with the key: %v", err)
	}
	defer x.Kill()
	b, err := harness.WaitBrowser(ctx, w, wire.EngineFirefox, nil)
	if err != nil {
		t.Fatalf("the moz-extension connection never joined: %v", err)
	}
	if b.Hello.Browser != "Firefox" {
		t.Errorf("browser %+v", b)
	}

	for _, origin := range []string{"https://evil.example", "http://127.0.0.1:1234", "null"} {
		_, resp, err := websocket.Dial(ctx, r.WSURL(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if err == nil {
			t.Fatalf("origin %s was accepted", origin)
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %s: %v, response %v; want 403", origin, err, resp)
		}
	}
}

// firefoxRestricted checks Mozilla's own pages are refused before any
// navigation: by the companion for tabs.create and navigate, and by the
// extension itself when asked directly.
func firefoxRestricted(t *testing.T, s *harness.FirefoxStack) {
	ctx := within(t, 30*time.Second)
	before, err := s.Reins.Client.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"about:preferences", "https://addons.mozilla.org/", "https://addons.mozilla.org/en-US/firefox/", "moz-extension://0c3c6bd5-3d9a-4f3e-9d0e-6a1f2b3c4d5e/options.html"} {
		if _, err := s.Reins.Client.CreateTab(ctx, s.Browser.ID, u, false); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("companion tabs.create %s: %v, want restricted_url", u, err)
		}
		// Straight to the extension, past the companion's own check.
		if _, err := s.Reins.Client.Request(ctx, s.Browser.ID, "tabs.create", map[string]any{"url": u}); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("extension tabs.create %s: %v, want restricted_url", u, err)
		}
	}
	tab, err := s.OpenShared(ctx, "restricted-nav", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"about:preferences", "https://addons.mozilla.org/"} {
		if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Page.navigate", map[string]any{"url": u}); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("Page.navigate %s: %v, want restricted_url", u, err)
		}
	}
	after, err := s.Reins.Client.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range append(before, after...) {
		if strings.Contains(tb.URL, "mozilla.org") || strings.HasPrefix(tb.URL, "about:preferences") {
			t.Errorf("a tab reached %s", tb.URL)
		}
	}
	var title string
	raw, err := s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})
	if err == nil {
		err = decodeEvaluate(raw, &title)
	}
	if err != nil || title != harness.TestPageTitle("restricted-nav") {
		t.Errorf("the tab left its page: %q, %v", title, err)
	}
}
