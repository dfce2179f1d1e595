package live

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/wire"
)

// maxInBytes caps a message from the page; input messages are tiny.
const maxInBytes = 64 << 10

// finalWriteTimeout bounds the error message at the end of a view, so a
// stalled viewer cannot hold up the end of the others.
const finalWriteTimeout = 2 * time.Second

// shutdownWriteTimeout bounds it when the companion shuts down, which must
// be over within 2 s whatever the viewers do. The connection then closes
// without the close handshake, which waits up to 5 s for a viewer that
// does not answer: the error message has said all there is to say.
const shutdownWriteTimeout = 500 * time.Millisecond

// shutdownGrace bounds the whole end of the views at shutdown: their last
// messages, then the connections of viewers still stuck in a write close
// under them.
const shutdownGrace = 2 * shutdownWriteTimeout

// viewer is one /live-ws connection. Its queue holds at most one frame
// (newest wins) plus the few control messages, which are never dropped and
// go first.
type viewer struct {
	s    *Server
	tab  int
	conn *websocket.Conn
	log  *slog.Logger
	cast *caster

	mu     sync.Mutex
	frame  []byte
	ctrl   [][]byte
	final  []byte
	closed bool
	signal chan struct{}
	// stallLogged keeps a stalled viewer to one log line per stall.
	stallLogged bool

	offered, dropped atomic.Int64
	// writeStart is when the write in progress began (unix ns), 0 when idle.
	writeStart atomic.Int64
}

func (v *viewer) wake() {
	select {
	case v.signal <- struct{}{}:
	default:
	}
}

// offerFrame queues a frame, replacing one the viewer has not taken yet.
// It never waits.
func (v *viewer) offerFrame(msg []byte) {
	v.mu.Lock()
	if v.closed || v.final != nil {
		v.mu.Unlock()
		return
	}
	v.offered.Add(1)
	if v.frame != nil {
		v.dropped.Add(1)
	}
	v.frame = msg
	stalled := !v.stallLogged && v.stalled()
	if stalled {
		v.stallLogged = true
	}
	v.mu.Unlock()
	if stalled {
		v.log.Info("live viewer is not reading; newer frames replace the ones it has not taken")
	}
	v.wake()
}

func (v *viewer) offerControl(msg []byte) {
	v.mu.Lock()
	if v.closed || v.final != nil || len(v.ctrl) >= 64 {
		v.mu.Unlock()
		return
	}
	v.ctrl = append(v.ctrl, msg)
	v.mu.Unlock()
	v.wake()
}

// fail queues the view's last message; the writer sends it and closes.
func (v *viewer) fail(code wire.Code, msg string) {
	v.mu.Lock()
	if v.closed || v.final != nil {
		v.mu.Unlock()
		return
	}
	v.final = encode(ErrorMsg{Kind: KindError, Code: code, Message: msg})
	v.frame = nil
	v.mu.Unlock()
	v.wake()
}

// shut stops the writer without a last message (the peer already left).
func (v *viewer) shut() {
	v.mu.Lock()
	v.closed = true
	v.mu.Unlock()
	v.wake()
}

func (v *viewer) takeStats() (offered, dropped int64) {
	return v.offered.Swap(0), v.dropped.Swap(0)
}

func (v *viewer) stalled() bool {
	start := v.writeStart.Load()
	return start != 0 && time.Since(time.Unix(0, start)) > stallAfter
}

// next waits for something to write: control messages first, then the
// final error, then the newest frame.
func (v *viewer) next() (msg []byte, final, ok bool) {
	for {
		v.mu.Lock()
		switch {
		case v.closed:
			v.mu.Unlock()
			return nil, false, false
		case len(v.ctrl) > 0:
			msg = v.ctrl[0]
			v.ctrl = v.ctrl[1:]
			v.mu.Unlock()
			return msg, false, true
		case v.final != nil:
			msg = v.final
			v.closed = true
			v.mu.Unlock()
			return msg, true, true
		case v.frame != nil:
			msg = v.frame
			v.frame = nil
			v.mu.Unlock()
			return msg, false, true
		}
		v.mu.Unlock()
		<-v.signal
	}
}

func (v *viewer) writer(done chan<- struct{}) {
	defer close(done)
	for {
		msg, final, ok := v.next()
		if !ok {
			return
		}
		timeout := v.s.opts.WriteTimeout
		shutdown := v.s.shuttingDown.Load()
		switch {
		case final && shutdown:
			timeout = shutdownWriteTimeout
		case final:
			timeout = finalWriteTimeout
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		v.writeStart.Store(time.Now().UnixNano())
		err := v.conn.Write(ctx, websocket.MessageText, msg)
		v.writeStart.Store(0)
		cancel()
		v.mu.Lock()
		v.stallLogged = false
		v.mu.Unlock()
		if err != nil {
			// A viewer that cannot take a frame within the write timeout
			// is closed rather than waited on.
			v.log.Info("live viewer dropped: write failed", "err", err)
			v.shut()
			v.conn.CloseNow()
			return
		}
		if final {
			if shutdown {
				v.conn.CloseNow()
			} else {
				v.conn.Close(websocket.StatusNormalClosure, "live view ended")
			}
			return
		}
	}
}

// ServeSocket answers GET /live/s/{session}/ws, the page's socket. The
// session's path and its cookie are the gate: both are secrets that only
// the browser that redeemed the ticket holds, and neither can be forged by
// a client that does not know them. The Origin must be the companion's own
// as well (the edge refuses foreign ones; a browser always sends one on a
// WebSocket upgrade, so a missing one is refused here), which stops a page
// of another origin in that same browser, though any other client can
// forge it.
func (s *Server) ServeSocket(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || origin != "http://"+r.Host {
		s.log.Warn("live view socket refused: origin", "origin", origin)
		http.Error(w, "reins: live view only answers its own page", http.StatusForbidden)
		return
	}
	tab, ok := s.auth.session(r.PathValue("session"), cookieValues(r))
	if !ok {
		s.log.Warn("live view socket refused: no such session")
		http.Error(w, "reins: this live view has expired; open Live view again from the Reins tray", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "reins: shutting down", http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	// The origin was checked above, and coder/websocket's own same-origin
	// check agrees with it: Origin's host equals Host.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		s.log.Debug("live view upgrade failed", "tab", tab, "err", err)
		return
	}
	conn.SetReadLimit(maxInBytes)
	s.mu.Lock()
	s.conns[conn] = struct{}{}
	s.mu.Unlock()
	v := &viewer{s: s, tab: tab, conn: conn, log: s.log.With("tab", tab), signal: make(chan struct{}, 1)}
	wdone := make(chan struct{})
	go v.writer(wdone)
	defer func() {
		v.shut()
		<-wdone
		conn.CloseNow()
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()

	if !s.greet(v) {
		<-wdone
		return
	}
	defer s.leave(v)
	v.log.Info("live viewer connected")
	for {
		_, data, err := conn.Read(context.Background())
		if err != nil {
			v.log.Info("live viewer left", "reason", closeReason(err))
			return
		}
		var m inMsg
		if err := json.Unmarshal(data, &m); err != nil {
			v.offerControl(encode(NoticeMsg{Kind: KindNotice, Message: "Reins could not read a message from this page."}))
			continue
		}
		s.handle(v, m)
	}
}

func closeReason(err error) string {
	if s := websocket.CloseStatus(err); s != -1 {
		return s.String()
	}
	if errors.Is(err, context.Canceled) {
		return "closed"
	}
	return err.Error()
}

// greet sends hello and joins the tab's screencast, or ends the view with
// the reason it cannot start.
func (s *Server) greet(v *viewer) bool {
	t, _, err := s.opts.Hub.Tab(v.tab)
	if err == nil && !t.Shared {
		err = wire.Errorf(wire.CodeNotShared, "tab %d is not shared with Reins", v.tab)
	}
	var vp Viewport
	if err == nil {
		vp, err = s.viewport(v.tab)
		if wire.CodeOf(err) == wire.CodeRestrictedURL {
			// A browser page for now: join anyway; the screencast says so
			// and starts once the tab shows a web page again.
			err = nil
		}
	}
	if err != nil {
		v.fail(wire.CodeOf(err), endMessage(err))
		return false
	}
	hello := describe(t)
	v.offerControl(encode(Hello{Kind: KindHello, Tab: hello, Viewport: vp}))
	if err := s.join(v); err != nil {
		v.fail(wire.CodeOf(err), endMessage(err))
		return false
	}
	// The caster's subscription began after hello read the tab: a title or
	// URL change in between reached neither, so look once more. A close or
	// unshare in between fails the screencast's start, which ends the view.
	if t, _, err := s.opts.Hub.Tab(v.tab); err == nil {
		if now := describe(t); now != hello {
			v.offerControl(encode(TabMsg{Kind: KindTab, Tab: now}))
		}
	}
	return true
}

// endMessage turns a hub error into a sentence for the page.
func endMessage(err error) string {
	switch wire.CodeOf(err) {
	case wire.CodeNoSuchTab:
		return "The tab was closed."
	case wire.CodeNoSuchBrowser:
		return "The browser that has this tab is no longer connected to Reins."
	case wire.CodeNotShared:
		return "The tab is no longer shared with Reins."
	case wire.CodeRestrictedURL:
		return "This page cannot be shown: browsers keep their own pages and extension pages out of reach."
	}
	return "Live view could not start: " + err.Error()
}

func (s *Server) viewport(tab int) (Viewport, error) {
	ctx, cancel := s.callCtx()
	defer cancel()
	raw, err := s.opts.Hub.CDP(ctx, tab, "Page.getLayoutMetrics", nil, "", Client)
	if err != nil {
		return Viewport{}, err
	}
	var m struct {
		CSSVisual struct {
			ClientWidth  float64 `json:"clientWidth"`
			ClientHeight float64 `json:"clientHeight"`
		} `json:"cssVisualViewport"`
		Visual struct {
			ClientWidth  float64 `json:"clientWidth"`
			ClientHeight float64 `json:"clientHeight"`
		} `json:"visualViewport"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Viewport{}, wire.Errorf(wire.CodeInternal, "Page.getLayoutMetrics returned a malformed result: %w", err)
	}
	if m.CSSVisual.ClientWidth > 0 {
		return Viewport{Width: m.CSSVisual.ClientWidth, Height: m.CSSVisual.ClientHeight}, nil
	}
	return Viewport{Width: m.Visual.ClientWidth, Height: m.Visual.ClientHeight}, nil
}

// join attaches the viewer to the tab's caster, starting one if needed.
func (s *Server) join(v *viewer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return wire.Errorf(wire.CodeShuttingDown, "Reins is shutting down")
	}
	c := s.casts[v.tab]
	if c == nil || !c.add(v) {
		c = newCaster(s, v.tab, c)
		s.casts[v.tab] = c
		c.add(v)
		c.begin()
	}
	v.cast = c
	s.viewers[v] = struct{}{}
	held := s.holders[v.tab] != nil
	v.offerControl(encode(TakeoverMsg{Kind: KindTakeover, Held: held}))
	return nil
}

// leave detaches a viewer; its take-over ends with it.
func (s *Server) leave(v *viewer) {
	s.mu.Lock()
	delete(s.viewers, v)
	released := s.holders[v.tab] == v
	if released {
		delete(s.holders, v.tab)
	}
	s.mu.Unlock()
	if released {
		v.log.Info("take over ended: the viewer left")
		s.takeoverChanged(v.tab)
	}
	if v.cast != nil {
		v.cast.remove(v)
	}
}

func (s *Server) casterStopped(c *caster) {
	s.mu.Lock()
	if s.casts[c.tab] == c {
		delete(s.casts, c.tab)
	}
	s.mu.Unlock()
}
