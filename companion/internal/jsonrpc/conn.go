// Package jsonrpc owns the client side of the request/response links the
// companion keeps with a peer over a message transport: request ids, the
// table of callers waiting for answers, one writer, and one reader that
// hands each answer to its caller and everything else (events) to the
// link's owner.
//
// The writer never uses a caller's context. A caller that gives up stops
// waiting at once, but a message already being written is written whole:
// coder/websocket closes the connection when a write's context ends
// mid-frame, and a pipe write cut short leaves half a message that
// corrupts the stream for every other caller. A message whose caller gave
// up before the writer reached it is not written at all. Every write has
// the link's own deadline (Options.WriteTimeout); a peer that cannot take
// a message within it is too slow, and the link closes.
//
// A protocol plugs in as a Dialect (CDP for the dev browser and the test
// harness, Browspark for the extension socket), a carrier as a Transport (a
// NUL-delimited pipe, a WebSocket).
package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWriteTimeout bounds one message write when Options.WriteTimeout
// is zero.
const DefaultWriteTimeout = 10 * time.Second

// DefaultQueue is how many messages may wait for the writer when
// Options.Queue is zero; a caller beyond that waits for room (or its
// context).
const DefaultQueue = 64

// ErrClosed is wrapped by every error a closed link returns.
var ErrClosed = errors.New("link closed")

// ErrTooBig is returned for a request whose encoding exceeds
// Options.MaxMessage; nothing is sent.
var ErrTooBig = errors.New("message too big")

// ErrProtocol is wrapped by a transport's read error or a dialect's decode
// error for a message that breaks the protocol (a WebSocket binary
// message, a browspark frame that is not a JSON object): the link closes
// with it as the cause. Other decode errors drop the message.
var ErrProtocol = errors.New("protocol violation")

// Transport moves whole messages. ReadMessage is called by one goroutine,
// WriteMessage by one (another) goroutine; Close may come from anywhere and
// must make a blocked ReadMessage return.
type Transport interface {
	ReadMessage() ([]byte, error)
	// WriteMessage writes one whole message before ctx's deadline. After
	// an error the transport is broken: the link closes it.
	WriteMessage(ctx context.Context, msg []byte) error
	// Close is called once, with the reason the link ends (a transport
	// that can tell its peer why, as a WebSocket close frame does, says
	// so).
	Close(cause error) error
}

// Request is one call.
type Request struct {
	Method string
	Params any
	// SessionID addresses a session inside the peer (CDP's flattened
	// sessions); "" is the peer itself.
	SessionID string
}

// Incoming is one message from the peer: an answer (IsResponse) or an
// event.
type Incoming struct {
	IsResponse bool
	ID         int64
	Result     json.RawMessage
	// Err is the peer's error answer, as the dialect decodes it.
	Err error

	Method    string
	Params    json.RawMessage
	SessionID string
}

// Dialect is a protocol's message shapes.
type Dialect interface {
	EncodeRequest(id int64, r Request) ([]byte, error)
	// Decode classifies one message. An error wrapping ErrProtocol closes
	// the link; any other means the message could not be read, and the
	// link drops it.
	Decode(msg []byte) (Incoming, error)
}

// NotifyDialect is a Dialect whose client also sends messages that have no
// answer (browspark's companion → extension events; CDP has none).
type NotifyDialect interface {
	Dialect
	EncodeNotification(r Request) ([]byte, error)
}

// Options configure a Conn.
type Options struct {
	Dialect Dialect
	// OnEvent gets every message that is not an answer, on the reader
	// goroutine, in order. It must not block for long: answers wait
	// behind it.
	OnEvent func(Incoming)
	// OnClose is called once, on its own goroutine, after the link closed
	// and every waiting caller was answered.
	OnClose func(cause error)
	// WriteTimeout bounds each message write (default DefaultWriteTimeout).
	WriteTimeout time.Duration
	// MaxMessage caps an outgoing request; 0 means no cap. Transports cap
	// what they read.
	MaxMessage int
	// Queue is how many messages may wait for the writer (default
	// DefaultQueue).
	Queue int
}

// Conn is one link. Any number of calls may be in flight.
type Conn struct {
	t    Transport
	opts Options

	nextID atomic.Int64
	queue  chan *outgoing

	mu      sync.Mutex
	pending map[int64]chan reply
	err     error // set once, when the link closes
	done    chan struct{}
	once    sync.Once

	routines sync.WaitGroup
}

type reply struct {
	result json.RawMessage
	err    error
}

// outgoing is one queued message. abandoned is set by a caller that gave
// up; the writer skips it unless it already started writing it. written,
// when not nil, gets the write's outcome (Notify waits for it).
type outgoing struct {
	data      []byte
	abandoned atomic.Bool
	written   chan error
}

// New starts a link over t: its reader and writer run until Close or a
// transport error.
func New(t Transport, opts Options) *Conn {
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	c := &Conn{t: t, opts: opts, queue: make(chan *outgoing, opts.Queue), pending: map[int64]chan reply{}, done: make(chan struct{})}
	c.routines.Add(2)
	go c.reader()
	go c.writer()
	return c
}

// Call sends r and waits for its answer, ctx's end, or the link's end.
// ctx bounds the wait only: the write has the link's own deadline.
func (c *Conn) Call(ctx context.Context, r Request) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	data, err := c.opts.Dialect.EncodeRequest(id, r)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", r.Method, err)
	}
	if c.opts.MaxMessage > 0 && len(data) > c.opts.MaxMessage {
		return nil, fmt.Errorf("%s request of %d bytes is over the %d-byte cap: %w", r.Method, len(data), c.opts.MaxMessage, ErrTooBig)
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.pending[id] = ch
	c.mu.Unlock()

	m := &outgoing{data: data}
	if err := c.enqueue(ctx, m); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case rep := <-ch:
		return rep.result, rep.err
	case <-ctx.Done():
		m.abandoned.Store(true)
		c.forget(id)
		return nil, ctx.Err()
	}
}

// Notify sends a message that has no answer and returns once it is
// written, or when ctx ends first (then it is not sent if its write has
// not begun), or when the link closes. The dialect must be a
// NotifyDialect. As for Call, the write itself has the link's deadline.
func (c *Conn) Notify(ctx context.Context, r Request) error {
	nd, ok := c.opts.Dialect.(NotifyDialect)
	if !ok {
		return fmt.Errorf("%s: the dialect has no notifications", r.Method)
	}
	data, err := nd.EncodeNotification(r)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", r.Method, err)
	}
	if c.opts.MaxMessage > 0 && len(data) > c.opts.MaxMessage {
		return fmt.Errorf("%s message of %d bytes is over the %d-byte cap: %w", r.Method, len(data), c.opts.MaxMessage, ErrTooBig)
	}
	m := &outgoing{data: data, written: make(chan error, 1)}
	if err := c.enqueue(ctx, m); err != nil {
		return err
	}
	select {
	case err := <-m.written:
		return err
	case <-ctx.Done():
		m.abandoned.Store(true)
		return ctx.Err()
	case <-c.done:
		return c.Err()
	}
}

// enqueue hands m to the writer, waiting for room in the queue.
func (c *Conn) enqueue(ctx context.Context, m *outgoing) error {
	select {
	case c.queue <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return c.Err()
	}
}

func (c *Conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Done is closed once the link has closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the link closed (wrapping ErrClosed), or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the link with cause: waiting callers get an error wrapping
// ErrClosed and cause, and the transport is closed. It does not wait for
// the reader, which may be inside OnEvent, held up by whoever is closing
// the link; Wait does.
func (c *Conn) Close(cause error) { c.shut(cause) }

// Wait returns once the link's reader and writer have stopped, after the
// link closed.
func (c *Conn) Wait() { c.routines.Wait() }

func (c *Conn) shut(cause error) {
	c.once.Do(func() {
		if cause == nil {
			cause = errors.New("closed")
		}
		err := fmt.Errorf("%w: %w", ErrClosed, cause)
		c.mu.Lock()
		c.err = err
		pending := c.pending
		c.pending = nil
		close(c.done)
		c.mu.Unlock()
		for _, ch := range pending {
			ch <- reply{err: err}
		}
		c.t.Close(cause)
		if c.opts.OnClose != nil {
			go c.opts.OnClose(cause)
		}
	})
}

func (c *Conn) reader() {
	defer c.routines.Done()
	for {
		msg, err := c.t.ReadMessage()
		if err != nil {
			c.shut(fmt.Errorf("reading: %w", err))
			return
		}
		in, err := c.opts.Dialect.Decode(msg)
		if err != nil {
			if errors.Is(err, ErrProtocol) {
				c.shut(err)
				return
			}
			continue
		}
		if !in.IsResponse {
			if c.opts.OnEvent != nil {
				c.opts.OnEvent(in)
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[in.ID]
		delete(c.pending, in.ID)
		c.mu.Unlock()
		if ch != nil { // nil: answered after its caller gave up
			ch <- reply{result: in.Result, err: in.Err}
		}
	}
}

func (c *Conn) writer() {
	defer c.routines.Done()
	for {
		var m *outgoing
		select {
		case m = <-c.queue:
		case <-c.done:
			return
		}
		if m.abandoned.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.WriteTimeout)
		err := c.t.WriteMessage(ctx, m.data)
		cancel()
		if m.written != nil {
			m.written <- err
		}
		if err != nil {
			// A write that failed part way has left the stream unreadable,
			// and one that timed out met a peer too slow to keep.
			c.shut(fmt.Errorf("writing: %w", err))
			return
		}
	}
}
