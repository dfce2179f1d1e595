package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/agentfiles"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Options configure an Engine.
type Options struct {
	Hub *hub.Hub
	// Paused returns a paused-coded error while the person has paused
	// automation, nil otherwise. Checked first on every call.
	Paused func() error
	// TakenOver returns a non-empty viewer name while a live-view viewer
	// holds the tab; mutating calls then fail with code paused.
	TakenOver func(tabID int) string
	// Disabled returns an error for a tool the person turned off, nil
	// otherwise. Checked on every call and every browser_batch step, after
	// Paused.
	Disabled func(tool string) error
	// Developer reports whether the person marked a principal a developer
	// agent, which may send raw DevTools commands with the cdp tool. Nil
	// means nobody is.
	Developer func(principal string) bool
	// ManageExtensions reports whether the person lets agents list, enable
	// and disable the browser's extensions. Nil means no.
	ManageExtensions func() bool
	// OnActivity receives every finished call. It must not block.
	OnActivity func(Activity)
	Logger     *slog.Logger

	// Files holds each principal's upload and downloads folders; without
	// it upload_file takes no files and downloads stay where the browser
	// put them.
	Files *agentfiles.Root

	// NavigationTimeout bounds the wait for a page load (default 20 s).
	NavigationTimeout time.Duration
	// SettleTimeout bounds the wait for a page to go quiet after an action
	// (default 1 s); QuietWindow is how long the DOM must stay unchanged
	// (default 30 ms).
	SettleTimeout time.Duration
	QuietWindow   time.Duration
	// DialogTimeout is how long a dialog in an agent's tab waits for an
	// answer before Reins dismisses it (the person's setting, read when a
	// dialog opens; DefaultDialogTimeout when nil).
	DialogTimeout func() time.Duration
}

// Engine runs the tool catalog against the hub's browsers.
type Engine struct {
	hub  *hub.Hub
	opts Options
	log  *slog.Logger

	tools   map[string]*tool
	catalog []Info

	// bg: dismissals of unanswered dialogs (from timers) and downloads
	// (from event callbacks); stopCtx ends with Close, for the work bg runs.
	bg       sync.WaitGroup
	stopCtx  context.Context
	stopWork context.CancelFunc

	downloads *downloadTable

	mu     sync.Mutex
	tabs   map[int]*tabState
	closed bool
}

var _ Runner = (*Engine)(nil)

// NewEngine builds the engine with the full catalog.
func NewEngine(opts Options) *Engine {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.NavigationTimeout <= 0 {
		opts.NavigationTimeout = 20 * time.Second
	}
	if opts.SettleTimeout <= 0 {
		opts.SettleTimeout = time.Second
	}
	if opts.QuietWindow <= 0 {
		opts.QuietWindow = 30 * time.Millisecond
	}
	e := &Engine{
		hub: opts.Hub, opts: opts, log: opts.Logger,
		tools: map[string]*tool{}, tabs: map[int]*tabState{},
		downloads: newDownloadTable(),
	}
	e.stopCtx, e.stopWork = context.WithCancel(context.Background())
	for _, register := range families {
		register(e)
	}
	sort.Slice(e.catalog, func(i, j int) bool { return e.catalog[i].Name < e.catalog[j].Name })
	return e
}

// families lists one registration function per tool family file.
var families = []func(*Engine){
	registerTabs, registerNavigate, registerComputer, registerRead, registerForm,
	registerJS, registerLogs, registerWindow, registerUpload, registerMisc, registerBatch,
	registerStorage, registerDevtools, registerEmulate, registerExtensions, registerCDP,
	registerFiles, registerDownloads, registerWaitFor, registerDialog, registerTab,
}

// Catalog lists every tool, sorted by name.
func (e *Engine) Catalog() []Info { return append([]Info(nil), e.catalog...) }

// NewSession starts the session of a principal shown as label.
func (e *Engine) NewSession(principal, label string) *Session {
	return &Session{Principal: principal, Label: label}
}

// TabStates is how many tabs the engine follows (for leak checks).
func (e *Engine) TabStates() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.tabs)
}

// Close stops following tabs. Calls in flight finish on their own.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	tabs := e.tabs
	e.tabs = map[int]*tabState{}
	e.mu.Unlock()
	for _, ts := range tabs {
		ts.stop()
	}
	e.stopWork()
	e.bg.Wait()
}

// Call runs one tool for the session. It never returns nil, and failures
// are results with IsError and Code.
func (e *Engine) Call(ctx context.Context, s *Session, name string, args json.RawMessage) *Result {
	start := time.Now()
	c := &call{e: e, s: s, tool: name, start: start}
	res := c.run(ctx, name, args)
	e.record(c, name, res, time.Since(start))
	return res
}

// run is Call without the activity record, shared by browser_batch steps.
func (c *call) run(ctx context.Context, name string, args json.RawMessage) (res *Result) {
	if c.s == nil {
		return errorResult(wire.Errorf(wire.CodeNoSuchSession, "no session"))
	}
	if err := c.e.paused(); err != nil {
		return errorResult(err)
	}
	t := c.e.tools[name]
	if t == nil || (t.info.Extended && c.s.OperatorCatalog) {
		return errorResult(wire.Errorf(wire.CodeUnknownTool, "Unknown tool: %s", name))
	}
	if c.e.opts.Disabled != nil {
		if err := c.e.opts.Disabled(name); err != nil {
			return errorResult(err)
		}
	}
	defer func() {
		// A bug in one tool must not take the companion down with it.
		if r := recover(); r != nil {
			c.e.log.Error("tool panicked", "tool", name, "agent", c.s.Label, "principal", c.s.Principal, "tab", c.tabID, "browser", c.browser, "panic", r)
			res = errorResult(wire.Errorf(wire.CodeInternal, "%s failed unexpectedly", name))
		}
	}()
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	start := time.Now()
	r, err := t.invoke(ctx, c, args)
	if err != nil {
		// A dialog the call's action opened is its outcome, not a failure.
		if r = c.dialogOutcome(ctx, err, args, start); r == nil {
			return errorResult(err)
		}
	}
	if r == nil {
		r = &Result{Content: []Content{}}
	}
	if ts := c.e.existingTab(c.tabID); ts != nil && name != "browser_batch" {
		if t.info.Mutating {
			addLines(r, c.openedLines(ctx, ts, start))
		}
		c.remind(ctx, ts, r, start)
	}
	return r
}

func (e *Engine) paused() error {
	if e.opts.Paused == nil {
		return nil
	}
	err := e.opts.Paused()
	if err == nil {
		return nil
	}
	if wire.CodeOf(err) != wire.CodePaused {
		return &wire.Error{Code: wire.CodePaused, Message: err.Error()}
	}
	return err
}

func (e *Engine) record(c *call, name string, res *Result, d time.Duration) {
	outcome := "ok"
	if res.IsError {
		outcome = string(res.Code)
	}
	principal, label := "", ""
	if c.s != nil {
		principal, label = c.s.Principal, c.s.Label
	}
	e.log.Debug("tool call", "agent", label, "principal", principal, "tool", name, "tab", c.tabID, "browser", c.browser, "outcome", outcome, "duration", d)
	if e.opts.OnActivity != nil {
		e.opts.OnActivity(Activity{Time: time.Now(), Principal: principal, Agent: label, Tool: name, TabID: c.tabID, Outcome: outcome, Duration: d})
	}
}

// call is one tool invocation's context.
type call struct {
	e       *Engine
	s       *Session
	tool    string
	tabID   int
	browser string   // the tab's browser, for logs
	batch   bool     // inside browser_batch: no nesting
	lines   []string // said after the call's own result (dialog.go)
	start   time.Time
	// since is when this session's previous call on the tab began (zero if
	// none): what happened after it is the outcome of that call.
	since  time.Time
	marked bool
}

// errorResult turns an error into a failed Result whose text starts with
// the code, so an agent reading only text still sees it.
func errorResult(err error) *Result {
	code := wire.CodeOf(err)
	if errors.Is(err, context.Canceled) {
		code = wire.CodeTimeout
	}
	msg := err.Error()
	return &Result{Content: []Content{{Type: "text", Text: fmt.Sprintf("[%s] %s", code, msg)}}, IsError: true, Code: code}
}

func textResult(lines ...string) *Result {
	return &Result{Content: []Content{{Type: "text", Text: strings.Join(lines, "\n")}}}
}

// ---- ownership and tab access ----

// Ownership lives with the tab: the extension (or the dev transport)
// records the principal each agent tab was created for and reports it in
// every listing, so it survives a browser reconnect and a companion
// restart. The engine keeps no copy that a reconnect could lose.

// agentTab reports whether t was opened for an agent rather than shared by
// the person.
func agentTab(t hub.Tab) bool { return t.Agent || t.Owner != "" }

// visible reports whether principal may use tab t: its own agent tabs, and
// tabs the person shared by hand. An agent tab whose owner is another
// principal, or is unknown, is nobody else's: it stays hidden until its
// owner returns or the person shares it by hand, which clears the owner.
func visible(t hub.Tab, principal string) bool {
	if !t.Shared {
		return false
	}
	if agentTab(t) {
		return principal != "" && t.Owner == principal
	}
	return true
}

type access int

const (
	accessRead access = iota // observation: any visible tab
	accessAct                // changes the page: refused during take-over
)

// tab resolves a public tab id for this call and checks scope. It does not
// talk to the browser.
func (c *call) tab(id int, a access) (hub.Tab, *hub.Browser, error) {
	c.tabID = id
	if !c.marked && id > 0 {
		if c.start.IsZero() {
			c.start = time.Now()
		}
		c.since, c.marked = c.s.mark(id, c.start), true
	}
	if id <= 0 {
		return hub.Tab{}, nil, wire.Errorf(wire.CodeBadParams, "tabId is required (get one from tabs_context_mcp)")
	}
	t, b, err := c.e.hub.Tab(id)
	if err != nil {
		return hub.Tab{}, nil, err
	}
	c.browser = b.ID
	if !t.Shared {
		return hub.Tab{}, nil, wire.Errorf(wire.CodeNotShared, "tab %d is not shared with Reins", id)
	}
	if !visible(t, c.s.Principal) {
		return hub.Tab{}, nil, wire.Errorf(wire.CodeTabNotInSession, "tab %d belongs to another agent's tab group", id)
	}
	if t.Unsupported != "" {
		return hub.Tab{}, nil, wire.Errorf(wire.CodeRestrictedURL, "tab %d cannot be automated: %s", id, t.Unsupported)
	}
	if a == accessAct {
		if err := c.takenOver(id); err != nil {
			return hub.Tab{}, nil, err
		}
	}
	return t, b, nil
}

func (c *call) takenOver(id int) error {
	if c.e.opts.TakenOver == nil {
		return nil
	}
	if who := c.e.opts.TakenOver(id); who != "" {
		return wire.Errorf(wire.CodePaused, "tab %d is taken over by %s in live view; wait until they hand it back", id, who)
	}
	return nil
}

// page resolves a tab and makes sure its CDP domains are on, so console and
// network capture start with the tab's first use.
func (c *call) page(ctx context.Context, id int, a access) (*tabState, hub.Tab, error) {
	t, _, err := c.tab(id, a)
	if err != nil {
		return nil, hub.Tab{}, err
	}
	ts, err := c.e.tabState(id)
	if err != nil {
		return nil, hub.Tab{}, err
	}
	if err := c.dialogCheck(ctx, ts); err != nil {
		return nil, hub.Tab{}, err
	}
	ts.acting(c.s.Principal, c.browser, agentTab(t) && t.Owner == c.s.Principal, a == accessAct, time.Now())
	if err := ts.ensure(ctx, c.s.Label); err != nil {
		return nil, hub.Tab{}, err
	}
	if err := c.e.downloadsTo(ctx, ts, c.s.Label); err != nil {
		return nil, hub.Tab{}, err
	}
	return ts, t, nil
}

// inputTimeout bounds commands that need the page to render or respond:
// a hidden tab or a hung page never answers them.
const inputTimeout = 10 * time.Second

// cdp sends one command to the tab, naming the caller for the extension's
// activity log.
func (c *call) cdp(ctx context.Context, tabID int, method string, params any, out any) error {
	return c.cdpIn(ctx, tabID, "", method, params, out)
}

// cdpIn is cdp on a DevTools session of the tab: "" is the tab's own, an
// out-of-process frame has one of its own.
func (c *call) cdpIn(ctx context.Context, tabID int, session, method string, params any, out any) error {
	if strings.HasPrefix(method, "Input.") || method == "Page.captureScreenshot" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, inputTimeout)
		defer cancel()
	}
	var raw json.RawMessage
	var err error
	if ts := c.e.existingTab(tabID); ts != nil {
		raw, err = ts.cmd(ctx, c.s.Label, session, method, params)
	} else {
		raw, err = c.e.hub.CDP(ctx, tabID, method, params, session, c.s.Label)
	}
	if err != nil {
		if wire.CodeOf(err) == wire.CodeDialogOpen {
			return err
		}
		if wire.CodeOf(err) == wire.CodeTimeout && (strings.HasPrefix(method, "Input.") || method == "Page.captureScreenshot") {
			return wire.Errorf(wire.CodeTimeout, "tab %d did not answer %s: the tab may be hidden behind another tab or its page is hung", tabID, method)
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return wire.Errorf(wire.CodeInternal, "%s returned a malformed result: %w", method, err)
	}
	return nil
}

// ---- TOCTOU origin guard ----

// observe records the origin the agent has now seen on the tab.
func (c *call) observe(tabID int, href string) {
	if href == "" {
		return
	}
	c.s.observe(tabID, originOf(href))
}

// guard fails with navigated_away when the tab's current page is not on the
// origin the agent last observed there. With no observation yet there is
// nothing the agent could have been misled by.
func (c *call) guard(tabID int, href string) error {
	want := c.s.observed(tabID)
	if want == "" {
		return nil
	}
	got := originOf(href)
	if got == want {
		return nil
	}
	return wire.Errorf(wire.CodeNavigatedAway, "tab %d navigated away from %s to %s since you last looked; nothing was done. Take a screenshot or read_page, then act again", tabID, want, got)
}
