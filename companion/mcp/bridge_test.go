package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/tools"
)

// running is a started companion with its admin channel.
type running struct {
	c      *companion.Companion
	tokens *tokens.Manager
	dir    string
	port   int
}

func startWithAdmin(t *testing.T) *running {
	t.Helper()
	dir := companiontest.ShortDir(t)
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, Version: "test", Tokens: tm, Tools: &fakeRunner{}})
	return &running{c: c, tokens: tm, dir: dir, port: port}
}

func (r *running) bridge(ctx context.Context, p *companiontest.Pipes, token string, onStream func()) error {
	return mcp.Bridge(ctx, p.BridgeIn, p.BridgeOut, mcp.BridgeOptions{
		Transport: admin.Transport(r.dir), Endpoint: admin.URL + "/mcp", Token: token, OnStream: onStream,
	})
}

func (r *running) waitAgent(t *testing.T, name string, connected bool) {
	t.Helper()
	changes, stop := r.c.Changes()
	defer stop()
	deadline := time.After(10 * time.Second)
	for {
		for _, a := range r.c.Agents() {
			if a.Name == name && a.Connected == connected {
				return
			}
		}
		select {
		case <-changes:
		case <-deadline:
			t.Fatalf("timed out waiting for agent %s connected=%v; agents %+v", name, connected, r.c.Agents())
		}
	}
}

func TestBridgeRelaysToTheRunningCompanion(t *testing.T) {
	r := startWithAdmin(t)
	tok, err := r.tokens.Issue("desktop")
	if err != nil {
		t.Fatal(err)
	}
	p := companiontest.NewPipes()
	done := make(chan error, 1)
	go func() {
		err := r.bridge(context.Background(), p, tok, nil)
		p.BridgeOut.Close()
		done <- err
	}()

	cl := sdk.NewClient(&sdk.Implementation{Name: "desktop-client", Version: "1"}, nil)
	cs, err := cl.Connect(ctxT(t), p.Client, nil)
	if err != nil {
		t.Fatalf("initialize through the bridge: %v", err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "reins" {
		t.Errorf("server name %q", got)
	}
	r.waitAgent(t, "desktop", true)

	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(catalog) {
		t.Fatalf("tools %+v", res.Tools)
	}
	if err := cs.Ping(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}

	// The client going away ends the bridge, and the bridge ends the
	// companion's session with it.
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("bridge: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bridge did not end when the client closed its side")
	}
	r.waitAgent(t, "desktop", false)
}

// What the companion sends on its own reaches a client behind the bridge:
// turning a tool off makes the companion announce a changed tool list on
// the session's stream, and the client hears it and sees the new list.
func TestBridgeRelaysTheCompanionsOwnMessages(t *testing.T) {
	r := startWithAdmin(t)
	tok, err := r.tokens.Issue("desktop")
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan struct{}, 1)
	p := companiontest.NewPipes()
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		err := r.bridge(ctx, p, tok, func() { opened <- struct{}{} })
		p.BridgeOut.Close()
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("bridge: %v", err)
		}
	}()

	changed := make(chan struct{}, 4)
	cl := sdk.NewClient(&sdk.Implementation{Name: "desktop-client", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := cl.Connect(ctxT(t), p.Client, nil)
	if err != nil {
		t.Fatalf("initialize through the bridge: %v", err)
	}
	defer cs.Close()
	r.waitAgent(t, "desktop", true)
	select {
	case <-opened:
	case <-ctxT(t).Done():
		t.Fatal("the bridge never opened the session's stream")
	}

	if err := r.c.SetDisabledTools([]string{"browser_tabs"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctxT(t).Done():
		t.Fatal("the client behind the bridge never heard that the tool list changed")
	}
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "browser_tabs" {
			t.Fatalf("with browser_tabs turned off the list is %+v", res.Tools)
		}
	}
}

func TestBridgeWhenReinsIsNotRunning(t *testing.T) {
	dir := companiontest.ShortDir(t)
	p := companiontest.NewPipes()
	err := mcp.Bridge(ctxT(t), p.BridgeIn, p.BridgeOut, mcp.BridgeOptions{Transport: admin.Transport(dir), Endpoint: admin.URL + "/mcp", Token: "reins_whatever"})
	if !errors.Is(err, admin.ErrNotRunning) {
		t.Fatalf("err = %v, want admin.ErrNotRunning", err)
	}
}

func TestBridgeWithARefusedToken(t *testing.T) {
	r := startWithAdmin(t)
	p := companiontest.NewPipes()
	err := r.bridge(ctxT(t), p, "reins_not-issued", nil)
	if !errors.Is(err, mcp.ErrTokenRefused) {
		t.Fatalf("err = %v", err)
	}
}

// agentDir is a data dir with a file token store holding the token of an
// agent named desktop.
func agentDir(t *testing.T) (dir string, tm *tokens.Manager, tok string) {
	t.Helper()
	dir = companiontest.ShortDir(t)
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err = tm.Issue("desktop"); err != nil {
		t.Fatal(err)
	}
	return dir, tm, tok
}

// runBridge runs a bridge to dir's companion over new pipes until ctx
// ends or the client closes its side; done gets its error.
func runBridge(ctx context.Context, dir, tok string, opts mcp.BridgeOptions) (p *companiontest.Pipes, done chan error) {
	p, done = companiontest.NewPipes(), make(chan error, 1)
	opts.Transport, opts.Endpoint, opts.Token = admin.Transport(dir), admin.URL+"/mcp", tok
	go func() {
		err := mcp.Bridge(ctx, p.BridgeIn, p.BridgeOut, opts)
		p.BridgeOut.Close()
		done <- err
	}()
	return p, done
}

// holdRunner's hold tool runs until the companion ends it or the test
// lets it go; its other tools answer at once.
type holdRunner struct {
	fakeRunner
	started chan struct{}
	release chan struct{}
}

func (h *holdRunner) Catalog() []tools.Info {
	return append(slices.Clone(catalog), tools.Info{Name: "hold", Description: "Hold.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
}

func (h *holdRunner) Call(ctx context.Context, s *tools.Session, tool string, args json.RawMessage) *tools.Result {
	if tool != "hold" {
		return h.fakeRunner.Call(ctx, s, tool, args)
	}
	h.started <- struct{}{}
	select {
	case <-ctx.Done():
		return tools.Failure(ctx.Err())
	case <-h.release:
		return &tools.Result{Content: []tools.Content{{Type: "text", Text: "held"}}}
	}
}

// The client launched `reins mcp` once and cannot make it connect again:
// the bridge outlives the companion. A call in flight when the companion
// stops gets one answer, a call made while it is away is refused at once,
// and when a companion of the same data dir is back the client's own
// session goes on, as the same agent, without the client doing anything;
// a restart the bridge did not see (the companion gone and back between
// two calls) costs no call at all.
func TestBridgeOutlivesTheCompanion(t *testing.T) {
	dir, tm, tok := agentDir(t)
	start := func() (*companion.Companion, *holdRunner) {
		h := &holdRunner{started: make(chan struct{}, 1), release: make(chan struct{})}
		c, _ := companiontest.Start(t, companion.Config{DataDir: dir, Version: "test", Tokens: tm, Tools: h})
		return c, h
	}
	stop := func(c *companion.Companion) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	}
	c, hold := start()

	opened := make(chan struct{}, 4)
	ctx, cancel := context.WithCancel(ctxT(t))
	p, done := runBridge(ctx, dir, tok, mcp.BridgeOptions{OnStream: func() { opened <- struct{}{} }})
	changed := make(chan struct{}, 4)
	cl := sdk.NewClient(&sdk.Implementation{Name: "desktop-client", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := cl.Connect(ctxT(t), p.Client, nil)
	if err != nil {
		t.Fatalf("initialize through the bridge: %v", err)
	}
	wait := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-ctxT(t).Done():
			t.Fatalf("timed out waiting: %s", what)
		}
	}
	wait(opened, "the first session's stream")
	click := func() (*sdk.CallToolResult, error) {
		return cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 1}})
	}
	if res, err := click(); err != nil || res.IsError {
		t.Fatalf("a call before the restart: %v %+v", err, res)
	}

	// A call in flight when the companion stops is cut short: the stop
	// does not wait for it, and it gets one answer, an error.
	held := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "hold", Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			err = errors.New("the held call succeeded")
		}
		if err == nil {
			err = errors.New(resultText(res))
		}
		held <- err
	}()
	wait(hold.started, "the held call to start")
	stopped := time.Now()
	stop(c)
	if took := time.Since(stopped); took > 2*time.Second {
		t.Fatalf("a call in flight held the companion's stop for %s", took)
	}
	select {
	case err := <-held:
		// Its answer is the companion's shutting_down when the answer
		// leaves before the session closes, else the transport's own.
		t.Logf("the call in flight when the companion stopped: %v", err)
	case <-ctxT(t).Done():
		t.Fatal("the call in flight when the companion stopped got no answer")
	}

	// A call while no companion runs: refused at once, with a sentence.
	if _, err := click(); err == nil || !strings.Contains(err.Error(), "Reins is not running") {
		t.Fatalf("a call while the companion is away: %v", err)
	}

	// The companion is back: the bridge opens a new session on its own,
	// and tells the client to read the tool list again.
	c, _ = start()
	wait(opened, "a new session's stream")
	wait(changed, "the tool list to be announced again")
	res, err := click()
	if err != nil || res.IsError {
		t.Fatalf("a call after the restart: %v %+v", err, res)
	}
	if got := resultText(res); got != "clicked for desktop" {
		t.Fatalf("after the restart the call answered %q", got)
	}

	// Gone and back between two calls: the bridge learns of it from the
	// call itself, which the new companion then answers.
	stop(c)
	_, h := start()
	res, err = click()
	if err != nil || res.IsError {
		t.Fatalf("a call after an unseen restart: %v %+v", err, res)
	}
	if n := len(h.calls); n != 1 {
		t.Fatalf("the new companion ran %d calls, want 1", n)
	}

	cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("bridge: %v", err)
	}
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// A client that starts at login may launch `reins mcp` before the app that
// starts at login listens: the bridge waits for the companion rather than
// failing the client for the whole session.
func TestBridgeWaitsForACompanionThatIsStarting(t *testing.T) {
	dir, tm, tok := agentDir(t)
	waiting := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctxT(t))
	p, done := runBridge(ctx, dir, tok, mcp.BridgeOptions{StartWait: 15 * time.Second, OnWaiting: func() { waiting <- struct{}{} }})
	connected := make(chan error, 1)
	var cs *sdk.ClientSession
	go func() {
		var err error
		cs, err = sdk.NewClient(&sdk.Implementation{Name: "desktop-client", Version: "1"}, nil).Connect(ctxT(t), p.Client, nil)
		connected <- err
	}()
	select {
	case <-waiting:
	case err := <-done:
		t.Fatalf("the bridge ended instead of waiting: %v", err)
	case <-ctxT(t).Done():
		t.Fatal("the bridge never said it was waiting")
	}
	companiontest.Start(t, companion.Config{DataDir: dir, Version: "test", Tokens: tm, Tools: &fakeRunner{}})
	if err := <-connected; err != nil {
		t.Fatalf("initialize once the companion started: %v", err)
	}
	res, err := cs.CallTool(ctxT(t), &sdk.CallToolParams{Name: "browser_click", Arguments: map[string]any{"tabId": 1}})
	if err != nil || res.IsError {
		t.Fatalf("a call: %v %+v", err, res)
	}
	cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("bridge: %v", err)
	}
}
