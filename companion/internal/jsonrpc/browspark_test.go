package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/wire"
)

// readFrame is what the extension's side reads back.
func readFrame(t *testing.T, p peer) wire.Frame {
	t.Helper()
	r, err := p.next()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	f, err := DecodeFrame(data)
	if err != nil {
		t.Fatalf("the peer got %q: %v", data, err)
	}
	return f
}

// The browspark dialect: requests {id, method, params}, answers with a
// result or an error and its code, events both ways, and a request from
// the extension (which v3 has none of) handed over as a nameless event.
func TestBrowsparkCallsAnswersAndEvents(t *testing.T) {
	tr, p := newWSPair(t, 0)
	events := make(chan Incoming, 4)
	c := New(tr, Options{Dialect: Browspark, OnEvent: func(in Incoming) { events <- in }})
	defer closeAndWait(c)
	ctx := ctxT(t)
	a := call(c, ctx, Request{Method: wire.MethodTabsList})
	b := call(c, ctx, Request{Method: wire.MethodCDP, Params: wire.CDPParams{TabID: 3, Method: "Page.navigate"}})
	reqs := map[string]wire.Frame{}
	for range 2 {
		f := readFrame(t, p)
		if f.ID == nil {
			t.Fatalf("a request without an id: %+v", f)
		}
		reqs[f.Method] = f
	}
	var cp wire.CDPParams
	if err := json.Unmarshal(reqs[wire.MethodCDP].Params, &cp); err != nil || cp.TabID != 3 || cp.Method != "Page.navigate" {
		t.Fatalf("cdp params %s: %v", reqs[wire.MethodCDP].Params, err)
	}
	if f := reqs[wire.MethodTabsList]; f.Params != nil {
		t.Fatalf("tabs.list carried params %s", f.Params)
	}
	p.send([]byte(`{"event":"tabs","params":[{"id":1}]}`))
	p.send([]byte(`{"id":99,"method":"tabs.list"}`))
	p.send([]byte(`{"id":` + itoa(*reqs[wire.MethodCDP].ID) + `,"error":"tab 3 is not shared","code":"not_shared"}`))
	p.send([]byte(`{"id":` + itoa(*reqs[wire.MethodTabsList].ID) + `,"result":[]}`))
	if r := recv(t, a); r.err != nil || string(r.raw) != `[]` {
		t.Fatalf("tabs.list: %s %v", r.raw, r.err)
	}
	r := recv(t, b)
	if !errors.Is(r.err, wire.ErrNotShared) || r.err.Error() != "tab 3 is not shared" {
		t.Fatalf("cdp: %v, want the extension's not_shared error", r.err)
	}
	for _, want := range []string{"tabs", ""} {
		select {
		case in := <-events:
			if in.Method != want || in.IsResponse {
				t.Fatalf("event %+v, want %q", in, want)
			}
			if want == "tabs" && string(in.Params) != `[{"id":1}]` {
				t.Fatalf("tabs params %s", in.Params)
			}
		case <-time.After(wait):
			t.Fatalf("no %q event", want)
		}
	}
}

// An error answer with a code and no text, or text and no code, still
// fails the call with a code.
func TestBrowsparkErrorAnswers(t *testing.T) {
	for _, tc := range []struct {
		frame string
		code  wire.Code
		msg   string
	}{
		{`{"id":1,"code":"timeout"}`, wire.CodeTimeout, "timeout"},
		{`{"id":1,"error":"boom"}`, wire.CodeInternal, "boom"},
		{`{"id":1,"error":"no tab 4","code":"no_such_tab"}`, wire.CodeNoSuchTab, "no tab 4"},
	} {
		in, err := Browspark.Decode([]byte(tc.frame))
		if err != nil || !in.IsResponse || in.ID != 1 {
			t.Fatalf("%s: %+v %v", tc.frame, in, err)
		}
		if wire.CodeOf(in.Err) != tc.code || in.Err.Error() != tc.msg {
			t.Errorf("%s: %v (%s), want %s %q", tc.frame, in.Err, wire.CodeOf(in.Err), tc.code, tc.msg)
		}
	}
	if _, err := Browspark.EncodeRequest(1, Request{Method: "m", Params: func() {}}); !errors.Is(err, wire.ErrBadParams) {
		t.Fatalf("unencodable params: %v", err)
	}
}

// A frame that is not a JSON object, or a binary message, breaks the
// protocol: the link closes with ErrProtocol, waiting callers hear at
// once, and the peer gets the close frame the transport's status names.
func TestProtocolViolationClosesTheLink(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(p *wsPeer) error
	}{
		{"array", func(p *wsPeer) error { return p.send([]byte(`[1,2]`)) }},
		{"not json", func(p *wsPeer) error { return p.send([]byte(`{"event":`)) }},
		{"string", func(p *wsPeer) error { return p.send([]byte(`"hello"`)) }},
		{"binary", func(p *wsPeer) error {
			return p.conn.Write(context.Background(), websocket.MessageBinary, []byte(`{"event":"ping"}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := func(cause error) (websocket.StatusCode, string) {
				if errors.Is(cause, ErrProtocol) {
					return websocket.StatusPolicyViolation, "protocol"
				}
				return websocket.StatusGoingAway, "bye"
			}
			tr, p := newWSPairWith(t, 0, status)
			closed := make(chan error, 1)
			c := New(tr, Options{Dialect: Browspark, OnClose: func(err error) { closed <- err }})
			defer closeAndWait(c)
			a := call(c, ctxT(t), Request{Method: wire.MethodTabsList})
			readFrame(t, p)
			// The peer keeps reading, so it answers the close handshake.
			peerDone := make(chan error, 1)
			go func() {
				_, err := p.next()
				peerDone <- err
			}()
			if err := tc.send(p); err != nil {
				t.Fatal(err)
			}
			if r := recv(t, a); !errors.Is(r.err, ErrClosed) || !errors.Is(r.err, ErrProtocol) {
				t.Fatalf("the waiting caller got %v", r.err)
			}
			select {
			case err := <-closed:
				if !errors.Is(err, ErrProtocol) {
					t.Fatalf("closed for %v", err)
				}
			case <-time.After(wait):
				t.Fatal("OnClose was not called")
			}
			select {
			case err := <-peerDone:
				var ce websocket.CloseError
				if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "protocol" {
					t.Fatalf("the peer got %v, want a policy violation close", err)
				}
			case <-time.After(wait):
				t.Fatal("the peer got no close frame")
			}
		})
	}
}

// Notify writes an event and returns once it is written, in order with
// calls; a dialect without notifications refuses it.
func TestNotify(t *testing.T) {
	tr, p := newPipePair(t, 0)
	c := New(tr, Options{Dialect: Browspark, MaxMessage: 1024})
	defer closeAndWait(c)
	ctx := ctxT(t)
	// The pipe's buffer takes the event whole: Notify returns before the
	// peer reads it.
	if err := c.Notify(ctx, Request{Method: wire.EventPolicy, Params: wire.Policy{Paused: true}}); err != nil {
		t.Fatal(err)
	}
	a := call(c, ctx, Request{Method: wire.MethodTabsList})
	first := readFrame(t, p)
	if first.Event != wire.EventPolicy || first.ID != nil || !strings.Contains(string(first.Params), `"paused":true`) {
		t.Fatalf("first frame %+v, want the policy event", first)
	}
	second := readFrame(t, p)
	if second.Method != wire.MethodTabsList {
		t.Fatalf("second frame %+v", second)
	}
	p.send([]byte(`{"id":` + itoa(*second.ID) + `,"result":[]}`))
	if r := recv(t, a); r.err != nil {
		t.Fatal(r.err)
	}
	if err := c.Notify(ctx, Request{Method: "big", Params: strings.Repeat("x", 1024)}); !errors.Is(err, ErrTooBig) {
		t.Fatalf("an event over the cap: %v", err)
	}

	tr2, _ := newPipePair(t, 0)
	cdp := New(tr2, Options{Dialect: CDP})
	defer closeAndWait(cdp)
	if err := cdp.Notify(ctx, Request{Method: "Page.enable"}); err == nil {
		t.Fatal("CDP has no notifications, yet Notify sent one")
	}
}
