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
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/internal/jsonrpc"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

// Handler answers one request. Returning an *wire.Error sends its code.
type Handler func(params json.RawMessage) (any, error)

// Ext is a fake extension connection.
type Ext struct {
	Conn  *websocket.Conn
	Hello wire.Hello
	// LinkKey is the key the companion delivered to a code-mode handshake.
	LinkKey linkauth.Key

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
	// ManualRead leaves every frame after the handshake to the test, which
	// reads Conn itself (a frame at a time, or part of one); Handle and
	// Events then do nothing, and Done is closed from the start.
	ManualRead bool

	// The link handshake. With none of these set the fake sends a plain
	// hello, which only a hub without Options.Auth accepts.
	//
	// Key is the link key to prove.
	Key linkauth.Key
	// DataDir reads the link key from a companion's data dir.
	DataDir string
	// Code pairs with a pairing code instead; the delivered key lands in
	// Ext.LinkKey.
	Code string
}

// auth returns the client side of the handshake opts ask for, or nil.
func (o Options) auth(url string) (*linkauth.Client, error) {
	port, err := urlPort(url)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Code != "":
		return linkauth.NewCodeClient(o.Code, port)
	case !o.Key.IsZero():
		return linkauth.NewKeyClient(o.Key, port), nil
	case o.DataDir != "":
		k, err := linkauth.Load(o.DataDir)
		if err != nil {
			return nil, fmt.Errorf("hubtest: %w", err)
		}
		return linkauth.NewKeyClient(k, port), nil
	}
	return nil, nil
}

func urlPort(raw string) (int, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return 0, err
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, fmt.Errorf("hubtest: no port in %s", raw)
	}
	return p, nil
}

// Dial connects to a companion's extension socket at url (ws://host:port/),
// sends hello and, when opts carry a key, data dir or code, completes the
// link handshake as the extension does: it checks the companion's proof
// before it proves anything. The reader runs until the connection ends.
func Dial(ctx context.Context, url string, hello wire.Hello, opts Options) (*Ext, error) {
	var auth *linkauth.Client
	if !opts.NoHello {
		var err error
		if auth, err = opts.auth(url); err != nil {
			return nil, err
		}
	}
	if auth != nil {
		v, mode, nonce := auth.Hello()
		hello.Auth = &wire.HelloAuth{V: v, Mode: mode, Nonce: nonce}
	}
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
	e.Hello.Auth = nil
	if auth != nil {
		if err := e.prove(ctx, auth); err != nil {
			conn.CloseNow()
			return nil, err
		}
	}
	if opts.ManualRead {
		close(e.done)
	} else {
		go e.read()
	}
	return e, nil
}

// prove answers the companion's challenge and, in code mode, takes the
// delivered key.
func (e *Ext) prove(ctx context.Context, auth *linkauth.Client) error {
	var ch wire.AuthChallenge
	if err := e.readEvent(ctx, wire.EventAuth, &ch); err != nil {
		return err
	}
	proof, err := auth.Answer(ch.Nonce, ch.Proof)
	if err != nil {
		e.Conn.Close(4001, "the companion's proof does not match")
		return fmt.Errorf("hubtest: refusing the companion: %w", err)
	}
	if err := e.Send(wire.EventAuth, wire.AuthProof{Proof: proof}); err != nil {
		return err
	}
	if _, mode, _ := auth.Hello(); mode != linkauth.ModeCode {
		return nil
	}
	var key wire.AuthKey
	if err := e.readEvent(ctx, wire.EventAuthKey, &key); err != nil {
		return err
	}
	k, err := auth.Receive(key.Key, key.Proof)
	if err != nil {
		return fmt.Errorf("hubtest: the delivered key: %w", err)
	}
	e.LinkKey = k
	return nil
}

// readEvent reads the next frame, which must be event.
func (e *Ext) readEvent(ctx context.Context, event string, params any) error {
	_, data, err := e.Conn.Read(ctx)
	if err != nil {
		return fmt.Errorf("hubtest: waiting for %s: %w", event, err)
	}
	var f wire.Frame
	if err := json.Unmarshal(data, &f); err != nil || f.Event != event {
		return fmt.Errorf("hubtest: got %.80s, want the %s event", data, event)
	}
	if err := json.Unmarshal(f.Params, params); err != nil {
		return fmt.Errorf("hubtest: malformed %s: %w", event, err)
	}
	return nil
}

// Handle registers the answer to method.
func (e *Ext) Handle(method string, h Handler) {
	e.mu.Lock()
	e.handlers[method] = h
	e.mu.Unlock()
}

// Send sends an event.
func (e *Ext) Send(event string, params any) error {
	data, err := jsonrpc.Browspark.EncodeNotification(jsonrpc.Request{Method: event, Params: params})
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
