package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/wire"
)

// These tests run the real companion (real engine, MCP endpoint and paired
// backend client) against a fake extension whose tabs, and their owners,
// outlive its connections, as the real extension's session storage does.

// profile is a browser profile: its tabs survive reconnects.
type profile struct {
	hello wire.Hello

	mu   sync.Mutex
	tabs []wire.TabInfo
	next int
	ext  *hubtest.Ext
}

func newProfile() *profile {
	return &profile{next: 40, hello: wire.Hello{
		Version: 3, ExtensionVersion: "0.1.0", Browser: "Chromium", BrowserEngine: wire.EngineChromium,
		InstanceID: "inst-p", BrowserSessionID: "run-p",
	}}
}

func (p *profile) snapshot() []wire.TabInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]wire.TabInfo(nil), p.tabs...)
}

// connect dials e's extension socket, dropping an earlier connection
// first, and waits until e's hub lists the new connection with the
// profile's tabs.
func (p *profile) connect(t *testing.T, e *env) {
	t.Helper()
	p.mu.Lock()
	old := p.ext
	p.mu.Unlock()
	var before time.Time
	for _, b := range e.c.Hub().Browsers() {
		before = b.Since
	}
	if old != nil {
		old.Kill()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x, err := hubtest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(e.port)+"/", p.hello, hubtest.Options{Origin: "chrome-extension://" + companion.ExtensionID, DataDir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Kill)
	x.Handle(wire.MethodTabsCreate, func(raw json.RawMessage) (any, error) {
		var c wire.CreateParams
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.next++
		tab := wire.TabInfo{ID: p.next, URL: "https://work.example/" + strconv.Itoa(p.next), Title: "Work", Shared: true, Agent: true, Owner: c.Owner, WindowID: 1}
		p.tabs = append(p.tabs, tab)
		return tab, nil
	})
	x.Handle(wire.MethodTabsList, func(json.RawMessage) (any, error) { return p.snapshot(), nil })
	x.Handle(wire.MethodCDP, func(raw json.RawMessage) (any, error) {
		var c wire.CDPParams
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		if c.Method == "Page.getFrameTree" {
			return map[string]any{"frameTree": map[string]any{"frame": map[string]any{"id": "F1"}}}, nil
		}
		return map[string]any{}, nil
	})
	p.mu.Lock()
	p.ext = x
	p.mu.Unlock()
	if err := x.SendTabs(p.snapshot()); err != nil {
		t.Fatal(err)
	}
	n := len(p.snapshot())
	e.waitFor(t, "the profile and its tabs", func() bool {
		bs := e.c.Hub().Browsers()
		return len(bs) == 1 && bs[0].Hello.InstanceID == p.hello.InstanceID && bs[0].OpenTabs == n && bs[0].Since.After(before)
	})
}

// toolText calls a tool over MCP and returns its text and code.
func toolText(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, string) {
	t.Helper()
	res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	code, _ := res.Meta["code"].(string)
	if res.IsError && code == "" {
		code = "?"
	}
	return strings.Join(parts, "\n"), code
}

func createTab(t *testing.T, cs *sdk.ClientSession) int {
	t.Helper()
	out, code := toolText(t, cs, "tabs_create_mcp", map[string]any{})
	var id int
	if _, err := fmt.Sscanf(out, "Created tab %d", &id); err != nil || code != "" {
		t.Fatalf("tabs_create_mcp: [%s] %s", code, out)
	}
	return id
}

// sharedBy is how tabs_context_mcp lists tab to the agent ("" when absent).
func sharedBy(t *testing.T, cs *sdk.ClientSession, tab int) string {
	t.Helper()
	out, code := toolText(t, cs, "tabs_context_mcp", map[string]any{})
	if code != "" {
		t.Fatalf("tabs_context_mcp: [%s] %s", code, out)
	}
	var tc struct {
		Tabs []struct {
			TabID    int    `json:"tabId"`
			SharedBy string `json:"sharedBy"`
		} `json:"tabs"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &tc); err != nil {
		t.Fatalf("tabs_context_mcp: %v\n%s", err, out)
	}
	for _, e := range tc.Tabs {
		if e.TabID == tab {
			return e.SharedBy
		}
	}
	return ""
}

// mine checks that the agent sees the tab as its own and can use it.
func mine(t *testing.T, who string, cs *sdk.ClientSession, tab int) {
	t.Helper()
	if by := sharedBy(t, cs, tab); by != "you" {
		t.Fatalf("%s's tab %d is listed to it as %q", who, tab, by)
	}
	if out, code := toolText(t, cs, "read_console_messages", map[string]any{"tabId": tab}); code != "" {
		t.Fatalf("%s on its own tab: [%s] %s", who, code, out)
	}
}

// notMine checks that the agent can neither see nor drive the tab.
func notMine(t *testing.T, who string, cs *sdk.ClientSession, tab int) {
	t.Helper()
	if by := sharedBy(t, cs, tab); by != "" {
		t.Fatalf("%s sees tab %d as %q", who, tab, by)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"read_console_messages", map[string]any{"tabId": tab}},
		{"javascript_tool", map[string]any{"tabId": tab, "text": "document.cookie"}},
		{"navigate", map[string]any{"tabId": tab, "url": "https://evil.example/"}},
	} {
		if out, code := toolText(t, cs, call.tool, call.args); code != string(wire.CodeTabNotInSession) {
			t.Fatalf("%s %s on tab %d: [%s] %s, want tab_not_in_session", who, call.tool, tab, code, out)
		}
	}
}

// H-3 over MCP: agent A's tab stays A's when the browser's connection drops
// and comes back with the same instance and session ids, and when the
// companion restarts on the same data dir. Agent B, on another token, never
// sees or drives it.
func TestTabsStayTheirAgentsAcrossReconnectAndRestart(t *testing.T) {
	dir := companiontest.ShortDir(t)
	e := newEnvIn(t, dir, nil)
	p := newProfile()
	p.connect(t, e)
	aliceTok, bobTok := e.issue(t, "alice"), e.issue(t, "bob")
	alice, bob := e.connect(t, aliceTok), e.connect(t, bobTok)
	tab := createTab(t, alice)
	mine(t, "alice", alice, tab)
	notMine(t, "bob", bob, tab)

	t.Run("reconnect", func(t *testing.T) {
		p.connect(t, e)
		notMine(t, "bob", bob, tab)
		mine(t, "alice", alice, tab)
	})

	t.Run("companion restart", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.c.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		e2 := newEnvIn(t, dir, nil)
		p.connect(t, e2)
		alice, bob := e2.connect(t, aliceTok), e2.connect(t, bobTok)
		var id int
		for _, tb := range e2.c.Hub().Tabs() {
			id = tb.ID
		}
		notMine(t, "bob", bob, id)
		mine(t, "alice", alice, id)
	})
}

// A paired backend runs as backend:<id>, whatever brand its page chose: a
// backend branded "claude" does not get the tabs of the agent token named
// "claude", nor the agent the backend's.
func TestBackendBrandIsNotAnAgentName(t *testing.T) {
	e := newEnvIn(t, companiontest.ShortDir(t), nil)
	p := newProfile()
	p.connect(t, e)
	claude := e.connect(t, e.issue(t, "claude"))
	tab := createTab(t, claude)

	be := operatortest.New("crm-token", "")
	defer be.Close()
	raw, _ := json.Marshal(map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "crm-token"})
	p.mu.Lock()
	x := p.ext
	p.mu.Unlock()
	if err := x.Send(wire.EventPairOffer, wire.PairOffer{Config: raw, Brand: json.RawMessage(`{"name":"claude"}`), Origin: "https://claude.example"}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "the offer", func() bool { return len(e.c.PendingOffers()) == 1 })
	st, err := e.c.ApproveOffer(e.c.PendingOffers()[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Agent != "claude" || st.Principal != "backend:"+st.ID {
		t.Fatalf("backend %+v: want the brand as its label and backend:<id> as its principal", st)
	}
	if _, err := be.WaitConnected(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	run := func(tool string, args map[string]any) operatortest.Result {
		t.Helper()
		id, err := be.Send(tool, args)
		if err != nil {
			t.Fatal(err)
		}
		r, err := be.Await(ctxT(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run("tabs_context_mcp", map[string]any{})
	if r.Error != "" || strings.Contains(string(r.Result), fmt.Sprintf(`\"tabId\": %d,`, tab)) {
		t.Fatalf("the backend branded claude lists the claude agent's tab %d: %s %s", tab, r.Error, r.Result)
	}
	for _, tool := range []string{"read_console_messages", "javascript_tool"} {
		if r := run(tool, map[string]any{"tabId": tab, "text": "document.cookie"}); !strings.Contains(r.Error, "tab_not_in_session") {
			t.Fatalf("the backend branded claude ran %s on the claude agent's tab: %+v", tool, r)
		}
	}
	// And the other way round: the backend's own tab is not the agent's.
	r = run("tabs_create_mcp", map[string]any{})
	var theirs int
	if c := r.Content(); r.Error != "" || len(c) == 0 {
		t.Fatalf("the backend's tabs_create_mcp: %+v", r)
	} else if _, err := fmt.Sscanf(c[0]["text"].(string), "Created tab %d", &theirs); err != nil {
		t.Fatalf("the backend's tabs_create_mcp: %+v", c)
	}
	if !strings.Contains(r.Content()[0]["text"].(string), `"Reins · claude"`) {
		t.Fatalf("the backend's group title should be its label: %+v", r.Content())
	}
	notMine(t, "the claude agent", claude, theirs)
	mine(t, "the claude agent", claude, tab)
}
