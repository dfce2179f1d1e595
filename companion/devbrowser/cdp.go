package devbrowser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// link is the raw CDP connection to the browser target plus the bookkeeping
// that turns page targets into browspark tabs. It is the hub.RoundTripper.
type link struct {
	b      *Browser
	conn   *websocket.Conn
	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan cdpReply
	closed   chan struct{}
	closeErr error
	once     sync.Once

	tmu      sync.Mutex
	targets  map[string]*target // page targets by targetId
	byTab    map[int]*target
	sessions map[string]*target // root page sessions
	children map[string]*target // child sessions (iframes, workers) under a page
	nextTab  int

	winW, winH int // window size for new tabs' windows

	// emitMu orders tabs events so an older snapshot never overwrites a
	// newer one in the hub.
	emitMu sync.Mutex
	hb     atomic.Pointer[hub.Browser]
}

type target struct {
	id      string
	tab     int
	url     string
	title   string
	agent   bool
	owner   string // the principal an agent tab was opened for
	session string
	// attachMu makes concurrent first calls on a tab share one attach.
	attachMu sync.Mutex
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
	Error     *cdpError       `json:"error,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	Title    string `json:"title"`
	URL      string `json:"url"`
	Attached bool   `json:"attached"`
}

func newLink(b *Browser, conn *websocket.Conn) *link {
	return &link{
		b: b, conn: conn,
		pending: map[int64]chan cdpReply{}, closed: make(chan struct{}),
		targets: map[string]*target{}, byTab: map[int]*target{},
		sessions: map[string]*target{}, children: map[string]*target{},
	}
}

// start turns on target discovery and records the pages that already exist.
func (l *link) start(ctx context.Context) error {
	if _, err := l.send(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}); err != nil {
		return err
	}
	return l.refresh(ctx)
}

// refresh reconciles the page list with Target.getTargets.
func (l *link) refresh(ctx context.Context) error {
	raw, err := l.send(ctx, "", "Target.getTargets", nil)
	if err != nil {
		return err
	}
	var res struct {
		TargetInfos []targetInfo `json:"targetInfos"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("decoding Target.getTargets: %w", err)
	}
	seen := map[string]bool{}
	l.tmu.Lock()
	for _, ti := range res.TargetInfos {
		if ti.Type != "page" {
			continue
		}
		seen[ti.TargetID] = true
		l.upsertLocked(ti)
	}
	for id, t := range l.targets {
		if !seen[id] {
			l.dropLocked(t)
		}
	}
	l.tmu.Unlock()
	l.emitTabs()
	return nil
}

func (l *link) upsertLocked(ti targetInfo) *target {
	t := l.targets[ti.TargetID]
	if t == nil {
		l.nextTab++
		t = &target{id: ti.TargetID, tab: l.nextTab}
		l.targets[ti.TargetID] = t
		l.byTab[t.tab] = t
	}
	t.url, t.title = ti.URL, ti.Title
	return t
}

func (l *link) dropLocked(t *target) {
	delete(l.targets, t.id)
	delete(l.byTab, t.tab)
	if t.session != "" {
		delete(l.sessions, t.session)
	}
	for s, c := range l.children {
		if c == t {
			delete(l.children, s)
		}
	}
}

func (l *link) setHub(hb *hub.Browser) {
	l.hb.Store(hb)
	l.emitTabs()
}

func (l *link) detachHub(reason string) {
	if hb := l.hb.Swap(nil); hb != nil {
		hb.Disconnect(reason)
	}
}

func (l *link) tabInfos() []wire.TabInfo {
	l.tmu.Lock()
	defer l.tmu.Unlock()
	out := make([]wire.TabInfo, 0, len(l.targets))
	for id := 1; id <= l.nextTab; id++ {
		t := l.byTab[id]
		if t == nil {
			continue
		}
		out = append(out, l.infoLocked(t))
	}
	return out
}

func (l *link) infoLocked(t *target) wire.TabInfo {
	return wire.TabInfo{ID: t.tab, URL: t.url, Title: t.title, Shared: true, Attached: t.session != "", WindowID: 1, Agent: t.agent, Owner: t.owner}
}

// emitTabs sends the full tab list to the hub, as an extension does
// whenever tabs change.
func (l *link) emitTabs() {
	l.emitMu.Lock()
	defer l.emitMu.Unlock()
	hb := l.hb.Load()
	if hb == nil {
		return
	}
	raw, err := json.Marshal(l.tabInfos())
	if err != nil {
		return
	}
	hb.Handle(wire.EventTabs, raw)
}

// send runs one CDP command on the browser (sessionID "") or on a session.
func (l *link) send(ctx context.Context, sessionID, method string, params any) (json.RawMessage, error) {
	id := l.nextID.Add(1)
	f := struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params,omitempty"`
		SessionID string `json:"sessionId,omitempty"`
	}{id, method, params, sessionID}
	if raw, ok := params.(json.RawMessage); ok && len(raw) == 0 {
		f.Params = nil
	}
	data, err := json.Marshal(f)
	if err != nil {
		return nil, wire.Errorf(wire.CodeBadParams, "encoding %s params: %v", method, err)
	}
	ch := make(chan cdpReply, 1)
	l.mu.Lock()
	if l.pending == nil {
		err := l.closeErr
		l.mu.Unlock()
		return nil, err
	}
	l.pending[id] = ch
	l.mu.Unlock()
	if err := l.conn.Write(ctx, websocket.MessageText, data); err != nil {
		l.forget(id)
		select {
		case <-l.closed:
			return nil, l.closeErr
		default:
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, wire.Errorf(wire.CodeNoSuchBrowser, "sending %s to the dev browser: %v", method, err)
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

func (l *link) forget(id int64) {
	l.mu.Lock()
	if l.pending != nil {
		delete(l.pending, id)
	}
	l.mu.Unlock()
}

// read dispatches responses and events until the connection ends. Events
// are handed to the hub on this goroutine, as the extension link does.
func (l *link) read() {
	for {
		_, data, err := l.conn.Read(context.Background())
		if err != nil {
			l.Close("connection to the dev browser lost")
			l.detachHub("dev browser exited")
			return
		}
		var f cdpFrame
		if err := json.Unmarshal(data, &f); err != nil {
			l.b.log.Warn("malformed CDP frame", "err", err)
			continue
		}
		if f.ID != 0 {
			l.deliver(f)
			continue
		}
		if f.Method != "" {
			l.event(f)
		}
	}
}

func (l *link) deliver(f cdpFrame) {
	l.mu.Lock()
	ch := l.pending[f.ID]
	delete(l.pending, f.ID)
	l.mu.Unlock()
	if ch == nil {
		return
	}
	if f.Error != nil {
		ch <- cdpReply{err: cdpErr(f.Error)}
		return
	}
	ch <- cdpReply{result: f.Result}
}

// cdpErr maps a CDP error to a wire error, keeping the browser's message so
// agents see what the page refused.
func cdpErr(e *cdpError) error {
	msg := e.Message
	if e.Data != "" {
		msg += ": " + e.Data
	}
	code := wire.CodeInternal
	switch {
	case strings.Contains(msg, "No target with given id"):
		code = wire.CodeNoSuchTab
	case e.Code == -32601: // JSON-RPC: method not found
		code = wire.CodeUnknownMethod
	case e.Code == -32602: // JSON-RPC: invalid params
		code = wire.CodeBadParams
	}
	return &cdpFailure{err: &wire.Error{Code: code, Message: lowerFirst(msg)}, cdpCode: e.Code}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// cdpFailure is a wire error that remembers the CDP error code, so the
// transport can recognise a session that vanished under it.
type cdpFailure struct {
	err     *wire.Error
	cdpCode int
}

func (e *cdpFailure) Error() string { return e.err.Message }
func (e *cdpFailure) Unwrap() error { return e.err }

func isSessionGone(err error) bool {
	var ce *cdpFailure
	if errors.As(err, &ce) {
		return strings.Contains(ce.err.Message, "ession with given id not found")
	}
	return false
}

func (l *link) event(f cdpFrame) {
	if f.SessionID == "" {
		l.browserEvent(f)
		return
	}
	l.tmu.Lock()
	t := l.sessions[f.SessionID]
	child := false
	if t == nil {
		t = l.children[f.SessionID]
		child = t != nil
	}
	l.tmu.Unlock()
	if t == nil {
		return
	}
	switch f.Method {
	case "Target.attachedToTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(f.Params, &p) == nil && p.SessionID != "" {
			l.tmu.Lock()
			l.children[p.SessionID] = t
			l.tmu.Unlock()
		}
	case "Target.detachedFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(f.Params, &p) == nil {
			l.tmu.Lock()
			delete(l.children, p.SessionID)
			l.tmu.Unlock()
		}
	}
	hb := l.hb.Load()
	if hb == nil {
		return
	}
	ev := wire.CDPEvent{TabID: t.tab, Method: f.Method, Params: f.Params}
	if child {
		ev.SessionID = f.SessionID
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return
	}
	hb.Handle(wire.EventCDPEvent, raw)
}

func (l *link) browserEvent(f cdpFrame) {
	switch f.Method {
	case "Target.targetCreated", "Target.targetInfoChanged":
		var p struct {
			TargetInfo targetInfo `json:"targetInfo"`
		}
		if json.Unmarshal(f.Params, &p) != nil || p.TargetInfo.Type != "page" {
			return
		}
		l.tmu.Lock()
		l.upsertLocked(p.TargetInfo)
		l.tmu.Unlock()
		l.emitTabs()
	case "Target.targetDestroyed", "Target.targetCrashed":
		var p struct {
			TargetID string `json:"targetId"`
		}
		if json.Unmarshal(f.Params, &p) != nil {
			return
		}
		l.tmu.Lock()
		t := l.targets[p.TargetID]
		if t != nil {
			l.dropLocked(t)
		}
		l.tmu.Unlock()
		if t != nil {
			l.emitTabs()
		}
	case "Target.detachedFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(f.Params, &p) != nil {
			return
		}
		l.tmu.Lock()
		t := l.sessions[p.SessionID]
		if t != nil {
			delete(l.sessions, p.SessionID)
			if t.session == p.SessionID {
				t.session = ""
			}
		}
		l.tmu.Unlock()
		if t == nil {
			return
		}
		if hb := l.hb.Load(); hb != nil {
			raw, _ := json.Marshal(wire.Detached{TabID: t.tab, Reason: "target_closed"})
			hb.Handle(wire.EventDetached, raw)
		}
	}
}

// Close fails every pending command and closes the socket. It does not stop
// the process: Browser.Close owns that.
func (l *link) Close(reason string) {
	l.once.Do(func() {
		l.mu.Lock()
		l.closeErr = wire.Errorf(wire.CodeNoSuchBrowser, "dev browser disconnected: %s", reason)
		pending := l.pending
		l.pending = nil
		close(l.closed)
		l.mu.Unlock()
		for _, ch := range pending {
			ch <- cdpReply{err: l.closeErr}
		}
		_ = l.conn.CloseNow()
	})
}
