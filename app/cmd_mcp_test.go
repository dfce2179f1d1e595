package app

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipes connects an in-process MCP client to a bridge: the client's output
// is the bridge's stdin and the other way round.
type pipes struct {
	bridgeIn   *io.PipeReader
	clientOut  *io.PipeWriter
	clientIn   *io.PipeReader
	bridgeOut  *io.PipeWriter
	clientSide *sdk.IOTransport
}

func newPipes() *pipes {
	p := &pipes{}
	p.bridgeIn, p.clientOut = io.Pipe()
	p.clientIn, p.bridgeOut = io.Pipe()
	p.clientSide = &sdk.IOTransport{Reader: p.clientIn, Writer: p.clientOut}
	return p
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
	r := startCompanion(t)
	tok, err := r.tokens.Issue("desktop")
	if err != nil {
		t.Fatal(err)
	}
	p := newPipes()
	done := make(chan error, 1)
	go func() {
		err := bridgeMCP(context.Background(), p.bridgeIn, p.bridgeOut, r.port, tok)
		p.bridgeOut.Close()
		done <- err
	}()

	cl := sdk.NewClient(&sdk.Implementation{Name: "desktop-client", Version: "1"}, nil)
	cs, err := cl.Connect(testCtx(t), p.clientSide, nil)
	if err != nil {
		t.Fatalf("initialize through the bridge: %v", err)
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "reins" {
		t.Errorf("server name %q", got)
	}
	r.waitAgent(t, "desktop", true)

	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "browser_tabs" || !res.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("tools %+v", res.Tools)
	}
	call, err := cs.CallTool(testCtx(t), &sdk.CallToolParams{Name: "browser_tabs", Arguments: map[string]any{}})
	if err != nil || call.IsError || call.Content[0].(*sdk.TextContent).Text != "browser_tabs for desktop" {
		t.Fatalf("call %+v, %v", call, err)
	}
	if err := cs.Ping(testCtx(t), nil); err != nil {
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
	opened := make(chan struct{}, 1)
	standaloneOpened = func() { opened <- struct{}{} }
	t.Cleanup(func() { standaloneOpened = func() {} })
	r := startCompanion(t)
	tok, err := r.tokens.Issue("desktop")
	if err != nil {
		t.Fatal(err)
	}
	p := newPipes()
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		err := bridgeMCP(ctx, p.bridgeIn, p.bridgeOut, r.port, tok)
		p.bridgeOut.Close()
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
	cs, err := cl.Connect(testCtx(t), p.clientSide, nil)
	if err != nil {
		t.Fatalf("initialize through the bridge: %v", err)
	}
	defer cs.Close()
	r.waitAgent(t, "desktop", true)
	select {
	case <-opened:
	case <-testCtx(t).Done():
		t.Fatal("the bridge never opened the session's stream")
	}

	if err := r.c.SetDisabledTools([]string{"browser_tabs"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-testCtx(t).Done():
		t.Fatal("the client behind the bridge never heard that the tool list changed")
	}
	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 0 {
		t.Fatalf("with browser_tabs turned off the list is %+v", res.Tools)
	}
}

func TestReadSSE(t *testing.T) {
	in := ": keep-alive\n\n" +
		"event: message\nid: 1\ndata: {\"a\":1}\n\n" +
		"data: {\"b\":\ndata: 2}\n\n" +
		"event: other\ndata: skipped\n\n" +
		"data:{\"c\":3}\n\n" +
		"data: {\"cut\": true}" // no blank line: the stream ended mid-event
	var got []string
	if err := readSSE(strings.NewReader(in), func(d []byte) error { got = append(got, string(d)); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a":1}`, "{\"b\":\n2}", `{"c":3}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestBridgeWhenReinsIsNotRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	p := newPipes()
	err = bridgeMCP(testCtx(t), p.bridgeIn, p.bridgeOut, port, "reins_whatever")
	want := "reins is not running on port " + strconv.Itoa(port) + ": start the Reins app or `reins headless`"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

func TestBridgeWithARefusedToken(t *testing.T) {
	r := startCompanion(t)
	p := newPipes()
	err := bridgeMCP(testCtx(t), p.bridgeIn, p.bridgeOut, r.port, "reins_not-issued")
	if err == nil || !strings.Contains(err.Error(), "refused the agent token") || !strings.Contains(err.Error(), "reins token issue") {
		t.Fatalf("err = %v", err)
	}
}

func TestMCPCommand(t *testing.T) {
	r := startCompanion(t)
	if _, err := r.tokens.Issue("desktop"); err != nil {
		t.Fatal(err)
	}
	t.Run("token from the store", func(t *testing.T) {
		p := newPipes()
		done := make(chan int, 1)
		var errOut strings.Builder
		go func() {
			code := Main(Env{
				// The port comes from the data dir's port file.
				Args:  []string{"reins", "mcp", "--token-name", "desktop", "--data-dir", r.dir, "--keyring", "file"},
				Stdin: p.bridgeIn, Stdout: p.bridgeOut, Stderr: &errOut,
				Getenv: func(string) string { return "" },
			})
			p.bridgeOut.Close()
			done <- code
		}()
		cl := sdk.NewClient(&sdk.Implementation{Name: "desktop-client", Version: "1"}, nil)
		cs, err := cl.Connect(testCtx(t), p.clientSide, nil)
		if err != nil {
			t.Fatalf("connect: %v (stderr %q)", err, errOut.String())
		}
		if _, err := cs.ListTools(testCtx(t), nil); err != nil {
			t.Fatal(err)
		}
		cs.Close()
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("reins mcp did not exit")
		}
	})
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no token", []string{"--data-dir", r.dir}, nil, "set REINS_TOKEN or pass --token-name NAME"},
		{"unknown name", []string{"--token-name", "ghost", "--data-dir", r.dir, "--keyring", "file"}, nil, `no agent token named "ghost"`},
		{"refused env token", []string{"--data-dir", r.dir, "--port", strconv.Itoa(r.port)}, map[string]string{"REINS_TOKEN": "reins_nope"}, "refused the agent token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := Main(Env{
				Args: append([]string{"reins", "mcp"}, tt.args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
				Getenv: func(k string) string { return tt.env[k] },
			})
			if code == 0 || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q, want it to contain %q", code, errOut.String(), tt.want)
			}
			if out.Len() != 0 {
				t.Fatalf("stdout %q: it belongs to JSON-RPC", out.String())
			}
		})
	}
}
