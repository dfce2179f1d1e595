package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

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

type inspectEnv struct {
	hub     *hub.Hub
	changes *broadcaster
	wsURL   string
	client  *Inspector
	srv     *Server
	close   func() error // the companion's order: the hub closes, then the channel
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newInspectEnv runs a hub behind a real WebSocket server and the admin
// channel with its inspection routes on a real socket, as reins headless
// --inspect does.
func newInspectEnv(t *testing.T, queue int) *inspectEnv {
	t.Helper()
	b := &broadcaster{}
	h := hub.New(hub.Options{Logger: quiet, OnChange: b.notify})
	ws := httptest.NewServer(h)
	dir := shortDir(t)
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := Serve(ln, NewHandler(Options{Inspect: &Inspect{Hub: h, Changes: b.subscribe, StreamQueue: queue}, Logger: quiet}), quiet)
	e := &inspectEnv{hub: h, changes: b, wsURL: "ws" + strings.TrimPrefix(ws.URL, "http") + "/", client: NewClient(dir).Inspect(), srv: srv}
	var once sync.Once
	var closeErr error
	e.close = func() error {
		once.Do(func() {
			h.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			closeErr = srv.Close(ctx)
		})
		return closeErr
	}
	t.Cleanup(func() {
		e.client.Close()
		b.close()
		if err := e.close(); err != nil {
			t.Errorf("closing the channel: %v", err)
		}
		ws.Close()
	})
	return e
}

func (e *inspectEnv) dial(t *testing.T, instance string) *hubtest.Ext {
	t.Helper()
	x, err := hubtest.Dial(ctx(t), e.wsURL, wire.Hello{
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
func (e *inspectEnv) tabs(t *testing.T, w *Watch, x *hubtest.Ext, tabs []wire.TabInfo, native int) hub.Tab {
	t.Helper()
	if err := x.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
	var found hub.Tab
	_, err := w.Until(ctx(t), func(s Snapshot) bool {
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

func (e *inspectEnv) watch(t *testing.T) *Watch {
	t.Helper()
	w, err := e.client.Watch(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func TestInspectRouteTable(t *testing.T) {
	// Every documented route is served by the channel (its answers are JSON
	// even when the call fails), and nothing else is: the table is the
	// whole API.
	e := newInspectEnv(t, 0)
	srv := httptest.NewServer(NewHandler(Options{Inspect: &Inspect{Hub: e.hub, Changes: e.changes.subscribe}}))
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
		{"GET", "/v1/inspect/browsers"}, {"GET", "/v1/inspect/tabs"}, {"POST", "/v1/inspect/request"}, {"POST", "/v1/inspect/cdp"},
		{"POST", "/v1/inspect/tabs/create"}, {"POST", "/v1/inspect/tabs/close"}, {"GET", "/v1/inspect/events?tab=x"},
	} {
		if ct := do(r.method, r.path).Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q; not served by the API", r.method, r.path, ct)
		}
	}
	for _, r := range []struct{ method, path string }{{"GET", "/v1/inspect/nope"}, {"POST", "/v1/inspect/browsers"}, {"GET", "/v1/inspect/cdp"}, {"DELETE", "/v1/inspect/tabs"}} {
		if resp := do(r.method, r.path); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 404 or 405", r.method, r.path, resp.StatusCode)
		}
	}
}

func TestInspectOriginRefused(t *testing.T) {
	e := newInspectEnv(t, 0)
	srv := httptest.NewServer(NewHandler(Options{Inspect: &Inspect{Hub: e.hub}}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/v1/inspect/browsers", nil)
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
	e := newInspectEnv(t, 0)
	w := e.watch(t)
	if len(w.Last().Browsers) != 0 || w.Last().Tabs == nil {
		t.Fatalf("first snapshot %+v, want no browsers and an empty tab list", w.Last())
	}
	x := e.dial(t, "i1")
	snap, err := w.Until(ctx(t), func(s Snapshot) bool { return len(s.Browsers) == 1 })
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
	tabs, err := e.client.Tabs(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 2 || tabs[1].ID != tab.ID || tabs[0].Native != 40 || !tabs[0].Shared || tabs[0].BrowserID != snap.Browsers[0].ID {
		t.Fatalf("tabs %+v", tabs)
	}
	bs, err := e.client.Browsers(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].SharedTabs != 1 || bs[0].OpenTabs != 2 {
		t.Fatalf("browsers %+v", bs)
	}
	x.Kill()
	if _, err := w.Until(ctx(t), func(s Snapshot) bool { return len(s.Browsers) == 0 && len(s.Tabs) == 0 }); err != nil {
		t.Fatalf("browser never left: %v", err)
	}
	// A change the snapshot does not show (a pairing offer, pause) still
	// yields a line, so a test can wait for it and re-read its own API.
	e.changes.notify()
	if err := w.Next(ctx(t)); err != nil {
		t.Fatalf("no line for a change signal: %v", err)
	}
	// The stream ends when its source shuts down.
	e.changes.close()
	if _, err := w.Until(ctx(t), func(Snapshot) bool { return false }); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Fatalf("after shutdown: %v", err)
	}
}

func TestChangesWithoutSource(t *testing.T) {
	h := hub.New(hub.Options{Logger: quiet})
	defer h.Close()
	dir := shortDir(t)
	serve(t, dir, Options{Inspect: &Inspect{Hub: h}})
	c := NewClient(dir).Inspect()
	defer c.Close()
	if _, err := c.Changes(context.Background()); !errors.Is(err, ErrNotImplemented) || !strings.Contains(err.Error(), "no change source") {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestAndCDP(t *testing.T) {
	e := newInspectEnv(t, 0)
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
	ctx := ctx(t)
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
	srv := httptest.NewServer(NewHandler(Options{Inspect: &Inspect{Hub: e.hub}}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/inspect/cdp", "application/json", strings.NewReader("{"))
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
	e := newInspectEnv(t, 0)
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
	if _, err := w.Until(ctx(t), func(s Snapshot) bool { return len(s.Browsers) == 1 }); err != nil {
		t.Fatal(err)
	}
	browser := w.Last().Browsers[0].ID
	tab, err := e.client.CreateTab(ctx(t), browser, "https://new.test/", false)
	if err != nil {
		t.Fatal(err)
	}
	if tab.ID == 0 || tab.Native != 100 || !tab.Shared || tab.BrowserID != browser || tab.URL != "https://new.test/" {
		t.Fatalf("created %+v", tab)
	}
	if _, err := w.Until(ctx(t), func(s Snapshot) bool { return len(s.Tabs) == 1 && s.Tabs[0].ID == tab.ID }); err != nil {
		t.Fatal(err)
	}
	if err := e.client.CloseTab(ctx(t), tab.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Until(ctx(t), func(s Snapshot) bool { return len(s.Tabs) == 0 }); err != nil {
		t.Fatalf("closed tab stayed: %v", err)
	}
	if err := e.client.CloseTab(ctx(t), tab.ID); !errors.Is(err, wire.ErrNoSuchTab) {
		t.Fatalf("closing twice: %v", err)
	}
}

func TestEvents(t *testing.T) {
	e := newInspectEnv(t, 0)
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
	if _, err := e.client.Events(ctx(t), 424242); !errors.Is(err, wire.ErrNoSuchTab) {
		t.Fatalf("events of a missing tab: %v", err)
	}
	s, err := e.client.Events(ctx(t), tab5)
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
	want := []Event{
		{Kind: KindCDPEvent, Method: "Page.loadEventFired", Params: json.RawMessage(`{"timestamp":1}`), SessionID: "S"},
		{Kind: KindDetached, Reason: "canceled_by_user"},
		{Kind: KindUpdated},
		{Kind: KindClosed},
	}
	for i, wnt := range want {
		select {
		case got, ok := <-s.C:
			if !ok {
				t.Fatalf("stream ended: %v", s.Err())
			}
			if wnt.Kind == KindUpdated {
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
	s6, err := e.client.Events(ctx(t), tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer s6.Close()
	x.Kill()
	select {
	case got := <-s6.C:
		if got.Kind != KindGone {
			t.Fatalf("after kill: %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no gone event")
	}
}

func TestEventsSlowClientCutOff(t *testing.T) {
	// A small backlog keeps the test quick: the socket buffers between the
	// server and an unread client still hold a few hundred events.
	e := newInspectEnv(t, 8)
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
	var last Event
	lines := 0
	for ev := range s.C {
		last = ev
		lines++
	}
	t.Logf("the client read %d of %d events before the cut-off", lines-1, n)
	if last.Kind != KindOverflow || lines >= n {
		t.Fatalf("read %d lines, last %+v; want a cut-off stream ending in overflow", lines, last)
	}
}

func TestShutdownAnswersPendingRequests(t *testing.T) {
	e := newInspectEnv(t, 0)
	w := e.watch(t)
	x := e.dial(t, "i1")
	started := make(chan struct{}, 1)
	x.Handle(wire.MethodCDP, func(json.RawMessage) (any, error) {
		started <- struct{}{}
		<-x.Done()
		return nil, errors.New("closed")
	})
	tab := e.tabs(t, w, x, []wire.TabInfo{{ID: 5, URL: "https://a.test/", Shared: true}}, 5)
	ev, err := e.client.Events(ctx(t), tab.ID)
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
	// The companion's order: the hub closes, then the channel. The request
	// in flight must still get its answer.
	closed := make(chan error, 1)
	go func() { closed <- e.close() }()
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
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
