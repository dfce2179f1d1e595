package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/internal/jsonrpc"
)

// CDP is a DevTools protocol client over one WebSocket, with flattened
// sessions: the companion's one JSON-RPC client (companion/internal/jsonrpc)
// plus event subscriptions. The tests use it to reach the browser behind
// the extension's back: to open tabs that are not shared, to set the
// extension's port, and as the direct baseline of the round-trip benchmark.
type CDP struct {
	conn *jsonrpc.Conn

	mu      sync.Mutex
	subs    map[int64]func(CDPEvent)
	nextSub int64
}

// CDPEvent is a protocol event, with the session it came from.
type CDPEvent struct {
	SessionID string
	Method    string
	Params    json.RawMessage
}

// CDPError is an error answer of the protocol.
type CDPError = jsonrpc.Error

// DialCDP connects to a DevTools WebSocket URL.
func DialCDP(ctx context.Context, url string) (*CDP, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dialing devtools %s: %w", url, err)
	}
	// Screenshots of large pages come back in one frame.
	ws.SetReadLimit(256 << 20)
	c := &CDP{subs: map[int64]func(CDPEvent){}}
	c.conn = jsonrpc.New(jsonrpc.NewWebSocket(ws, nil), jsonrpc.Options{Dialect: jsonrpc.CDP, OnEvent: c.event})
	return c, nil
}

func (c *CDP) event(in jsonrpc.Incoming) {
	c.mu.Lock()
	subs := make([]func(CDPEvent), 0, len(c.subs))
	for _, s := range c.subs {
		subs = append(subs, s)
	}
	c.mu.Unlock()
	for _, s := range subs {
		s(CDPEvent{SessionID: in.SessionID, Method: in.Method, Params: in.Params})
	}
}

// Subscribe calls fn, on the reader goroutine, for every event until cancel.
func (c *CDP) Subscribe(fn func(CDPEvent)) (cancel func()) {
	c.mu.Lock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = fn
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// Call sends one command (to a session when sessionID is set) and decodes
// its result into out when out is non-nil.
func (c *CDP) Call(ctx context.Context, sessionID, method string, params, out any) error {
	raw, err := c.CallRaw(ctx, sessionID, method, params)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decoding result: %w", method, err)
	}
	return nil
}

// CallRaw is Call returning the raw result.
func (c *CDP) CallRaw(ctx context.Context, sessionID, method string, params any) (json.RawMessage, error) {
	raw, err := c.conn.Call(ctx, jsonrpc.Request{Method: method, Params: params, SessionID: sessionID})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return raw, nil
}

// Close closes the connection and waits for its reader.
func (c *CDP) Close() {
	c.conn.Close(errors.New("closed by the test"))
	c.conn.Wait()
}

// IsCDPError reports whether err is a protocol error answer.
func IsCDPError(err error) bool {
	var e *CDPError
	return errors.As(err, &e)
}
