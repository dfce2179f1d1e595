package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// tabState is what the engine keeps per tab, shared by every agent using
// it: whether its CDP domains are on, its isolated world, load watchers,
// and the console and network buffers.
type tabState struct {
	id     int
	e      *Engine
	cancel func()

	initMu  sync.Mutex // held only while enabling this tab's domains
	ready   atomic.Bool
	dlReady atomic.Bool // a dev tab's downloads go to the incoming folder

	worldMu sync.Mutex // serialises creating this tab's isolated world

	mu        sync.Mutex
	mainFrame string
	world     int // isolated-world execution context id; 0 = none
	// preWorld is a main-frame world with the helper in it that waits for
	// its setup: one the browser made as the document started (Chromium:
	// the helper is a new-document script), or one the engine made. It
	// becomes world once its first call has set it up.
	preWorld  int
	issued    int // highest ref number the main frame's helpers issued, across documents
	frames    frameTable
	watchers  map[*watcher]struct{}
	console   *consoleLog
	network   *networkLog
	docStatus map[string]int // loaderId → HTTP status of the main document
	emulation *emulation     // what the emulate tool put in force, nil if nothing
	// tracing: a devtools trace is on; traceScript is the id of the
	// new-document script that measures each page from its start.
	tracing     bool
	traceScript string
	gone        bool
	// crashed is closed when the page's renderer crashes (the browser's
	// Inspector.targetCrashed), and replaced by an open one when a
	// document commits again: what waits on the page's events selects on
	// it (crashNotice).
	crashed chan struct{}
	// Who a download the page starts belongs to: the agent that owns the
	// tab, or in a tab the person shared, the agent that acted there
	// within downloadClaimWindow (see claimant).
	owner   string
	actor   string
	actedAt time.Time
	browser string
	net     netTracker
	dlg     dialogState // the dialog the page shows (dialog.go)
	pop     popupState  // the tabs the page opened (tab.go)
}

// tabState returns the tab's state, subscribing to its events on first use.
func (e *Engine) tabState(id int) (*tabState, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, wire.Errorf(wire.CodeInternal, "the tool engine is shut down")
	}
	if ts := e.tabs[id]; ts != nil {
		return ts, nil
	}
	ts := &tabState{
		id: id, e: e, watchers: map[*watcher]struct{}{},
		console: newConsoleLog(maxLogEntries, maxLogBytes), network: newNetworkLog(maxLogEntries, maxLogBytes),
		docStatus: map[string]int{}, frames: newFrameTable(), crashed: make(chan struct{}),
	}
	// Subscribing under e.mu is safe: SubscribeTab never calls back
	// synchronously, and handlers never take e.mu while the hub holds a lock.
	ts.cancel = e.hub.SubscribeTab(id, ts.onEvent)
	e.tabs[id] = ts
	return ts, nil
}

func (e *Engine) dropTab(ts *tabState) {
	e.mu.Lock()
	if e.tabs[ts.id] == ts {
		delete(e.tabs, ts.id)
	}
	e.mu.Unlock()
	ts.stop()
}

func (ts *tabState) stop() {
	ts.cancel()
	ts.mu.Lock()
	ts.gone = true
	if d := ts.dlg.current; d != nil && d.timer != nil {
		d.timer.Stop()
	}
	ws := make([]*watcher, 0, len(ts.watchers))
	for w := range ts.watchers {
		ws = append(ws, w)
	}
	ts.mu.Unlock()
	for _, w := range ws {
		w.push(hub.TabEvent{Kind: hub.TabClosed})
	}
}

// downloadClaimWindow is how long after an agent's action in a tab the
// person shared a download there counts as the agent's. Later ones stay
// the person's, in the browser's own download folder.
const downloadClaimWindow = 30 * time.Second

// acting records a call on the tab: through which browser, whether the
// caller owns the tab, and, for an action, who acted when.
func (ts *tabState) acting(principal, browser string, owned, act bool, now time.Time) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.browser = browser
	if owned {
		ts.owner = principal
	}
	if act {
		ts.actor, ts.actedAt = principal, now
	}
}

// claimant is the principal a download starting now belongs to, or "".
func (ts *tabState) claimant(now time.Time) (principal, browser string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch {
	case ts.owner != "":
		return ts.owner, ts.browser
	case ts.actor != "" && now.Sub(ts.actedAt) <= downloadClaimWindow:
		return ts.actor, ts.browser
	}
	return "", ts.browser
}

func (ts *tabState) browserID() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.browser
}

// ensure turns on the domains the tools rely on: Page (loads, lifecycle),
// Runtime and Log (console), Network (requests). The extension may detach
// on idle; a detached event makes the next call do this again.
func (ts *tabState) ensure(ctx context.Context, agent string) error {
	if ts.ready.Load() {
		return nil
	}
	ts.initMu.Lock()
	defer ts.initMu.Unlock()
	if ts.ready.Load() {
		return nil
	}
	for _, step := range []struct {
		method string
		params any
	}{
		{"Page.enable", nil},
		{"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}},
		{"Runtime.enable", nil},
		{"Log.enable", nil},
		{"Network.enable", map[string]any{"maxPostDataSize": 0}},
	} {
		if _, err := ts.e.hub.CDP(ctx, ts.id, step.method, step.params, "", agent); err != nil {
			return fmt.Errorf("preparing tab %d (%s): %w", ts.id, step.method, err)
		}
	}
	if t, b, err := ts.e.hub.Tab(ts.id); err == nil && b.Engine() == wire.EngineChromium {
		// Each new document of the main frame gets the helper's world as it
		// starts, while it loads, so a navigation's first call finds it
		// ready (onEvent records it). Firefox cannot run such a script in
		// an isolated world; there, in documents that started before this,
		// and if the browser refuses it, worldID makes the world.
		if _, err := ts.e.hub.CDP(ctx, ts.id, "Page.addScriptToEvaluateOnNewDocument", map[string]any{
			"source": newDocumentJS, "worldName": worldName,
		}, "", agent); err != nil {
			if wire.CodeOf(err) == wire.CodeDialogOpen {
				return err
			}
			ts.e.log.Debug("the page helper cannot start with new documents", "tab", ts.id, "agent", agent, "err", err)
		}
		if agentTab(t) {
			// An agent's tab keeps rendering, its timers running and its
			// input answered when another tab comes to its window's front:
			// Chromium treats a focus-emulated page as visible.
			if _, err := ts.e.hub.CDP(ctx, ts.id, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true}, "", agent); err != nil {
				ts.e.log.Debug("focus emulation not available", "tab", ts.id, "agent", agent, "err", err)
			}
		}
	}
	if _, err := ts.mainFrameNow(ctx, agent); err != nil {
		return fmt.Errorf("preparing tab %d: %w", ts.id, err)
	}
	// A detach dropped the emulation and the trace's new-document script
	// with the debugger session.
	ts.mu.Lock()
	em, tracing := ts.emulation, ts.tracing
	ts.traceScript = ""
	ts.mu.Unlock()
	if em != nil {
		if err := ts.emulate(ctx, agent, emulation{}, *em); err != nil {
			return err
		}
	}
	if tracing {
		if err := ts.traceNewDocuments(ctx, agent, true); err != nil {
			return err
		}
	}
	ts.autoAttach(ctx, agent, "")
	ts.ready.Store(true)
	return nil
}

func (ts *tabState) frame() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.mainFrame
}

// onEvent runs on the browser's reader goroutine: it only records and
// signals, never blocks.
func (ts *tabState) onEvent(ev hub.TabEvent) {
	switch ev.Kind {
	case hub.TabDetached:
		ts.ready.Store(false)
		ts.dlReady.Store(false)
		ts.mu.Lock()
		ts.world, ts.preWorld = 0, 0
		ts.frames.detached()
		// Detached, the engine hears no load that would end a crash; the
		// browser's side refuses a crashed page's calls, and the next
		// attach hears the next crash.
		ts.clearCrashLocked()
		ts.mu.Unlock()
		// Detached, Reins can no longer answer a dialog; the browser shows
		// it to the person.
		ts.dialogGone()
		ts.notify(ev)
		return
	case hub.TabOpened:
		ts.tabOpened(ev.Tab)
		return
	case hub.TabClosed, hub.TabGone:
		ts.e.dropTab(ts)
		return
	case hub.TabUpdated:
		return
	}
	if ev.SessionID != "" {
		// Out-of-process frames: only what the frame worlds need.
		ts.childEvent(ev)
		return
	}
	switch ev.Method {
	case "Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded":
		ts.console.add(ev.Method, ev.Params)
		return
	case "Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished", "Network.loadingFailed":
		ts.net.feed(ev.Method, ev.Params)
		if status, loader, ok := ts.network.add(ev.Method, ev.Params); ok {
			ts.mu.Lock()
			ts.docStatus[loader] = status
			if len(ts.docStatus) > 64 {
				clear(ts.docStatus)
				ts.docStatus[loader] = status
			}
			ts.mu.Unlock()
		}
		return
	case "Page.javascriptDialogOpening":
		ts.dialogOpening(ev.Params)
	case "Page.javascriptDialogClosed":
		ts.dialogGone()
	case "Page.windowOpen":
		ts.windowOpened(ev.Params)
	case "Page.downloadWillBegin":
		ts.e.downloads.begin(ts, ev.Params)
	case "Page.downloadProgress", "Browser.downloadProgress":
		ts.e.downloads.progress(ts.e, ev.Params)
		if ev.Method == "Browser.downloadProgress" {
			return // every dev tab hears every download; only its own tab's Page events say it started there
		}
	case "Runtime.executionContextCreated":
		var p struct {
			Context struct {
				ID      int    `json:"id"`
				Name    string `json:"name"`
				AuxData struct {
					IsDefault bool   `json:"isDefault"`
					FrameID   string `json:"frameId"`
				} `json:"auxData"`
			} `json:"context"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && p.Context.Name == worldName && !p.Context.AuxData.IsDefault {
			ts.mu.Lock()
			if p.Context.AuxData.FrameID == ts.mainFrame && ts.world != p.Context.ID {
				ts.preWorld = p.Context.ID
			}
			ts.mu.Unlock()
		}
	case "Runtime.executionContextDestroyed":
		var p struct {
			ID int `json:"executionContextId"`
		}
		if json.Unmarshal(ev.Params, &p) == nil {
			ts.mu.Lock()
			if ts.world == p.ID {
				ts.world = 0
			}
			if ts.preWorld == p.ID {
				ts.preWorld = 0
			}
			ts.frames.contextGone("", p.ID)
			ts.mu.Unlock()
		}
	case "Runtime.executionContextsCleared":
		ts.mu.Lock()
		ts.world, ts.preWorld = 0, 0
		ts.frames.contextGone("", 0)
		ts.mu.Unlock()
	case "Target.attachedToTarget", "Target.detachedFromTarget":
		ts.targetEvent(ev)
		return
	case "Input.dragIntercepted":
		ts.notify(ev)
		return
	case crashEvent:
		ts.mu.Lock()
		select {
		case <-ts.crashed:
		default:
			close(ts.crashed)
		}
		ts.world, ts.preWorld = 0, 0
		ts.mu.Unlock()
		// A dialog goes with the page.
		ts.dialogGone()
		ts.notify(ev)
		return
	case "Page.frameNavigated":
		var p struct {
			Frame struct {
				ID       string `json:"id"`
				ParentID string `json:"parentId"`
			} `json:"frame"`
		}
		if json.Unmarshal(ev.Params, &p) == nil {
			ts.mu.Lock()
			if p.Frame.ParentID == "" {
				ts.mainFrame = p.Frame.ID
				ts.world = 0
				ts.clearCrashLocked() // loaded again
			} else {
				ts.frames.navigated(p.Frame.ID)
			}
			ts.mu.Unlock()
		}
	}
	if strings.HasPrefix(ev.Method, "Page.") || ev.Method == "Runtime.executionContextsCleared" {
		ts.notify(ev)
	}
}

// crashEvent is Chromium's report that a tab's renderer crashed, sent to
// every debugger session of the tab whether or not it enabled the Inspector
// domain: the extension forwards it, and so does the dev browser.
const crashEvent = "Inspector.targetCrashed"

// crashNotice returns a channel that is closed once the page's renderer
// crashed (already closed if it has and nothing loaded since).
func (ts *tabState) crashNotice() <-chan struct{} {
	waited(ts.id)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.crashed
}

func (ts *tabState) clearCrashLocked() {
	select {
	case <-ts.crashed:
		ts.crashed = make(chan struct{})
	default:
	}
}

// crashError answers what waited on a page whose renderer crashed, in the
// words the extension and the dev browser use for calls refused after it.
func crashError(tabID int) error {
	return wire.Errorf(wire.CodeAttachFailed, "the page crashed (tab %d); navigate to load it again", tabID)
}

func (ts *tabState) notify(ev hub.TabEvent) {
	ts.mu.Lock()
	if len(ts.watchers) == 0 {
		ts.mu.Unlock()
		return
	}
	ws := make([]*watcher, 0, len(ts.watchers))
	for w := range ts.watchers {
		ws = append(ws, w)
	}
	ts.mu.Unlock()
	for _, w := range ws {
		w.push(ev)
	}
}

func (ts *tabState) status(loader string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.docStatus[loader]
}

// ---- the isolated world and its helper ----

//go:embed page.js
var pageJS string

// newDocumentJS is the helper as the main frame's new-document script; a
// frame's world gets its helper when the frame is first used.
var newDocumentJS = "if (window === window.top) {\n" + pageJS + "\n}"

const worldName = "reins"

// worldSetup is what a fresh helper learns from the engine: its frame's
// ref prefix and where the frame's numbering stands. The engine sends it
// with the world's first call (callIn), which page.js's setup then answers
// as, so a new document costs no round trip of its own.
type worldSetup struct {
	Prefix string `json:"prefix"`
	Base   int    `json:"base"`
}

// worldID returns the tab's isolated world, creating it and installing the
// helper when the document changed. The helper lives apart from the page's
// own scripts, so a page cannot fake refs or patch the DOM APIs it uses.
// setup is non-nil while the world's helper has not taken its setup.
func (ts *tabState) worldID(ctx context.Context, agent string) (int, *worldSetup, error) {
	if id, setup := ts.mainWorld(); id != 0 {
		return id, setup, nil
	}
	ts.worldMu.Lock()
	defer ts.worldMu.Unlock()
	if id, setup := ts.mainWorld(); id != 0 {
		return id, setup, nil
	}
	ts.mu.Lock()
	frame := ts.mainFrame
	ts.mu.Unlock()
	var created struct {
		ID int `json:"executionContextId"`
	}
	for attempt := 0; ; attempt++ {
		// A world asked for while the frame swaps documents can go
		// unanswered; ask again for the frame as it is now.
		actx, cancel := context.WithTimeout(ctx, worldTimeout)
		raw, err := ts.cmd(actx, agent, "", "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": worldName})
		cancel()
		if err == nil {
			if err := json.Unmarshal(raw, &created); err != nil || created.ID == 0 {
				return 0, nil, wire.Errorf(wire.CodeInternal, "Page.createIsolatedWorld returned no context")
			}
			break
		}
		if wire.CodeOf(err) == wire.CodeDialogOpen {
			return 0, nil, err
		}
		if attempt == 2 || ctx.Err() != nil || (wire.CodeOf(err) != wire.CodeTimeout && !strings.Contains(err.Error(), "rame")) {
			return 0, nil, fmt.Errorf("preparing the page of tab %d: %w", ts.id, err)
		}
		ts.e.log.Debug("isolated world not created; retrying", "tab", ts.id, "agent", agent, "err", err)
		if f, ferr := ts.mainFrameNow(ctx, agent); ferr == nil {
			frame = f
		}
	}
	var res evalResult
	raw, err := ts.cmd(ctx, agent, "", "Runtime.evaluate", map[string]any{"expression": pageJS, "contextId": created.ID, "returnByValue": true})
	if err != nil {
		if wire.CodeOf(err) == wire.CodeDialogOpen {
			return 0, nil, err
		}
		return 0, nil, fmt.Errorf("installing the page helper in tab %d: %w", ts.id, err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return 0, nil, wire.Errorf(wire.CodeInternal, "decoding the helper install: %v", err)
	}
	if res.ExceptionDetails != nil {
		return 0, nil, wire.Errorf(wire.CodeInternal, "page helper failed to install: %s", res.ExceptionDetails.text())
	}
	// Like the browser's own, the world waits for its setup.
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.preWorld = created.ID
	return created.ID, &worldSetup{Base: ts.issued}, nil
}

// mainWorld is the main frame's world as it stands: one set up, or one
// with the helper in it that waits for its setup, or none (0).
func (ts *tabState) mainWorld() (int, *worldSetup) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.world != 0 {
		return ts.world, nil
	}
	if ts.preWorld != 0 {
		return ts.preWorld, &worldSetup{Base: ts.issued}
	}
	return 0, nil
}

// worldSetUp records that world took its setup.
func (ts *tabState) worldSetUp(f *frameRec, world int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if f != nil {
		if f.world == world {
			f.setUp = world
		}
		return
	}
	if ts.preWorld == world {
		ts.preWorld = 0
		if ts.world == 0 {
			ts.world = world
		}
	}
}

// worldTimeout bounds one attempt to create the isolated world.
const worldTimeout = 5 * time.Second

// mainFrameNow asks the browser for the tab's main frame.
func (ts *tabState) mainFrameNow(ctx context.Context, agent string) (string, error) {
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID string `json:"id"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	raw, err := ts.e.hub.CDP(ctx, ts.id, "Page.getFrameTree", nil, "", agent)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(raw, &tree); err != nil || tree.FrameTree.Frame.ID == "" {
		return "", wire.Errorf(wire.CodeInternal, "Page.getFrameTree returned no frame")
	}
	ts.mu.Lock()
	ts.mainFrame = tree.FrameTree.Frame.ID
	ts.mu.Unlock()
	return tree.FrameTree.Frame.ID, nil
}

func (ts *tabState) dropWorld(id int) {
	ts.mu.Lock()
	if ts.world == id {
		ts.world = 0
	}
	if ts.preWorld == id {
		ts.preWorld = 0
	}
	ts.mu.Unlock()
}

// evalResult is the result of Runtime.evaluate and Runtime.callFunctionOn.
type evalResult struct {
	Result           remoteObject      `json:"result"`
	ExceptionDetails *exceptionDetails `json:"exceptionDetails,omitempty"`
}

// holdsObjects says whether the page keeps an object alive for this result:
// an object result, or a thrown exception.
func (r evalResult) holdsObjects() bool {
	return r.Result.ObjectID != "" || (r.ExceptionDetails != nil && r.ExceptionDetails.Exception != nil && r.ExceptionDetails.Exception.ObjectID != "")
}

type remoteObject struct {
	Type        string          `json:"type"`
	Subtype     string          `json:"subtype,omitempty"`
	ClassName   string          `json:"className,omitempty"`
	Value       json.RawMessage `json:"value,omitempty"`
	Unserial    string          `json:"unserializableValue,omitempty"`
	Description string          `json:"description,omitempty"`
	ObjectID    string          `json:"objectId,omitempty"`
}

type exceptionDetails struct {
	Text      string        `json:"text"`
	Exception *remoteObject `json:"exception,omitempty"`
	URL       string        `json:"url,omitempty"`
	Line      int           `json:"lineNumber"`
	Column    int           `json:"columnNumber"`
}

func (d *exceptionDetails) text() string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	if d.Exception != nil && len(d.Exception.Value) > 0 {
		return d.Text + " " + string(d.Exception.Value)
	}
	return d.Text
}

// helperReply is the envelope every page.js function answers with.
type helperReply struct {
	OK    json.RawMessage `json:"ok"`
	Err   string          `json:"err"`
	Code  string          `json:"code"`
	Href  string          `json:"href"`
	Title string          `json:"title"`
	// N is the last ref number the helper's world issued.
	N int `json:"n"`
}

// helper calls page.js's function fn with args in the main frame's
// isolated world and decodes its answer into out. href is the page's URL at
// the time of the call, for the origin guard and observations.
func (ts *tabState) helper(ctx context.Context, agent, fn string, out any, args ...any) (href string, err error) {
	return ts.callIn(ctx, agent, nil, fn, out, true, args...)
}

// call is helper with a choice: retry in a fresh world when the document
// changed under the call, or report that as an error.
func (ts *tabState) call(ctx context.Context, agent, fn string, out any, retry bool, args ...any) (href string, err error) {
	return ts.callIn(ctx, agent, nil, fn, out, retry, args...)
}

// callIn runs fn in the world of frame f (nil: the main frame). A frame's
// href is the frame's own URL, not the tab's.
func (ts *tabState) callIn(ctx context.Context, agent string, f *frameRec, fn string, out any, retry bool, args ...any) (href string, err error) {
	cargs := make([]map[string]any, len(args))
	for i, a := range args {
		cargs[i] = map[string]any{"value": a}
	}
	for attempt := 0; ; attempt++ {
		var id int
		var session string
		var setup *worldSetup
		if f == nil {
			id, setup, err = ts.worldID(ctx, agent)
		} else {
			id, session, setup, err = ts.frameWorld(ctx, agent, f)
		}
		if err != nil {
			return "", err
		}
		drop := func() {
			if f == nil {
				ts.dropWorld(id)
			} else {
				ts.dropFrameWorld(f, id)
			}
		}
		decl, callArgs := helperDeclaration(fn), cargs
		if setup != nil {
			// A fresh world's first call: its setup, which then answers
			// as fn.
			decl = helperDeclaration("setup")
			callArgs = append([]map[string]any{{"value": setup}, {"value": fn}}, cargs...)
		}
		var res evalResult
		raw, err := ts.cmd(ctx, agent, session, "Runtime.callFunctionOn", map[string]any{
			"functionDeclaration": decl,
			"executionContextId":  id,
			"arguments":           callArgs,
			"returnByValue":       true,
			"awaitPromise":        true,
			"userGesture":         true,
		})
		if err != nil {
			if retry && attempt == 0 && (contextGone(err) || f != nil && frameGone(err)) {
				// The document changed under us (or the frame's session
				// did); make a world in the new one.
				drop()
				continue
			}
			if wire.CodeOf(err) == wire.CodeDialogOpen {
				return "", err
			}
			return "", fmt.Errorf("calling the page of tab %d: %w", ts.id, err)
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return "", wire.Errorf(wire.CodeInternal, "decoding page reply: %v", err)
		}
		if res.ExceptionDetails != nil {
			msg := res.ExceptionDetails.text()
			if strings.Contains(msg, "destroyed") && !retry {
				return "", wire.Errorf(wire.CodeInternal, "execution context was destroyed: %s", firstLine(msg))
			}
			if attempt == 0 && (strings.Contains(msg, "__reins") || strings.Contains(msg, "destroyed")) || setup != nil && attempt < 2 {
				// A world whose helper is missing (the browser's, when its
				// new-document script did not run) is replaced by one the
				// engine makes.
				ts.e.log.Debug("the page helper's world did not answer; making one", "tab", ts.id, "agent", agent, "err", firstLine(msg))
				drop()
				continue
			}
			return "", wire.Errorf(wire.CodeInternal, "page helper %s failed: %s", fn, firstLine(msg))
		}
		var rep helperReply
		if err := json.Unmarshal(res.Result.Value, &rep); err != nil {
			return "", wire.Errorf(wire.CodeInternal, "page helper %s answered %s", fn, truncate(string(res.Result.Value), 200))
		}
		ts.noteIssued(f, rep.N)
		if setup != nil {
			ts.worldSetUp(f, id)
		}
		if rep.Err != "" {
			code := wire.Code(rep.Code)
			if code == "" {
				code = wire.CodeBadParams
			}
			return rep.Href, &wire.Error{Code: code, Message: rep.Err}
		}
		if out != nil && len(rep.OK) > 0 {
			if err := json.Unmarshal(rep.OK, out); err != nil {
				return rep.Href, wire.Errorf(wire.CodeInternal, "decoding page helper %s: %v", fn, err)
			}
		}
		return rep.Href, nil
	}
}

func contextGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "annot find context") || strings.Contains(msg, "xecution context was destroyed") ||
		strings.Contains(msg, "nspected target navigated")
}

// helperDeclaration is the function the isolated world runs to call
// page.js's fn. The Firefox adapter cannot eval there, so it recognises this
// exact shape (extension/lib/firefox-runtime.js); both sides are tested
// against companion/wire/testdata/helper_call.json.
func helperDeclaration(fn string) string {
	return "function(...a){return globalThis.__reins.call(" + jsString(fn) + ", a)}"
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
