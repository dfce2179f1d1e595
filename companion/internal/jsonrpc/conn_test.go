package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds anything a test waits for.
const wait = 10 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// peer is the far end of a transport, as a test drives it.
type peer interface {
	// next returns the next message as a stream, so a test can read part
	// of it and know the link's write has begun.
	next() (io.Reader, error)
	send(msg []byte) error
	close()
}

// A transport and its far end, for each carrier the link runs over.
type carrier struct {
	name string
	// big is a message size no carrier buffers whole: its write blocks
	// until the peer reads.
	big int
	mk  func(t *testing.T, max int) (Transport, peer)
}

var carriers = []carrier{
	{"pipe", 1 << 20, newPipePair},
	{"websocket", 1 << 20, newWSPair},
}

type pipePeer struct {
	r *bufio.Reader
	w *os.File
	c []io.Closer
}

func newPipePair(t *testing.T, max int) (Transport, peer) {
	cr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pipePeer{r: bufio.NewReader(pr), w: pw, c: []io.Closer{pr, pw}}
	t.Cleanup(p.close)
	return NewPipe(cr, cw, max), p
}

// untilNUL reads one message of the pipe, stopping at its NUL.
type untilNUL struct {
	r       *bufio.Reader
	pending []byte
	last    bool
}

func (u *untilNUL) Read(b []byte) (int, error) {
	for len(u.pending) == 0 {
		if u.last {
			return 0, io.EOF
		}
		chunk, err := u.r.ReadSlice(0)
		switch {
		case err == nil:
			u.pending, u.last = append([]byte(nil), chunk[:len(chunk)-1]...), true
		case errors.Is(err, bufio.ErrBufferFull):
			u.pending = append([]byte(nil), chunk...)
		default:
			return 0, err
		}
	}
	n := copy(b, u.pending)
	u.pending = u.pending[n:]
	return n, nil
}

func (p *pipePeer) next() (io.Reader, error) { return &untilNUL{r: p.r}, nil }
func (p *pipePeer) send(msg []byte) error {
	_, err := p.w.Write(append(append([]byte(nil), msg...), 0))
	return err
}
func (p *pipePeer) close() {
	for _, c := range p.c {
		c.Close()
	}
}

type wsPeer struct {
	conn *websocket.Conn
}

// pipeListener hands the HTTP server the far ends of net.Pipe conns:
// synchronous, unbuffered carriers, so a message of a MiB cannot sit
// anywhere on the way whole.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func newWSPair(t *testing.T, max int) (Transport, peer) { return newWSPairWith(t, max, nil) }

// newWSPairWith is newWSPair whose transport sends the close frames status
// names.
func newWSPairWith(t *testing.T, max int, status func(error) (websocket.StatusCode, string)) (Transport, *wsPeer) {
	accepted := make(chan *websocket.Conn, 1)
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(256 << 20)
		accepted <- c
		<-release
	})}
	l := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	t.Cleanup(func() { close(release) })
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		client, server := net.Pipe()
		select {
		case l.conns <- server:
			return client, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	t.Cleanup(tr.CloseIdleConnections)
	c, _, err := websocket.Dial(ctxT(t), "ws://reins.test/", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	if max > 0 {
		c.SetReadLimit(int64(max))
	} else {
		c.SetReadLimit(256 << 20)
	}
	p := &wsPeer{conn: <-accepted}
	t.Cleanup(p.close)
	return NewWebSocket(c, status), p
}

func (p *wsPeer) next() (io.Reader, error) {
	_, r, err := p.conn.Reader(context.Background())
	return r, err
}
func (p *wsPeer) send(msg []byte) error {
	return p.conn.Write(context.Background(), websocket.MessageText, msg)
}
func (p *wsPeer) close() { p.conn.CloseNow() }

// request is what the peer reads back.
type request struct {
	ID        int64           `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
}

func readRequest(t *testing.T, p peer) request {
	t.Helper()
	r, err := p.next()
	if err != nil {
		t.Fatal(err)
	}
	return decodeRequest(t, r)
}

func decodeRequest(t *testing.T, r io.Reader) request {
	t.Helper()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatalf("the peer got a message that is not JSON (%d bytes): %v", len(data), err)
	}
	return req
}

type result struct {
	raw json.RawMessage
	err error
}

func call(c *Conn, ctx context.Context, r Request) <-chan result {
	ch := make(chan result, 1)
	go func() {
		raw, err := c.Call(ctx, r)
		ch <- result{raw, err}
	}()
	return ch
}

func recv(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatal("timed out waiting for a call to return")
		return result{}
	}
}

func TestCallsAnswersErrorsAndEvents(t *testing.T) {
	for _, cr := range carriers {
		t.Run(cr.name, func(t *testing.T) {
			tr, p := cr.mk(t, 0)
			var mu sync.Mutex
			var events []string
			got := make(chan struct{}, 8)
			c := New(tr, Options{Dialect: CDP, OnEvent: func(in Incoming) {
				mu.Lock()
				events = append(events, in.Method+"@"+in.SessionID)
				mu.Unlock()
				got <- struct{}{}
			}})
			defer closeAndWait(c)
			ctx := ctxT(t)
			a := call(c, ctx, Request{Method: "Target.getTargets"})
			b := call(c, ctx, Request{Method: "Runtime.evaluate", Params: map[string]string{"expression": "1"}, SessionID: "S1"})
			reqs := map[string]request{}
			for range 2 {
				r := readRequest(t, p)
				reqs[r.Method] = r
			}
			if r := reqs["Runtime.evaluate"]; r.SessionID != "S1" || string(r.Params) != `{"expression":"1"}` {
				t.Fatalf("the peer got %+v", r)
			}
			if r := reqs["Target.getTargets"]; r.Params != nil || r.SessionID != "" {
				t.Fatalf("the peer got %+v", r)
			}
			// An event, then the answers out of order.
			p.send([]byte(`{"method":"Target.targetCreated","params":{},"sessionId":"S1"}`))
			p.send([]byte(`{"id":` + itoa(reqs["Runtime.evaluate"].ID) + `,"error":{"code":-32000,"message":"nope","data":"why"}}`))
			p.send([]byte(`{"id":` + itoa(reqs["Target.getTargets"].ID) + `,"result":{"targetInfos":[]}}`))
			if r := recv(t, a); r.err != nil || string(r.raw) != `{"targetInfos":[]}` {
				t.Fatalf("getTargets: %s %v", r.raw, r.err)
			}
			r := recv(t, b)
			var ce *Error
			if !errors.As(r.err, &ce) || ce.Code != -32000 || ce.Message != "nope" || ce.Data != "why" {
				t.Fatalf("evaluate: %v, want the peer's error", r.err)
			}
			<-got
			mu.Lock()
			defer mu.Unlock()
			if len(events) != 1 || events[0] != "Target.targetCreated@S1" {
				t.Fatalf("events %q", events)
			}
		})
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// stuckWrite calls A with a blob of size bytes on ctx and reads the head of
// it at the peer: A's write has begun, and the rest fits in no buffer on
// the way, so the writer is held in it. rest reads the remainder and
// returns A as the peer got it.
func stuckWrite(t *testing.T, c *Conn, p peer, ctx context.Context, size int) (a <-chan result, blob string, rest func() request) {
	t.Helper()
	blob = strings.Repeat("x", size)
	a = call(c, ctx, Request{Method: "A", Params: map[string]string{"blob": blob}})
	ra, err := p.next()
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 1024)
	if _, err := io.ReadFull(ra, head); err != nil {
		t.Fatal(err)
	}
	return a, blob, func() request {
		t.Helper()
		return decodeRequest(t, io.MultiReader(strings.NewReader(string(head)), ra))
	}
}

// The property this package exists for: a caller that gives up while its
// message is being written returns at once, and the message is still
// written whole, so the link goes on for everyone else. Writing with the
// caller's context instead closes a WebSocket and leaves half a message in
// a pipe.
func TestCallerCancelledMidWriteLeavesTheLinkWhole(t *testing.T) {
	onEachCarrier(t, func(t *testing.T, c *Conn, p peer, cr carrier) {
		ctx := ctxT(t)
		actx, cancelA := context.WithCancel(ctx)
		a, blob, restA := stuckWrite(t, c, p, actx, cr.big)
		cancelA()
		if r := recv(t, a); !errors.Is(r.err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v, want context.Canceled", r.err)
		}
		b := call(c, ctx, Request{Method: "B"})
		reqA := restA()
		var pa struct{ Blob string }
		if json.Unmarshal(reqA.Params, &pa); reqA.Method != "A" || pa.Blob != blob {
			t.Fatalf("A arrived cut: method %q, %d of %d bytes", reqA.Method, len(pa.Blob), len(blob))
		}
		reqB := readRequest(t, p)
		if reqB.Method != "B" {
			t.Fatalf("after A the peer got %q", reqB.Method)
		}
		// The answer to the caller who left is dropped quietly.
		p.send([]byte(`{"id":` + itoa(reqA.ID) + `,"result":{}}`))
		p.send([]byte(`{"id":` + itoa(reqB.ID) + `,"result":{"ok":true}}`))
		if r := recv(t, b); r.err != nil || string(r.raw) != `{"ok":true}` {
			t.Fatalf("B after A was cancelled: %s %v", r.raw, r.err)
		}
		if c.Err() != nil {
			t.Fatalf("the link closed: %v", c.Err())
		}
	})
}

// A message (a call or an event) whose sender gave up before the writer
// reached it is never sent, and its sender hears at once.
func TestMessageAbandonedBeforeItsWriteIsNotSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(c *Conn, ctx context.Context) error
	}{
		{"call", func(c *Conn, ctx context.Context) error { _, err := c.Call(ctx, Request{Method: "C"}); return err }},
		{"event", func(c *Conn, ctx context.Context) error {
			return c.Notify(ctx, Request{Method: wire.EventPolicy, Params: wire.Policy{}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, p := newPipePair(t, 0)
			c := New(tr, Options{Dialect: Browspark})
			defer closeAndWait(c)
			ctx := ctxT(t)
			a, _, restA := stuckWrite(t, c, p, ctx, 4<<20)
			// A is stuck in its write; C waits behind it, and its sender
			// leaves.
			cctx, cancelC := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- tc.send(c, cctx) }()
			cancelC()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("C: %v", err)
				}
			case <-time.After(wait):
				t.Fatal("C's sender is still waiting after it gave up")
			}
			reqA := restA()
			b := call(c, ctx, Request{Method: "B"})
			if next := readRequest(t, p); next.Method != "B" {
				t.Fatalf("after A the peer got %+v, want B (C was abandoned)", next)
			}
			p.send([]byte(`{"id":` + itoa(reqA.ID) + `,"result":{}}`))
			if r := recv(t, a); r.err != nil {
				t.Fatal(r.err)
			}
			c.Close(errors.New("test over"))
			if r := recv(t, b); !errors.Is(r.err, ErrClosed) {
				t.Fatalf("B after Close: %v", r.err)
			}
		})
	}
}

// A peer that takes no message within the write timeout is too slow: the
// link closes and every caller hears so.
func TestPeerThatDoesNotReadIsClosedAfterTheWriteTimeout(t *testing.T) {
	for _, cr := range carriers {
		t.Run(cr.name, func(t *testing.T) {
			tr, _ := cr.mk(t, 0)
			closed := make(chan error, 1)
			c := New(tr, Options{Dialect: CDP, WriteTimeout: 200 * time.Millisecond, OnClose: func(err error) { closed <- err }})
			defer closeAndWait(c)
			a := call(c, ctxT(t), Request{Method: "A", Params: map[string]string{"blob": strings.Repeat("x", cr.big)}})
			if r := recv(t, a); !errors.Is(r.err, ErrClosed) {
				t.Fatalf("the caller got %v, want the link closed", r.err)
			}
			select {
			case <-closed:
			case <-time.After(wait):
				t.Fatal("OnClose was not called")
			}
			if _, err := c.Call(ctxT(t), Request{Method: "B"}); !errors.Is(err, ErrClosed) {
				t.Fatalf("a call on the closed link: %v", err)
			}
		})
	}
}

// Outgoing requests over MaxMessage are refused without touching the link;
// an incoming pipe message over the transport's cap ends it.
func TestMessageCaps(t *testing.T) {
	tr, p := newPipePair(t, 1024)
	c := New(tr, Options{Dialect: CDP, MaxMessage: 1024})
	defer closeAndWait(c)
	ctx := ctxT(t)
	if _, err := c.Call(ctx, Request{Method: "A", Params: map[string]string{"blob": strings.Repeat("x", 1024)}}); !errors.Is(err, ErrTooBig) {
		t.Fatalf("a request over the cap: %v", err)
	}
	b := call(c, ctx, Request{Method: "B", Params: map[string]string{"blob": strings.Repeat("x", 900)}})
	req := readRequest(t, p)
	if req.Method != "B" {
		t.Fatalf("the peer got %q", req.Method)
	}
	p.send([]byte(`{"id":` + itoa(req.ID) + `,"result":"` + strings.Repeat("y", 1000) + `"}`))
	if r := recv(t, b); r.err != nil {
		t.Fatalf("an answer under the cap: %v", r.err)
	}
	d := call(c, ctx, Request{Method: "D"})
	req = readRequest(t, p)
	p.send([]byte(`{"id":` + itoa(req.ID) + `,"result":"` + strings.Repeat("y", 1100) + `"}`))
	if r := recv(t, d); !errors.Is(r.err, ErrClosed) || !errors.Is(r.err, ErrTooBig) {
		t.Fatalf("an answer over the cap: %v, want the link closed for it", r.err)
	}
}

// When the peer goes, callers waiting for answers hear at once.
func TestPeerGoneFailsWaitingCallers(t *testing.T) {
	onEachCarrier(t, func(t *testing.T, c *Conn, p peer, _ carrier) {
		a := call(c, ctxT(t), Request{Method: "A"})
		readRequest(t, p)
		p.close()
		if r := recv(t, a); !errors.Is(r.err, ErrClosed) {
			t.Fatalf("the waiting caller got %v", r.err)
		}
		<-c.Done()
	})
}

// onEachCarrier runs test on a CDP link over each carrier, closed after.
func onEachCarrier(t *testing.T, test func(t *testing.T, c *Conn, p peer, cr carrier)) {
	for _, cr := range carriers {
		t.Run(cr.name, func(t *testing.T) {
			tr, p := cr.mk(t, 0)
			c := New(tr, Options{Dialect: CDP})
			defer closeAndWait(c)
			test(t, c, p, cr)
		})
	}
}

func closeAndWait(c *Conn) {
	c.Close(nil)
	c.Wait()
}

// At most Options.Queue messages wait for the writer; a caller beyond that
// waits for room, or for its context, and sends nothing.
func TestQueueIsBounded(t *testing.T) {
	tr, p := newPipePair(t, 0)
	c := New(tr, Options{Dialect: CDP, Queue: 1})
	defer closeAndWait(c)
	ctx := ctxT(t)
	a, _, restA := stuckWrite(t, c, p, ctx, 1<<20)
	// A is with the writer; B and C want the queue's one place. Whichever
	// gets it, the other waits for room, and C's caller gives up.
	b := call(c, ctx, Request{Method: "B"})
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Call(short, Request{Method: "C"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("C: %v", err)
	}
	if n := len(c.queue); n != 1 {
		t.Fatalf("%d messages queued, over the cap of 1", n)
	}
	reqA := restA()
	reqB := readRequest(t, p)
	if reqB.Method != "B" {
		t.Fatalf("after A the peer got %q", reqB.Method)
	}
	p.send([]byte(`{"id":` + itoa(reqA.ID) + `,"result":{}}`))
	p.send([]byte(`{"id":` + itoa(reqB.ID) + `,"result":{}}`))
	if r := recv(t, a); r.err != nil {
		t.Fatal(r.err)
	}
	if r := recv(t, b); r.err != nil {
		t.Fatal(r.err)
	}
}
