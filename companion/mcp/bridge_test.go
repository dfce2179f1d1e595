package mcp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/tokens"
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
