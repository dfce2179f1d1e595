package inspect_test

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
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/inspect"
	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// broadcaster is a minimal change source with Companion.Changes' contract:
// a coalesced signal per change, one at subscription, closed on shutdown.
type broadcaster struct {
	mu     sync.Mutex
	subs   map[int]chan struct{}
	next   int
	closed bool
}

func (b *broadcaster) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (b *broadcaster) subscribe() (<-chan struct{}, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan struct{}, 1)
	if b.closed {
		close(ch)
		return ch, func() {}
	}
	if b.subs == nil {
		b.subs = map[int]chan struct{}{}
	}
	id := b.next
	b.next++
	b.subs[id] = ch
	ch <- struct{}{}
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.subs[id]; ok {
			delete(b.subs, id)
			close(ch)
		}
	}
}

func (b *broadcaster) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for id, ch := range b.subs {
		close(ch)
		delete(b.subs, id)
	}
}

type env struct {
	hub     *hub.Hub
	changes *broadcaster
	wsURL   string
	client  *inspect.Client
	cancel  func()       // ends Serve's context
	wait    func() error // waits for Serve to return
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newEnv runs a hub behind a real WebSocket server and the inspection API on
// a real Unix socket, as reins headless does.
func newEnv(t *testing.T, opts ...inspect.Option) *env {
	t.Helper()
	b := &broadcaster{}
	h := hub.New(hub.Options{Logger: quiet, OnChange: b.notify})
	srv := httptest.NewServer(h)
	// Unix socket paths are capped near 108 bytes; t.TempDir can exceed it.
	dir, err := os.MkdirTemp("", "inspect")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	opts = append([]inspect.Option{inspect.WithChanges(b.subscribe)}, opts...)
	go func() { served <- inspect.Serve(ctx, sock, h, quiet, opts...) }()
	e := &env{hub: h, changes: b, wsURL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/", client: inspect.NewClient(sock), cancel: cancel}
	var once sync.Once
	var serveErr error
	e.wait = func() error {
		once.Do(func() { serveErr = <-served })
		return serveErr
	}
	t.Cleanup(func() {
		e.client.Close()
		b.close()
		h.Close()
		cancel()
		if err := e.wait(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
		os.RemoveAll(dir)
	})
	// Serve listens asynchronously; the first call waits for the socket.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := e.client.Browsers(context.Background()); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("inspection socket never answered: %v", err)
		}
		select {
		case err := <-served:
			t.Fatalf("Serve ended early: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (e *env) dial(t *testing.T, instance string) *hubtest.Ext {
	t.Helper()
	x, err := hubtest.Dial(ctxT(t), e.wsURL, wire.Hello{
		Version: 3, ExtensionVersion: "9.9.9", Browser: "Chromium", BrowserEngine: wire.EngineChromium,
		InstanceID: instance, BrowserSessionID: "s-" + instance,
	}, hubtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Kill)
	return x
}

// sharedTab makes the fake extension report tabs and waits, on the change
// stream, until the given native tab has a public id.
func (e *env) tabs(t *testing.T, w *inspect.Watch, x *hubtest.Ext, tabs []wire.TabInfo, native int) hub.Tab {
	t.Helper()
	if err := x.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
	var found hub.Tab
	_, err := w.Until(ctxT(t), func(s inspect.Snapshot) bool {
		for _, tab := range s.Tabs {
			if tab.Native == native {
				found = tab
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("tab %d never appeared: %v", native, err)
	}
	return found
}

func (e *env) watch(t *testing.T) *inspect.Watch {
	t.Helper()
	w, err := e.client.Watch(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func TestRouteTable(t *testing.T) {
	// Every documented route is served by the API (its answers are JSON even
	// when the call fails), and nothing else is: the table is the whole API.
	e := newEnv(t)
	srv := httptest.NewServer(inspect.Handler(e.hub, inspect.WithChanges(e.changes.subscribe)))
	defer srv.Close()
	do := func(method, path string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/browsers"}, {"GET", "/tabs"}, {"POST", "/request"}, {"POST", "/cdp"},
		{"POST", "/tabs/create"}, {"POST", "/tabs/close"}, {"GET", "/events?tab=x"},
	} {
		if ct := do(r.method, r.path).Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q; not served by the API", r.method, r.path, ct)
		}
	}
	for _, r := range []struct{ method, path string }{{"GET", "/nope"}, {"POST", "/browsers"}, {"GET", "/cdp"}, {"DELETE", "/tabs"}} {
		if resp := do(r.method, r.path); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 404 or 405", r.method, r.path, resp.StatusCode)
		}
	}
}

func TestOriginRefused(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(inspect.Handler(e.hub))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/browsers", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"unauthorized"`) {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
}

func TestBrowsersTabsAndChanges(t *testing.T) {
	e := newEnv(t)
	w := e.watch(t)
	if len(w.Last().Browsers) != 0 || w.Last().Tabs == nil {
		t.Fatalf("first snapshot %+v, want no browsers and an empty tab list", w.Last())
	}
	x := e.dial(t, "i1")
	snap, err := w.Until(ctxT(t), func(s inspect.Snapshot) bool { return len(s.Browsers) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Browsers[0].Hello; got.ExtensionVersion != "9.9.9" || got.InstanceID != "i1" || got.Version != 3 {
		t.Fatalf("hello %+v", got)
	}
	tab := e.tabs(t, w, x, []wire.TabInfo{
		{ID: 40, URL: "https://a.test/", Title: "A", Shared: true},
		{ID: 41, URL: "https://b.test/", Title: "B"},
	}, 41)
	tabs, err := e.client.Tabs(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 2 || tabs[1].ID != tab.ID || tabs[0].Native != 40 || !tabs[0].Shared || tabs[0].BrowserID != snap.Browsers[0].ID {
		t.Fatalf("tabs %+v", tabs)
	}
	bs, err := e.client.Browsers(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].SharedTabs != 1 || bs[0].OpenTabs != 2 {
		t.Fatalf("browsers %+v", bs)
	}
	x.Kill()
	if _, err := w.Until(ctxT(t), func(s inspect.Snapshot) bool { return len(s.Browsers) == 0 && len(s.Tabs) == 0 }); err != nil {
		t.Fatalf("browser never left: %v", err)
	}
	// A change the snapshot does not show (a pairing offer, pause) still
	// yields a line, so a test can wait for it and re-read its own API.
	e.changes.notify()
	if err := w.Next(ctxT(t)); err != nil {
		t.Fatalf("no line for a change signal: %v", err)
	}
	// The stream ends when its source shuts down.
	e.changes.close()
	if _, err := w.Until(ctxT(t), func(inspect.Snapshot) bool { return false }); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Fatalf("after shutdown: %v", err)
	}
}

func TestChangesWithoutSource(t *testing.T) {
	h := hub.New(hub.Options{Logger: quiet})
	defer h.Close()
	srv := httptest.NewServer(inspect.Handler(h))
	defer srv.Close()
	c := inspect.NewClientHTTP(srv.URL, srv.Client())
	if _, err := c.Changes(context.Background()); err == nil || !strings.Contains(err.Error(), "no change source") {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestAndCDP(t *testing.T) {
	e := newEnv(t)
	w := e.watch(t)
	x := e.dial(t, "i1")
	var seen atomic.Value
	x.Handle(wire.MethodCDP, func(p json.RawMessage) (any, error) {
		var cp wire.CDPParams
		if err := json.Unmarshal(p, &cp); err != nil {
			return nil, err
		}
		seen.Store(cp)
		if cp.Method == "Boom" {
			return nil, wire.Errorf(wire.CodeAttachFailed, "cannot attach to tab %d", cp.TabID)
		}
		return map[string]any{"result": map[string]any{"type": "number", "value": 2}}, nil
	})
	x.Handle(wire.MethodDownloadsList, func(json.RawMessage) (any, error) { return []string{"a.zip"}, nil })
	x.Handle(wire.MethodTabsHold, func(p json.RawMessage) (any, error) { return nil, nil })
	e.tabs(t, w, x, []wire.TabInfo{
		{ID: 7, URL: "https://a.test/", Shared: true},
		{ID: 8, URL: "https://b.test/"},
		{ID: 9, URL: "chrome://settings/", Shared: true},
	}, 9)
	var unshared, restricted int
	for _, tab := range w.Last().Tabs {
		switch tab.Native {
		case 8:
			unshared = tab.ID
		case 9:
			restricted = tab.ID
		}
	}
	browser := w.Last().Browsers[0].ID
	ctx := ctxT(t)
	var sharedID int
	for _, tab := range w.Last().Tabs {
		if tab.Native == 7 {
			sharedID = tab.ID
		}
	}

	res, err := e.client.CDP(ctx, sharedID, "Runtime.evaluate", map[string]any{"expression": "1+1"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != `{"result":{"type":"number","value":2}}` {
		t.Fatalf("result %s", res)
	}
	cp := seen.Load().(wire.CDPParams)
	if cp.TabID != 7 || cp.Method != "Runtime.evaluate" || string(cp.Params) != `{"expression":"1+1"}` || cp.Client != "inspect" {
		t.Fatalf("extension saw %+v", cp)
	}

	raw, err := e.client.Request(ctx, browser, wire.MethodDownloadsList, nil)
	if err != nil || string(raw) != `["a.zip"]` {
		t.Fatalf("downloads.list = %s, %v", raw, err)
	}
	// A request without a result is JSON null, not an empty body.
	raw, err = e.client.Request(ctx, browser, wire.MethodTabsHold, map[string]any{"tabId": 7, "hold": true})
	if err != nil || string(raw) != "null" {
		t.Fatalf("tabs.hold = %q, %v", raw, err)
	}

	for _, c := range []struct {
		name string
		call func() error
		want *wire.Error
	}{
		{"unshared", func() error { _, err := e.client.CDP(ctx, unshared, "Runtime.evaluate", nil); return err }, wire.ErrNotShared},
		{"restricted", func() error { _, err := e.client.CDP(ctx, restricted, "Runtime.evaluate", nil); return err }, wire.ErrRestrictedURL},
		{"no tab", func() error { _, err := e.client.CDP(ctx, 9999, "Runtime.evaluate", nil); return err }, wire.ErrNoSuchTab},
		{"extension code", func() error { _, err := e.client.CDP(ctx, sharedID, "Boom", nil); return err }, wire.ErrAttachFailed},
		{"no browser", func() error { _, err := e.client.Request(ctx, "b404", wire.MethodTabsList, nil); return err }, wire.ErrNoSuchBrowser},
		{"unknown method", func() error { _, err := e.client.Request(ctx, browser, "nope", nil); return err }, wire.ErrUnknownMethod},
		{"no method", func() error { _, err := e.client.CDP(ctx, sharedID, "", nil); return err }, wire.ErrBadParams},
	} {
		err := c.call()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v (code %s), want %s", c.name, err, wire.CodeOf(err), c.want.Code)
		}
	}

	// A malformed body is bad_params, with the code in the body.
	srv := httptest.NewServer(inspect.Handler(e.hub))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/cdp", "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"code":"bad_params"`) {
		t.Fatalf("malformed body: %d %s", resp.StatusCode, body)
	}
}

func TestCreateAndCloseTabs(t *testing.T) {
	e := newEnv(t)
	w := e.watch(t)
	x := e.dial(t, "i1")
	var mu sync.Mutex
	open := []wire.TabInfo{}
	x.Handle(wire.MethodTabsCreate, func(p json.RawMessage) (any, error) {
		var cp wire.CreateParams
		json.Unmarshal(p, &cp)
		mu.Lock()
		defer mu.Unlock()
		if cp.Active == nil || *cp.Active {
			return nil, wire.Errorf(wire.CodeBadParams, "expected active false, got %v", cp.Active)
		}
		tab := wire.TabInfo{ID: 100 + len(open), URL: cp.URL, Shared: true, Agent: true}
		open = append(open, tab)
		return tab, nil
	})
	x.Handle(wire.MethodTabsClose, func(p json.RawMessage) (any, error) {
		var tp wire.TabParams
		json.Unmarshal(p, &tp)
		mu.Lock()
		open = slices.DeleteFunc(open, func(t wire.TabInfo) bool { return t.ID == tp.TabID })
		left := slices.Clone(open)
		mu.Unlock()
		// The real extension reports the closure as a tabs event.
		go x.SendTabs(left)
		return nil, nil
	})
	if _, err := w.Until(ctxT(t), func(s inspect.Snapshot) bool { return len(s.Browsers) == 1 }); err != nil {
		t.Fatal(err)
	}
	browser := w.Last().Browsers[0].ID
	tab, err := e.client.CreateTab(ctxT(t), browser, "https://new.test/", false)
	if err != nil {
		t.Fatal(err)
	}
	if tab.ID == 0 || tab.Native != 100 || !tab.Shared || tab.BrowserID != browser || tab.URL != "https://new.test/" {
		t.Fatalf("created %+v", tab)
	}
	if _, err := w.Until(ctxT(t), func(s inspect.Snapshot) bool { return len(s.Tabs) == 1 && s.Tabs[0].ID == tab.ID }); err != nil {
		t.Fatal(err)
	}
	if err := e.client.CloseTab(ctxT(t), tab.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Until(ctxT(t), func(s inspect.Snapshot) bool { return len(s.Tabs) == 0 }); err != nil {
		t.Fatalf("closed tab stayed: %v", err)
	}
	if err := e.client.CloseTab(ctxT(t), tab.ID); !errors.Is(err, wire.ErrNoSuchTab) {
		t.Fatalf("closing twice: %v", err)
	}
}

func TestEvents(t *testing.T) {
	e := newEnv(t)
	w := e.watch(t)
	x := e.dial(t, "i1")
	base := []wire.TabInfo{{ID: 5, URL: "https://a.test/", Title: "A", Shared: true}, {ID: 6, URL: "https://b.test/", Shared: true}}
	tab := e.tabs(t, w, x, base, 6)
	var tab5 int
	for _, tb := range w.Last().Tabs {
		if tb.Native == 5 {
			tab5 = tb.ID
		}
	}
	if _, err := e.client.Events(ctxT(t), 424242); !errors.Is(err, wire.ErrNoSuchTab) {
		t.Fatalf("events of a missing tab: %v", err)
	}
	s, err := e.client.Events(ctxT(t), tab5)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Another tab's events must not leak into this stream.
	x.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: 6, Method: "Page.other"})
	x.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: 5, Method: "Page.loadEventFired", Params: json.RawMessage(`{"timestamp":1}`), SessionID: "S"})
	x.Send(wire.EventDetached, wire.Detached{TabID: 5, Reason: "canceled_by_user"})
	x.SendTabs([]wire.TabInfo{{ID: 5, URL: "https://a.test/", Title: "A2", Shared: true}, base[1]})
	x.SendTabs([]wire.TabInfo{base[1]})
	want := []inspect.Event{
		{Kind: inspect.KindCDPEvent, Method: "Page.loadEventFired", Params: json.RawMessage(`{"timestamp":1}`), SessionID: "S"},
		{Kind: inspect.KindDetached, Reason: "canceled_by_user"},
		{Kind: inspect.KindUpdated},
		{Kind: inspect.KindClosed},
	}
	for i, wnt := range want {
		select {
		case got, ok := <-s.C:
			if !ok {
				t.Fatalf("stream ended: %v", s.Err())
			}
			if wnt.Kind == inspect.KindUpdated {
				if got.Kind != wnt.Kind || got.Tab == nil || got.Tab.Title != "A2" || got.Tab.ID != tab5 {
					t.Fatalf("event %d = %+v", i, got)
				}
				continue
			}
			if !reflect.DeepEqual(got, wnt) {
				t.Fatalf("event %d = %+v, want %+v", i, got, wnt)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d (%s) never came", i, wnt.Kind)
		}
	}
	// A disconnect reaches subscribers of the browser's tabs.
	s6, err := e.client.Events(ctxT(t), tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer s6.Close()
	x.Kill()
	select {
	case got := <-s6.C:
		if got.Kind != inspect.KindGone {
			t.Fatalf("after kill: %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no gone event")
	}
}

func TestEventsSlowClientCutOff(t *testing.T) {
	// A small backlog keeps the test quick: the socket buffers between the
	// server and an unread client still hold a few hundred events.
	e := newEnv(t, inspect.WithStreamQueue(8))
	w := e.watch(t)
	x := e.dial(t, "i1")
	tab := e.tabs(t, w, x, []wire.TabInfo{{ID: 5, URL: "https://a.test/", Shared: true}}, 5)
	s, err := e.client.Events(context.Background(), tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Count in-process so we know the hub delivered everything while the
	// client read nothing; socket buffers take some, the queue the rest.
	const n = 600
	got := make(chan struct{})
	var count atomic.Int64
	cancel := e.hub.SubscribeTab(tab.ID, func(hub.TabEvent) {
		if count.Add(1) == n {
			close(got)
		}
	})
	defer cancel()
	pad := strings.Repeat("x", 1000)
	for i := range n {
		if err := x.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: 5, Method: "Log.entryAdded", Params: json.RawMessage(`{"i":` + strconv.Itoa(i) + `,"p":"` + pad + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatalf("hub delivered %d of %d events", count.Load(), n)
	}
	// The hub was never stalled by the slow client (we got here), and the
	// stream ends with an overflow line.
	var last inspect.Event
	lines := 0
	for ev := range s.C {
		last = ev
		lines++
	}
	t.Logf("the client read %d of %d events before the cut-off", lines-1, n)
	if last.Kind != inspect.KindOverflow || lines >= n {
		t.Fatalf("read %d lines, last %+v; want a cut-off stream ending in overflow", lines, last)
	}
}

func TestShutdownAnswersPendingRequests(t *testing.T) {
	e := newEnv(t)
	w := e.watch(t)
	x := e.dial(t, "i1")
	started := make(chan struct{}, 1)
	x.Handle(wire.MethodCDP, func(json.RawMessage) (any, error) {
		started <- struct{}{}
		<-x.Done()
		return nil, errors.New("closed")
	})
	tab := e.tabs(t, w, x, []wire.TabInfo{{ID: 5, URL: "https://a.test/", Shared: true}}, 5)
	ev, err := e.client.Events(ctxT(t), tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := e.client.CDP(context.Background(), tab.ID, "Runtime.evaluate", map[string]any{"expression": "new Promise(() => {})", "awaitPromise": true})
		errc <- err
	}()
	<-started
	// reins headless' order: the socket's context ends, then the companion
	// closes the hub. The request in flight must still get its answer.
	e.cancel()
	e.hub.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, wire.ErrNoSuchBrowser) || !strings.Contains(err.Error(), "shutting down") {
			t.Fatalf("pending request: %v, want no_such_browser saying the companion is shutting down", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pending request got no answer")
	}
	// Streams end so the shutdown does not wait on them.
	for range ev.C {
	}
	if err := e.wait(); err != nil {
		t.Fatal(err)
	}
}
