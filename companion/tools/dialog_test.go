package tools_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

const dialogsPage = `<!doctype html><html><head><title>Dialogs</title></head><body>
<button id="confirm" onclick="this.textContent = confirm('Delete everything?') ? 'confirmed' : 'kept'">Confirm</button>
<button id="prompt" onclick="const v = prompt('Your name?', 'anon'); this.textContent = v === null ? 'no name' : 'name=' + v">Prompt</button>
<button id="chain" onclick="if (confirm('Really delete?')) { alert('Deleted'); this.textContent = 'deleted'; }">Chain</button>
<button id="late" onclick="setTimeout(() => { alert('Later'); this.textContent = 'alerted late'; }, 50); this.textContent = 'armed'">Late</button>
<input id="name" aria-label="Name">
</body></html>`

const openerPage = `<!doctype html><html><head><title>Opener</title></head><body>
<a id="blank" href="/tabs/child?via=link" target="_blank">Open the report</a>
<button id="win" onclick="window.open('/tabs/child?via=open')">Open a window</button>
<input id="name" aria-label="Your name">
<button id="count" onclick="this.textContent = 'clicked ' + (++n)">Count</button>
<div style="height:3000px"></div>
<script>let n = 0;</script>
</body></html>`

var loads atomic.Int64

// tabPages are the pages of the dialog and tab tests.
func tabPages(mux *http.ServeMux) {
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, body)
		}
	}
	mux.HandleFunc("/dialogs", page(dialogsPage))
	mux.HandleFunc("/tabs/opener", page(openerPage))
	mux.HandleFunc("/tabs/child", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Report</title><p>The report, opened by %s.</p>`, r.URL.Query().Get("via"))
	})
	mux.HandleFunc("/tabs/count/{page}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><title>%s load %d</title><p>%s</p>`, r.PathValue("page"), loads.Add(1), r.PathValue("page"))
	})
}

func (r *rig) label(s *tools.Session, tab int, id string) string {
	r.tb.Helper()
	var v string
	r.js(s, tab, "document.getElementById('"+id+"').textContent", &v)
	return v
}

// A dialog an action opens waits for the agent: the action's result names
// it, calls that need the page fail at once naming it, calls that do not
// remind the agent of it, and the dialog tool answers it, prompt text
// included, reporting the dialog the answer opens in turn.
func TestDialogsWaitForTheAgent(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:dialogs", "dialogs")
	tab := r.newTab(s, "/dialogs")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})

	out := r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Confirm"`)})
	if !strings.Contains(out, `confirm dialog "Delete everything?"`) || !strings.Contains(out, fmt.Sprintf("call dialog with tabId %d", tab)) {
		t.Fatalf("the click does not say a dialog waits: %s", out)
	}
	start := time.Now()
	blocked := r.fails(s, "read_page", map[string]any{"tabId": tab}, wire.CodeDialogOpen)
	if !strings.Contains(blocked, "Delete everything?") {
		t.Fatalf("dialog_open does not name the dialog: %s", blocked)
	}
	r.fails(s, "computer", map[string]any{"action": "screenshot", "tabId": tab}, wire.CodeDialogOpen)
	r.fails(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/record"}, wire.CodeDialogOpen)
	t.Logf("three calls refused while the dialog was up in %v", time.Since(start))
	logs := r.ok(s, "read_console_messages", map[string]any{"tabId": tab})
	if !strings.Contains(logs, "still shows a confirm dialog") {
		t.Fatalf("a call that works under a dialog does not remind of it: %s", logs)
	}
	list := r.ok(s, "tabs_context_mcp", map[string]any{})
	if !strings.Contains(list, `"dialog": "confirm dialog \"Delete everything?\""`) {
		t.Fatalf("tabs_context_mcp does not show the dialog: %s", list)
	}
	out = r.ok(s, "dialog", map[string]any{"tabId": tab, "action": "accept"})
	if !strings.Contains(out, `Accepted the confirm dialog "Delete everything?"`) || strings.Contains(out, "still shows") {
		t.Fatalf("accept: %s", out)
	}
	if got := r.label(s, tab, "confirm"); got != "confirmed" {
		t.Fatalf("the page saw the confirm answered %q", got)
	}

	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Prompt"`)})
	out = r.ok(s, "dialog", map[string]any{"tabId": tab, "action": "accept", "promptText": "Ada"})
	if !strings.Contains(out, `with "Ada"`) {
		t.Fatalf("prompt: %s", out)
	}
	if got := r.label(s, tab, "prompt"); got != "name=Ada" {
		t.Fatalf("the page got the prompt answer %q", got)
	}
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Prompt"`)})
	r.fails(s, "dialog", map[string]any{"tabId": tab, "action": "dismiss", "promptText": "x"}, wire.CodeBadParams)
	r.ok(s, "dialog", map[string]any{"tabId": tab, "action": "dismiss"})
	if got := r.label(s, tab, "prompt"); got != "no name" {
		t.Fatalf("a dismissed prompt gave %q", got)
	}

	// One answer opens the next dialog: the answer's result says so.
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Chain"`)})
	out = r.ok(s, "dialog", map[string]any{"tabId": tab, "action": "accept"})
	if !strings.Contains(out, `alert dialog "Deleted"`) {
		t.Fatalf("the answer does not report the alert it opened: %s", out)
	}
	r.ok(s, "dialog", map[string]any{"tabId": tab, "action": "accept"})
	if got := r.label(s, tab, "chain"); got != "deleted" {
		t.Fatalf("chain: %q", got)
	}
	r.fails(s, "dialog", map[string]any{"tabId": tab, "action": "accept"}, wire.CodeBadParams)

	// A dialog that opens after the action returned: the next call on the
	// tab is refused or reminded, never hangs.
	opened := make(chan struct{}, 1)
	cancel := shared.hub.SubscribeTab(tab, func(ev hub.TabEvent) {
		if ev.Method == "Page.javascriptDialogOpening" {
			select {
			case opened <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Late"`)})
	select {
	case <-opened:
	case <-time.After(20 * time.Second):
		t.Fatal("the late alert never opened")
	}
	// Refused naming it, or (when the engine hears of it while the call is
	// on its way) the call's outcome: either way, the agent is told.
	if res := r.call(s, "read_page", map[string]any{"tabId": tab}); !strings.Contains(text(res), `alert dialog "Later"`) {
		t.Fatalf("the late alert is not reported: %s", text(res))
	}
	r.ok(s, "dialog", map[string]any{"tabId": tab, "action": "dismiss"})
	if got := r.label(s, tab, "late"); got != "alerted late" {
		t.Fatalf("late: %q", got)
	}
}

// A dialog nobody answers in an agent's tab is dismissed after the
// person's timeout, recorded in Activity, and reported to the agent once.
func TestUnansweredDialogIsDismissed(t *testing.T) {
	r := newRig(t, rigOptions{dialogTimeout: 300 * time.Millisecond})
	s := r.e.NewSession("agent:slow", "slow")
	tab := r.newTab(s, "/dialogs")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Confirm"`)})
	deadline := time.After(30 * time.Second)
	var got tools.Activity
	for got.Tool == "" {
		select {
		case <-r.activity:
		case <-deadline:
			t.Fatalf("no activity for the dismissal: %+v", r.activities)
		}
		r.mu.Lock()
		for _, a := range r.activities {
			if a.Tool == "dialog" && a.Agent == "Reins" {
				got = a
			}
		}
		r.mu.Unlock()
	}
	if got.TabID != tab || got.Outcome != string(wire.CodeTimeout) || got.Duration < 300*time.Millisecond {
		t.Fatalf("dismissal recorded as %+v", got)
	}
	out := r.ok(s, "computer", map[string]any{"action": "wait", "tabId": tab, "duration": 0.1})
	if !strings.Contains(out, `Reins dismissed the confirm dialog "Delete everything?"`) {
		t.Fatalf("the agent is not told: %s", out)
	}
	if got := r.label(s, tab, "confirm"); got != "kept" {
		t.Fatalf("the page saw %q", got)
	}
	if out := r.ok(s, "computer", map[string]any{"action": "wait", "tabId": tab, "duration": 0.1}); strings.Contains(out, "dismissed") {
		t.Fatalf("told twice: %s", out)
	}
}

var openedRE = regexp.MustCompile(`opened a new tab: tab (\d+), (\S+)\.`)

// A tab a page opens from an agent's tab is that agent's: the action's
// result names it, the agent's listing shows it as its own, another agent
// can neither see nor use it, and the opener keeps answering while the new
// tab is in front.
func TestTabsAPageOpensJoinItsAgent(t *testing.T) {
	r := newRig(t)
	alice := r.e.NewSession("agent:alice-pop", "alice")
	bob := r.e.NewSession("agent:bob-pop", "bob")
	opener := r.newTab(alice, "/tabs/opener")
	find := func(_, what string) string {
		return refFor(t, r.ok(alice, "read_page", map[string]any{"tabId": opener, "filter": "interactive"}), what)
	}

	out := r.ok(alice, "computer", map[string]any{"action": "left_click", "tabId": opener, "ref": find("report link", "Open the report")})
	m := openedRE.FindStringSubmatch(out)
	if m == nil || !strings.HasSuffix(m[2], "/tabs/child?via=link") {
		t.Fatalf("the click does not name the new tab: %s", out)
	}
	var popup int
	fmt.Sscan(m[1], &popup)
	t.Cleanup(func() { _ = shared.hub.TabsClose(ctxFor(t), popup) })

	// The attack: another agent reaches for the popup.
	if list := r.ok(bob, "tabs_context_mcp", map[string]any{}); strings.Contains(list, fmt.Sprintf(`"tabId": %d,`, popup)) {
		t.Fatalf("bob sees alice's popup: %s", list)
	}
	r.fails(bob, "get_page_text", map[string]any{"tabId": popup}, wire.CodeTabNotInSession)
	r.fails(bob, "tab", map[string]any{"tabId": popup, "action": "close"}, wire.CodeTabNotInSession)
	list := r.ok(alice, "tabs_context_mcp", map[string]any{})
	if !regexp.MustCompile(fmt.Sprintf(`(?s)"tabId": %d,.*?"sharedBy": "you",\s*"openedBy": %d`, popup, opener)).MatchString(list) {
		t.Fatalf("alice's listing does not show the popup as hers: %s", list)
	}
	if text := r.ok(alice, "get_page_text", map[string]any{"tabId": popup}); !strings.Contains(text, "opened by link") {
		t.Fatalf("popup text: %s", text)
	}

	// The opener keeps answering with the popup in front.
	start := time.Now()
	out = r.ok(alice, "computer", map[string]any{"action": "scroll", "tabId": opener, "scroll_direction": "down"})
	if !strings.Contains(out, "scroll position is now (0, 300)") {
		t.Fatalf("the opener did not scroll: %s", out)
	}
	r.ok(alice, "computer", map[string]any{"action": "left_click", "tabId": opener, "ref": find("Count button", "Count")})
	r.ok(alice, "form_input", map[string]any{"tabId": opener, "ref": find("name box", "Your name"), "value": "Ada"})
	var state []string
	r.js(alice, opener, "[document.getElementById('count').textContent, document.getElementById('name').value, document.visibilityState]", &state)
	if strings.Join(state, "|") != "clicked 1|Ada|visible" {
		t.Fatalf("the opener after the popup: %v", state)
	}
	t.Logf("scroll, click and form_input on the opener with its popup in front took %v", time.Since(start))

	out = r.ok(alice, "computer", map[string]any{"action": "left_click", "tabId": opener, "ref": find("Open a window button", "Open a window")})
	m = openedRE.FindStringSubmatch(out)
	if m == nil || !strings.HasSuffix(m[2], "/tabs/child?via=open") {
		t.Fatalf("window.open is not named: %s", out)
	}
	var second int
	fmt.Sscan(m[1], &second)
	r.ok(alice, "tab", map[string]any{"tabId": second, "action": "close"})
	if list := r.ok(alice, "tabs_context_mcp", map[string]any{}); strings.Contains(list, fmt.Sprintf(`"tabId": %d,`, second)) {
		t.Fatalf("a closed tab is still listed: %s", list)
	}
}

// tab reloads, goes back and forward on navigate's path, and brings a tab
// to the front; each is checked in the page or the server.
func TestTabTool(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:tabtool", "tabtool")
	tab := r.newTab(s, "/tabs/count/first")
	r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/tabs/count/second"})
	out := r.ok(s, "tab", map[string]any{"tabId": tab, "action": "back"})
	if !strings.Contains(out, "/tabs/count/first") {
		t.Fatalf("back: %s", out)
	}
	out = r.ok(s, "tab", map[string]any{"tabId": tab, "action": "forward"})
	if !strings.Contains(out, "/tabs/count/second") {
		t.Fatalf("forward: %s", out)
	}
	before := loads.Load()
	out = r.ok(s, "tab", map[string]any{"tabId": tab, "action": "reload"})
	if loads.Load() <= before || !strings.Contains(out, fmt.Sprintf("second load %d", loads.Load())) {
		t.Fatalf("reload did not load the page again (%d loads before): %s", before, out)
	}
	r.ok(s, "tab", map[string]any{"tabId": tab, "action": "activate"})
	r.fails(s, "tab", map[string]any{"tabId": tab, "action": "pin"}, wire.CodeBadParams)
	r.fails(s, "tab", map[string]any{"tabId": 999999, "action": "activate"}, wire.CodeNoSuchTab)
	// Reloading a tab whose page moved to another origin since the agent
	// looked is refused, like any action on what it saw.
	moved := make(chan struct{}, 1)
	cancel := shared.hub.SubscribeTab(tab, func(ev hub.TabEvent) {
		if ev.Kind == hub.TabUpdated && strings.HasPrefix(ev.Tab.URL, r.alt) {
			select {
			case moved <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	// Behind the agent's back: the page moves without the agent looking.
	if _, err := shared.hub.CDP(ctxFor(t), tab, "Page.navigate", map[string]any{"url": r.alt + "/tabs/count/moved"}, "", "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-moved:
	case <-time.After(20 * time.Second):
		t.Fatal("the page never moved")
	}
	r.fails(s, "tab", map[string]any{"tabId": tab, "action": "reload"}, wire.CodeNavigatedAway)
	r.ok(s, "tab", map[string]any{"tabId": tab, "action": "close"})
	r.fails(s, "tab", map[string]any{"tabId": tab, "action": "reload"}, wire.CodeNoSuchTab)
}
