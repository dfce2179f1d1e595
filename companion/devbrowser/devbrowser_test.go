package devbrowser_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/devbrowser"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) {
	if os.Getenv(devbrowser.FakeChromiumEnv) != "" {
		os.Exit(devbrowser.FakeChromium())
	}
	goleak.VerifyTestMain(m)
}

// chromiumPath is the browser the tests drive. A machine without it fails
// the tests: a dev transport that was never exercised is not tested.
func chromiumPath(t testing.TB) string {
	t.Helper()
	p := os.Getenv("REINS_CHROMIUM")
	if p == "" {
		p = "/usr/lib/chromium/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("chromium not found at %s (set REINS_CHROMIUM): %v", p, err)
	}
	return p
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type env struct {
	hub *hub.Hub
	dev *devbrowser.Browser
	hb  *hub.Browser
}

func launch(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := hub.New(hub.Options{Logger: quietLogger()})
	dev, err := devbrowser.Launch(ctx, devbrowser.Options{Path: chromiumPath(t), Headless: true, Logger: quietLogger()})
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	hb, err := dev.Attach(h)
	if err != nil {
		dev.Close()
		h.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
		h.Close()
	})
	return &env{hub: h, dev: dev, hb: hb}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestLaunchAttachAndTabs(t *testing.T) {
	e := launch(t)
	infos := e.hub.Browsers()
	if len(infos) != 1 || infos[0].Mode != hub.ModeDev || infos[0].Name != "Chromium (dev)" || infos[0].Engine != wire.EngineChromium {
		t.Fatalf("browsers = %+v", infos)
	}
	ctx := ctxT(t)
	tabs, err := e.hub.TabsList(ctx, e.hb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 1 || tabs[0].URL != "about:blank" || !tabs[0].Shared {
		t.Fatalf("initial tabs = %+v", tabs)
	}
	created, err := e.hub.TabsCreate(ctx, e.hb.ID, "about:blank", true, "Reins · test", "agent:test")
	if err != nil {
		t.Fatal(err)
	}
	if !created.Shared || !created.Agent || created.Owner != "agent:test" || created.ID == tabs[0].ID {
		t.Fatalf("created = %+v", created)
	}
	if _, _, err := e.hub.Tab(created.ID); err != nil {
		t.Fatal(err)
	}
	// The dev transport keeps the owner with the tab, as the extension
	// does: every listing reports it; the first tab, nobody's, has none.
	listed, err := e.hub.TabsList(ctx, e.hb.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range listed {
		if want := map[bool]string{true: "agent:test"}[tb.ID == created.ID]; tb.Owner != want {
			t.Fatalf("tabs.list reports tab %d with owner %q, want %q", tb.ID, tb.Owner, want)
		}
	}
	raw, err := e.hub.CDP(ctx, created.ID, "Runtime.evaluate", map[string]any{"expression": "6*7", "returnByValue": true}, "", "test")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Result struct {
			Value int `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Result.Value != 42 {
		t.Fatalf("evaluate = %s (%v)", raw, err)
	}
	got, _, _ := e.hub.Tab(created.ID)
	if !got.Attached {
		t.Fatalf("tab not marked attached after a cdp call: %+v", got)
	}
	if err := e.hub.TabsActivate(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.hub.TabsHold(ctx, created.ID, true); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{}, 1)
	cancel := e.hub.SubscribeTab(created.ID, func(ev hub.TabEvent) {
		if ev.Kind == hub.TabClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	if err := e.hub.TabsClose(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("no closed event for the closed tab")
	}
	if _, _, err := e.hub.Tab(created.ID); !errors.Is(err, wire.ErrNoSuchTab) {
		t.Fatalf("closed tab still resolves: %v", err)
	}
}

func TestEventsFlowToSubscribers(t *testing.T) {
	e := launch(t)
	ctx := ctxT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<title>hello</title><p>hi</p><script>console.log('from page')</script>")
	}))
	defer srv.Close()
	tab, err := e.hub.TabsCreate(ctx, e.hb.ID, "about:blank", true, "", "")
	if err != nil {
		t.Fatal(err)
	}
	loaded := make(chan struct{}, 1)
	console := make(chan string, 4)
	updated := make(chan string, 16)
	cancel := e.hub.SubscribeTab(tab.ID, func(ev hub.TabEvent) {
		switch {
		case ev.Kind == hub.TabCDPEvent && ev.Method == "Page.loadEventFired":
			select {
			case loaded <- struct{}{}:
			default:
			}
		case ev.Kind == hub.TabCDPEvent && ev.Method == "Runtime.consoleAPICalled":
			select {
			case console <- string(ev.Params):
			default:
			}
		case ev.Kind == hub.TabUpdated:
			select {
			case updated <- ev.Tab.Title:
			default:
			}
		}
	})
	defer cancel()
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if _, err := e.hub.CDP(ctx, tab.ID, m, nil, "", "test"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.hub.CDP(ctx, tab.ID, "Page.navigate", map[string]any{"url": srv.URL}, "", "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-loaded:
	case <-ctx.Done():
		t.Fatal("no Page.loadEventFired")
	}
	select {
	case c := <-console:
		if !strings.Contains(c, "from page") {
			t.Fatalf("console event = %s", c)
		}
	case <-ctx.Done():
		t.Fatal("no console event")
	}
	select {
	case <-updated:
	case <-ctx.Done():
		t.Fatal("the navigation never reached the hub as a tab update")
	}
	// Chromium does not announce every title change, so tabs.list reads
	// the targets afresh.
	tabs, err := e.hub.TabsList(ctx, e.hb.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tabs {
		if tb.ID == tab.ID {
			if tb.Title != "hello" || tb.URL != srv.URL+"/" {
				t.Fatalf("tab after load = %+v", tb)
			}
			return
		}
	}
	t.Fatal("tab missing from tabs.list")
}

func TestWindowSizeAndUnknownMethods(t *testing.T) {
	e := launch(t)
	ctx := ctxT(t)
	tabs, err := e.hub.TabsList(ctx, e.hb.ID)
	if err != nil {
		t.Fatal(err)
	}
	id := tabs[0].ID
	ws, err := e.hub.WindowSize(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Width != 1280 || ws.Height != 800 {
		t.Fatalf("default window = %+v", ws)
	}
	ws, err = e.hub.WindowSize(ctx, id, 900, 700)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Width != 900 || ws.Height != 700 {
		t.Fatalf("resized window = %+v", ws)
	}
	if err := e.hub.TabsPrepare(ctx, id); err != nil {
		t.Fatal(err)
	}
	for _, call := range []func() error{
		func() error { _, err := e.hub.DownloadsList(ctx, e.hb.ID); return err },
		func() error {
			_, err := e.hub.Request(ctx, e.hb.ID, wire.MethodExtensionsList, wire.ExtensionParams{Client: "x"})
			return err
		},
	} {
		err := call()
		if !errors.Is(err, wire.ErrUnknownMethod) || !strings.Contains(err.Error(), "not available for a dev browser") {
			t.Fatalf("err = %v", err)
		}
	}
	if _, err := e.hub.CDP(ctx, id, "No.suchMethod", nil, "", "test"); !errors.Is(err, wire.ErrUnknownMethod) {
		t.Fatalf("an unknown CDP method: %v", err)
	}
}

func TestCloseRemovesProfileAndDisconnects(t *testing.T) {
	ctx := ctxT(t)
	h := hub.New(hub.Options{Logger: quietLogger()})
	defer h.Close()
	dev, err := devbrowser.Launch(ctx, devbrowser.Options{Path: chromiumPath(t), Headless: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	hb, err := dev.Attach(h)
	if err != nil {
		t.Fatal(err)
	}
	dir := dev.ProfileDir()
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	// A companion has 2 s to stop, dev browser included.
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %s", took)
	}
	select {
	case <-hb.Done():
	default:
		t.Fatal("hub still lists the closed dev browser")
	}
	select {
	case <-dev.Done():
	default:
		t.Fatal("process still running after Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("profile dir left behind: %v", err)
	}
	if len(h.Browsers()) != 0 {
		t.Fatalf("browsers after close: %+v", h.Browsers())
	}
}

func TestLaunchFailsWithoutChromium(t *testing.T) {
	_, err := devbrowser.Launch(context.Background(), devbrowser.Options{Path: "/nonexistent/chromium", Logger: quietLogger()})
	if err == nil {
		t.Fatal("launch succeeded without a browser")
	}
}

// The dev transport answers raw requests that never pass the hub's checks
// (the inspection routes send them): it refuses on its own to take a tab to
// a local file, such as the data dir's secrets.json, or to an app scheme.
func TestRawRequestsStayOnTheWeb(t *testing.T) {
	e := launch(t)
	ctx := ctxT(t)
	secret := filepath.Join(t.TempDir(), "secrets.json")
	if err := os.WriteFile(secret, []byte(`{"token":"reins_secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tabs, err := e.hub.TabsList(ctx, e.hb.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"file://" + secret, "file://fileserver/share/x.html", "vscode://x"} {
		_, err := e.hub.Request(ctx, e.hb.ID, wire.MethodCDP, wire.CDPParams{
			TabID: tabs[0].Native, Method: "Page.navigate", Params: json.RawMessage(`{"url":` + strconv.Quote(u) + `}`),
		})
		if !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("raw Page.navigate %s: %v, want restricted_url", u, err)
		}
		if _, err := e.hub.Request(ctx, e.hb.ID, wire.MethodTabsCreate, wire.CreateParams{URL: u}); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("raw tabs.create %s: %v, want restricted_url", u, err)
		}
	}
	after, err := e.hub.TabsList(ctx, e.hb.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range after {
		if !strings.HasPrefix(tb.URL, "about:") && !strings.HasPrefix(tb.URL, "http") {
			t.Errorf("a tab reached %s", tb.URL)
		}
	}
}

// Callers that give up while their commands are still on their way through
// the pipe (8 MiB each, far more than a pipe holds) must not break the link
// for the next caller: a command cut in half would leave Chromium reading
// garbage.
func TestCallersGivingUpMidWriteLeaveTheLinkWhole(t *testing.T) {
	e := launch(t)
	ctx := ctxT(t)
	tab, err := e.hub.TabsCreate(ctx, e.hb.ID, "about:blank", true, "", "agent:test")
	if err != nil {
		t.Fatal(err)
	}
	big := `"` + strings.Repeat("x", 8<<20) + `".length`
	cctx, cancel := context.WithCancel(ctx)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := e.hub.CDP(cctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": big, "returnByValue": true}, "", "test")
			errs <- err
		}()
	}
	cancel()
	for range 8 {
		if err := <-errs; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("a caller that gave up got %v", err)
		}
	}
	raw, err := e.hub.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "6*7", "returnByValue": true}, "", "test")
	if err != nil || !strings.Contains(string(raw), `"value":42`) {
		t.Fatalf("the next call: %s %v", raw, err)
	}
}

// A profile the caller gave is kept: Chromium is asked to quit so it
// flushes it, within Close's bound.
func TestCloseKeepsAGivenProfile(t *testing.T) {
	dir := t.TempDir()
	h := hub.New(hub.Options{Logger: quietLogger()})
	defer h.Close()
	dev, err := devbrowser.Launch(ctxT(t), devbrowser.Options{Path: chromiumPath(t), Headless: true, UserDataDir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Attach(h); err != nil {
		dev.Close()
		t.Fatal(err)
	}
	start := time.Now()
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	// Browser.close's answer, a second to quit, half a second for the
	// helpers: the bound Close documents, with room for a loaded machine.
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Close took %s", took)
	}
	select {
	case <-dev.Done():
	default:
		t.Fatal("process still running after Close")
	}
	if _, err := os.Stat(filepath.Join(dir, "Default")); err != nil {
		t.Fatalf("the given profile is gone: %v", err)
	}
}

// A crashed renderer leaves its tab open (the browser shows its error
// page), so the tab keeps its id and its owner: were it forgotten and found
// again by the next listing, it would come back as nobody's tab, visible
// to every agent. The crashed tab answers the next call with an error
// code, and a navigation brings it back.
func TestACrashedTabKeepsItsIDAndOwner(t *testing.T) {
	e := launch(t)
	ctx := ctxT(t)
	created, err := e.hub.TabsCreate(ctx, e.hb.ID, "about:blank", true, "Reins · test", "agent:test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.hub.CDP(ctx, created.ID, "Runtime.evaluate", map[string]any{"expression": "1"}, "", "test"); err != nil {
		t.Fatal(err)
	}
	// Page.crash never answers: the renderer is gone first.
	crashCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = e.hub.CDP(crashCtx, created.ID, "Page.crash", nil, "", "test")
	cancel()
	if err == nil {
		t.Fatal("Page.crash answered")
	}
	// Cut short by the crash, not by the caller's deadline.
	if !errors.Is(err, wire.ErrAttachFailed) || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("Page.crash failed with %v (code %s), want attach_failed saying the page crashed", err, wire.CodeOf(err))
	}
	// A call after the crash, before any navigation.
	afterCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = e.hub.CDP(afterCtx, created.ID, "Runtime.evaluate", map[string]any{"expression": "1"}, "", "test")
	cancel()
	if err == nil || errors.Is(err, context.DeadlineExceeded) || wire.CodeOf(err) == wire.CodeTimeout {
		t.Fatalf("a call on the crashed page answered %v (code %s), want an error at once", err, wire.CodeOf(err))
	}
	listed, err := e.hub.TabsList(ctx, e.hb.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tb := range listed {
		if tb.ID == created.ID {
			found = true
			if tb.Owner != "agent:test" || !tb.Agent {
				t.Fatalf("the crashed tab is listed as %+v, want agent:test's", tb)
			}
		} else if tb.URL != "about:blank" || tb.Owner != "" {
			t.Fatalf("the crashed tab came back under another id: %+v", tb)
		}
	}
	if !found {
		t.Fatalf("the crashed tab %d is gone from %+v", created.ID, listed)
	}
	if _, err := e.hub.CDP(ctx, created.ID, "Page.navigate", map[string]any{"url": "about:blank"}, "", "test"); err != nil {
		t.Fatalf("navigating the crashed tab: %v", err)
	}
	raw, err := e.hub.CDP(ctx, created.ID, "Runtime.evaluate", map[string]any{"expression": "6*7", "returnByValue": true}, "", "test")
	if err != nil || !strings.Contains(string(raw), "42") {
		t.Fatalf("evaluate after the reload: %s, %v", raw, err)
	}
}
