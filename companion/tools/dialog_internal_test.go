package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

// dialogFake is a hub with one fake extension whose pages answer just
// enough for the engine, and which records every dialog answer by tab.
type dialogFake struct {
	hub      *hub.Hub
	ext      *hubtest.Ext
	e        *Engine
	answers  chan answer
	activity chan Activity
	public   map[int]int // native → public tab id
}

type answer struct {
	native int
	accept bool
}

func newDialogFake(t *testing.T, engine wire.Engine, timeout time.Duration, tabs []wire.TabInfo) *dialogFake {
	t.Helper()
	changed := make(chan struct{}, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := hub.New(hub.Options{Logger: log, OnChange: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	srv := httptest.NewServer(h)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ext, err := hubtest.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/",
		wire.Hello{Version: 3, ExtensionVersion: "test", Browser: "Test", BrowserEngine: engine, InstanceID: "i", BrowserSessionID: "s"}, hubtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &dialogFake{hub: h, ext: ext, answers: make(chan answer, 10), activity: make(chan Activity, 10), public: map[int]int{}}
	ext.Handle(wire.MethodTabsList, func(json.RawMessage) (any, error) { return tabs, nil })
	ext.Handle(wire.MethodCDP, f.cdp)
	if err := ext.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for len(h.Tabs()) < len(tabs) {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the hub never saw the tabs")
		}
	}
	for _, tb := range h.Tabs() {
		f.public[tb.Native] = tb.ID
	}
	f.e = NewEngine(Options{Hub: h, Logger: log, DialogTimeout: func() time.Duration { return timeout },
		OnActivity: func(a Activity) {
			if a.Agent == "Reins" {
				f.activity <- a
			}
		}})
	t.Cleanup(func() {
		f.e.Close()
		ext.Kill()
		h.Close()
		srv.Close()
	})
	return f
}

func (f *dialogFake) cdp(params json.RawMessage) (any, error) {
	var p wire.CDPParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	switch p.Method {
	case "Page.getFrameTree":
		return map[string]any{"frameTree": map[string]any{"frame": map[string]any{"id": "F1"}}}, nil
	case "Page.createIsolatedWorld":
		return map[string]any{"executionContextId": 7}, nil
	case "Runtime.evaluate":
		return map[string]any{"result": map[string]any{"type": "undefined"}}, nil
	case "Runtime.callFunctionOn":
		return map[string]any{"result": map[string]any{"type": "object", "value": map[string]any{
			"ok": map[string]any{"lines": []string{`button "Pay" [ref_1]`}}, "href": "https://shop.example/cart", "title": "Cart",
		}}}, nil
	case "Page.handleJavaScriptDialog":
		var a struct {
			Accept bool `json:"accept"`
		}
		json.Unmarshal(p.Params, &a)
		f.answers <- answer{native: p.TabID, accept: a.Accept}
	}
	return map[string]any{}, nil
}

func (f *dialogFake) call(s *Session, tool string, args any) *Result {
	raw, _ := json.Marshal(args)
	return f.e.Call(context.Background(), s, tool, raw)
}

// openDialog makes the page of native tab n show a confirm dialog from
// url, and returns once the engine has heard of it: the hub reads the
// extension's frames in order, so the answer to a request sent after the
// event comes after it.
func (f *dialogFake) openDialog(t *testing.T, n int, url string) {
	t.Helper()
	params, _ := json.Marshal(map[string]any{"type": "confirm", "message": "Transfer all?", "url": url, "hasBrowserHandler": true})
	if err := f.ext.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: n, Method: "Page.javascriptDialogOpening", Params: params}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.hub.TabsList(ctx, f.hub.Browsers()[0].ID); err != nil {
		t.Fatal(err)
	}
}

func (f *dialogFake) pending(t *testing.T, n int) *pageDialog {
	t.Helper()
	ts := f.e.existingTab(f.public[n])
	if ts == nil {
		t.Fatalf("the engine does not follow tab %d", n)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.dlg.current
}

// A dialog in a tab the person shared by hand is never answered by Reins
// alone: the timeout that dismisses one in an agent's tab is not even
// armed there, and only an agent's dialog call answers it.
func TestDialogsInTabsSharedByHandWaitForAnAgent(t *testing.T) {
	f := newDialogFake(t, wire.EngineChromium, 20*time.Millisecond, []wire.TabInfo{
		{ID: 1, URL: "https://bank.example/", Title: "Bank", Shared: true, WindowID: 1},
		{ID: 2, URL: "https://shop.example/cart", Title: "Cart", Shared: true, Agent: true, Owner: "agent:alice", WindowID: 1},
	})
	alice := f.e.NewSession("agent:alice", "alice")
	bob := f.e.NewSession("agent:bob", "bob")
	for _, n := range []int{1, 2} {
		if res := f.call(alice, "read_page", map[string]any{"tabId": f.public[n]}); res.IsError {
			t.Fatalf("read_page: %+v", res)
		}
	}
	f.openDialog(t, 1, "https://bank.example/")
	f.openDialog(t, 2, "https://shop.example/cart")
	select {
	case a := <-f.answers:
		if a.native != 2 || a.accept {
			t.Fatalf("Reins answered %+v; only the agent tab's dismissal was due", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent tab's unanswered dialog was never dismissed")
	}
	select {
	case a := <-f.activity:
		if a.Tool != "dialog" || a.TabID != f.public[2] || a.Outcome != "timeout" {
			t.Fatalf("activity %+v", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no activity for the dismissal")
	}
	d := f.pending(t, 1)
	if d == nil || d.timer != nil {
		t.Fatalf("the person's tab's dialog: %+v (a timer means Reins would answer it)", d)
	}
	if f.pending(t, 2) != nil {
		t.Fatal("the dismissed dialog is still pending")
	}

	res := f.call(bob, "dialog", map[string]any{"tabId": f.public[2], "action": "accept"})
	if res.Code != wire.CodeTabNotInSession {
		t.Fatalf("bob answering alice's tab: %+v", res)
	}
	res = f.call(alice, "read_page", map[string]any{"tabId": f.public[1]})
	if res.Code != wire.CodeDialogOpen || !strings.Contains(res.Content[0].Text, `confirm dialog "Transfer all?"`) {
		t.Fatalf("a call on the blocked tab: %+v", res)
	}
	select {
	case a := <-f.answers:
		t.Fatalf("answered %+v before any agent asked", a)
	default:
	}
	res = f.call(bob, "dialog", map[string]any{"tabId": f.public[1], "action": "dismiss"})
	if res.IsError {
		t.Fatalf("an agent's answer: %+v", res)
	}
	select {
	case a := <-f.answers:
		if a.native != 1 || a.accept {
			t.Fatalf("the agent's answer went out as %+v", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's answer never reached the browser")
	}
}

// A dialog from another origin than the agent last saw in the tab is not
// answered blind: the first answer is refused naming the origin.
func TestDialogAnswerIsGuardedByOrigin(t *testing.T) {
	f := newDialogFake(t, wire.EngineChromium, time.Hour, []wire.TabInfo{
		{ID: 2, URL: "https://shop.example/cart", Title: "Cart", Shared: true, Agent: true, Owner: "agent:alice", WindowID: 1},
	})
	alice := f.e.NewSession("agent:alice", "alice")
	f.call(alice, "read_page", map[string]any{"tabId": f.public[2]})
	f.openDialog(t, 2, "https://evil.example/")
	res := f.call(alice, "dialog", map[string]any{"tabId": f.public[2], "action": "accept"})
	if res.Code != wire.CodeNavigatedAway || !strings.Contains(res.Content[0].Text, "evil.example") {
		t.Fatalf("an answer to a dialog from an unseen origin: %+v", res)
	}
	select {
	case a := <-f.answers:
		t.Fatalf("answered %+v blind", a)
	default:
	}
	// The refusal named the origin: asked again, the agent knows it.
	if res := f.call(alice, "dialog", map[string]any{"tabId": f.public[2], "action": "accept"}); res.IsError {
		t.Fatalf("the second answer: %+v", res)
	}
	if a := <-f.answers; !a.accept || a.native != 2 {
		t.Fatalf("answer %+v", a)
	}
}

// Firefox gives extensions no access to page dialogs: the dialog tool says
// so with its own code, and nothing is sent to the browser.
func TestDialogToolIsUnsupportedInFirefox(t *testing.T) {
	f := newDialogFake(t, wire.EngineFirefox, time.Hour, []wire.TabInfo{
		{ID: 5, URL: "https://shop.example/", Title: "Shop", Shared: true, Agent: true, Owner: "agent:alice", WindowID: 1},
	})
	alice := f.e.NewSession("agent:alice", "alice")
	res := f.call(alice, "dialog", map[string]any{"tabId": f.public[5], "action": "accept"})
	if res.Code != wire.CodeUnsupported || !strings.Contains(res.Content[0].Text, "Firefox") {
		t.Fatalf("dialog in Firefox: %+v", res)
	}
	select {
	case a := <-f.answers:
		t.Fatalf("sent %+v to Firefox", a)
	default:
	}
}

// What a tab keeps of the tabs it opened and of the notes for its next call
// is bounded.
func TestOpenedTabsAndNotesAreBounded(t *testing.T) {
	e := NewEngine(Options{Hub: hub.New(hub.Options{})})
	defer e.Close()
	ts, err := e.tabState(1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 3*maxOpened; i++ {
		ts.tabOpened(hub.Tab{TabInfo: wire.TabInfo{ID: 100 + i}})
		ts.tabOpened(hub.Tab{TabInfo: wire.TabInfo{ID: 100 + i}}) // announced twice, kept once
		ts.windowOpened(json.RawMessage(`{"url":"https://a.example/"}`))
	}
	tabs, urls, _ := ts.openedSince(start)
	if len(tabs) != maxOpened || len(urls) != maxOpened || tabs[0].ID != 100+2*maxOpened {
		t.Fatalf("kept %d tabs (first %d) and %d window requests; want the newest %d", len(tabs), tabs[0].ID, len(urls), maxOpened)
	}
	if later, _, _ := ts.openedSince(time.Now().Add(time.Hour)); len(later) != 0 {
		t.Fatalf("tabs opened before a call are reported to it: %v", later)
	}

	// Notes: one per dialog Reins dismissed, kept until the next call.
	f := newDialogFake(t, wire.EngineChromium, time.Millisecond, []wire.TabInfo{
		{ID: 2, URL: "https://shop.example/cart", Title: "Cart", Shared: true, Agent: true, Owner: "agent:alice", WindowID: 1},
	})
	alice := f.e.NewSession("agent:alice", "alice")
	f.call(alice, "read_page", map[string]any{"tabId": f.public[2]})
	for i := 0; i < 2*maxNotes; i++ {
		f.openDialog(t, 2, "https://shop.example/cart")
		select {
		case <-f.answers:
		case <-time.After(10 * time.Second):
			t.Fatalf("dialog %d was never answered", i)
		}
		select {
		case <-f.activity:
		case <-time.After(10 * time.Second):
			t.Fatalf("dialog %d was never dismissed", i)
		}
	}
	res := f.call(alice, "computer", map[string]any{"action": "wait", "tabId": f.public[2], "duration": 0.01})
	if n := strings.Count(res.Content[0].Text, "Reins dismissed"); n != maxNotes {
		t.Fatalf("%d notes in the next result, want %d: %s", n, maxNotes, res.Content[0].Text)
	}
	res = f.call(alice, "computer", map[string]any{"action": "wait", "tabId": f.public[2], "duration": 0.01})
	if strings.Contains(res.Content[0].Text, "Reins dismissed") {
		t.Fatalf("notes are said twice: %s", res.Content[0].Text)
	}
}

// The dialog and tab tools are refused while Reins is paused or when the
// person turned them off, and are recorded in Activity by name alone.
func TestDialogAndTabToolsHonourPauseAndSettings(t *testing.T) {
	f := newDialogFake(t, wire.EngineChromium, time.Hour, []wire.TabInfo{
		{ID: 2, URL: "https://shop.example/cart", Title: "Cart", Shared: true, Agent: true, Owner: "agent:alice", WindowID: 1},
	})
	var mu sync.Mutex
	var paused bool
	var acts []Activity
	e := NewEngine(Options{Hub: f.hub, Logger: f.e.log,
		Paused: func() error {
			mu.Lock()
			defer mu.Unlock()
			if paused {
				return wire.ErrPaused
			}
			return nil
		},
		Disabled: func(tool string) error {
			if tool == "tab" {
				return wire.Errorf("tool_disabled", "tab is turned off")
			}
			return nil
		},
		OnActivity: func(a Activity) {
			mu.Lock()
			acts = append(acts, a)
			mu.Unlock()
		},
	})
	defer e.Close()
	alice := e.NewSession("agent:alice", "alice")
	call := func(tool string, args any) *Result {
		raw, _ := json.Marshal(args)
		return e.Call(context.Background(), alice, tool, raw)
	}
	tab := f.public[2]
	if res := call("tab", map[string]any{"tabId": tab, "action": "reload"}); res.Code != "tool_disabled" {
		t.Fatalf("a turned-off tab tool: %+v", res)
	}
	mu.Lock()
	paused = true
	mu.Unlock()
	for _, tool := range []string{"dialog", "tab"} {
		if res := call(tool, map[string]any{"tabId": tab, "action": "accept"}); res.Code != wire.CodePaused {
			t.Fatalf("%s while paused: %+v", tool, res)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acts) != 3 || acts[0].Tool != "tab" || acts[1].Tool != "dialog" || acts[1].Outcome != string(wire.CodePaused) || acts[0].Principal != "agent:alice" {
		t.Fatalf("activity %+v", acts)
	}
}

// A paired product's catalog has no dialog tool: a dialog in its way is
// answered at once, cautiously, and the product is told.
func TestDialogsInAProductsWayAreAnsweredCautiously(t *testing.T) {
	f := newDialogFake(t, wire.EngineChromium, time.Hour, []wire.TabInfo{
		{ID: 3, URL: "https://shop.example/cart", Title: "Cart", Shared: true, Agent: true, Owner: "backend:crm", WindowID: 1},
	})
	crm := f.e.NewSession("backend:crm", "Example CRM")
	crm.OperatorCatalog = true
	f.call(crm, "read_page", map[string]any{"tabId": f.public[3]})
	f.openDialog(t, 3, "https://shop.example/cart")
	res := f.call(crm, "read_page", map[string]any{"tabId": f.public[3]})
	if res.IsError || !strings.Contains(res.Content[0].Text, `Reins dismissed the confirm dialog "Transfer all?"`) {
		t.Fatalf("read_page with a dialog in the way: %+v", res)
	}
	select {
	case a := <-f.answers:
		if a.native != 3 || a.accept {
			t.Fatalf("answered %+v", a)
		}
	default:
		t.Fatal("the dialog was not answered")
	}
	if f.pending(t, 3) != nil {
		t.Fatal("the answered dialog is still pending")
	}
}
