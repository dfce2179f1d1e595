package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	hub *hub.Hub
	srv *httptest.Server
	url string
	key linkauth.Key
}

// newEnv runs a hub behind a real WebSocket server. Like the companion's,
// it requires the link handshake; dial proves its key.
func newEnv(t testing.TB, opts hub.Options) *env {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	key := linkauth.NewKey()
	if opts.Auth == nil {
		opts.Auth = linkauth.NewServer(key, linkauth.NewCodes(nil))
	}
	h := hub.New(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &env{hub: h, srv: srv, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/", key: key}
}

func hello(instance, session string) wire.Hello {
	return wire.Hello{Version: 3, ExtensionVersion: "0.1.0", Browser: "Chromium", BrowserEngine: wire.EngineChromium, InstanceID: instance, BrowserSessionID: session}
}

func dial(t testing.TB, e *env, h wire.Hello) *hubtest.Ext {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	x, err := hubtest.Dial(ctx, e.url, h, hubtest.Options{Key: e.key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Kill)
	return x
}

// oneBrowser runs a hub with one fake extension connected, and returns
// the hub's change signal.
func oneBrowser(t testing.TB) (*env, chan struct{}, *hubtest.Ext) {
	t.Helper()
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	return e, changed, dial(t, e, hello("i", "s"))
}

// hangUntilGone makes x answer method only when its connection ends; each
// call that reaches x is reported on the returned channel.
func hangUntilGone(x *hubtest.Ext, method string) <-chan struct{} {
	started := make(chan struct{}, 16)
	x.Handle(method, func(json.RawMessage) (any, error) {
		started <- struct{}{}
		<-x.Done()
		return nil, errors.New("gone")
	})
	return started
}

// waitFor waits for cond with a deadline, re-checking whenever the hub
// reports a change.
func waitFor(t testing.TB, changed <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, 30*time.Second, changed, what, cond)
}

func waitForWithin(t testing.TB, d time.Duration, changed <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(d)
	for !cond() {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func changeSignal() (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	return ch, func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func TestHelloMustComeFirst(t *testing.T) {
	e := newEnv(t, hub.Options{})
	ctx := context.Background()
	x, err := hubtest.Dial(ctx, e.url, wire.Hello{}, hubtest.Options{NoHello: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Send(wire.EventPing, nil); err != nil {
		t.Fatal(err)
	}
	if got := x.CloseStatus(); got != websocket.StatusPolicyViolation {
		t.Fatalf("close status %v (%v), want policy violation", got, x.Err())
	}
	if n := len(e.hub.Browsers()); n != 0 {
		t.Fatalf("%d browsers registered", n)
	}
}

func TestNonObjectFrameCloses(t *testing.T) {
	for _, frame := range []string{`[1,2]`, `"hello"`, `42`, `not json`, `{"event":`} {
		t.Run("first/"+frame, func(t *testing.T) {
			e := newEnv(t, hub.Options{})
			x, err := hubtest.Dial(context.Background(), e.url, wire.Hello{}, hubtest.Options{NoHello: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := x.WriteRaw([]byte(frame)); err != nil {
				t.Fatal(err)
			}
			if got := x.CloseStatus(); got != websocket.StatusPolicyViolation {
				t.Fatalf("close status %v, want policy violation", got)
			}
		})
	}
	t.Run("after hello", func(t *testing.T) {
		changed, notify := changeSignal()
		e := newEnv(t, hub.Options{OnChange: notify})
		x := dial(t, e, hello("i1", "s1"))
		waitFor(t, changed, "browser", func() bool { return len(e.hub.Browsers()) == 1 })
		if err := x.WriteRaw([]byte(`[]`)); err != nil {
			t.Fatal(err)
		}
		if got := x.CloseStatus(); got != websocket.StatusPolicyViolation {
			t.Fatalf("close status %v, want policy violation", got)
		}
		waitFor(t, changed, "browser gone", func() bool { return len(e.hub.Browsers()) == 0 })
	})
	t.Run("binary", func(t *testing.T) {
		e := newEnv(t, hub.Options{})
		x, err := hubtest.Dial(context.Background(), e.url, wire.Hello{}, hubtest.Options{NoHello: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Conn.Write(context.Background(), websocket.MessageBinary, []byte(`{"event":"hello"}`)); err != nil {
			t.Fatal(err)
		}
		if got := x.CloseStatus(); got != websocket.StatusPolicyViolation {
			t.Fatalf("close status %v, want policy violation", got)
		}
	})
}

func TestTwoProfilesDistinctPublicIDs(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	a := dial(t, e, hello("inst-a", "sess-a"))
	b := dial(t, e, hello("inst-b", "sess-b"))
	// Both profiles use the same native ids; public ids must differ.
	tabs := []wire.TabInfo{{ID: 1, URL: "https://a.test/", Shared: true}, {ID: 2, URL: "https://b.test/"}}
	if err := a.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
	if err := b.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, changed, "4 tabs", func() bool { return len(e.hub.Tabs()) == 4 })
	seen := map[int]string{}
	for _, tab := range e.hub.Tabs() {
		if prev, dup := seen[tab.ID]; dup {
			t.Fatalf("public id %d used by %s and %s", tab.ID, prev, tab.BrowserID)
		}
		seen[tab.ID] = tab.BrowserID
		got, _, err := e.hub.Tab(tab.ID)
		if err != nil || got.Native != tab.Native || got.BrowserID != tab.BrowserID {
			t.Fatalf("Tab(%d) = %+v, %v", tab.ID, got, err)
		}
	}
	bs := e.hub.Browsers()
	if len(bs) != 2 || bs[0].ID == bs[1].ID {
		t.Fatalf("browsers %+v", bs)
	}
}

func tabIDs(h *hub.Hub, browserID string) map[int]int {
	out := map[int]int{}
	for _, t := range h.Tabs() {
		if t.BrowserID == browserID {
			out[t.Native] = t.ID
		}
	}
	return out
}

func TestReconnectKeepsIDsNewSessionDoesNot(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	tabs := []wire.TabInfo{{ID: 10, URL: "https://a.test/", Shared: true}, {ID: 11, URL: "https://b.test/", Shared: true}}

	x := dial(t, e, hello("inst", "run-1"))
	x.SendTabs(tabs)
	waitFor(t, changed, "tabs", func() bool { return len(e.hub.Tabs()) == 2 })
	browserID := e.hub.Browsers()[0].ID
	first := tabIDs(e.hub, browserID)
	x.Kill()
	waitFor(t, changed, "disconnect", func() bool { return len(e.hub.Browsers()) == 0 })
	if _, _, err := e.hub.Tab(first[10]); !errors.Is(err, wire.ErrNoSuchBrowser) {
		t.Fatalf("tab of a disconnected browser: %v, want no_such_browser", err)
	}

	y := dial(t, e, hello("inst", "run-1"))
	y.SendTabs(tabs)
	waitFor(t, changed, "tabs again", func() bool { return len(e.hub.Tabs()) == 2 })
	if id := e.hub.Browsers()[0].ID; id != browserID {
		t.Fatalf("browser id changed across reconnect: %s → %s", browserID, id)
	}
	again := tabIDs(e.hub, browserID)
	if fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("reconnect changed public ids: %v → %v", first, again)
	}
	y.Kill()
	waitFor(t, changed, "disconnect", func() bool { return len(e.hub.Browsers()) == 0 })

	z := dial(t, e, hello("inst", "run-2"))
	z.SendTabs(tabs)
	waitFor(t, changed, "tabs of new run", func() bool { return len(e.hub.Tabs()) == 2 })
	fresh := tabIDs(e.hub, browserID)
	for native, id := range fresh {
		for _, old := range first {
			if id == old {
				t.Fatalf("new browser run reused public id %d for native %d", id, native)
			}
		}
	}
	if _, _, err := e.hub.Tab(first[10]); !errors.Is(err, wire.ErrNoSuchTab) {
		t.Fatalf("old run's id resolved: %v", err)
	}
}

func sharedTab(t *testing.T, e *env, changed chan struct{}, x *hubtest.Ext, native int) int {
	t.Helper()
	if err := x.SendTabs([]wire.TabInfo{{ID: native, URL: "https://page.test/", Title: "t", Shared: true}}); err != nil {
		t.Fatal(err)
	}
	var id int
	waitFor(t, changed, "shared tab", func() bool {
		for _, tab := range e.hub.Tabs() {
			if tab.Native == native && tab.Shared {
				id = tab.ID
				return true
			}
		}
		return false
	})
	return id
}

func TestRequestTimeout(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify, RequestTimeout: 200 * time.Millisecond})
	x := dial(t, e, hello("i", "s"))
	x.Handle(wire.MethodCDP, x.Never())
	id := sharedTab(t, e, changed, x, 5)
	start := time.Now()
	_, err := e.hub.CDP(context.Background(), id, "Runtime.evaluate", map[string]any{"expression": "1"}, "", "")
	if !errors.Is(err, wire.ErrTimeout) {
		t.Fatalf("err = %v, want timeout", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("timeout took %s", el)
	}
	// The caller's own deadline wins when it is earlier.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := e.hub.CDP(ctx, id, "Runtime.evaluate", nil, "", ""); wire.CodeOf(err) != wire.CodeTimeout {
		t.Fatalf("err = %v, want timeout", err)
	}
}

func TestDisconnectMidRequestFailsFast(t *testing.T) {
	e, changed, x := oneBrowser(t)
	started := hangUntilGone(x, wire.MethodCDP)
	id := sharedTab(t, e, changed, x, 7)
	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := e.hub.CDP(context.Background(), id, "Runtime.evaluate", nil, "", "")
			errs <- err
		}()
	}
	for range n {
		<-started
	}
	killed := time.Now()
	x.Kill()
	for range n {
		select {
		case err := <-errs:
			if !errors.Is(err, wire.ErrNoSuchBrowser) {
				t.Fatalf("err = %v, want no_such_browser", err)
			}
		case <-time.After(time.Second):
			t.Fatal("a pending request was left hanging after disconnect")
		}
	}
	t.Logf("all pending requests failed %s after the disconnect", time.Since(killed))
	if _, err := e.hub.CDP(context.Background(), id, "Runtime.evaluate", nil, "", ""); !errors.Is(err, wire.ErrNoSuchBrowser) {
		t.Fatalf("after disconnect: %v", err)
	}
}

func TestOversizedFrameCloses(t *testing.T) {
	changed, notify := changeSignal()
	logs := &syncLog{}
	e := newEnv(t, hub.Options{OnChange: notify, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	x := dial(t, e, hello("i", "s"))
	waitFor(t, changed, "browser", func() bool { return len(e.hub.Browsers()) == 1 })
	big := make([]byte, wire.MaxFrameBytes+10)
	copy(big, `{"event":"ping","params":"`)
	for i := 26; i < len(big)-2; i++ {
		big[i] = 'a'
	}
	copy(big[len(big)-2:], `"}`)
	// The companion closes while the frame is still being written, so the
	// write may fail; what matters is the companion's side.
	go x.Conn.Write(context.Background(), websocket.MessageText, big)
	// 64 MiB through the race detector is slow on a loaded machine.
	waitForWithin(t, 3*time.Minute, changed, "browser gone", func() bool { return len(e.hub.Browsers()) == 0 })
	<-x.Done()
	if st := x.CloseStatus(); st != -1 && st != websocket.StatusMessageTooBig {
		t.Fatalf("close status %v, want message too big", st)
	}
	if !strings.Contains(logs.String(), "frame over 64 MiB") {
		t.Fatalf("the companion did not close for the frame size:\n%s", logs.String())
	}
}

type syncLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func TestErrorCodesTravel(t *testing.T) {
	e, changed, x := oneBrowser(t)
	x.Handle(wire.MethodCDP, func(json.RawMessage) (any, error) {
		return nil, wire.Errorf(wire.CodeNotShared, "tab is not shared")
	})
	id := sharedTab(t, e, changed, x, 3)
	_, err := e.hub.CDP(context.Background(), id, "Page.navigate", nil, "", "")
	if !errors.Is(err, wire.ErrNotShared) || err.Error() != "tab is not shared" {
		t.Fatalf("err = %v", err)
	}
	// Unknown methods come back with their code.
	if _, err := e.hub.DownloadsList(context.Background(), e.hub.Browsers()[0].ID); !errors.Is(err, wire.ErrUnknownMethod) {
		t.Fatalf("err = %v, want unknown_method", err)
	}
}

func TestCompanionChecksSharingAndURL(t *testing.T) {
	e, changed, x := oneBrowser(t)
	calls := make(chan struct{}, 10)
	x.Handle(wire.MethodCDP, func(json.RawMessage) (any, error) { calls <- struct{}{}; return map[string]any{}, nil })
	x.SendTabs([]wire.TabInfo{
		{ID: 1, URL: "https://ok.test/", Shared: false},
		{ID: 2, URL: "chrome://settings/", Shared: true},
	})
	waitFor(t, changed, "tabs", func() bool { return len(e.hub.Tabs()) == 2 })
	for _, tab := range e.hub.Tabs() {
		_, err := e.hub.CDP(context.Background(), tab.ID, "Runtime.evaluate", nil, "", "")
		want := wire.ErrNotShared
		if tab.Native == 2 {
			want = wire.ErrRestrictedURL
		}
		if !errors.Is(err, want) {
			t.Fatalf("tab %d: %v, want %v", tab.Native, err, want.Code)
		}
	}
	if len(calls) != 0 {
		t.Fatal("a refused call reached the extension")
	}
}

// A raw Page.navigate through the cdp request is where an agent could go
// around the tools' URL rules: file: (the data dir's secrets.json), a
// Windows share or an app scheme is refused before it reaches the browser.
func TestCDPNavigationStaysOnTheWeb(t *testing.T) {
	e, changed, x := oneBrowser(t)
	calls := make(chan string, 10)
	x.Handle(wire.MethodCDP, func(p json.RawMessage) (any, error) {
		var c wire.CDPParams
		json.Unmarshal(p, &c)
		calls <- c.Method
		return map[string]any{}, nil
	})
	id := sharedTab(t, e, changed, x, 3)
	for _, tc := range []struct {
		method string
		params any
	}{
		{"Page.navigate", map[string]any{"url": "file:///home/person/.local/share/reins/secrets.json"}},
		{"Page.navigate", map[string]any{"url": "file://fileserver/share/x.html"}},
		{"Page.navigate", map[string]any{"url": "vscode://x"}},
		{"Page.navigate", json.RawMessage(`{"url":"https://ok.test/","url":"file:///etc/passwd"}`)},
		{"Target.createTarget", map[string]any{"url": "file:///etc/passwd"}},
	} {
		if _, err := e.hub.CDP(context.Background(), id, tc.method, tc.params, "", ""); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("%s %v: %v, want restricted_url", tc.method, tc.params, err)
		}
	}
	if len(calls) != 0 {
		t.Fatalf("a refused command reached the extension: %s", <-calls)
	}
	if _, err := e.hub.CDP(context.Background(), id, "Page.navigate", map[string]any{"url": "https://ok.test/next"}, "", ""); err != nil {
		t.Fatal(err)
	}
	if m := <-calls; m != "Page.navigate" {
		t.Fatalf("the extension got %s", m)
	}
}

func TestConcurrentCDPNoMisrouting(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	var ids []int
	for i, name := range []string{"a", "b"} {
		x := dial(t, e, hello("inst-"+name, "s"))
		name := name
		x.Handle(wire.MethodCDP, func(p json.RawMessage) (any, error) {
			var c wire.CDPParams
			if err := json.Unmarshal(p, &c); err != nil {
				return nil, err
			}
			return map[string]any{"browser": name, "tab": c.TabID, "echo": json.RawMessage(c.Params)}, nil
		})
		ids = append(ids, sharedTab(t, e, changed, x, 100+i))
	}
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			which := i % 2
			res, err := e.hub.CDP(context.Background(), ids[which], "Runtime.evaluate", map[string]int{"seq": i}, "", "")
			if err != nil {
				errs <- err
				return
			}
			var got struct {
				Browser string            `json:"browser"`
				Tab     int               `json:"tab"`
				Echo    struct{ Seq int } `json:"echo"`
			}
			if err := json.Unmarshal(res, &got); err != nil {
				errs <- err
				return
			}
			wantBrowser := []string{"a", "b"}[which]
			if got.Browser != wantBrowser || got.Tab != 100+which || got.Echo.Seq != i {
				errs <- fmt.Errorf("request %d misrouted: %+v", i, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestShutdownClosesExtensionsAndFailsPending(t *testing.T) {
	e, changed, x := oneBrowser(t)
	started := hangUntilGone(x, wire.MethodCDP)
	id := sharedTab(t, e, changed, x, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := e.hub.CDP(context.Background(), id, "Runtime.evaluate", nil, "", "")
		errc <- err
	}()
	<-started
	e.hub.Close()
	if err := <-errc; !errors.Is(err, wire.ErrNoSuchBrowser) || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("pending request: %v", err)
	}
	if got := x.CloseStatus(); got != websocket.StatusGoingAway {
		t.Fatalf("extension got close status %v, want going away", got)
	}
}

func TestPolicyReachesExtensions(t *testing.T) {
	e := newEnv(t, hub.Options{})
	e.hub.SetPolicy(wire.Policy{Paused: true, Overlay: true})
	x := dial(t, e, hello("i", "s"))
	for {
		select {
		case ev := <-x.Events():
			if ev.Event != wire.EventPolicy {
				continue
			}
			var p wire.Policy
			json.Unmarshal(ev.Params, &p)
			if !p.Paused || !p.Overlay {
				t.Fatalf("policy %+v", p)
			}
			return
		case <-time.After(30 * time.Second):
			t.Fatal("no policy event")
		}
	}
}

func TestTabEventsAndSubscriptions(t *testing.T) {
	e, changed, x := oneBrowser(t)
	id := sharedTab(t, e, changed, x, 9)
	got := make(chan hub.TabEvent, 10)
	cancel := e.hub.SubscribeTab(id, func(ev hub.TabEvent) { got <- ev })
	defer cancel()
	x.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: 9, Method: "Page.loadEventFired", Params: json.RawMessage(`{"timestamp":1}`)})
	x.Send(wire.EventDetached, wire.Detached{TabID: 9, Reason: "idle"})
	x.SendTabs(nil)
	want := []hub.TabEventKind{hub.TabCDPEvent, hub.TabDetached, hub.TabClosed}
	for _, k := range want {
		select {
		case ev := <-got:
			if ev.Kind != k {
				t.Fatalf("event %+v, want kind %d", ev, k)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no event of kind %d", k)
		}
	}
}

// A tab the extension shared because another opened it is announced to the
// opener's subscribers once, with public ids; an unshared one, a repeat
// listing and an opener that is gone are not.
func TestTabOpenedReachesTheOpener(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	x := dial(t, e, hello("i", "s"))
	opener := sharedTab(t, e, changed, x, 9)
	got := make(chan hub.TabEvent, 10)
	cancel := e.hub.SubscribeTab(opener, func(ev hub.TabEvent) {
		if ev.Kind == hub.TabOpened {
			got <- ev
		}
	})
	defer cancel()
	page := wire.TabInfo{ID: 9, URL: "https://page.test/", Title: "t", Shared: true}
	unshared := wire.TabInfo{ID: 10, URL: "https://other.test/", Opener: 9}
	x.SendTabs([]wire.TabInfo{page, unshared})
	popup := wire.TabInfo{ID: 11, URL: "https://popup.test/", Shared: true, Agent: true, Owner: "agent:a", Opener: 9}
	x.SendTabs([]wire.TabInfo{page, unshared, popup})
	x.SendTabs([]wire.TabInfo{page, unshared, popup})
	// The unshared tab shared later (as the extension does when it learns
	// the opener from a second event) is news then.
	unshared.Shared = true
	x.SendTabs([]wire.TabInfo{page, unshared, popup})
	for _, want := range []int{11, 10} {
		select {
		case ev := <-got:
			if ev.Tab.Native != want || ev.Tab.Opener != opener || !ev.Tab.Shared || ev.Tab.ID == want {
				t.Fatalf("TabOpened %+v, want native %d opened by public %d", ev.Tab, want, opener)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no TabOpened for native %d", want)
		}
	}
	// The opener closes: its popup's opener has no public id any more.
	x.SendTabs([]wire.TabInfo{popup})
	waitFor(t, changed, "the opener gone", func() bool {
		for _, tab := range e.hub.Tabs() {
			if tab.Native == 11 {
				return tab.Opener == 0
			}
		}
		return false
	})
	select {
	case ev := <-got:
		t.Fatalf("a repeated listing announced %+v again", ev.Tab)
	default:
	}
}

func TestGraphPushedOnlyToGraphProfilesAndOnlyWhenChanged(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	on := true
	x := dial(t, e, hello("i1", "s"))
	y := dial(t, e, hello("i2", "s"))
	graphs := make(chan wire.ConnectionGraph, 10)
	x.Handle(wire.MethodGraphState, func(p json.RawMessage) (any, error) {
		var g wire.ConnectionGraph
		json.Unmarshal(p, &g)
		graphs <- g
		return wire.GraphReceipt{Received: true}, nil
	})
	y.Handle(wire.MethodGraphState, func(json.RawMessage) (any, error) {
		t.Error("graph sent to a profile without graph:true")
		return nil, nil
	})
	x.Send(wire.EventToolsPolicy, wire.ToolsPolicy{Disabled: []string{}, Graph: &on})
	waitFor(t, changed, "two browsers", func() bool { return len(e.hub.Browsers()) == 2 })
	waitFor(t, changed, "policy", func() bool {
		for _, b := range e.hub.Browsers() {
			if b.Graph {
				return true
			}
		}
		return false
	})
	graph := wire.ConnectionGraph{Agents: []wire.GraphAgent{{ID: "a1", Name: "claude"}}}
	xID := ""
	for _, b := range e.hub.Browsers() {
		graph.Browsers = append(graph.Browsers, wire.GraphBrowser{ID: b.ID, Name: b.Name, Mode: string(b.Mode), SharedTabs: b.SharedTabs})
		if b.Graph {
			xID = b.ID
		}
	}
	e.hub.PushGraph(context.Background(), graph)
	e.hub.PushGraph(context.Background(), graph)
	select {
	case g := <-graphs:
		if len(g.Browsers) != 2 || len(g.Agents) != 1 || g.ThisBrowserID == "" {
			t.Fatalf("graph %+v", g)
		}
		if g.ThisBrowserID != xID {
			t.Fatalf("the graph sent to %s says it is seen from %s", xID, g.ThisBrowserID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no graph")
	}
	if len(graphs) != 0 {
		t.Fatal("an unchanged graph was sent twice")
	}
}

func TestPoliciesArriveInOrder(t *testing.T) {
	e, changed, x := oneBrowser(t)
	waitFor(t, changed, "browser", func() bool { return len(e.hub.Browsers()) == 1 })
	for i := range 50 {
		e.hub.SetPolicy(wire.Policy{Paused: i%2 == 0, Disabled: []string{strconv.Itoa(i)}})
	}
	last := -1
	for last != 49 {
		select {
		case ev := <-x.Events():
			if ev.Event != wire.EventPolicy {
				continue
			}
			var p wire.Policy
			json.Unmarshal(ev.Params, &p)
			if len(p.Disabled) == 0 {
				continue // the policy sent on connect
			}
			n, _ := strconv.Atoi(p.Disabled[0])
			if n <= last {
				t.Fatalf("policy %d arrived after policy %d", n, last)
			}
			last = n
		case <-time.After(30 * time.Second):
			t.Fatalf("the newest policy never arrived (last %d)", last)
		}
	}
}

// Options.Admit refuses an extension by its hello: the socket closes with
// StatusRefused and the reason, and nothing is registered. A connected
// browser the person blocks is closed the same way.
func TestAdmitAndBlock(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify, Admit: func(h wire.Hello) error {
		if h.InstanceID == "blocked" {
			return errors.New(hub.ReasonBlocked)
		}
		return nil
	}})
	refused, err := hubtest.Dial(context.Background(), e.url, hello("blocked", "s1"), hubtest.Options{Key: e.key})
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Kill()
	if got := refused.CloseStatus(); got != hub.StatusRefused {
		t.Fatalf("close status %v (%v), want %v", got, refused.Err(), hub.StatusRefused)
	}
	var ce websocket.CloseError
	if !errors.As(refused.Err(), &ce) || ce.Reason != hub.ReasonBlocked {
		t.Fatalf("close error %v, want the reason %q", refused.Err(), hub.ReasonBlocked)
	}
	if n := len(e.hub.Browsers()); n != 0 {
		t.Fatalf("a refused extension was registered: %d browsers", n)
	}

	x := dial(t, e, hello("welcome", "s1"))
	waitFor(t, changed, "the admitted browser", func() bool { return len(e.hub.Browsers()) == 1 })
	b, err := e.hub.Browser(e.hub.Browsers()[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	b.Disconnect(hub.ErrBlocked)
	if got := x.CloseStatus(); got != hub.StatusRefused {
		t.Fatalf("blocking a connected browser: close status %v, want %v", got, hub.StatusRefused)
	}
	waitFor(t, changed, "the blocked browser to leave", func() bool { return len(e.hub.Browsers()) == 0 })
}
