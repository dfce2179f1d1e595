package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeRunner is a tools.Runner whose browser_tabs tool asks the first
// connected browser for its tabs through the hub, so a call crosses
// MCP → runner → hub → extension and back.
type fakeRunner struct {
	hub *hub.Hub

	mu       sync.Mutex
	sessions []*tools.Session
	calls    []fakeCall
}

type fakeCall struct {
	agent     string // label
	principal string
	tool      string
	sess      *tools.Session
	args      string
}

var catalog = []tools.Info{
	{
		Name: "browser_tabs", Description: "List the tabs shared with Reins.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), ReadOnly: true, Batchable: true,
	},
	{
		Name: "browser_click", Description: "Click an element.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"tabId":{"type":"integer"}},"required":["tabId"]}`),
		Destructive: true, Mutating: true,
	},
}

func (f *fakeRunner) Catalog() []tools.Info { return catalog }

func (f *fakeRunner) NewSession(principal, label string) *tools.Session {
	s := &tools.Session{Principal: principal, Label: label}
	f.mu.Lock()
	f.sessions = append(f.sessions, s)
	f.mu.Unlock()
	return s
}

func (f *fakeRunner) Call(ctx context.Context, s *tools.Session, tool string, args json.RawMessage) *tools.Result {
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{agent: s.Label, principal: s.Principal, tool: tool, sess: s, args: string(args)})
	f.mu.Unlock()
	if tool != "browser_tabs" {
		return &tools.Result{Content: []tools.Content{{Type: "text", Text: "clicked for " + s.Label}}}
	}
	bs := f.hub.Browsers()
	if len(bs) == 0 {
		return &tools.Result{IsError: true, Code: wire.CodeNoSuchBrowser, Content: []tools.Content{{Type: "text", Text: "no browser"}}}
	}
	raw, err := f.hub.Request(ctx, bs[0].ID, wire.MethodTabsList, nil)
	if err != nil {
		return &tools.Result{IsError: true, Code: wire.CodeInternal, Content: []tools.Content{{Type: "text", Text: err.Error()}}}
	}
	return &tools.Result{Content: []tools.Content{{Type: "text", Text: string(raw)}}}
}

func (f *fakeRunner) lastCall() fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return fakeCall{}
	}
	return f.calls[len(f.calls)-1]
}

type env struct {
	c       *companion.Companion
	tokens  *tokens.Manager
	runner  *fakeRunner
	port    int
	base    string // http://127.0.0.1:PORT
	dir     string
	changes <-chan struct{}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEnv serves the full companion handler (edge checks included) on a
// real 127.0.0.1 listener, with the fake runner.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, &fakeRunner{})
}

// newEnvWith is newEnv with a given runner; nil runs the real engine.
func newEnvWith(t testing.TB, runner *fakeRunner) *env {
	t.Helper()
	return newEnvIn(t, companiontest.ShortDir(t), runner)
}

// newEnvIn is newEnvWith on a given data dir.
func newEnvIn(t testing.TB, dir string, runner *fakeRunner) *env {
	t.Helper()
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := companion.Config{
		Port: port, DataDir: dir, Version: "test", Logger: quietLogger(),
		Tokens: tm, RequestTimeout: 5 * time.Second,
	}
	if runner != nil {
		cfg.Tools = runner
	}
	c, err := companion.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if runner != nil {
		runner.hub = c.Hub()
	}
	srv := httptest.NewUnstartedServer(c.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	changes, stop := c.Changes()
	t.Cleanup(func() {
		stop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Shutdown(ctx)
		srv.Close()
	})
	return &env{c: c, tokens: tm, runner: runner, port: port, base: "http://127.0.0.1:" + strconv.Itoa(port), dir: dir, changes: changes}
}

func (e *env) issue(t testing.TB, name string) string {
	t.Helper()
	tok, err := e.tokens.Issue(name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// waitFor re-checks cond whenever the companion reports a change, until a
// deadline.
func (e *env) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-e.changes:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// principal is the principal of the agent token named name.
func (e *env) principal(t testing.TB, name string) string {
	t.Helper()
	list, err := e.tokens.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range list {
		if in.Name == name && in.ID != "" {
			return mcp.AgentID(in.ID)
		}
	}
	t.Fatalf("no token named %q with an id in %+v", name, list)
	return ""
}

func (e *env) agent(name string) (mcp.AgentInfo, bool) {
	for _, a := range e.c.Agents() {
		if a.Name == name {
			return a, true
		}
	}
	return mcp.AgentInfo{}, false
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens an MCP session with the official client over real HTTP.
func (e *env) connect(t testing.TB, token string) *sdk.ClientSession {
	t.Helper()
	cs, err := e.tryConnect(t, token)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

func (e *env) tryConnect(t testing.TB, token string) (*sdk.ClientSession, error) {
	return e.tryConnectWith(t, token, nil)
}

func (e *env) tryConnectWith(t testing.TB, token string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	return companiontest.Connect(t, e.port, token, opts)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawPOST sends one initialize with the given headers and returns the
// status, headers and body.
func (e *env) rawPOST(t *testing.T, host string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.base+"/mcp", strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, resp.Header, string(body)
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t)
	good := e.issue(t, "claude")
	revoked := e.issue(t, "gone")
	if err := e.tokens.Revoke("gone"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		auth string
	}{
		{"none", ""},
		{"wrong", "Bearer reins_not-a-token"},
		{"revoked", "Bearer " + revoked},
		{"other scheme", "Basic " + good},
		{"empty bearer", "Bearer "},
		{"token without scheme", good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.auth != "" {
				hdr["Authorization"] = tt.auth
			}
			status, h, body := e.rawPOST(t, "", hdr)
			if status != http.StatusUnauthorized {
				t.Fatalf("status = %d, want 401 (body %q)", status, body)
			}
			if got := h.Get("WWW-Authenticate"); got != `Bearer realm="reins", error="invalid_token"` {
				t.Errorf("WWW-Authenticate = %q", got)
			}
			if !strings.Contains(body, "reins token issue NAME") || !strings.Contains(body, "Reins dashboard") {
				t.Errorf("body does not say how to get a token: %q", body)
			}
			if strings.Contains(body, good) || strings.Contains(body, revoked) {
				t.Errorf("body echoes a token")
			}
		})
	}
	// And the good one passes.
	if status, _, body := e.rawPOST(t, "", map[string]string{"Authorization": "Bearer " + good}); status != http.StatusOK {
		t.Fatalf("good token: status %d, body %q", status, body)
	}
}

func TestEdgeRefusesWebOriginAndBadHost(t *testing.T) {
	e := newEnv(t)
	auth := "Bearer " + e.issue(t, "claude")
	tests := []struct {
		name   string
		host   string
		origin string
		want   int
	}{
		{"web origin", "", "https://evil.example", http.StatusForbidden},
		{"null origin", "", "null", http.StatusForbidden},
		{"extension origin", "", "chrome-extension://" + companion.ExtensionID, http.StatusForbidden},
		{"rebound host", "evil.example:" + strconv.Itoa(e.port), "", http.StatusForbidden},
		{"wrong port", "127.0.0.1:1", "", http.StatusForbidden},
		{"rebound host and origin", "evil.example.com", "http://evil.example.com", http.StatusForbidden},
		{"own origin", "", e.base, http.StatusOK},
		{"localhost", "localhost:" + strconv.Itoa(e.port), "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"Authorization": auth}
			if tt.origin != "" {
				hdr["Origin"] = tt.origin
			}
			status, _, body := e.rawPOST(t, tt.host, hdr)
			if status != tt.want {
				t.Fatalf("status = %d, want %d (body %q)", status, tt.want, body)
			}
		})
	}
	// Refusals at the edge come before the token check: no agent appeared.
	if _, ok := e.agent("claude"); ok {
		t.Fatal("a refused request registered an agent")
	}
}

func graphRecorder(t *testing.T, e *env) <-chan wire.ConnectionGraph {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	x, err := hubtest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(e.port)+"/", wire.Hello{
		Version: 3, ExtensionVersion: "0.1.0", Browser: "Chromium", BrowserEngine: wire.EngineChromium,
		InstanceID: "inst-1", BrowserSessionID: "run-1",
	}, hubtest.Options{Origin: "chrome-extension://" + companion.ExtensionID, DataDir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Kill)
	x.Handle(wire.MethodTabsList, func(json.RawMessage) (any, error) {
		return []wire.TabInfo{{ID: 7, URL: "https://example.com/", Title: "Example", Shared: true}}, nil
	})
	return companiontest.RecordGraphs(t, x)
}

// nextGraph waits for a pushed graph that satisfies cond.
func nextGraph(t *testing.T, graphs <-chan wire.ConnectionGraph, what string, cond func(wire.ConnectionGraph) bool) wire.ConnectionGraph {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case g := <-graphs:
			if cond(g) {
				return g
			}
		case <-deadline:
			t.Fatalf("timed out waiting for a graph %s", what)
		}
	}
}

func graphHas(name, principal string) func(wire.ConnectionGraph) bool {
	return func(g wire.ConnectionGraph) bool {
		return slices.ContainsFunc(g.Agents, func(a wire.GraphAgent) bool { return a.Name == name && a.ID == principal })
	}
}

func TestAgentJoinsAndLeavesTheGraph(t *testing.T) {
	e := newEnv(t)
	graphs := graphRecorder(t, e)
	// The profile gets a graph without agents once it enabled Graph.
	nextGraph(t, graphs, "with the browser", func(g wire.ConnectionGraph) bool { return len(g.Browsers) == 1 && len(g.Agents) == 0 })

	tok := e.issue(t, "claude")
	first := e.connect(t, tok)
	e.waitFor(t, "claude connected", func() bool { a, ok := e.agent("claude"); return ok && a.Connected && a.Sessions == 1 })
	nextGraph(t, graphs, "with claude", graphHas("claude", e.principal(t, "claude")))
	a, _ := e.agent("claude")
	if a.ID != e.principal(t, "claude") || a.LastSeen.IsZero() {
		t.Errorf("agent info %+v", a)
	}

	// A second session of the same agent is the same node.
	second := e.connect(t, tok)
	e.waitFor(t, "two sessions", func() bool { a, _ := e.agent("claude"); return a.Sessions == 2 })
	if n := len(e.c.Agents()); n != 1 {
		t.Fatalf("%d agents, want 1", n)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "one session left", func() bool { a, _ := e.agent("claude"); return a.Sessions == 1 && a.Connected })

	// DELETE of the last session: the agent leaves the graph but is
	// remembered as disconnected for the dashboard.
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "claude gone", func() bool { a, ok := e.agent("claude"); return ok && !a.Connected && a.Sessions == 0 })
	nextGraph(t, graphs, "without claude", func(g wire.ConnectionGraph) bool {
		return !graphHas("claude", e.principal(t, "claude"))(g) && len(g.Browsers) == 1
	})
}

func TestToolsListCarriesTheCatalog(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, e.issue(t, "claude"))
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(catalog) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(catalog))
	}
	byName := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	for _, want := range catalog {
		got := byName[want.Name]
		if got == nil {
			t.Fatalf("tool %s missing", want.Name)
		}
		if got.Description != want.Description {
			t.Errorf("%s description %q", want.Name, got.Description)
		}
		if got.Annotations == nil {
			t.Fatalf("%s has no annotations", want.Name)
		}
		if got.Annotations.ReadOnlyHint != want.ReadOnly {
			t.Errorf("%s readOnlyHint = %v", want.Name, got.Annotations.ReadOnlyHint)
		}
		if got.Annotations.DestructiveHint == nil || *got.Annotations.DestructiveHint != want.Destructive {
			t.Errorf("%s destructiveHint = %v", want.Name, got.Annotations.DestructiveHint)
		}
		schema, _ := json.Marshal(got.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) {
			t.Errorf("%s schema %s", want.Name, schema)
		}
	}
}

// A tool the person turns off leaves tools/list, connected clients hear
// that the list changed, and an agent calling it from the list it fetched
// before is told why it failed, and the refusal is activity. Turned back
// on, it returns. It holds for the real engine's catalog and a plain one.
func TestDisabledToolsLeaveTheList(t *testing.T) {
	for _, tc := range []struct {
		name   string
		runner *fakeRunner
		tool   string
		args   map[string]any
	}{
		{"engine", nil, "computer", map[string]any{"tabId": 1, "action": "screenshot"}},
		{"catalog", &fakeRunner{}, "browser_click", map[string]any{"tabId": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvWith(t, tc.runner)
			changed := make(chan struct{}, 16)
			cs, err := e.tryConnectWith(t, e.issue(t, "claude"), &sdk.ClientOptions{
				ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
			})
			if err != nil {
				t.Fatal(err)
			}
			listed := func() []string {
				res, err := cs.ListTools(ctxT(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				return names
			}
			all := listed()
			if !slices.Contains(all, tc.tool) {
				t.Fatalf("%s is not listed at start: %v", tc.tool, all)
			}
			waitChanged := func(what string) {
				t.Helper()
				select {
				case <-changed:
				case <-ctxT(t).Done():
					t.Fatalf("no tools/list_changed after %s", what)
				}
			}

			if err := e.c.SetDisabledTools([]string{tc.tool}); err != nil {
				t.Fatal(err)
			}
			waitChanged("turning " + tc.tool + " off")
			if got := listed(); slices.Contains(got, tc.tool) || len(got) != len(all)-1 {
				t.Fatalf("with %s off the list is %v", tc.tool, got)
			}
			res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("calling a turned-off tool: %v", err)
			}
			if !res.IsError || res.Meta[mcp.CodeMetaKey] != "tool_disabled" {
				t.Fatalf("calling a turned-off tool: %+v", res)
			}
			if a := lastActivity(t, e); a.Tool != tc.tool || a.Outcome != "tool_disabled" || a.Principal != e.principal(t, "claude") || a.Agent != "claude" {
				t.Fatalf("the refusal's activity: %+v", a)
			}

			if err := e.c.SetDisabledTools(nil); err != nil {
				t.Fatal(err)
			}
			waitChanged("turning " + tc.tool + " back on")
			if got := listed(); !slices.Equal(got, all) {
				t.Fatalf("turned back on, the list is %v, want %v", got, all)
			}
		})
	}
}

// A tool turned off in an earlier run (the saved settings) is never listed.
func TestToolsTurnedOffBeforeStartAreNotListed(t *testing.T) {
	dir := companiontest.ShortDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, companion.SettingsFile), []byte(`{"version":1,"disabledTools":["javascript_tool"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvIn(t, dir, nil)
	cs := e.connect(t, e.issue(t, "claude"))
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == "javascript_tool" {
			t.Fatal("javascript_tool is listed while turned off")
		}
	}
	if len(res.Tools) < 10 {
		t.Fatalf("only %d tools listed", len(res.Tools))
	}
}

func TestToolCallReachesTheBrowserInTheAgentsSession(t *testing.T) {
	e := newEnv(t)
	graphRecorder(t, e) // a fake extension that answers tabs.list
	e.waitFor(t, "browser", func() bool { return len(e.c.Hub().Browsers()) == 1 })
	tok := e.issue(t, "claude")
	a1 := e.connect(t, tok)
	a2 := e.connect(t, tok)
	b := e.connect(t, e.issue(t, "cursor"))

	res, err := a1.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_tabs", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "https://example.com/") {
		t.Fatalf("result %+v", res)
	}
	s1 := e.runner.lastCall()
	if s1.agent != "claude" || s1.principal != e.principal(t, "claude") || s1.tool != "browser_tabs" {
		t.Fatalf("call %+v", s1)
	}
	if _, err := a2.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 7}}); err != nil {
		t.Fatal(err)
	}
	s2 := e.runner.lastCall()
	if s2.sess != s1.sess {
		t.Fatal("two MCP sessions of one agent got different tool sessions")
	}
	if s2.args != `{"tabId":7}` {
		t.Errorf("args = %s", s2.args)
	}
	if _, err := b.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 7}}); err != nil {
		t.Fatal(err)
	}
	s3 := e.runner.lastCall()
	if s3.agent != "cursor" || s3.sess == s1.sess {
		t.Fatalf("another agent shares claude's session: %+v", s3)
	}
}

func TestPausedToolsFailWithCodePaused(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, e.issue(t, "claude"))
	e.c.Pause()
	res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 1}})
	if err != nil {
		t.Fatalf("a paused tool must fail as a result, not a protocol error: %v", err)
	}
	if !res.IsError || res.Meta[mcp.CodeMetaKey] != string(wire.CodePaused) {
		t.Fatalf("result %+v, want isError with code paused", res)
	}
	if txt := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(txt, "paused") {
		t.Errorf("text %q", txt)
	}
	if c := e.runner.lastCall(); c.tool != "" {
		t.Fatalf("the engine ran while paused: %+v", c)
	}
	if a := lastActivity(t, e); a.Tool != "browser_click" || a.Outcome != string(wire.CodePaused) || a.Agent != "claude" {
		t.Fatalf("the paused call's activity: %+v", a)
	}
	e.c.Resume()
	res, err = cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 1}})
	if err != nil || res.IsError {
		t.Fatalf("after resume: %+v, %v", res, err)
	}
}

func TestRevokedMidSessionFailsOnTheNextRequest(t *testing.T) {
	e := newEnv(t)
	graphs := graphRecorder(t, e)
	tok := e.issue(t, "claude")
	cs := e.connect(t, tok)
	e.waitFor(t, "claude connected", func() bool { a, _ := e.agent("claude"); return a.Connected })
	first := e.principal(t, "claude")
	nextGraph(t, graphs, "with claude", graphHas("claude", first))
	if _, err := cs.ListTools(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}

	if err := e.tokens.Revoke("claude"); err != nil {
		t.Fatal(err)
	}
	// The very next request fails, whatever the session teardown is doing.
	status, _, _ := e.rawPOST(t, "", map[string]string{"Authorization": "Bearer " + tok})
	if status != http.StatusUnauthorized {
		t.Fatalf("revoked token: status %d, want 401", status)
	}
	if _, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 1}}); err == nil {
		t.Fatal("a call on a revoked agent's session succeeded")
	}
	e.waitFor(t, "claude forgotten", func() bool { _, ok := e.agent("claude"); return !ok })
	nextGraph(t, graphs, "without claude", func(g wire.ConnectionGraph) bool { return !graphHas("claude", first)(g) })
	if c := e.runner.lastCall(); c.tool != "" {
		t.Fatalf("the engine ran for a revoked agent: %+v", c)
	}

	// Issuing the name again starts a fresh identity with a fresh session.
	cs2 := e.connect(t, e.issue(t, "claude"))
	if _, err := cs2.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 1}}); err != nil {
		t.Fatal(err)
	}
	if c := e.runner.lastCall(); c.agent != "claude" || c.principal == first || c.principal != e.principal(t, "claude") {
		t.Fatalf("the re-issued token runs as %q (%s); the revoked one was %s", c.principal, c.agent, first)
	}
}

func TestOneAgentCannotUseAnothersSession(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, e.issue(t, "claude"))
	other := e.issue(t, "mallory")
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+other)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403", resp.StatusCode)
	}
}

func TestNoTokenStoreRefusesEveryone(t *testing.T) {
	dir := companiontest.ShortDir(t)
	c, err := companion.New(companion.Config{Port: 47999, DataDir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown(context.Background())
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:47999/mcp", strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer anything")
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", w.Code)
	}
}

func TestShutdownEndsSessions(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, e.issue(t, "claude"))
	e.waitFor(t, "claude connected", func() bool { a, _ := e.agent("claude"); return a.Connected })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := e.c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// The client's standalone SSE stream must not have held shutdown to
	// its deadline.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	if a, _ := e.agent("claude"); a.Connected {
		t.Fatal("agent still connected after shutdown")
	}
	if _, err := cs.ListTools(ctxT(t), nil); err == nil {
		t.Fatal("session still usable after shutdown")
	}
}

// The real engine behind /mcp: its catalog is served with annotations, a
// call reaches the fake extension through the hub, and the tray's Pause
// reaches the engine.
func TestRealEngine(t *testing.T) {
	e := newEnvWith(t, nil)
	graphRecorder(t, e)
	e.waitFor(t, "browser", func() bool { return len(e.c.Hub().Browsers()) == 1 })
	cs := e.connect(t, e.issue(t, "claude"))

	list, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ctxTool *sdk.Tool
	for _, tl := range list.Tools {
		if tl.Name == "tabs_context_mcp" {
			ctxTool = tl
		}
	}
	if ctxTool == nil || ctxTool.Annotations == nil || !ctxTool.Annotations.ReadOnlyHint {
		t.Fatalf("tabs_context_mcp missing or not read-only among %d tools", len(list.Tools))
	}

	res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "tabs_context_mcp", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError || !strings.Contains(text, "https://example.com/") || !strings.Contains(text, "Reins · claude") {
		t.Fatalf("tabs_context_mcp: %+v %q", res, text)
	}

	e.c.Pause()
	res, err = cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "tabs_context_mcp", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Meta[mcp.CodeMetaKey] != string(wire.CodePaused) {
		t.Fatalf("paused: %+v, want isError with code paused", res)
	}
	e.c.Resume()
	if res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "tabs_context_mcp", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("after resume: %+v, %v", res, err)
	}
}

// lastActivity is the companion's latest activity entry.
func lastActivity(t *testing.T, e *env) tools.Activity {
	t.Helper()
	acts := e.c.Activity()
	if len(acts) == 0 {
		t.Fatal("no activity")
	}
	return acts[len(acts)-1]
}

// The engine's whole catalog over /mcp, registered as it ships: every tool
// is listed with the catalog's annotations, a call runs in the agent's
// session, and an engine error keeps its code.
func TestEngineCatalogOverMCP(t *testing.T) {
	e := newEnvWith(t, nil)
	cs := e.connect(t, e.issue(t, "claude"))
	h := hub.New(hub.Options{Logger: quietLogger()})
	defer h.Close()
	engine := tools.NewEngine(tools.Options{Hub: h, Logger: quietLogger()})
	defer engine.Close()
	catalog := engine.Catalog()

	list, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names, want []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || tl.Annotations.DestructiveHint == nil {
			t.Errorf("%s has no annotations", tl.Name)
			continue
		}
		for _, info := range catalog {
			if info.Name == tl.Name && (info.ReadOnly != tl.Annotations.ReadOnlyHint || info.Destructive != *tl.Annotations.DestructiveHint) {
				t.Errorf("%s annotations %+v disagree with the catalog", tl.Name, tl.Annotations)
			}
		}
	}
	for _, info := range catalog {
		want = append(want, info.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) || !slices.Equal(names, e.c.Tools()) {
		t.Fatalf("MCP tools = %v, want the catalog %v", names, want)
	}

	res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "update_plan", Arguments: map[string]any{"domains": []string{"shop.example"}, "approach": []string{"pay"}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "- shop.example") {
		t.Fatalf("update_plan over MCP: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "read_page", Arguments: map[string]any{"tabId": 999}})
	if err != nil || !res.IsError || res.Meta[mcp.CodeMetaKey] != "no_such_tab" {
		t.Fatalf("error over MCP: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "read_page", Arguments: map[string]any{}})
	if err != nil || !res.IsError || res.Meta[mcp.CodeMetaKey] != string(wire.CodeBadParams) {
		t.Fatalf("schema validation over MCP: %+v %v", res, err)
	}
}

// Arguments that fail the tool's schema reach the engine, which refuses
// them with code bad_params, and the refusal shows in the activity like any
// other failed call.
func TestSchemaErrorIsActivityWithItsCode(t *testing.T) {
	e := newEnvWith(t, nil)
	cs := e.connect(t, e.issue(t, "claude"))
	res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "computer", Arguments: map[string]any{"tabId": "seven", "action": "screenshot"}})
	if err != nil {
		t.Fatalf("a schema error must be a tool result, not a protocol error: %v", err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || res.Meta[mcp.CodeMetaKey] != string(wire.CodeBadParams) || !strings.HasPrefix(text, "[bad_params] invalid computer arguments") || !strings.Contains(text, "tabId") {
		t.Fatalf("a string tabId: %+v %q", res, text)
	}
	a := lastActivity(t, e)
	if a.Tool != "computer" || a.Outcome != string(wire.CodeBadParams) || a.Principal != e.principal(t, "claude") || a.Agent != "claude" {
		t.Fatalf("activity %+v, want the schema error with its code", a)
	}
}

func TestToolOf(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		in   tools.Info
		want string
	}{
		{tools.Info{Name: "read", Description: "r", InputSchema: schema, ReadOnly: true},
			`{"annotations":{"destructiveHint":false,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":true},"description":"r","inputSchema":{"type":"object"},"name":"read"}`},
		{tools.Info{Name: "act", Description: "a", InputSchema: schema, Destructive: true, Mutating: true},
			`{"annotations":{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false},"description":"a","inputSchema":{"type":"object"},"name":"act"}`},
	}
	for _, tt := range tests {
		t.Run(tt.in.Name, func(t *testing.T) {
			got, err := json.Marshal(mcp.ToolOf(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// BenchmarkToolCallOverMCP is what the MCP layer adds to every tool call:
// the official client's tools/call over real HTTP on 127.0.0.1 to the full
// companion handler (edge checks, bearer token, session), with a runner
// that answers at once.
func BenchmarkToolCallOverMCP(b *testing.B) {
	e := newEnvWith(b, &fakeRunner{})
	cs := e.connect(b, e.issue(b, "bench"))
	ctx := ctxT(b)
	params := &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 1}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("tools/call: %v %+v", err, res)
		}
	}
}

// A request may carry upload_file's 10 MiB of files in base64; one past
// MaxRequestBytes is refused before it is read in full.
func TestRequestBodyBound(t *testing.T) {
	e := newEnv(t)
	auth := "Bearer " + e.issue(t, "claude")
	post := func(pad int) int {
		body := strings.Replace(initBody, `"params":{`, `"params":{"_pad":"`+strings.Repeat("A", pad)+`",`, 1)
		if body == initBody {
			t.Fatalf("cannot pad %s", initBody)
		}
		req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.base+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", auth)
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if got := post(base64.StdEncoding.EncodedLen(10<<20) + 4096); got != http.StatusOK {
		t.Fatalf("a request with 10 MiB of base64: status %d", got)
	}
	if got := post(mcp.MaxRequestBytes + 1); got != http.StatusRequestEntityTooLarge {
		t.Fatalf("a request past the bound: status %d", got)
	}
}
