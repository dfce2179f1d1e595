package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Frames. The page helper walks a document together with its same-origin
// frames and open shadow roots as one tree. A frame it cannot enter (another
// origin, a sandbox) it reports by the ref of its iframe element; the engine
// then runs another copy of the helper in that frame's own isolated world,
// on the DevTools session that renders it: the tab's own for a frame in the
// page's process, the frame's own for an out-of-process frame (Chromium
// attaches to those through Target.setAutoAttach). That frame's refs carry
// its number (ref_f2_7), so refs stay unique across frames, and its
// coordinates move by the offset of its iframe in the parent.
//
// Firefox has no DevTools sessions: its adapter scripts any frame by the id
// webNavigation gives it, and the helper there names a frame by that id
// (runtime.getFrameId), so no DevTools lookup is needed.

const (
	// maxFrames bounds the frames one call enters; the rest are named but
	// not read.
	maxFrames = 48
	// maxFrameRecords bounds the frames a tab remembers (their numbers and
	// worlds); the least recently used is forgotten first.
	maxFrameRecords = 128
	// maxFrameDepth bounds how deep frames nest inside frames the helper
	// cannot enter.
	maxFrameDepth = 6
	// maxChildSessions bounds the out-of-process frames a tab tracks.
	maxChildSessions = 256
)

// frameRec is a frame the main frame's helper cannot walk into.
type frameRec struct {
	key     int    // its number in refs: ref_f<key>_N
	id      string // frame id: DevTools', or on Firefox the webNavigation id
	session string // DevTools session that renders it; "" = the tab's own
	world   int    // isolated world in session; 0 = none yet
	setUp   int    // the world that took its setup: world once its first call ran
	issued  int    // highest ref number issued in it, across its documents
	parent  int    // key of the frame whose helper reported its iframe (0 = main)
	owner   string // that iframe element's ref in the parent's world
	// ownerWorld is the parent's world when owner was read: a new world
	// has new refs, so the link is looked up again.
	ownerWorld int
	depth      int    // tree depth of its content in the last read_page
	used       uint64 // for forgetting the least recently used
}

// frameTable is a tab's frames, guarded by tabState.mu.
type frameTable struct {
	byKey    map[int]*frameRec
	byID     map[string]int
	nextKey  int
	clock    uint64
	sessions map[string]string // out-of-process frame id → its session
}

func newFrameTable() frameTable {
	return frameTable{byKey: map[int]*frameRec{}, byID: map[string]int{}, nextKey: 1, sessions: map[string]string{}}
}

// detached forgets every session and world: the debugger is gone.
func (t *frameTable) detached() {
	clear(t.sessions)
	for _, f := range t.byKey {
		f.world, f.session, f.ownerWorld = 0, "", 0
	}
}

// contextGone drops the worlds that lived in an execution context of
// session (id 0: every context of that session).
func (t *frameTable) contextGone(session string, id int) {
	for _, f := range t.byKey {
		if f.session == session && (id == 0 || f.world == id) {
			f.world = 0
		}
	}
}

// navigated drops the world of a frame that loaded a new document.
func (t *frameTable) navigated(frameID string) {
	if k, ok := t.byID[frameID]; ok {
		t.byKey[k].world = 0
	}
}

// record returns the frame's record, making one (and forgetting the least
// recently used) on first sight.
func (t *frameTable) record(id string) *frameRec {
	t.clock++
	if k, ok := t.byID[id]; ok {
		f := t.byKey[k]
		f.used = t.clock
		return f
	}
	if len(t.byKey) >= maxFrameRecords {
		var old *frameRec
		for _, f := range t.byKey {
			if old == nil || f.used < old.used {
				old = f
			}
		}
		delete(t.byKey, old.key)
		delete(t.byID, old.id)
	}
	f := &frameRec{key: t.nextKey, id: id, used: t.clock}
	t.nextKey++
	t.byKey[f.key] = f
	t.byID[id] = f.key
	return f
}

// ---- events

// autoAttach asks Chromium to attach to the out-of-process frames of a
// session ("" = the tab's own), so their sessions reach the engine.
// Firefox has no such sessions; its adapter scripts every frame itself.
func (ts *tabState) autoAttach(ctx context.Context, agent, session string) {
	_, b, err := ts.e.hub.Tab(ts.id)
	if err != nil || b.Engine() != wire.EngineChromium {
		return
	}
	if _, err := ts.e.hub.CDP(ctx, ts.id, "Target.setAutoAttach", map[string]any{
		"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true,
	}, session, agent); err != nil {
		// Frames in other processes stay out of reach; the rest works.
		ts.e.log.Debug("auto-attach to frames refused", "tab", ts.id, "agent", agent, "err", err)
	}
}

// targetEvent follows the out-of-process frames attached to the tab.
func (ts *tabState) targetEvent(ev hub.TabEvent) {
	var p struct {
		SessionID  string `json:"sessionId"`
		TargetID   string `json:"targetId"`
		TargetInfo struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfo"`
	}
	if json.Unmarshal(ev.Params, &p) != nil || p.SessionID == "" {
		return
	}
	switch ev.Method {
	case "Target.attachedToTarget":
		if p.TargetInfo.Type != "iframe" {
			return
		}
		ts.mu.Lock()
		if ts.gone || len(ts.frames.sessions) >= maxChildSessions {
			ts.mu.Unlock()
			return
		}
		ts.frames.sessions[p.TargetInfo.TargetID] = p.SessionID
		if k, ok := ts.frames.byID[p.TargetInfo.TargetID]; ok {
			f := ts.frames.byKey[k]
			f.session, f.world = p.SessionID, 0
		}
		// Frames nested in this one attach through its own session.
		ts.e.bg.Add(1)
		ts.mu.Unlock()
		go func() {
			defer ts.e.bg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), inputTimeout)
			defer cancel()
			ts.autoAttach(ctx, "reins", p.SessionID)
		}()
	case "Target.detachedFromTarget":
		ts.mu.Lock()
		for id, s := range ts.frames.sessions {
			if s == p.SessionID {
				delete(ts.frames.sessions, id)
			}
		}
		for _, f := range ts.frames.byKey {
			if f.session == p.SessionID {
				f.session, f.world = "", 0
			}
		}
		ts.mu.Unlock()
	}
}

// childEvent handles an event of an out-of-process frame's session.
func (ts *tabState) childEvent(ev hub.TabEvent) {
	switch ev.Method {
	case "Target.attachedToTarget", "Target.detachedFromTarget":
		ts.targetEvent(ev)
	case "Runtime.executionContextDestroyed":
		var p struct {
			ID int `json:"executionContextId"`
		}
		if json.Unmarshal(ev.Params, &p) == nil {
			ts.mu.Lock()
			ts.frames.contextGone(ev.SessionID, p.ID)
			ts.mu.Unlock()
		}
	case "Runtime.executionContextsCleared":
		ts.mu.Lock()
		ts.frames.contextGone(ev.SessionID, 0)
		ts.mu.Unlock()
	}
}

// noteIssued keeps the highest ref number a world reported, so a world made
// later for the same frame continues the numbering.
func (ts *tabState) noteIssued(f *frameRec, n int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if f == nil {
		ts.issued = max(ts.issued, n)
		return
	}
	f.issued = max(f.issued, n)
}

// ---- worlds

// frameWorld returns the frame's isolated world and session, creating the
// world and installing the helper when the frame has none; setup is
// non-nil while the world's helper has not taken its setup.
func (ts *tabState) frameWorld(ctx context.Context, agent string, f *frameRec) (int, string, *worldSetup, error) {
	if id, session, setup := ts.frameWorldNow(f); id != 0 {
		return id, session, setup, nil
	}
	ts.worldMu.Lock()
	defer ts.worldMu.Unlock()
	if id, session, setup := ts.frameWorldNow(f); id != 0 {
		return id, session, setup, nil
	}
	ts.mu.Lock()
	session, frameID := f.session, f.id
	if s, ok := ts.frames.sessions[f.id]; ok {
		session = s
		f.session = s
	}
	ts.mu.Unlock()
	var created struct {
		ID int `json:"executionContextId"`
	}
	wctx, cancel := context.WithTimeout(ctx, worldTimeout)
	raw, err := ts.e.hub.CDP(wctx, ts.id, "Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": worldName}, session, agent)
	cancel()
	if err != nil {
		if frameGone(err) {
			return 0, "", nil, wire.Errorf(wire.CodeBadParams, "refs of frame f%d are stale: the frame is gone from the page. Call read_page or find for fresh refs", f.key)
		}
		return 0, "", nil, fmt.Errorf("preparing frame f%d of tab %d: %w", f.key, ts.id, err)
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.ID == 0 {
		return 0, "", nil, wire.Errorf(wire.CodeInternal, "Page.createIsolatedWorld returned no context")
	}
	var res evalResult
	raw, err = ts.e.hub.CDP(ctx, ts.id, "Runtime.evaluate", map[string]any{"expression": pageJS, "contextId": created.ID, "returnByValue": true}, session, agent)
	if err != nil {
		return 0, "", nil, fmt.Errorf("installing the page helper in frame f%d of tab %d: %w", f.key, ts.id, err)
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.ExceptionDetails != nil {
		return 0, "", nil, wire.Errorf(wire.CodeInternal, "the page helper did not install in frame f%d of tab %d", f.key, ts.id)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	f.world, f.session, f.setUp = created.ID, session, 0
	return created.ID, session, f.pendingSetup(), nil
}

// frameWorldNow is the frame's world as it stands (0: none), with the
// setup its helper still waits for.
func (ts *tabState) frameWorldNow(f *frameRec) (int, string, *worldSetup) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if f.world == 0 {
		return 0, "", nil
	}
	return f.world, f.session, f.pendingSetup()
}

// pendingSetup is the setup the frame's world still waits for, or nil.
// Guarded by tabState.mu.
func (f *frameRec) pendingSetup() *worldSetup {
	if f.setUp == f.world {
		return nil
	}
	return &worldSetup{Prefix: fmt.Sprintf("f%d_", f.key), Base: f.issued}
}

func (ts *tabState) dropFrameWorld(f *frameRec, id int) {
	ts.mu.Lock()
	if f.world == id {
		f.world = 0
	}
	ts.mu.Unlock()
}

// ---- refs and the frames they live in

var frameRefRE = regexp.MustCompile(`^ref_f(\d+)_\d+$`)

// frameOfRef returns the frame a ref was issued in: nil for the main
// frame (and for strings that are no ref, which the main helper refuses).
func (ts *tabState) frameOfRef(ref string) (*frameRec, error) {
	m := frameRefRE.FindStringSubmatch(ref)
	if m == nil {
		return nil, nil
	}
	k, err := strconv.Atoi(m[1])
	if err != nil {
		return nil, wire.Errorf(wire.CodeBadParams, "%q is not an element ref", ref)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if f := ts.frames.byKey[k]; f != nil {
		ts.frames.clock++
		f.used = ts.frames.clock
		return f, nil
	}
	if k >= ts.frames.nextKey || k == 0 {
		return nil, wire.Errorf(wire.CodeBadParams, "%s was never issued for this tab: use a ref that read_page or find gave you", ref)
	}
	return nil, wire.Errorf(wire.CodeBadParams, "%s is stale: its frame is gone from the page. Call read_page or find for fresh refs", ref)
}

// parentOf returns the frame whose helper reported f's iframe (nil: main).
func (ts *tabState) parentOf(f *frameRec) (parent *frameRec, owner string, err error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	owner = f.owner
	if f.parent == 0 {
		return nil, owner, nil
	}
	p := ts.frames.byKey[f.parent]
	if p == nil {
		return nil, "", wire.Errorf(wire.CodeBadParams, "frame f%d is gone from the page. Call read_page or find for fresh refs", f.key)
	}
	return p, owner, nil
}

// opaqueFrame is how a helper reports a frame it cannot enter.
type opaqueFrame struct {
	Ref string `json:"ref"` // its iframe element, in the reporting world
	FID string `json:"fid"` // Firefox: the frame's id; "" elsewhere
}

// frameFor returns the frame behind an iframe the helper of parent (nil:
// main) reported, finding its id on first sight.
func (c *call) frameFor(ctx context.Context, ts *tabState, parent *frameRec, of opaqueFrame) (*frameRec, error) {
	pkey, pworld, psession := 0, 0, ""
	ts.mu.Lock()
	if parent == nil {
		pworld = ts.world
	} else {
		pkey, pworld, psession = parent.key, parent.world, parent.session
	}
	id := of.FID
	if id == "" {
		for _, f := range ts.frames.byKey {
			if f.parent == pkey && f.owner == of.Ref && f.ownerWorld == pworld && pworld != 0 {
				id = f.id
				break
			}
		}
	}
	ts.mu.Unlock()
	if id == "" {
		var err error
		if id, err = c.frameIDOf(ctx, ts, psession, pworld, of.Ref); err != nil {
			return nil, err
		}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	f := ts.frames.record(id)
	if f.parent != pkey || f.owner != of.Ref || f.ownerWorld != pworld {
		f.parent, f.owner, f.ownerWorld = pkey, of.Ref, pworld
	}
	if s, ok := ts.frames.sessions[id]; ok {
		if f.session != s {
			f.session, f.world = s, 0
		}
	} else if f.session != psession && f.world == 0 {
		f.session = psession
	}
	return f, nil
}

// frameIDOf asks DevTools which frame an iframe element of a world shows.
func (c *call) frameIDOf(ctx context.Context, ts *tabState, session string, world int, ref string) (string, error) {
	if world == 0 {
		return "", wire.Errorf(wire.CodeInternal, "the frame's parent has no helper")
	}
	const group = "reins-frames"
	var res evalResult
	raw, err := c.e.hub.CDP(ctx, ts.id, "Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": "function(r){return globalThis.__reins.element(r)}",
		"executionContextId":  world,
		"arguments":           []map[string]any{{"value": ref}},
		"objectGroup":         group,
	}, session, c.s.Label)
	if err != nil {
		return "", fmt.Errorf("finding the frame of %s: %w", ref, err)
	}
	defer func() {
		if _, err := c.e.hub.CDP(context.WithoutCancel(ctx), ts.id, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": group}, session, c.s.Label); err != nil {
			c.e.log.Debug("releasing frame lookups", "tab", ts.id, "err", err)
		}
	}()
	if err := json.Unmarshal(raw, &res); err != nil || res.ExceptionDetails != nil || res.Result.ObjectID == "" {
		return "", wire.Errorf(wire.CodeBadParams, "%s is no longer on the page", ref)
	}
	var node struct {
		Node struct {
			FrameID string `json:"frameId"`
		} `json:"node"`
	}
	if err := c.cdpIn(ctx, ts.id, session, "DOM.describeNode", map[string]any{"objectId": res.Result.ObjectID}, &node); err != nil {
		return "", err
	}
	if node.Node.FrameID == "" {
		return "", wire.Errorf(wire.CodeBadParams, "the iframe %s shows no document yet", ref)
	}
	return node.Node.FrameID, nil
}

// helperFor runs fn in the world of the frame ref lives in, with ref as its
// first argument.
func (c *call) helperFor(ctx context.Context, ts *tabState, ref, fn string, out any, args ...any) (*frameRec, string, error) {
	f, err := ts.frameOfRef(ref)
	if err != nil {
		return nil, "", err
	}
	href, err := ts.callIn(ctx, c.s.Label, f, fn, out, true, append([]any{ref}, args...)...)
	return f, href, err
}

// ---- geometry across frames

type boxReply struct {
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	W    float64 `json:"w"`
	H    float64 `json:"h"`
	VW   float64 `json:"vw"`
	VH   float64 `json:"vh"`
	Desc string  `json:"desc"`
}

// frameOffset returns where frame f's viewport lies in the tab's, the tab's
// viewport size and the tab's URL. With reveal, each iframe on the way is
// scrolled into view first, outermost first.
func (c *call) frameOffset(ctx context.Context, ts *tabState, f *frameRec, reveal bool) (dx, dy, vw, vh float64, href string, err error) {
	type hop struct {
		parent *frameRec
		owner  string
	}
	var chain []hop
	for cur := f; cur != nil; {
		p, owner, err := ts.parentOf(cur)
		if err != nil {
			return 0, 0, 0, 0, "", err
		}
		chain = append(chain, hop{p, owner})
		if len(chain) > maxFrameDepth+1 {
			return 0, 0, 0, 0, "", wire.Errorf(wire.CodeInternal, "frames nest too deep")
		}
		cur = p
	}
	if reveal {
		for i := len(chain) - 1; i >= 0; i-- {
			var b boxReply
			if _, err := ts.callIn(ctx, c.s.Label, chain[i].parent, "box", &b, true, chain[i].owner, map[string]any{"scroll": true, "content": true}); err != nil {
				return 0, 0, 0, 0, "", err
			}
		}
	}
	for _, h := range chain {
		var b boxReply
		got, err := ts.callIn(ctx, c.s.Label, h.parent, "box", &b, true, h.owner, map[string]any{"content": true})
		if err != nil {
			return 0, 0, 0, 0, "", err
		}
		dx += b.X
		dy += b.Y
		if h.parent == nil {
			vw, vh, href = b.VW, b.VH, got
		}
	}
	return dx, dy, vw, vh, href, nil
}

// located is an element's place in the tab's viewport, in CSS px.
type located struct {
	x, y, w, h float64
	desc       string
	covered    string
	href       string // the tab's URL
	frame      *frameRec
}

type resolveReply struct {
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	W       float64 `json:"w"`
	H       float64 `json:"h"`
	Desc    string  `json:"desc"`
	Covered string  `json:"covered"`
	VW      float64 `json:"vw"`
	VH      float64 `json:"vh"`
}

// locate scrolls a ref into view, in whatever frame it lives, and reports
// its centre in the tab's viewport.
func (c *call) locate(ctx context.Context, ts *tabState, ref string) (located, error) {
	var r resolveReply
	f, href, err := c.helperFor(ctx, ts, ref, "resolve", &r)
	if err != nil {
		return located{href: href}, err
	}
	if f == nil {
		return located{x: r.X, y: r.Y, w: r.W, h: r.H, desc: r.Desc, covered: r.Covered, href: href}, nil
	}
	dx, dy, vw, vh, top, err := c.frameOffset(ctx, ts, f, false)
	if err != nil {
		return located{}, err
	}
	x, y := r.X+dx, r.Y+dy
	if x < 0 || y < 0 || x >= vw || y >= vh {
		// The frame itself is out of view: bring it in, then the element.
		if _, _, _, _, _, err := c.frameOffset(ctx, ts, f, true); err != nil {
			return located{}, err
		}
		if _, _, err := c.helperFor(ctx, ts, ref, "resolve", &r); err != nil {
			return located{}, err
		}
		if dx, dy, _, _, top, err = c.frameOffset(ctx, ts, f, false); err != nil {
			return located{}, err
		}
		x, y = r.X+dx, r.Y+dy
	}
	return located{x: x, y: y, w: r.W, h: r.H, desc: r.Desc, covered: r.Covered, href: top, frame: f}, nil
}

// topHref reads the tab's current URL, for the origin guard of an action in
// a frame.
func (c *call) topHref(ctx context.Context, ts *tabState) (string, error) {
	return ts.helper(ctx, c.s.Label, "info", nil)
}

// frameGone recognises a frame that left the page: Chromium cannot find
// its id, Firefox its frame or document.
func frameGone(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "no frame") || strings.Contains(msg, "frame with given id") || strings.Contains(msg, "invalid frame") ||
		strings.Contains(msg, "session with given id not found")
}
