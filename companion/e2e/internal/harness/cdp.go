package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// CDP is a minimal DevTools protocol client over one WebSocket, with
// flattened sessions. The tests use it to reach the browser behind the
// extension's back: to open tabs that are not shared, to set the
// extension's port, and as the direct baseline of the round-trip benchmark.
type CDP struct {
	ws     *websocket.Conn
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan cdpReply
	subs    map[int64]func(CDPEvent)
	nextSub int64
	err     error
	done    chan struct{}
}

// CDPEvent is a protocol event, with the session it came from.
type CDPEvent struct {
	SessionID string
	Method    string
	Params    json.RawMessage
}

// CDPError is an error answer of the protocol.
type CDPError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *CDPError) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("cdp error %d: %s: %s", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("cdp error %d: %s", e.Code, e.Message)
}

type cdpReply struct {
	result json.RawMessage
	err    error
}

type cdpFrame struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *CDPError       `json:"error,omitempty"`
}

// DialCDP connects to a DevTools WebSocket URL.
func DialCDP(ctx context.Context, url string) (*CDP, error) {
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dialing devtools %s: %w", url, err)
	}
	// Screenshots of large pages come back in one frame.
	ws.SetReadLimit(256 << 20)
	c := &CDP{ws: ws, pending: map[int64]chan cdpReply{}, subs: map[int64]func(CDPEvent){}, done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *CDP) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.fail(fmt.Errorf("devtools connection ended: %w", err))
			return
		}
		var f cdpFrame
		if err := json.Unmarshal(data, &f); err != nil {
			continue
		}
		if f.Method != "" {
			c.mu.Lock()
			subs := make([]func(CDPEvent), 0, len(c.subs))
			for _, s := range c.subs {
				subs = append(subs, s)
			}
			c.mu.Unlock()
			for _, s := range subs {
				s(CDPEvent{SessionID: f.SessionID, Method: f.Method, Params: f.Params})
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[f.ID]
		delete(c.pending, f.ID)
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		if f.Error != nil {
			ch <- cdpReply{err: f.Error}
		} else {
			ch <- cdpReply{result: f.Result}
		}
	}
}

func (c *CDP) fail(err error) {
	c.mu.Lock()
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- cdpReply{err: err}
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
	id := c.nextID.Add(1)
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, err
		}
	}
	data, err := json.Marshal(cdpFrame{ID: id, Method: method, Params: raw, SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	ch := make(chan cdpReply, 1)
	c.mu.Lock()
	if c.pending == nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.pending[id] = ch
	c.mu.Unlock()
	// Write with a background context: coder/websocket closes the whole
	// connection when a write's context ends mid-frame.
	if err := c.ws.Write(context.Background(), websocket.MessageText, data); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, id)
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Close closes the connection and waits for its reader.
func (c *CDP) Close() {
	c.ws.CloseNow()
	<-c.done
}

// IsCDPError reports whether err is a protocol error answer.
func IsCDPError(err error) bool {
	var e *CDPError
	return errors.As(err, &e)
}
