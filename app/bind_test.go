//go:build !nogui

package app

import (
	"io"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/app/desktoptest"
	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
	"github.com/reinshq/reins/ui"
)

// bound is a real companion (real tool engine, --keyring file store) on a
// free 127.0.0.1 port, with the UI binding over it and one subscription.
type bound struct {
	c      *companion.Companion
	b      *binding
	tokens *tokens.Manager
	port   int
	dir    string
	states <-chan ui.State
}

func startBound(t *testing.T) *bound {
	t.Helper()
	dir := dataDir(t)
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, Version: "test", Tokens: tm, Logger: log, NoAdmin: true})
	b := newBinding(c, log)
	states, cancel := b.Subscribe()
	t.Cleanup(func() {
		cancel()
		b.close()
	})
	return &bound{c: c, b: b, tokens: tm, port: port, dir: dir, states: states}
}

// wait receives snapshots until one satisfies ok.
func (e *bound) wait(t *testing.T, what string, ok func(ui.State) bool) ui.State {
	t.Helper()
	deadline := time.After(10 * time.Second)
	var last ui.State
	for {
		select {
		case s, open := <-e.states:
			if !open {
				t.Fatalf("state stream closed while waiting for %s", what)
			}
			if ok(s) {
				return s
			}
			last = s
		case <-deadline:
			t.Fatalf("timed out waiting for %s; last state %+v", what, last)
		}
	}
}

func (e *bound) browser(t *testing.T, hello wire.Hello, tabs []wire.TabInfo) *desktoptest.Browser {
	t.Helper()
	br, err := desktoptest.Dial(testCtx(t), e.port, e.dir, hello, tabs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(br.Close)
	return br
}

var workHello = wire.Hello{
	ExtensionVersion: "0.1.0", Browser: "Chrome", BrowserEngine: wire.EngineChromium,
	InstanceID: "inst-work", BrowserSessionID: "s1", Profile: "Work",
}

func TestBindingStateFollowsTheCompanion(t *testing.T) {
	e := startBound(t)
	first := e.wait(t, "the first snapshot", func(ui.State) bool { return true })
	if first.Port != e.port || first.MCPURL != "http://127.0.0.1:"+strconv.Itoa(e.port)+"/mcp" || first.Version != "test" ||
		first.Paused || !first.Overlay || !slices.Contains(first.Tools, "computer") || len(first.Graph.Browsers) != 0 {
		t.Fatalf("first snapshot %+v", first)
	}

	br := e.browser(t, workHello, []wire.TabInfo{
		{ID: 11, URL: "https://mail.example/inbox", Title: "Inbox", Shared: true, WindowID: 1},
		{ID: 12, URL: "https://news.example/", Title: "News", WindowID: 1},
	})
	s := e.wait(t, "the browser and its shared tab", func(s ui.State) bool { return len(s.Tabs) == 1 })
	if len(s.Graph.Browsers) != 1 {
		t.Fatalf("browsers %+v", s.Graph.Browsers)
	}
	node, tab := s.Graph.Browsers[0], s.Tabs[0]
	if node.Mode != ui.ModeExtension || node.Engine != ui.EngineChromium || node.SharedTabs != 1 || node.Paused {
		t.Fatalf("browser node %+v", node)
	}
	if tab.Title != "Inbox" || tab.URL != "https://mail.example/inbox" || tab.BrowserID != node.ID || tab.BrowserName != node.Name || tab.AgentName != "" {
		t.Fatalf("shared tab %+v (node %+v)", tab, node)
	}

	// A page's pairing offer waits for the person; Deny discards it.
	if err := br.Offer("https://app.acme.example", "Acme Copilot", map[string]any{"transport": "sse-http", "serverUrl": "https://api.acme.example/bop", "token": "backend-secret"}); err != nil {
		t.Fatal(err)
	}
	s = e.wait(t, "the offer", func(s ui.State) bool { return len(s.Offers) == 1 })
	o := s.Offers[0]
	if o.Origin != "https://app.acme.example" || o.Brand != "Acme Copilot" || o.ServerURL != "https://api.acme.example/bop" || o.Expires.Before(o.Received) {
		t.Fatalf("offer %+v", o)
	}
	if o.BrowserID != node.ID || o.Browser == "" {
		t.Fatalf("offer %+v does not name the browser %+v that relayed it", o, node)
	}
	if err := e.b.ShowingOffer(o.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := e.b.DenyOffer(o.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the denied offer to go", func(s ui.State) bool { return len(s.Offers) == 0 })
	if len(e.c.PendingOffers()) != 0 {
		t.Fatal("the companion still holds the denied offer")
	}

	// Pause reaches the companion, the State and the extension.
	if err := e.b.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	if wire.CodeOf(e.c.CheckPaused()) != wire.CodePaused {
		t.Fatal("the companion is not paused")
	}
	s = e.wait(t, "paused", func(s ui.State) bool { return s.Paused })
	if !s.Graph.Browsers[0].Paused {
		t.Fatalf("the browser node does not show the pause: %+v", s.Graph.Browsers[0])
	}
	if _, err := br.WaitPolicy(testCtx(t), func(p wire.Policy) bool { return p.Paused }); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetPaused(false); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "resumed", func(s ui.State) bool { return !s.Paused })
	if e.c.CheckPaused() != nil {
		t.Fatal("the companion is still paused")
	}

	// Tokens: issued through the store, listed with their creation time,
	// revoked.
	tok, err := e.b.IssueToken("claude")
	if err != nil {
		t.Fatal(err)
	}
	if _, name, ok := e.tokens.Verify(tok); !ok || name != "claude" {
		t.Fatal("the issued token does not verify")
	}
	s = e.wait(t, "the agent", func(s ui.State) bool { return len(s.Agents) == 1 })
	if a := s.Agents[0]; a.Name != "claude" || a.Created.IsZero() || a.Connected {
		t.Fatalf("agent %+v", a)
	}
	if err := e.b.RevokeToken("claude"); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the revoked agent to go", func(s ui.State) bool { return len(s.Agents) == 0 })
	if _, _, ok := e.tokens.Verify(tok); ok {
		t.Fatal("a revoked token still verifies")
	}

	// Settings reach the State and the extensions' policy.
	if err := e.b.SetOverlay(false); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the overlay off", func(s ui.State) bool { return !s.Overlay })
	if err := e.b.SetDialogTimeout(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the dialog timeout", func(s ui.State) bool { return s.DialogTimeout == 2*time.Minute })
	if _, err := br.WaitPolicy(testCtx(t), func(p wire.Policy) bool { return !p.Overlay }); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetDisabledTools([]string{"javascript_tool"}); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the disabled tool", func(s ui.State) bool { return slices.Equal(s.DisabledTools, []string{"javascript_tool"}) })
	if _, err := br.WaitPolicy(testCtx(t), func(p wire.Policy) bool { return slices.Equal(p.Disabled, []string{"javascript_tool"}) }); err != nil {
		t.Fatal(err)
	}

	// Stop sharing asks the browser, whose new tab list empties the view.
	if err := e.b.StopSharing(tab.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the unshared tab to go", func(s ui.State) bool { return len(s.Tabs) == 0 })
	if err := e.b.StopSharing(tab.ID); wire.CodeOf(err) != wire.CodeNotShared {
		t.Fatalf("stopping an unshared tab: %v", err)
	}

	// Live view links come from the companion; an unknown tab is refused.
	if _, err := e.b.LiveViewURL(9999); err == nil {
		t.Fatal("a live view of a tab that does not exist")
	}

	// Blocking the browser drops it from the graph into the blocked list;
	// unblocking empties the list.
	id := s.Graph.Browsers[0].ID
	if err := e.b.BlockBrowser(id); err != nil {
		t.Fatal(err)
	}
	s = e.wait(t, "the blocked browser", func(s ui.State) bool { return len(s.Graph.Browsers) == 0 && len(s.Blocked) == 1 })
	if bl := s.Blocked[0]; bl.InstanceID == "" || bl.Name == "" || bl.Engine != ui.EngineChromium || bl.Since.IsZero() {
		t.Fatalf("blocked %+v", bl)
	}
	if err := e.b.UnblockBrowser(s.Blocked[0].InstanceID); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the unblocked list", func(s ui.State) bool { return len(s.Blocked) == 0 })
	br.Close()
}

// agent issues a token through the binding, as the dashboard does, and
// connects an MCP client with it.
func (e *bound) agent(t *testing.T, name string) *sdk.ClientSession {
	t.Helper()
	tok, err := e.b.IssueToken(name)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := companiontest.Connect(t, e.port, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// An agent's tool calls become activity, and the tabs it works in become
// edges of the connection graph.
func TestBindingActivityAndEdges(t *testing.T) {
	e := startBound(t)
	br := e.browser(t, workHello, nil)
	e.wait(t, "the browser", func(s ui.State) bool { return len(s.Graph.Browsers) == 1 })
	cs := e.agent(t, "claude")
	s := e.wait(t, "the connected agent", func(s ui.State) bool {
		return len(s.Agents) == 1 && s.Agents[0].Connected && len(s.Graph.Agents) == 1
	})
	if n := s.Graph.Agents[0]; n.Kind != ui.KindAgent || n.Name != "claude" || !n.Connected || n.LastSeen.IsZero() {
		t.Fatalf("agent node %+v", n)
	}

	res, err := cs.CallTool(testCtx(t), &sdk.CallToolParams{Name: "tabs_create_mcp", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("tabs_create_mcp: %+v, %v", res, err)
	}
	s = e.wait(t, "the agent's tab as an edge", func(s ui.State) bool { return len(s.Graph.Edges) == 1 && len(s.Tabs) == 1 })
	if ed := s.Graph.Edges[0]; ed.AgentID != s.Graph.Agents[0].ID || ed.BrowserID != s.Graph.Browsers[0].ID || ed.Tabs != 1 {
		t.Fatalf("edge %+v", ed)
	}
	if s.Tabs[0].AgentName != "claude" {
		t.Fatalf("tab %+v", s.Tabs[0])
	}
	last := s.Activity[len(s.Activity)-1]
	if last.Agent != "claude" || last.Tool != "tabs_create_mcp" || last.Outcome != "ok" || last.TabID != s.Tabs[0].ID || last.Duration <= 0 {
		t.Fatalf("activity %+v", s.Activity)
	}

	// A tool the person turned off is refused, and the refusal is activity.
	if err := e.b.SetDisabledTools([]string{"tabs_context_mcp"}); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(testCtx(t), &sdk.CallToolParams{Name: "tabs_context_mcp", Arguments: map[string]any{}})
	if err != nil || !res.IsError || res.Meta["code"] != string(wire.CodeToolDisabled) {
		t.Fatalf("disabled tool: %+v, %v", res, err)
	}
	e.wait(t, "the refusal in the activity", func(s ui.State) bool {
		a := s.Activity[len(s.Activity)-1]
		return a.Tool == "tabs_context_mcp" && a.Outcome == string(wire.CodeToolDisabled)
	})
	_ = br
}

// pair has br offer backend be's config from origin under brand, approves
// the offer as the person does, and waits until be is connected.
func (e *bound) pair(t *testing.T, br *desktoptest.Browser, be *operatortest.Backend, origin, brand string, cfg map[string]any) {
	t.Helper()
	if err := br.Offer(origin, brand, cfg); err != nil {
		t.Fatal(err)
	}
	s := e.wait(t, "the offer", func(s ui.State) bool { return len(s.Offers) == 1 })
	if err := e.b.ApproveOffer(s.Offers[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := be.WaitConnected(10 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// Approving an offer pairs its backend, which joins the graph as a backend
// node once connected; forgetting it removes both.
func TestBindingApproveAndForgetABackend(t *testing.T) {
	e := startBound(t)
	br := e.browser(t, workHello, nil)
	be := operatortest.New("acme-token", "")
	defer be.Close()
	e.pair(t, br, be, "https://crm.acme.example", "Acme CRM", map[string]any{"transport": "sse-http", "serverUrl": be.URL(), "token": "acme-token"})
	s := e.wait(t, "the connected backend", func(s ui.State) bool {
		return len(s.Offers) == 0 && len(s.Backends) == 1 && s.Backends[0].Connected && len(s.Graph.Agents) == 1
	})
	b, n := s.Backends[0], s.Graph.Agents[0]
	if b.Origin != "https://crm.acme.example" || b.Brand != "Acme CRM" || b.Transport != "sse-http" || b.ServerURL != be.URL() {
		t.Fatalf("backend %+v", b)
	}
	if n.Kind != ui.KindBackend || n.Name != "Acme CRM" || !n.Connected || n.ID != "backend:"+b.ID {
		t.Fatalf("backend node %+v", n)
	}
	if err := e.b.ForgetBackend(b.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the forgotten backend to go", func(s ui.State) bool { return len(s.Backends) == 0 && len(s.Graph.Agents) == 0 })
	if err := e.b.ApproveOffer("no-such-offer"); err == nil {
		t.Fatal("approving an offer that does not exist")
	}
}

// A subscriber that does not read gets the newest State, not a backlog, and
// cancel closes the stream.
func TestBindingSubscribeKeepsOnlyTheNewest(t *testing.T) {
	e := startBound(t)
	states, cancel := e.b.Subscribe()
	for _, p := range []bool{true, false, true, false, true} {
		e.b.SetPaused(p)
	}
	e.wait(t, "the first subscription to see the pause", func(s ui.State) bool { return s.Paused })
	// At most one State waits: a newer one replaces it. (Checking len after
	// a receive would race with the next State arriving.)
	if cap(states) > 1 {
		t.Fatalf("the stream buffers %d States", cap(states))
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case s := <-states:
			if s.Paused {
				cancel()
				if _, open := <-states; open {
					// One snapshot may have been queued before cancel.
					if _, open := <-states; open {
						t.Fatal("the stream stays open after cancel")
					}
				}
				cancel() // idempotent
				return
			}
		case <-deadline:
			t.Fatal("the second subscription never saw the newest State")
		}
	}
}

// An MCP agent whose token is named "claude" and a paired backend branded
// "claude" are two principals: two graph nodes, each with its own edge for
// the tab it works in, both shown to the person as "claude".
func TestBindingKeepsTwoPrincipalsWithOneLabelApart(t *testing.T) {
	e := startBound(t)
	br := e.browser(t, workHello, nil)
	e.wait(t, "the browser", func(s ui.State) bool { return len(s.Graph.Browsers) == 1 })
	cs := e.agent(t, "claude")
	if res, err := cs.CallTool(testCtx(t), &sdk.CallToolParams{Name: "tabs_create_mcp", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("the agent's tabs_create_mcp: %+v, %v", res, err)
	}

	be := operatortest.New("crm-token", "")
	defer be.Close()
	e.pair(t, br, be, "https://claude.example", "claude", map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "crm-token"})
	id, err := be.Send("tabs_create_mcp", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := be.Await(testCtx(t), id); err != nil || r.Error != "" {
		t.Fatalf("the backend's tabs_create_mcp: %+v, %v", r, err)
	}

	s := e.wait(t, "two nodes, each with its edge", func(s ui.State) bool {
		return len(s.Graph.Agents) == 2 && len(s.Graph.Edges) == 2 && len(s.Tabs) == 2
	})
	a, b := s.Graph.Agents[0], s.Graph.Agents[1]
	if a.Name != "claude" || b.Name != "claude" || a.ID == b.ID || a.Kind == b.Kind {
		t.Fatalf("agent nodes %+v and %+v: want an agent and a backend, both labelled claude", a, b)
	}
	for _, ed := range s.Graph.Edges {
		if ed.Tabs != 1 || (ed.AgentID != a.ID && ed.AgentID != b.ID) {
			t.Fatalf("edges %+v: want one tab for each node", s.Graph.Edges)
		}
	}
	for _, tb := range s.Tabs {
		if tb.AgentName != "claude" {
			t.Fatalf("tab %+v: the person sees the label", tb)
		}
	}
}
