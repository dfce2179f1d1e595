package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/internal/jsonrpc"
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
// under a small frame limit and one deadline, then the browser's frames on
// the link.
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
	h.serveLink(hello, newWSLink(h, jsonrpc.NewWebSocket(conn, wsStatus)))
}

// serveLink attaches the browser of a link whose handshake is done and
// serves its frames until the link ends.
func (h *Hub) serveLink(hello wire.Hello, link *wsLink) {
	b, err := h.Attach(hello, ModeExtension, link)
	if err != nil {
		link.attached(nil)
		link.Close(err)
		link.rpc.Wait()
		return
	}
	link.attached(b)
	<-link.rpc.Done()
	cause := linkCause(link.rpc.Err())
	if wire.CodeOf(cause) == wire.CodeBadFrame {
		b.detach(wire.Errorf(wire.CodeNoSuchBrowser, "browser %s sent a frame that is not a JSON object", b.ID), cause)
	} else {
		b.detach(wire.Errorf(wire.CodeNoSuchBrowser, "browser %s disconnected", b.ID), cause)
	}
	link.rpc.Wait()
}

// closedBy marks the cause of a link the companion closed (wsLink.Close),
// as against what ended the read.
type closedBy struct{ cause error }

func (c closedBy) Error() string { return c.cause.Error() }
func (c closedBy) Unwrap() error { return c.cause }

// linkCause says why a link ended, as an error whose wire code picks the
// close code (wire.CloseCode): the cause the companion closed it with, or
// what ended the read.
func linkCause(err error) error {
	var by closedBy
	if errors.As(err, &by) {
		return by.cause
	}
	tooLarge := wire.Errorf(wire.CodeFrameTooLarge, "frame over 64 MiB")
	if errors.Is(err, jsonrpc.ErrProtocol) {
		return wire.Errorf(wire.CodeBadFrame, "frame is not a JSON object")
	}
	if errors.Is(err, websocket.ErrMessageTooBig) || isReadLimit(err) {
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
	if err == nil {
		return errors.New("closed by companion")
	}
	return errors.New("connection lost")
}

// parseFrame decodes a frame and reports whether it is a JSON object in a
// text message.
func parseFrame(typ websocket.MessageType, data []byte) (wire.Frame, bool) {
	if typ != websocket.MessageText {
		return wire.Frame{}, false
	}
	f, err := jsonrpc.DecodeFrame(data)
	return f, err == nil
}

// wsLink is the RoundTripper over an extension's WebSocket: the shared
// JSON-RPC client in the browspark dialect. Its writes never use a
// caller's context (see companion/internal/jsonrpc), so one caller giving
// up cannot drop the browser for everyone; a peer that cannot take a frame
// within jsonrpc.DefaultWriteTimeout is too slow and is closed.
type wsLink struct {
	rpc *jsonrpc.Conn
	log *slog.Logger

	// ready is closed once Attach has named the browser; events wait for
	// it, since the link exists (and may read) before the browser does.
	ready chan struct{}
	b     *Browser
}

// wsStatus is the close frame for a link that ends because of cause.
func wsStatus(cause error) (websocket.StatusCode, string) {
	cause = linkCause(cause)
	return websocket.StatusCode(wire.CloseCode(cause)), truncate(cause.Error(), 120)
}

// newWSLink runs the browspark link over t (the extension's WebSocket).
func newWSLink(h *Hub, t jsonrpc.Transport) *wsLink {
	l := &wsLink{log: h.log, ready: make(chan struct{})}
	l.rpc = jsonrpc.New(t, jsonrpc.Options{
		Dialect:    jsonrpc.Browspark,
		OnEvent:    l.event,
		MaxMessage: wire.MaxFrameBytes,
	})
	return l
}

// attached names the link's browser (nil: Attach refused it).
func (l *wsLink) attached(b *Browser) {
	l.b = b
	close(l.ready)
}

func (l *wsLink) event(in jsonrpc.Incoming) {
	<-l.ready
	if l.b == nil {
		return
	}
	if in.Method == "" {
		l.log.Debug("unexpected frame ignored", "browser", l.b.ID)
		return
	}
	l.b.Handle(in.Method, in.Params)
}

func (l *wsLink) RoundTrip(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, err := l.rpc.Call(ctx, jsonrpc.Request{Method: method, Params: params})
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, jsonrpc.ErrTooBig):
		return nil, wire.Errorf(wire.CodeBadParams, "%s request is over 64 MiB", method)
	case errors.Is(err, jsonrpc.ErrClosed):
		return nil, l.closedErr(err)
	}
	return nil, err
}

// closedErr is what callers of a closed link get: no_such_browser, with why.
func (l *wsLink) closedErr(err error) error {
	id := ""
	select {
	case <-l.ready:
		if l.b != nil {
			id = l.b.ID
		}
	default:
	}
	return wire.Errorf(wire.CodeNoSuchBrowser, "browser %s disconnected: %w", id, linkCause(err))
}

// Notify sends an event and returns once it is written.
func (l *wsLink) Notify(event string, params any) error {
	err := l.rpc.Notify(context.Background(), jsonrpc.Request{Method: event, Params: params})
	if errors.Is(err, jsonrpc.ErrClosed) {
		return l.closedErr(err)
	}
	return err
}

// Close fails every pending request at once, then sends a close frame
// whose code follows cause's code.
func (l *wsLink) Close(cause error) {
	l.rpc.Close(closedBy{cause})
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
