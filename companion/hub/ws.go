package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/wire"
)

// ServeHTTP accepts an extension's WebSocket. The caller (the HTTP edge) has
// already checked Host and that the Origin, if any, is an extension origin;
// the upgrade therefore skips coder/websocket's same-origin check, which
// would refuse every chrome-extension:// origin. Neither check proves
// anything about the peer: the link handshake (Options.Auth) does.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A socket that has not proved the link key holds a slot until its
	// handshake ends; when all are taken, more are refused before the
	// upgrade, so unauthenticated peers cannot pile up.
	if !h.unauth.acquire() {
		h.log.Warn("refused extension socket: too many unauthenticated connections", "limit", h.opts.MaxUnauthenticated, "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many unauthenticated connections", http.StatusServiceUnavailable)
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		h.unauth.release()
		h.log.Debug("websocket upgrade failed", "err", err)
		return
	}
	h.serveConn(context.Background(), conn, peer{origin: r.Header.Get("Origin"), remote: r.RemoteAddr, port: localPort(r)})
}

// peer is what the hub knows of a socket before its handshake.
type peer struct {
	origin string
	remote string
	port   int // the port the peer dialled: what the proofs are bound to
}

// localPort is the port the connection was accepted on, which is the port
// the extension dialled (a relay would have dialled another).
func localPort(r *http.Request) int {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if tcp, ok := a.(*net.TCPAddr); ok {
			return tcp.Port
		}
	}
	_, p, err := net.SplitHostPort(r.Host)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// serveConn runs one extension socket: the hello and the link handshake
// under a small frame limit and one deadline, then the browser's frames.
func (h *Hub) serveConn(ctx context.Context, conn *websocket.Conn, p peer) {
	conn.SetReadLimit(MaxPreAuthFrame)
	hello, ok := h.handshake(ctx, conn, p, sync.OnceFunc(h.unauth.release))
	if !ok {
		return
	}
	conn.SetReadLimit(wire.MaxFrameBytes)
	if h.opts.Admit != nil {
		if err := h.opts.Admit(hello); err != nil {
			// Admit logs what the person should see; a refused extension
			// retries every few seconds.
			h.log.Debug("refused extension", "browser", hello.Browser, "profile", hello.Profile, "instance", hello.InstanceID, "reason", err)
			conn.Close(StatusRefused, truncate(err.Error(), 120))
			return
		}
	}
	link := &wsLink{conn: conn, pending: map[int64]chan reply{}, closed: make(chan struct{})}
	b, err := h.Attach(hello, ModeExtension, link)
	if err != nil {
		conn.Close(websocket.StatusGoingAway, err.Error())
		return
	}
	link.mu.Lock()
	link.browserID = b.ID
	link.mu.Unlock()
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			b.detach(wire.Errorf(wire.CodeNoSuchBrowser, "browser %s disconnected", b.ID), closeCause(err))
			return
		}
		f, ok := parseFrame(typ, data)
		if !ok {
			b.detach(wire.Errorf(wire.CodeNoSuchBrowser, "browser %s sent a frame that is not a JSON object", b.ID), wire.Errorf(wire.CodeBadFrame, "frame is not a JSON object"))
			return
		}
		switch {
		case f.Event != "":
			b.Handle(f.Event, f.Params)
		case f.ID != nil && f.Method == "":
			link.deliver(*f.ID, f)
		default:
			h.log.Debug("unexpected frame ignored", "browser", b.ID)
		}
	}
}

// closeCause says why a read ended the link.
func closeCause(err error) error {
	tooLarge := wire.Errorf(wire.CodeFrameTooLarge, "frame over 64 MiB")
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return tooLarge
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == websocket.StatusMessageTooBig {
			return tooLarge
		}
		if ce.Reason != "" {
			return errors.New(ce.Reason)
		}
		return fmt.Errorf("closed (%d)", ce.Code)
	}
	if errors.Is(err, errLinkClosed) {
		return errors.New("closed by companion")
	}
	if isReadLimit(err) {
		return tooLarge
	}
	return errors.New("connection lost")
}

// parseFrame decodes a frame and reports whether it is a JSON object.
func parseFrame(typ websocket.MessageType, data []byte) (wire.Frame, bool) {
	var f wire.Frame
	if typ != websocket.MessageText {
		return f, false
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return f, false
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, false
	}
	return f, true
}

var errLinkClosed = errors.New("link closed")

// writeTimeout bounds one frame write to an extension.
const writeTimeout = 10 * time.Second

type reply struct {
	result json.RawMessage
	err    error
}

// wsLink is the RoundTripper over an extension's WebSocket. Any number of
// requests may be in flight; each waits on its own channel keyed by id.
type wsLink struct {
	conn      *websocket.Conn
	browserID string // guarded by mu: Attach names the browser after the link exists
	nextID    atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan reply
	closed   chan struct{}
	closeErr error
	once     sync.Once
}

func (l *wsLink) RoundTrip(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := l.nextID.Add(1)
	data, err := json.Marshal(wire.Req{ID: id, Method: method, Params: params})
	if err != nil {
		return nil, wire.Errorf(wire.CodeBadParams, "encoding %s params: %v", method, err)
	}
	if len(data) > wire.MaxFrameBytes {
		return nil, wire.Errorf(wire.CodeBadParams, "%s request is over 64 MiB", method)
	}
	ch := make(chan reply, 1)
	l.mu.Lock()
	if l.pending == nil {
		l.mu.Unlock()
		return nil, l.closeErr
	}
	l.pending[id] = ch
	l.mu.Unlock()

	// The write has its own deadline: the library closes the connection
	// when a write's context ends mid-frame, and one caller giving up must
	// not drop the browser for everyone. A peer that cannot take a frame in
	// writeTimeout is too slow and is closed.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	err = l.conn.Write(wctx, websocket.MessageText, data)
	cancel()
	if err != nil {
		l.forget(id)
		select {
		case <-l.closed:
			return nil, l.closeErr
		default:
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		l.mu.Lock()
		id := l.browserID
		l.mu.Unlock()
		return nil, wire.Errorf(wire.CodeNoSuchBrowser, "sending %s to browser %s: %v", method, id, err)
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		l.forget(id)
		return nil, ctx.Err()
	case <-l.closed:
		return nil, l.closeErr
	}
}

func (l *wsLink) forget(id int64) {
	l.mu.Lock()
	if l.pending != nil {
		delete(l.pending, id)
	}
	l.mu.Unlock()
}

func (l *wsLink) deliver(id int64, f wire.Frame) {
	l.mu.Lock()
	ch := l.pending[id]
	delete(l.pending, id)
	l.mu.Unlock()
	if ch == nil {
		return // answered after its caller gave up
	}
	if f.Error != "" || f.Code != "" {
		msg := f.Error
		if msg == "" {
			msg = string(f.Code)
		}
		ch <- reply{err: wire.Remote(msg, f.Code)}
		return
	}
	ch <- reply{result: f.Result}
}

func (l *wsLink) Notify(event string, params any) error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return writeEvent(ctx, l.conn, event, params)
}

// Close fails every pending request at once, then sends a close frame
// whose code follows cause's code.
func (l *wsLink) Close(cause error) {
	l.once.Do(func() {
		l.mu.Lock()
		l.closeErr = wire.Errorf(wire.CodeNoSuchBrowser, "browser %s disconnected: %w", l.browserID, cause)
		pending := l.pending
		l.pending = nil
		close(l.closed)
		l.mu.Unlock()
		for _, ch := range pending {
			ch <- reply{err: l.closeErr}
		}
		l.conn.Close(websocket.StatusCode(wire.CloseCode(cause)), truncate(cause.Error(), 120))
	})
}

// truncate cuts s to at most n bytes on a rune boundary: a close reason
// must be valid UTF-8.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
