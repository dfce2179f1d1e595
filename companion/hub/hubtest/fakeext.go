// Package hubtest provides a fake browser extension that speaks browspark v3
// over a real WebSocket, for tests and benchmarks of the hub and of
// everything built on it.
package hubtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/wire"
)

// Handler answers one request. Returning an *wire.Error sends its code.
type Handler func(params json.RawMessage) (any, error)

// Ext is a fake extension connection.
type Ext struct {
	Conn  *websocket.Conn
	Hello wire.Hello

	mu       sync.Mutex
	handlers map[string]Handler
	events   chan wire.Evt
	done     chan struct{}
	err      error
}

// Options tune Dial.
type Options struct {
	Origin string
	// Header is extra HTTP headers for the upgrade.
	Header http.Header
	// NoHello skips the hello frame so a test can send its own first frame.
	NoHello bool
}

// Dial connects to a companion's extension socket at url (ws://host:port/)
// and sends hello. The reader runs until the connection ends.
func Dial(ctx context.Context, url string, hello wire.Hello, opts Options) (*Ext, error) {
	h := http.Header{}
	for k, v := range opts.Header {
		h[k] = v
	}
	if opts.Origin != "" {
		h.Set("Origin", opts.Origin)
	}
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(wire.MaxFrameBytes + 1024)
	e := &Ext{Conn: conn, Hello: hello, handlers: map[string]Handler{}, events: make(chan wire.Evt, 1024), done: make(chan struct{})}
	if !opts.NoHello {
		if err := e.Send(wire.EventHello, hello); err != nil {
			conn.CloseNow()
			return nil, err
		}
	}
	go e.read()
	return e, nil
}

// Handle registers the answer to method.
func (e *Ext) Handle(method string, h Handler) {
	e.mu.Lock()
	e.handlers[method] = h
	e.mu.Unlock()
}

// Send sends an event.
func (e *Ext) Send(event string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	data, err := json.Marshal(wire.Evt{Event: event, Params: raw})
	if err != nil {
		return err
	}
	return e.WriteRaw(data)
}

// WriteRaw writes a raw text frame.
func (e *Ext) WriteRaw(data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.Conn.Write(ctx, websocket.MessageText, data)
}

// SendTabs sends a tabs event.
func (e *Ext) SendTabs(tabs []wire.TabInfo) error { return e.Send(wire.EventTabs, tabs) }

// Events delivers events the companion sent (policy, …).
func (e *Ext) Events() <-chan wire.Evt { return e.events }

// Done is closed when the connection ends; Err says how.
func (e *Ext) Done() <-chan struct{} { return e.done }

// Err is the read error that ended the connection.
func (e *Ext) Err() error {
	<-e.done
	return e.err
}

// CloseStatus is the close code the companion sent, or -1.
func (e *Ext) CloseStatus() websocket.StatusCode {
	return websocket.CloseStatus(e.Err())
}

// Close closes the connection normally.
func (e *Ext) Close() {
	e.Conn.Close(websocket.StatusNormalClosure, "bye")
	<-e.done
}

// Kill drops the connection without a close handshake, as a crashed
// browser would.
func (e *Ext) Kill() {
	e.Conn.CloseNow()
	<-e.done
}

func (e *Ext) read() {
	defer close(e.done)
	for {
		_, data, err := e.Conn.Read(context.Background())
		if err != nil {
			e.err = err
			return
		}
		var f wire.Frame
		if err := json.Unmarshal(data, &f); err != nil {
			e.err = fmt.Errorf("companion sent malformed frame: %w", err)
			e.Conn.CloseNow()
			return
		}
		if f.Event != "" {
			select {
			case e.events <- wire.Evt{Event: f.Event, Params: f.Params}:
			default:
			}
			continue
		}
		if f.ID == nil || f.Method == "" {
			continue
		}
		e.mu.Lock()
		h := e.handlers[f.Method]
		e.mu.Unlock()
		id := *f.ID
		if h == nil {
			go e.reply(id, nil, wire.Errorf(wire.CodeUnknownMethod, "unknown method %s", f.Method))
			continue
		}
		go func() {
			res, err := h(f.Params)
			e.reply(id, res, err)
		}()
	}
}

func (e *Ext) reply(id int64, result any, err error) {
	res := wire.Res{ID: id}
	if err != nil {
		res.Error = err.Error()
		var we *wire.Error
		if errors.As(err, &we) {
			res.Code = we.Code
		}
	} else {
		raw, merr := json.Marshal(result)
		if merr != nil {
			res.Error = merr.Error()
		} else {
			res.Result = raw
		}
	}
	data, _ := json.Marshal(res)
	_ = e.WriteRaw(data)
}

// Never is a handler that does not answer until the connection ends.
func (e *Ext) Never() Handler {
	return func(json.RawMessage) (any, error) {
		<-e.done
		return nil, errors.New("closed")
	}
}
