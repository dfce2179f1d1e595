package devbrowser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/internal/jsonrpc"
	"github.com/reinshq/reins/companion/wire"
)

// link is the raw CDP connection to the browser target plus the bookkeeping
// that turns page targets into browspark tabs. It is the hub.RoundTripper.
type link struct {
	b    *Browser
	conn *jsonrpc.Conn

	tmu      sync.Mutex
	targets  map[string]*target // page targets by targetId
	byTab    map[int]*target
	sessions map[string]*target // root page sessions
	children map[string]*target // child sessions (iframes, workers) under a page
	nextTab  int
	// fronts is the target known to be the active tab of each window (by
	// window id); a window missing here is not known.
	fronts map[int]string
	// epoch counts changes to the page list (a target recorded or
	// dropped). A Target.getTargets answer shows the list as it was when
	// it was asked for: refresh drops no target recorded since (born), which
	// would hand an agent's new tab back to nobody under a new id. And a
	// target once dropped (closed, destroyed, or missing from a listing)
	// never comes back: target ids are not reused, and the browser still
	// lists a tab for a moment after Target.closeTarget answered, which
	// would hand an agent's closed tab to nobody, visible to every agent.
	epoch     uint64
	dropped   map[string]bool // the last maxDropped dropped targetIds
	dropOrder []string        // dropped's ids, oldest first

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
	opener  int    // the tab this one was opened from, 0 if none
	window  int    // its window id once asked, 0 before
	session string
	born    uint64 // the epoch the target was recorded at
	// attachMu makes concurrent first calls on a tab share one attach.
	attachMu sync.Mutex
	// inflight cancels the calls waiting on the tab's page when its
	// renderer crashes: the browser never answers them.
	inflight map[*context.CancelCauseFunc]struct{}
	// crashed is set when the renderer crashed, until a navigation loads
	// the page again: nothing else would be answered.
	crashed bool
}

// errCrashed is the cause of calls cut short by a renderer crash, and
// errClosed of those cut short by the tab closing: the browser answers
// neither.
var (
	errCrashed = errors.New("the page crashed")
	errClosed  = errors.New("the tab was closed")
)

type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	Title    string `json:"title"`
	URL      string `json:"url"`
	Attached bool   `json:"attached"`
	OpenerID string `json:"openerId,omitempty"`
}

// newLink starts the CDP link over t. Events reach the hub on the link's
// reader goroutine, as an extension's do; when the link ends (Chromium
// exited, the pipe broke), the browser leaves the hub.
func newLink(b *Browser, t jsonrpc.Transport) *link {
	l := &link{
		b:       b,
		targets: map[string]*target{}, byTab: map[int]*target{},
		sessions: map[string]*target{}, children: map[string]*target{},
		fronts: map[int]string{},
	}
	l.conn = jsonrpc.New(t, jsonrpc.Options{
		Dialect:    jsonrpc.CDP,
		OnEvent:    l.event,
		OnClose:    func(error) { l.detachHub("dev browser exited") },
		MaxMessage: wire.MaxFrameBytes,
	})
	return l
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
	l.tmu.Lock()
	asked := l.epoch
	l.tmu.Unlock()
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
		if l.dropped[ti.TargetID] {
			continue // closed, even if the browser still lists it
		}
		l.upsertLocked(ti)
	}
	for id, t := range l.targets {
		if !seen[id] && t.born <= asked {
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
		l.epoch++
		t = &target{id: ti.TargetID, tab: l.nextTab, born: l.epoch}
		l.targets[ti.TargetID] = t
		l.byTab[t.tab] = t
		// A page opened from an agent's tab (target=_blank, window.open)
		// is that agent's, as the extension decides; one opened from a
		// person's tab stays the person's.
		if opener := l.targets[ti.OpenerID]; opener != nil {
			t.opener = opener.tab
			if opener.agent {
				t.agent, t.owner = true, opener.owner
			}
		}
		// It may have taken its window's front.
		clear(l.fronts)
	}
	t.url, t.title = ti.URL, ti.Title
	return t
}

// maxDropped bounds the record of dropped targets, the oldest forgotten
// first; a listing or an info change that lags names only tabs closed a
// moment ago.
const maxDropped = 256

func (l *link) dropLocked(t *target) {
	clear(l.fronts)
	l.epoch++
	if l.dropped == nil {
		l.dropped = map[string]bool{}
	}
	if !l.dropped[t.id] {
		if len(l.dropOrder) >= maxDropped {
			delete(l.dropped, l.dropOrder[0])
			l.dropOrder = l.dropOrder[1:]
		}
		l.dropped[t.id] = true
		l.dropOrder = append(l.dropOrder, t.id)
	}
	for c := range t.inflight {
		(*c)(errClosed)
	}
	t.inflight = nil
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
		hb.Disconnect(errors.New(reason))
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
	opener := 0
	if l.byTab[t.opener] != nil {
		opener = t.opener
	}
	return wire.TabInfo{ID: t.tab, URL: t.url, Title: t.title, Shared: true, Attached: t.session != "", WindowID: 1, Agent: t.agent, Owner: t.owner, Opener: opener}
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
	res, err := l.conn.Call(ctx, jsonrpc.Request{Method: method, Params: params, SessionID: sessionID})
	var ce *jsonrpc.Error
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &ce):
		return nil, cdpErr(ce)
	case errors.Is(err, jsonrpc.ErrTooBig):
		return nil, wire.Errorf(wire.CodeBadParams, "%s: %v", method, err)
	case errors.Is(err, jsonrpc.ErrClosed):
		return nil, wire.Errorf(wire.CodeNoSuchBrowser, "dev browser disconnected: %v", err)
	}
	return nil, err
}

// cdpErr maps a CDP error to a wire error, keeping the browser's message so
// agents see what the page refused.
func cdpErr(e *jsonrpc.Error) error {
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

func (l *link) event(f jsonrpc.Incoming) {
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

func (l *link) browserEvent(f jsonrpc.Incoming) {
	switch f.Method {
	case "Target.targetCreated", "Target.targetInfoChanged":
		var p struct {
			TargetInfo targetInfo `json:"targetInfo"`
		}
		if json.Unmarshal(f.Params, &p) != nil || p.TargetInfo.Type != "page" {
			return
		}
		l.tmu.Lock()
		if l.dropped[p.TargetInfo.TargetID] {
			// A closed tab's last info changes arrive after it was
			// dropped: it must not come back as nobody's tab.
			l.tmu.Unlock()
			return
		}
		l.upsertLocked(p.TargetInfo)
		l.tmu.Unlock()
		l.emitTabs()
	case "Target.targetCrashed":
		// The tab stays open on the browser's error page, with its id and
		// owner; a navigation loads it again. What waited on the page gets
		// an error now, since the renderer that would answer is gone.
		var p struct {
			TargetID string `json:"targetId"`
		}
		if json.Unmarshal(f.Params, &p) != nil {
			return
		}
		l.tmu.Lock()
		var cut []context.CancelCauseFunc
		if t := l.targets[p.TargetID]; t != nil {
			t.crashed = true
			for c := range t.inflight {
				cut = append(cut, *c)
			}
			t.inflight = nil
		}
		l.tmu.Unlock()
		for _, cancel := range cut {
			cancel(errCrashed)
		}
	case "Target.targetDestroyed":
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

// Close fails every pending command and closes the pipe, which makes
// Chromium quit. Browser.Close owns the rest of the process's end.
func (l *link) Close(cause error) {
	l.conn.Close(cause)
}
