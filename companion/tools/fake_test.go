package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// fakeEnv is a hub with one fake extension (hubtest) whose cdp handler
// imitates just enough of a page for the engine's checks: no browser, so
// these tests pin the rules themselves.
type fakeEnv struct {
	hub *hub.Hub
	ext *hubtest.Ext
	e   *tools.Engine

	mu     sync.Mutex
	href   string   // what the fake page reports as location.href
	calls  []string // CDP methods received
	paused atomic.Bool
}

func newFake(t testing.TB, tabs []wire.TabInfo) *fakeEnv {
	t.Helper()
	changed := make(chan struct{}, 1)
	h := hub.New(hub.Options{Logger: quietLogger(), OnChange: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	srv := httptest.NewServer(h)
	f := &fakeEnv{hub: h, href: "https://shop.example/cart"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ext, err := hubtest.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/", wire.Hello{Version: 3, ExtensionVersion: "test", Browser: "Chromium", InstanceID: "i1", BrowserSessionID: "s1"}, hubtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.ext = ext
	next := 100
	ext.Handle(wire.MethodTabsCreate, func(params json.RawMessage) (any, error) {
		var p wire.CreateParams
		json.Unmarshal(params, &p)
		f.mu.Lock()
		next++
		id := next
		f.mu.Unlock()
		return wire.TabInfo{ID: id, URL: p.URL, Shared: true, Agent: true, Owner: p.Owner, WindowID: 1}, nil
	})
	ext.Handle(wire.MethodTabsList, func(json.RawMessage) (any, error) { return tabs, nil })
	ext.Handle(wire.MethodCDP, f.cdp)
	ext.Handle(wire.MethodTabsPrepare, func(json.RawMessage) (any, error) {
		f.mu.Lock()
		f.calls = append(f.calls, wire.MethodTabsPrepare)
		f.mu.Unlock()
		return map[string]any{}, nil
	})
	if err := ext.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	// Dial returns before the hub has processed hello; wait for both the
	// browser and its tabs.
	for len(h.Browsers()) == 0 || len(h.Tabs()) < len(tabs) {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the hub never saw the fake extension's tabs")
		}
	}
	f.e = tools.NewEngine(tools.Options{Hub: h, Logger: quietLogger(), Paused: func() error {
		if f.paused.Load() {
			return errors.New("paused from the tray")
		}
		return nil
	}})
	t.Cleanup(func() {
		f.e.Close()
		ext.Kill()
		h.Close()
		srv.Close()
	})
	return f
}

var helperFn = regexp.MustCompile(`__reins\.call\("(\w+)"`)

// helperCall is the page.js function a Runtime.callFunctionOn runs ("" for
// none) in the world of context. A fresh world's first call is setup, whose
// second argument names the function it answers as: setup says so.
type helperCall struct {
	fn      string
	setup   bool
	context int
}

func helperOf(params json.RawMessage) helperCall {
	var cp struct {
		FunctionDeclaration string `json:"functionDeclaration"`
		ExecutionContextID  int    `json:"executionContextId"`
		Arguments           []struct {
			Value any `json:"value"`
		} `json:"arguments"`
	}
	json.Unmarshal(params, &cp)
	c := helperCall{context: cp.ExecutionContextID}
	if m := helperFn.FindStringSubmatch(cp.FunctionDeclaration); m != nil {
		c.fn = m[1]
	}
	if c.fn == "setup" && len(cp.Arguments) > 1 {
		c.setup = true
		c.fn, _ = cp.Arguments[1].Value.(string)
	}
	return c
}

func (f *fakeEnv) cdp(params json.RawMessage) (any, error) {
	var p wire.CDPParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.calls = append(f.calls, p.Method)
	href := f.href
	f.mu.Unlock()
	reply := func(ok any) any {
		return map[string]any{"result": map[string]any{"type": "object", "value": map[string]any{"ok": ok, "href": href, "title": "Cart"}}}
	}
	switch p.Method {
	case "Page.getFrameTree":
		return map[string]any{"frameTree": map[string]any{"frame": map[string]any{"id": "F1"}}}, nil
	case "Page.createIsolatedWorld":
		return map[string]any{"executionContextId": 7}, nil
	case "Page.getNavigationHistory":
		return map[string]any{"currentIndex": 0, "entries": []any{map[string]any{"id": 1, "url": href, "title": "Cart"}}}, nil
	case "Runtime.evaluate":
		return map[string]any{"result": map[string]any{"type": "undefined"}}, nil
	case "Runtime.callFunctionOn":
		fn := helperOf(p.Params).fn
		if fn == "" {
			return nil, fmt.Errorf("unexpected function %s", p.Params)
		}
		switch fn {
		case "tree":
			return reply(map[string]any{"lines": []string{`button "Pay" [ref_1]`}, "vw": 1280, "vh": 800}), nil
		case "viewport":
			return reply(map[string]any{"w": 1280, "h": 800, "dpr": 1}), nil
		case "setup":
			return reply(map[string]any{"prefix": ""}), nil
		case "probe", "info", "quiet":
			return reply(map[string]any{"desc": `button "Pay"`}), nil
		case "formInput":
			return reply(map[string]any{"desc": "x", "now": "y", "kind": "text"}), nil
		}
		return nil, fmt.Errorf("unexpected helper %s", fn)
	}
	return map[string]any{}, nil
}

func (f *fakeEnv) called(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c == method {
			return true
		}
	}
	return false
}

func (f *fakeEnv) call(t *testing.T, s *tools.Session, tool string, args any) *tools.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	return f.e.Call(context.Background(), s, tool, raw)
}

func wantCode(t *testing.T, res *tools.Result, code wire.Code) string {
	t.Helper()
	if !res.IsError || res.Code != code || !strings.HasPrefix(text(res), "["+string(code)+"] ") {
		t.Fatalf("want %s, got isError=%v code=%q: %s", code, res.IsError, res.Code, text(res))
	}
	return text(res)
}

var catalogNames = []string{
	"browser_batch", "cdp", "computer", "devtools", "dialog", "downloads", "emulate", "extensions", "find", "form_input",
	"get_page_text", "gif_creator", "javascript_tool", "navigate", "read_console_messages", "read_network_requests", "read_page",
	"resize_window", "shortcuts_execute", "shortcuts_list", "storage", "switch_browser", "tab", "tabs_context_mcp",
	"tabs_create_mcp", "update_plan", "upload_file", "upload_image", "wait_for",
}

func TestCatalog(t *testing.T) {
	e := tools.NewEngine(tools.Options{Hub: hub.New(hub.Options{Logger: quietLogger()}), Logger: quietLogger()})
	defer e.Close()
	var names []string
	for _, info := range e.Catalog() {
		names = append(names, info.Name)
		if len(info.Description) < 30 {
			t.Errorf("%s: description too thin: %q", info.Name, info.Description)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(info.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: schema %s (%v)", info.Name, info.InputSchema, err)
		}
		for name, p := range schema.Properties {
			if !strings.Contains(string(p), `"description"`) {
				t.Errorf("%s.%s has no description", info.Name, name)
			}
		}
		// downloads lists and waits across tabs; only save_pdf needs one.
		if _, ok := schema.Properties["tabId"]; ok && !strings.HasPrefix(info.Name, "gif") && info.Name != "downloads" {
			found := false
			for _, r := range schema.Required {
				found = found || r == "tabId"
			}
			if !found {
				t.Errorf("%s: tabId is not required", info.Name)
			}
		}
		if info.ReadOnly && (info.Destructive || info.Mutating) {
			t.Errorf("%s is read-only and destructive/mutating", info.Name)
		}
		if info.Name != "browser_batch" && !info.Batchable {
			t.Errorf("%s cannot be batched", info.Name)
		}
	}
	if !sort.StringsAreSorted(names) || strings.Join(names, ",") != strings.Join(catalogNames, ",") {
		t.Fatalf("catalog = %v", names)
	}
	for _, info := range e.Catalog() {
		switch info.Name {
		case "computer":
			var s struct {
				Properties struct {
					Action struct {
						Enum []string `json:"enum"`
					} `json:"action"`
				} `json:"properties"`
			}
			json.Unmarshal(info.InputSchema, &s)
			if len(s.Properties.Action.Enum) != 13 {
				t.Fatalf("computer actions: %v", s.Properties.Action.Enum)
			}
			if !info.Mutating || !info.Destructive {
				t.Fatal("computer must be mutating and destructive")
			}
		case "read_page", "find", "get_page_text", "tabs_context_mcp", "read_console_messages", "read_network_requests":
			if !info.ReadOnly {
				t.Fatalf("%s must be read-only", info.Name)
			}
		case "form_input", "upload_image", "navigate":
			if !info.Mutating || info.ReadOnly {
				t.Fatalf("%s must be mutating", info.Name)
			}
		}
	}
}

func TestEngineRules(t *testing.T) {
	f := newFake(t, []wire.TabInfo{
		{ID: 1, URL: "https://shop.example/cart", Title: "Cart", Shared: true, WindowID: 1},
		{ID: 2, URL: "https://bank.example/", Title: "Bank", Shared: false, WindowID: 1},
		{ID: 3, URL: "chrome://settings", Title: "Settings", Shared: true, WindowID: 1},
	})
	tabs := map[int]int{}
	for _, tb := range f.hub.Tabs() {
		tabs[tb.Native] = tb.ID
	}
	alice, bob := f.e.NewSession("agent:alice", "alice"), f.e.NewSession("agent:bob", "bob")

	t.Run("unknown tool", func(t *testing.T) {
		if msg := wantCode(t, f.call(t, alice, "no_such", nil), wire.CodeUnknownTool); msg != "[unknown_tool] Unknown tool: no_such" {
			t.Fatal(msg)
		}
	})
	t.Run("paused comes first", func(t *testing.T) {
		f.paused.Store(true)
		defer f.paused.Store(false)
		wantCode(t, f.call(t, alice, "no_such", nil), wire.CodePaused)
		wantCode(t, f.call(t, alice, "read_page", map[string]any{"tabId": tabs[1]}), wire.CodePaused)
	})
	t.Run("bad arguments", func(t *testing.T) {
		wantCode(t, f.call(t, alice, "read_page", map[string]any{"tabId": "one"}), wire.CodeBadParams)
		wantCode(t, f.call(t, alice, "computer", map[string]any{"tabId": tabs[1]}), wire.CodeBadParams)
		wantCode(t, f.e.Call(context.Background(), alice, "read_page", json.RawMessage(`[1]`)), wire.CodeBadParams)
	})
	t.Run("not shared and restricted", func(t *testing.T) {
		msg := wantCode(t, f.call(t, alice, "read_page", map[string]any{"tabId": tabs[2]}), wire.CodeNotShared)
		if msg != fmt.Sprintf("[not_shared] tab %d is not shared with Reins", tabs[2]) {
			t.Fatal(msg)
		}
		wantCode(t, f.call(t, alice, "read_page", map[string]any{"tabId": tabs[3]}), wire.CodeRestrictedURL)
		wantCode(t, f.call(t, alice, "read_page", map[string]any{"tabId": 424242}), wire.CodeNoSuchTab)
	})
	t.Run("tab_not_in_session", func(t *testing.T) {
		out := f.call(t, alice, "tabs_create_mcp", map[string]any{})
		if out.IsError {
			t.Fatal(text(out))
		}
		id := 0
		fmt.Sscanf(text(out), "Created tab %d", &id)
		wantCode(t, f.call(t, bob, "read_page", map[string]any{"tabId": id}), wire.CodeTabNotInSession)
		wantCode(t, f.call(t, bob, "computer", map[string]any{"action": "left_click", "tabId": id, "coordinate": []int{1, 1}}), wire.CodeTabNotInSession)
		// The hand-shared tab is everyone's.
		if res := f.call(t, bob, "read_page", map[string]any{"tabId": tabs[1]}); res.IsError {
			t.Fatal(text(res))
		}
	})
	t.Run("navigated_away", func(t *testing.T) {
		if res := f.call(t, alice, "read_page", map[string]any{"tabId": tabs[1]}); res.IsError {
			t.Fatal(text(res))
		}
		f.mu.Lock()
		f.href = "https://evil.example/phish"
		f.calls = nil
		f.mu.Unlock()
		msg := wantCode(t, f.call(t, alice, "computer", map[string]any{"action": "left_click", "tabId": tabs[1], "coordinate": []int{10, 10}}), wire.CodeNavigatedAway)
		if !strings.Contains(msg, "https://shop.example") || !strings.Contains(msg, "https://evil.example") {
			t.Fatalf("message does not name both origins: %s", msg)
		}
		if f.called("Input.dispatchMouseEvent") {
			t.Fatal("the click was sent anyway")
		}
		wantCode(t, f.call(t, alice, "computer", map[string]any{"action": "key", "tabId": tabs[1], "text": "Return"}), wire.CodeNavigatedAway)
		if f.called("Input.dispatchKeyEvent") {
			t.Fatal("the key was sent anyway")
		}
		// carol never looked at the tab, so she has nothing to be misled
		// by; alice acts again once she has looked.
		if res := f.call(t, f.e.NewSession("agent:carol", "carol"), "computer", map[string]any{"action": "left_click", "tabId": tabs[1], "coordinate": []int{10, 10}}); res.IsError {
			t.Fatal(text(res))
		}
		f.call(t, alice, "read_page", map[string]any{"tabId": tabs[1]})
		if res := f.call(t, alice, "computer", map[string]any{"action": "left_click", "tabId": tabs[1], "coordinate": []int{10, 10}}); res.IsError {
			t.Fatal(text(res))
		}
		if !f.called("Input.dispatchMouseEvent") {
			t.Fatal("no click after a fresh look")
		}
	})
	t.Run("batch stops at the first error", func(t *testing.T) {
		res := f.call(t, alice, "browser_batch", map[string]any{"steps": []map[string]any{
			{"tool": "update_plan", "args": map[string]any{"domains": []string{"a"}, "approach": []string{"b"}}},
			{"tool": "nope"},
			{"tool": "update_plan", "args": map[string]any{"domains": []string{"c"}, "approach": []string{"d"}}},
		}})
		out := text(res)
		if !res.IsError || res.Code != wire.CodeUnknownTool || !strings.Contains(out, "- a") || strings.Contains(out, "- c") {
			t.Fatalf("batch: %s", out)
		}
	})
}

func TestNavigatePreparesNewTab(t *testing.T) {
	f := newFake(t, []wire.TabInfo{{ID: 5, URL: "chrome://newtab/", Title: "New Tab", Shared: true, WindowID: 1}})
	id := f.hub.Tabs()[0].ID
	s := f.e.NewSession("agent:opener", "opener")
	res := f.call(t, s, "navigate", map[string]any{"tabId": id, "url": "shop.example/cart"})
	if res.IsError {
		t.Fatal(text(res))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	prepared, navigated := -1, -1
	for i, c := range f.calls {
		switch c {
		case wire.MethodTabsPrepare:
			prepared = i
		case "Page.navigate":
			navigated = i
		}
	}
	if prepared < 0 || navigated < prepared {
		t.Fatalf("calls %v: want tabs.prepare before Page.navigate", f.calls)
	}
	for _, c := range f.calls[:prepared] {
		if strings.Contains(c, ".") && c != wire.MethodTabsPrepare {
			t.Fatalf("CDP %s sent to a New Tab page before tabs.prepare", c)
		}
	}
}

func TestDisabledTools(t *testing.T) {
	e := tools.NewEngine(tools.Options{Hub: hub.New(hub.Options{Logger: quietLogger()}), Logger: quietLogger(),
		Disabled: func(tool string) error {
			if tool == "update_plan" {
				return wire.Errorf(wire.CodeUnauthorized, "the person turned %s off", tool)
			}
			return nil
		}})
	defer e.Close()
	s := e.NewSession("agent:a", "a")
	res := e.Call(context.Background(), s, "update_plan", json.RawMessage(`{"domains":[],"approach":[]}`))
	wantCode(t, res, wire.CodeUnauthorized)
	res = e.Call(context.Background(), s, "browser_batch", json.RawMessage(`{"steps":[{"tool":"shortcuts_list"},{"tool":"update_plan","args":{"domains":[],"approach":[]}}]}`))
	if !res.IsError || res.Code != wire.CodeUnauthorized || !strings.Contains(text(res), "step 2/2: update_plan failed") {
		t.Fatalf("disabled tool in a batch: %s", text(res))
	}
}

func TestCreateIfEmpty(t *testing.T) {
	f := newFake(t, nil)
	s := f.e.NewSession("agent:lonely", "lonely")
	out := text(f.call(t, s, "tabs_context_mcp", map[string]any{}))
	if !strings.Contains(out, `"tabs": []`) || !strings.Contains(out, "No tabs yet") {
		t.Fatalf("empty context: %s", out)
	}
	out = text(f.call(t, s, "tabs_context_mcp", map[string]any{"createIfEmpty": true}))
	if !strings.Contains(out, `"sharedBy": "you"`) || !strings.Contains(out, `"group": "Reins · lonely"`) {
		t.Fatalf("createIfEmpty: %s", out)
	}
}
