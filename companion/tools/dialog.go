package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// A page's alert, confirm, prompt or leave-page (beforeunload) dialog
// blocks the page: no script, input or screenshot runs in it until the
// dialog is answered. Reins does not answer it by itself. The call whose
// action opened it says so (type, text, page) and the agent answers with the
// dialog tool; until then every call on the tab reminds it, and calls that
// need the page fail at once with dialog_open rather than hang. In an agent's
// tab, a dialog nobody answers within the person's timeout is dismissed and
// recorded in Activity; in a tab the person shared by hand, Reins answers
// only when an agent asks.

// The timeout after which Reins dismisses an unanswered dialog in an agent's
// tab: the person chooses it in Settings, within these bounds.
const (
	DefaultDialogTimeout = 60 * time.Second
	MinDialogTimeout     = 5 * time.Second
	MaxDialogTimeout     = 10 * time.Minute
)

// ClampDialogTimeout applies the default to zero and the bounds to the rest.
func ClampDialogTimeout(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return DefaultDialogTimeout
	case d < MinDialogTimeout:
		return MinDialogTimeout
	case d > MaxDialogTimeout:
		return MaxDialogTimeout
	}
	return d
}

// dialogReaders are the tools that still work while a dialog blocks the
// page: they read what the companion already captured.
var dialogReaders = map[string]bool{"read_console_messages": true, "read_network_requests": true}

// maxNotes bounds the one-time notes a tab keeps for its next call.
const maxNotes = 8

type dialogArgs struct {
	TabID      int    `json:"tabId" jsonschema:"tab id"`
	Action     string `json:"action" jsonschema:"accept or dismiss"`
	PromptText string `json:"promptText,omitempty" jsonschema:"for a prompt you accept: the text to answer"`
}

func registerDialog(e *Engine) {
	define(e, Info{
		Name:        "dialog",
		Description: "Accept or dismiss the alert, confirm, prompt or leave-page dialog a result said waits in a tab; the tab does nothing else until then.",
		Destructive: true, Mutating: true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "action", "accept", "dismiss")
	}, runDialog)
}

// pageDialog is the dialog a tab shows.
type pageDialog struct {
	seq     uint64
	typ     string // alert, confirm, prompt or beforeunload
	message string
	prompt  string // a prompt's default text
	url     string // the page that opened it
	opened  time.Time
	timer   *time.Timer // agent tabs: the dismissal when nobody answers
}

// what names the dialog for the agent: `confirm dialog "Delete?"`.
func (d *pageDialog) what() string {
	if d.typ == "beforeunload" {
		return "leave-page (beforeunload) dialog"
	}
	return fmt.Sprintf("%s dialog %q", d.typ, truncate(d.message, 500))
}

// a is what with its article.
func (d *pageDialog) a() string {
	if d.typ == "alert" {
		return "an " + d.what()
	}
	return "a " + d.what()
}

func (d *pageDialog) how(tabID int) string {
	s := fmt.Sprintf("call dialog with tabId %d and action accept or dismiss", tabID)
	if d.typ == "prompt" {
		s += " (promptText is your answer)"
	}
	return s
}

// dialogState is what a tabState knows of dialogs, under its mu.
type dialogState struct {
	current *pageDialog
	seq     uint64
	// wake is cancelled when a dialog opens, so commands waiting on the
	// page end at once; the next command makes a new one.
	wake    context.Context
	wakeNow context.CancelFunc
	notes   []string // said once, to the next call on the tab
}

func (ts *tabState) dialogWake() context.Context {
	if ts.dlg.wake == nil {
		ts.dlg.wake, ts.dlg.wakeNow = context.WithCancel(context.Background())
	}
	return ts.dlg.wake
}

// pendingDialog returns the dialog the tab shows, or nil.
func (ts *tabState) pendingDialog() *pageDialog {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.dlg.current == nil {
		return nil
	}
	d := *ts.dlg.current
	d.timer = nil
	return &d
}

func (ts *tabState) dialogOpening(params json.RawMessage) {
	var p struct {
		Type          string `json:"type"`
		Message       string `json:"message"`
		DefaultPrompt string `json:"defaultPrompt"`
		URL           string `json:"url"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	ts.mu.Lock()
	if ts.gone {
		ts.mu.Unlock()
		return
	}
	if old := ts.dlg.current; old != nil && old.timer != nil {
		old.timer.Stop()
	}
	ts.dlg.seq++
	d := &pageDialog{seq: ts.dlg.seq, typ: p.Type, message: p.Message, prompt: p.DefaultPrompt, url: p.URL, opened: time.Now()}
	ts.dlg.current = d
	if ts.dlg.wake != nil {
		ts.dlg.wakeNow()
		ts.dlg.wake = nil
	}
	ts.mu.Unlock()

	ts.note(fmt.Sprintf("the page opened %s; it waits for an answer", d.a()))
	// Only an agent's tab is answered without an agent: a tab the person
	// shared by hand keeps its dialog until the person or an agent answers.
	t, _, err := ts.e.hub.Tab(ts.id)
	if err != nil || !agentTab(t) {
		return
	}
	timeout := ts.e.dialogTimeout()
	timer := time.AfterFunc(timeout, func() { ts.dismissUnanswered(d.seq, timeout) })
	ts.mu.Lock()
	if ts.dlg.current == d && !ts.gone {
		d.timer = timer
	} else {
		timer.Stop()
	}
	ts.mu.Unlock()
}

// dialogGone forgets the dialog: answered, or its document went away.
func (ts *tabState) dialogGone() {
	ts.mu.Lock()
	if d := ts.dlg.current; d != nil {
		if d.timer != nil {
			d.timer.Stop()
		}
		ts.dlg.current = nil
	}
	ts.mu.Unlock()
}

// answered forgets dialog seq once an answer went through.
func (ts *tabState) answered(seq uint64) {
	ts.mu.Lock()
	if d := ts.dlg.current; d != nil && d.seq == seq {
		if d.timer != nil {
			d.timer.Stop()
		}
		ts.dlg.current = nil
	}
	ts.mu.Unlock()
}

// dismissUnanswered dismisses dialog seq of an agent's tab that nobody
// answered in time, and records it where the person and the agent look.
func (ts *tabState) dismissUnanswered(seq uint64, after time.Duration) {
	ts.mu.Lock()
	d := ts.dlg.current
	if ts.gone || d == nil || d.seq != seq {
		ts.mu.Unlock()
		return
	}
	// Added under ts.mu, so it cannot race with Close: stop marks the tab
	// gone under the same lock before Close waits.
	ts.e.bg.Add(1)
	ts.mu.Unlock()
	defer ts.e.bg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), inputTimeout)
	defer cancel()
	_, err := ts.e.hub.CDP(ctx, ts.id, "Page.handleJavaScriptDialog", map[string]any{"accept": false}, "", "reins")
	if err != nil {
		ts.e.log.Warn("could not dismiss an unanswered dialog", "tab", ts.id, "type", d.typ, "err", err)
		return
	}
	ts.answered(seq)
	ts.e.log.Info("dismissed an unanswered dialog", "tab", ts.id, "type", d.typ, "after", after)
	msg := fmt.Sprintf("Reins dismissed the %s in tab %d: nobody answered it within %s.", d.what(), ts.id, after)
	ts.note(msg)
	ts.mu.Lock()
	if len(ts.dlg.notes) < maxNotes {
		ts.dlg.notes = append(ts.dlg.notes, msg)
	}
	ts.mu.Unlock()
	if ts.e.opts.OnActivity != nil {
		ts.e.opts.OnActivity(Activity{Time: time.Now(), Agent: "Reins", Tool: "dialog", TabID: ts.id, Outcome: string(wire.CodeTimeout), Duration: time.Since(d.opened)})
	}
}

// note adds a line to the tab's console log, where read_console_messages
// shows what happened to dialogs.
func (ts *tabState) note(text string) {
	raw, _ := json.Marshal(map[string]any{"entry": map[string]any{"source": "dialog", "level": "warning", "text": text}})
	ts.console.add("Log.entryAdded", raw)
}

func (ts *tabState) takeNotes() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	n := ts.dlg.notes
	ts.dlg.notes = nil
	return n
}

// cmd sends one command to the tab's page. A dialog blocks the page, so a
// command fails at once while one is open, and a command in flight when one
// opens ends then: both with dialog_open.
func (ts *tabState) cmd(ctx context.Context, agent, session, method string, params any) (json.RawMessage, error) {
	ts.mu.Lock()
	d := ts.dlg.current
	wake := ts.dialogWake()
	ts.mu.Unlock()
	if d != nil {
		return nil, blockedBy(d, ts.id)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(wake, func() { cancel(errDialogOpened) })()
	raw, err := ts.e.hub.CDP(ctx, ts.id, method, params, session, agent)
	if err != nil && errors.Is(context.Cause(ctx), errDialogOpened) {
		if d := ts.pendingDialog(); d != nil {
			return nil, blockedBy(d, ts.id)
		}
	}
	return raw, err
}

var errDialogOpened = errors.New("a dialog opened")

func blockedBy(d *pageDialog, tabID int) error {
	return wire.Errorf(wire.CodeDialogOpen, "tab %d shows %s from %s; nothing else runs in it until it is answered: %s",
		tabID, d.a(), d.url, d.how(tabID))
}

// dialogCheck fails a call that needs the page while a dialog blocks it.
func (c *call) dialogCheck(ctx context.Context, ts *tabState) error {
	if dialogReaders[c.tool] {
		return nil
	}
	d := ts.pendingDialog()
	if d == nil {
		return nil
	}
	if c.s.OperatorCatalog {
		if line := c.answerForCatalog(ctx, ts, d); line != "" {
			c.lines = append(c.lines, line)
			return nil
		}
	}
	// The answer names the dialog's page: the agent has now seen it there.
	c.observe(ts.id, d.url)
	return blockedBy(d, ts.id)
}

// dialogOutcome turns a dialog_open failure into the call's result when the
// dialog opened while the call ran: it is what the action did.
func (c *call) dialogOutcome(ctx context.Context, err error, args json.RawMessage, start time.Time) *Result {
	if wire.CodeOf(err) != wire.CodeDialogOpen || c.tabID == 0 {
		return nil
	}
	ts := c.e.existingTab(c.tabID)
	if ts == nil {
		return nil
	}
	d := ts.pendingDialog()
	if d == nil || d.opened.Before(start) {
		return nil
	}
	c.observe(c.tabID, d.url)
	if c.s.OperatorCatalog {
		if line := c.answerForCatalog(ctx, ts, d); line != "" {
			return textResult(fmt.Sprintf("%s on tab %d ran until the page opened %s (on %s). %s", callName(c.tool, args), c.tabID, d.a(), d.url, line))
		}
	}
	return textResult(fmt.Sprintf("%s on tab %d ran until the page opened %s (on %s). It waits for your answer, and nothing else runs in the tab until then: %s.",
		callName(c.tool, args), c.tabID, d.a(), d.url, d.how(c.tabID)))
}

// answerForCatalog answers a dialog in the way of a session that has no
// dialog tool (a paired product's, whose Browser Operator catalog is fixed):
// at once and cautiously, accepting alerts and leave-page prompts and
// dismissing the rest. It returns what to tell the caller, "" on failure.
func (c *call) answerForCatalog(ctx context.Context, ts *tabState, d *pageDialog) string {
	accept := d.typ == "alert" || d.typ == "beforeunload"
	hctx, cancel := context.WithTimeout(ctx, inputTimeout)
	defer cancel()
	if _, err := c.e.hub.CDP(hctx, ts.id, "Page.handleJavaScriptDialog", map[string]any{"accept": accept}, "", c.s.Label); err != nil {
		c.e.log.Warn("could not answer a dialog", "tab", ts.id, "agent", c.s.Label, "principal", c.s.Principal, "type", d.typ, "err", err)
		return ""
	}
	ts.answered(d.seq)
	verdict := "dismissed"
	if accept {
		verdict = "accepted"
	}
	ts.note(fmt.Sprintf("%s was %s by Reins", d.what(), verdict))
	return fmt.Sprintf("Reins %s the %s.", verdict, d.what())
}

// callName is the tool and its action, as the agent called it.
func callName(tool string, args json.RawMessage) string {
	var a struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(args, &a) == nil && a.Action != "" {
		return tool + " " + a.Action
	}
	return tool
}

// remind adds to a successful result what the agent must know about the
// tab's dialogs: one that waits, and one Reins answered.
func (c *call) remind(ctx context.Context, ts *tabState, r *Result, start time.Time) {
	lines := slices.Concat(c.lines, ts.takeNotes())
	if d := ts.pendingDialog(); d != nil && c.tool != "dialog" {
		c.observe(ts.id, d.url)
		switch {
		case c.s.OperatorCatalog:
			if line := c.answerForCatalog(ctx, ts, d); line != "" {
				lines = append(lines, "The page opened "+d.a()+". "+line)
			}
		case d.opened.After(start):
			lines = append(lines, fmt.Sprintf("The page opened %s (on %s). It waits for your answer, and nothing else runs in tab %d until then: %s.", d.a(), d.url, ts.id, d.how(ts.id)))
		default:
			lines = append(lines, fmt.Sprintf("Tab %d still shows %s; answer it first: %s.", ts.id, d.a(), d.how(ts.id)))
		}
	}
	addLines(r, lines)
}

// addLines appends lines to a result's first text block.
func addLines(r *Result, lines []string) {
	if len(lines) == 0 {
		return
	}
	text := strings.Join(lines, "\n")
	for i := range r.Content {
		if r.Content[i].Type == "text" {
			if r.Content[i].Text != "" {
				text = r.Content[i].Text + "\n" + text
			}
			r.Content[i].Text = text
			return
		}
	}
	r.Content = append([]Content{{Type: "text", Text: text}}, r.Content...)
}

func runDialog(ctx context.Context, c *call, in *dialogArgs) (*Result, error) {
	accept := in.Action == "accept"
	if !accept && in.Action != "dismiss" {
		return nil, wire.Errorf(wire.CodeBadParams, "action must be accept or dismiss")
	}
	_, b, err := c.tab(in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	if b.Engine() == wire.EngineFirefox {
		return nil, wire.Errorf(wire.CodeUnsupported, "Firefox does not let extensions see or answer a page's alert, confirm or prompt; the person answers it in Firefox")
	}
	ts, err := c.e.tabState(in.TabID)
	if err != nil {
		return nil, err
	}
	if err := ts.ensure(ctx, c.s.Label); err != nil {
		return nil, err
	}
	d := ts.pendingDialog()
	if d != nil {
		if err := c.guard(in.TabID, d.url); err != nil {
			// The refusal names the dialog's page; asked again, it is known.
			c.observe(in.TabID, d.url)
			return nil, err
		}
	}
	params := map[string]any{"accept": accept}
	if in.PromptText != "" {
		if !accept {
			return nil, wire.Errorf(wire.CodeBadParams, "promptText answers a prompt you accept; dismiss sends no text")
		}
		params["promptText"] = in.PromptText
	}
	w := ts.watch()
	defer w.stop()
	// Straight to the hub: every other command waits for the answer.
	hctx, cancel := context.WithTimeout(ctx, inputTimeout)
	_, err = c.e.hub.CDP(hctx, in.TabID, "Page.handleJavaScriptDialog", params, "", c.s.Label)
	cancel()
	if err != nil {
		if strings.Contains(err.Error(), "o dialog is showing") {
			ts.dialogGone()
			return nil, wire.Errorf(wire.CodeBadParams, "tab %d shows no dialog", in.TabID)
		}
		return nil, err
	}
	verb := "Dismissed"
	if accept {
		verb = "Accepted"
	}
	line := fmt.Sprintf("%s the dialog in tab %d.", verb, in.TabID)
	if d != nil {
		ts.answered(d.seq)
		line = fmt.Sprintf("%s the %s in tab %d.", verb, d.what(), in.TabID)
		if d.typ == "prompt" && accept {
			line = fmt.Sprintf("Answered the %s in tab %d with %q.", d.what(), in.TabID, in.PromptText)
		}
	}
	return c.after(ctx, ts, w, in.TabID, []string{line})
}

// existingTab is the tab's state if the engine follows it, without
// subscribing to a tab it does not.
func (e *Engine) existingTab(id int) *tabState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tabs[id]
}

// dialogTimeout is the caller's choice; the companion bounds the person's
// setting with ClampDialogTimeout, tests choose shorter ones.
func (e *Engine) dialogTimeout() time.Duration {
	if e.opts.DialogTimeout == nil {
		return DefaultDialogTimeout
	}
	if d := e.opts.DialogTimeout(); d > 0 {
		return d
	}
	return DefaultDialogTimeout
}

// dialogEntry is how tabs_context_mcp shows a tab's dialog.
func (e *Engine) dialogEntry(t hub.Tab) string {
	ts := e.existingTab(t.ID)
	if ts == nil {
		return ""
	}
	if d := ts.pendingDialog(); d != nil {
		return d.what()
	}
	return ""
}
