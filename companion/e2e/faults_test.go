package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// The fault suite (issue 15): agents, each a real MCP client with a token
// of its own, make mixed tool calls in tabs of their own on two browsers
// at once (Chromium through the real extension, and the dev browser),
// while an injector, on a schedule counted in finished calls, stops the
// extension's worker, SIGKILLs the companion and starts it again, closes
// tabs behind the agents' backs, pauses and resumes, and crashes
// renderers. Every call must get exactly one answer: the right result,
// checked against the marker its agent planted in its own pages, or an
// error with a wire code, soon after the fault. No answer may reach the
// wrong agent.
//
// TestFaults is the short form CI runs. TestSoak runs the same work for
// REINS_SOAK (e.g. 30m, `make soak`) and checks that the companion's
// memory, goroutines and tab states stay flat.

// The bounds the issue sets.
const (
	// maxTimeToError bounds the time from a fault (or from the call's
	// start, when it began later) to an error answer.
	maxTimeToError = time.Second
	// maxReconnect bounds the time until the extension is back: after a
	// stopped worker from the moment the browser started it again, after a
	// restart from the moment the new companion listens.
	maxReconnect = 2 * time.Second
	// callDeadline is when a call without an answer counts as lost: far
	// beyond every bound above, so a slow machine does not make losses.
	callDeadline = 30 * time.Second
)

// The faults.
const (
	faultWorker    = "extension worker stopped"
	faultCompanion = "companion killed and restarted"
	faultCloseExt  = "tab closed (extension)"
	faultCloseDev  = "tab closed (dev browser)"
	faultPause     = "paused and resumed"
	faultCrashExt  = "renderer crashed (extension)"
	faultCrashDev  = "renderer crashed (dev browser)"
)

var allFaults = []string{faultCompanion, faultWorker, faultCloseExt, faultPause, faultCrashDev, faultCloseDev, faultCrashExt}

// The two browsers an agent works in.
const (
	onExt = "extension"
	onDev = "dev"
)

// faultConfig is one run's shape.
type faultConfig struct {
	agents int
	// calls is each agent's share; the run also goes on until every fault
	// of the schedule fired.
	calls int
	// duration, when set, runs the agents for that long instead (soak).
	duration time.Duration
	// every is how many finished calls (all agents) separate two faults.
	every int
	// once lists faults that fire only in the first round (soak: the
	// restart, so that the companion's memory is measured over one long
	// life).
	once []string
	// sample and warmup drive the soak's memory samples.
	sample, warmup time.Duration
}

func TestFaults(t *testing.T) {
	const agents, calls = 4, 60
	runFaults(t, faultConfig{agents: agents, calls: calls, every: agents * calls / (len(allFaults) + 1)})
}

// faultPages serves each agent's page: its marker in the title, a
// heading, a button and the body's data-marker. A fetch of /pending tells
// pending (when not nil) that a script is under way in a page.
func faultPages(pending chan<- struct{}) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pending", func(w http.ResponseWriter, r *http.Request) {
		if pending != nil {
			pending <- struct{}{}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /fault", func(w http.ResponseWriter, r *http.Request) {
		m := html.EscapeString(r.URL.Query().Get("m"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><title>Page %[1]s</title>
<body data-marker="%[1]s"><h1>Agent page %[1]s</h1><p>visit %[2]s</p>
<button onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Press %[1]s</button></body>`, m, html.EscapeString(r.URL.Query().Get("n")))
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return httptest.NewServer(mux)
}

// faultEvent is one fault as the injector made it: sent is when it set
// about it, at when the fault happened (the browser reported the crash,
// the process was reaped, the request that made it returned). Times to
// error count from at: the time a loaded machine takes to carry out the
// injector's request is not the companion's.
type faultEvent struct {
	kind     string
	sent, at time.Time
}

// errAnswer is an error answer, kept to time it from its fault.
type errAnswer struct {
	what, code, text string
	start, end       time.Time
}

// faultRun is one run's shared state and tallies.
type faultRun struct {
	t     *testing.T
	cfg   faultConfig
	s     *harness.DualStack
	pages *httptest.Server
	// markers are every agent's marker, to catch an answer that carries
	// another agent's.
	markers []string

	done     atomic.Int64 // finished calls
	progress chan struct{}
	stop     chan struct{} // closed when the agents should stop (soak)
	injected chan struct{} // closed when the schedule's every fault fired

	// quiet is held while a fault is made, and by the soak's sampler, so
	// that samples are taken between faults.
	quiet sync.Mutex

	mu          sync.Mutex
	watch       *admin.Watch
	calls, ok   int
	errs        map[string]int
	lost        []string
	misrouted   []string
	wrong       []string
	uncoded     []string
	faults      []faultEvent
	fired       map[string]int
	errAnswers  []errAnswer
	okTimes     []time.Duration // how long each right answer took
	okWorst     timedAnswer     // the slowest right answer
	reconnects  map[string]time.Duration
	samples     []soakSample
	faultErrors []string // failures of the injector itself
}

func runFaults(t *testing.T, cfg faultConfig) {
	s := startFor(t, "both browsers", setupTimeout, func(ctx context.Context) (*harness.DualStack, error) {
		return harness.StartDualStack(ctx)
	})
	pages := faultPages(nil)
	t.Cleanup(pages.Close)
	r := &faultRun{
		t: t, cfg: cfg, s: s, pages: pages, watch: s.Watch,
		progress: make(chan struct{}), stop: make(chan struct{}), injected: make(chan struct{}),
		errs: map[string]int{}, fired: map[string]int{}, reconnects: map[string]time.Duration{},
	}
	agents := make([]*faultAgent, cfg.agents)
	for i := range agents {
		name := fmt.Sprintf("fault-%02d", i)
		marker := fmt.Sprintf("mk%02dx%06d", i, rand.IntN(1e6))
		agents[i] = &faultAgent{r: r, id: i, name: name, marker: marker, token: issueToken(t, s.Reins, name), rng: rand.New(rand.NewPCG(uint64(i), 15))}
		r.markers = append(r.markers, marker)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.run()
		}()
	}
	injectorDone := make(chan struct{})
	go func() {
		defer close(injectorDone)
		r.inject()
	}()
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		if cfg.duration > 0 {
			r.sampleUntilStopped(start)
		}
	}()
	if cfg.duration > 0 {
		<-time.After(cfg.duration)
		close(r.stop)
	}
	wg.Wait()
	if cfg.duration == 0 {
		close(r.stop)
	}
	<-injectorDone
	<-samplerDone
	r.report(time.Since(start))
}

// ---- the agents ----

// faultAgent is one agent: a real MCP client with its own token, and at
// most one tab of its own in each browser.
type faultAgent struct {
	r      *faultRun
	id     int
	name   string
	token  string
	marker string
	rng    *rand.Rand

	cs       *mcp.ClientSession
	tr       *http.Transport
	browsers map[string]string // onExt/onDev → browser id
	tabs     map[string]int
	repair   map[string]int // failed calls on the tab since it last worked
	made     int
	visits   int
}

// run makes the agent's calls: calls of them, and on until the schedule
// fired every fault (CI), or until the run stops (soak).
func (a *faultAgent) run() {
	defer a.close()
	limit := a.r.cfg.calls * 4 // bounds a run whose faults cannot all fire
	for i := 0; ; i++ {
		if a.r.cfg.duration > 0 {
			select {
			case <-a.r.stop:
				return
			default:
			}
		} else if a.made >= a.r.cfg.calls {
			select {
			case <-a.r.injected:
				return
			default:
			}
			if a.made >= limit {
				return
			}
		}
		on := onExt
		if (i+a.id)%2 == 1 {
			on = onDev
		}
		if !a.step(on) {
			return
		}
	}
}

func (a *faultAgent) close() {
	if a.cs != nil {
		a.cs.Close()
	}
	if a.tr != nil {
		a.tr.CloseIdleConnections()
	}
}

// connect opens an MCP session as a real client would after losing one:
// again and again, with backoff, until the companion answers.
func (a *faultAgent) connect() bool {
	ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
	defer cancel()
	next := harness.Backoff()
	for {
		a.tr = &http.Transport{}
		cl := mcp.NewClient(&mcp.Implementation{Name: "reins-faults-" + a.name, Version: "1"}, nil)
		cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:   a.r.s.Reins.BaseURL() + "/mcp",
			HTTPClient: &http.Client{Transport: companiontest.Bearer{Token: a.token, Base: a.tr}},
			MaxRetries: -1,
		}, nil)
		if err == nil {
			a.cs = cs
			a.browsers, a.tabs, a.repair = nil, map[string]int{}, map[string]int{}
			return true
		}
		a.tr.CloseIdleConnections()
		select {
		case <-ctx.Done():
			a.r.fail("%s could not reconnect its MCP session within %s: %v", a.name, callDeadline, err)
			return false
		case <-time.After(next()):
		}
	}
}

func (a *faultAgent) dropSession() {
	if a.cs != nil {
		a.cs.Close()
		a.cs = nil
	}
	if a.tr != nil {
		a.tr.CloseIdleConnections()
	}
}

// answer is one call's outcome.
type answer struct {
	text   string
	images int
	code   string // "" for a result
}

var codeRE = regexp.MustCompile(`^\[([a-z_]+)\] `)

// call makes one tool call and files its answer. Only results are given
// back for checking; errors are filed here.
func (a *faultAgent) call(tool string, args map[string]any) answer {
	a.made++
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	end := time.Now()
	var ans answer
	what := fmt.Sprintf("%s %s %v", a.name, tool, args)
	switch {
	case ctx.Err() != nil:
		ans.code = "lost"
		a.dropSession()
	case err != nil:
		// The companion is gone (or restarted and forgot the session):
		// the client's own error, with nobody left to give it a code.
		ans.code = "transport"
		ans.text = err.Error()
		a.dropSession()
	default:
		for _, c := range res.Content {
			switch c := c.(type) {
			case *mcp.TextContent:
				ans.text += c.Text + "\n"
			case *mcp.ImageContent:
				ans.images++
			}
		}
		if res.IsError {
			m := codeRE.FindStringSubmatch(ans.text)
			if m == nil || !slices.Contains(wire.Codes, wire.Code(m[1])) {
				ans.code = "uncoded"
			} else {
				ans.code = m[1]
			}
		}
	}
	a.r.answered(what, start, end, ans)
	return ans
}

// check files a result that carries another agent's marker as misrouted,
// and one that lacks the agent's own (when it must show it) as wrong.
func (a *faultAgent) check(what string, ans answer, mustShow bool) bool {
	if ans.code != "" {
		return false
	}
	for _, m := range a.r.markers {
		if i := strings.Index(ans.text, m); m != a.marker && i >= 0 {
			a.r.file(&a.r.misrouted, "%s: %s's answer carries %s's marker: …%s…", what, a.name, m, ans.text[max(0, i-400):min(len(ans.text), i+200)])
			return false
		}
	}
	if mustShow && !strings.Contains(ans.text, a.marker) {
		a.r.file(&a.r.wrong, "%s: the answer lacks %s's marker %s: %.300s", what, a.name, a.marker, ans.text)
		return false
	}
	return true
}

var browserLineRE = regexp.MustCompile(`(?m)^[* ] (\S+): .*\((extension|dev browser launched by Reins),`)

// step makes the next call or calls in browser on: it reconnects, finds
// the browsers, adopts or opens its tab, then acts on the tab. It reports
// false when the agent cannot go on.
func (a *faultAgent) step(on string) bool {
	if a.cs == nil && !a.connect() {
		return false
	}
	if a.browsers == nil {
		ans := a.call("switch_browser", map[string]any{})
		if !a.check("switch_browser", ans, false) {
			return true
		}
		a.browsers = map[string]string{}
		for _, m := range browserLineRE.FindAllStringSubmatch(ans.text, -1) {
			if m[2] == "extension" {
				a.browsers[onExt] = m[1]
			} else {
				a.browsers[onDev] = m[1]
			}
		}
	}
	bid := a.browsers[on]
	if bid == "" {
		a.browsers = nil // not back yet: look again next time
		return true
	}
	tab := a.tabs[on]
	if tab == 0 {
		a.openTab(on, bid)
		return true
	}
	a.act(on, tab)
	return true
}

// openTab adopts the agent's tab in browser bid (after a restart its tabs
// come back under new ids) or opens one.
func (a *faultAgent) openTab(on, bid string) {
	ans := a.call("tabs_context_mcp", map[string]any{})
	if !a.checkListing(ans) {
		a.failed(on, ans.code)
		return
	}
	var tc struct {
		Tabs []struct {
			TabID     int    `json:"tabId"`
			URL       string `json:"url"`
			BrowserID string `json:"browserId"`
			SharedBy  string `json:"sharedBy"`
		} `json:"tabs"`
	}
	if err := json.Unmarshal([]byte(ans.text[:strings.LastIndex(ans.text, "}")+1]), &tc); err == nil {
		for _, e := range tc.Tabs {
			if e.SharedBy == "you" && e.BrowserID == bid && strings.Contains(e.URL, a.marker) {
				a.tabs[on] = e.TabID
				return
			}
		}
	}
	if ans := a.call("switch_browser", map[string]any{"browserId": bid}); !a.check("switch_browser", ans, false) {
		a.failed(on, ans.code)
		return
	}
	ans = a.call("tabs_create_mcp", map[string]any{"url": a.pageURL()})
	if m := createdRE.FindStringSubmatch(ans.text); m != nil {
		// Created but perhaps not loaded: the tab is ours either way.
		a.tabs[on], _ = strconv.Atoi(m[1])
		a.repair[on] = 0
	}
	if a.check("tabs_create_mcp", ans, true) && !strings.Contains(ans.text, "Reins · "+a.name+`"`) {
		a.r.file(&a.r.misrouted, "tabs_create_mcp: %s's tab opened in another group: %.300s", a.name, ans.text)
	}
	if ans.code != "" {
		a.failed(on, ans.code)
	}
}

// checkListing checks a tabs_context_mcp answer: no tab of another agent.
func (a *faultAgent) checkListing(ans answer) bool {
	return a.check("tabs_context_mcp", ans, false)
}

func (a *faultAgent) pageURL() string {
	a.visits++
	return fmt.Sprintf("%s/fault?m=%s&n=%d", a.r.pages.URL, a.marker, a.visits)
}

// act makes one mixed call on the agent's tab in browser on.
func (a *faultAgent) act(on string, tab int) {
	op := a.rng.IntN(9)
	if a.repair[on] > 0 {
		op = 0 // a tab that failed is loaded again first
	}
	var ans answer
	ok := false
	switch op {
	case 0:
		ans = a.call("navigate", map[string]any{"tabId": tab, "url": a.pageURL()})
		ok = a.check("navigate", ans, true)
	case 1:
		ans = a.call("tabs_context_mcp", map[string]any{})
		ok = a.checkListing(ans)
	case 2, 3:
		ans = a.call("read_page", map[string]any{"tabId": tab})
		ok = a.check("read_page", ans, true)
	case 4, 5:
		// The page's marker, read in the page: proof that the script ran
		// in this agent's own tab.
		ans = a.call("javascript_tool", map[string]any{"tabId": tab, "text": "document.body.dataset.marker + ' ' + location.search"})
		ok = a.check("javascript_tool", ans, true)
	case 6:
		ans = a.call("find", map[string]any{"tabId": tab, "query": "the Press button"})
		if ok = a.check("find", ans, true); ok {
			ref := ""
			for _, line := range strings.Split(ans.text, "\n") {
				if strings.Contains(line, "Press "+a.marker) {
					ref = refRE.FindString(line)
				}
			}
			if ref == "" {
				a.r.file(&a.r.wrong, "find: %s's button is not in the answer: %.300s", a.name, ans.text)
				ok = false
				break
			}
			ans = a.call("computer", map[string]any{"tabId": tab, "action": "left_click", "ref": ref})
			ok = a.check("computer left_click", ans, false)
		}
	case 7:
		ans = a.call("computer", map[string]any{"tabId": tab, "action": "screenshot"})
		if ok = a.check("computer screenshot", ans, false); ok && ans.images == 0 {
			a.r.file(&a.r.wrong, "computer screenshot: %s got no image: %.300s", a.name, ans.text)
			ok = false
		}
	case 8:
		ans = a.call("get_page_text", map[string]any{"tabId": tab})
		ok = a.check("get_page_text", ans, true)
	}
	if ok {
		a.repair[on] = 0
		return
	}
	a.failed(on, ans.code)
}

// failed is what the agent does after an error in browser on, as an agent
// reading the code would.
func (a *faultAgent) failed(on, code string) {
	switch code {
	case "", "paused", "lost", "transport":
		// Nothing to fix here (a wrong answer is already filed), wait for
		// the resume, or reconnect (next step).
	case string(wire.CodeNoSuchBrowser):
		a.browsers = nil
		a.tabs[on] = 0
	case string(wire.CodeNoSuchTab), string(wire.CodeTabNotInSession), string(wire.CodeNotShared), string(wire.CodeRestrictedURL):
		a.tabs[on] = 0
	default:
		// The tab is there but did not answer (crashed, detached, slow):
		// load it again; give it up after a few tries.
		a.repair[on]++
		if a.repair[on] > 3 {
			a.tabs[on] = 0
			a.repair[on] = 0
		}
	}
}

// ---- tallies ----

func (r *faultRun) answered(what string, start, end time.Time, ans answer) {
	r.mu.Lock()
	r.calls++
	switch ans.code {
	case "":
		r.ok++
		d := end.Sub(start)
		r.okTimes = append(r.okTimes, d)
		if d > r.okWorst.d {
			r.okWorst = timedAnswer{d: d, what: what}
		}
	case "lost":
		last := "no fault"
		for i := len(r.faults) - 1; i >= 0; i-- {
			if !r.faults[i].sent.After(start) {
				last = fmt.Sprintf("%s at %s", r.faults[i].kind, r.faults[i].at.Format("15:04:05.000"))
				break
			}
		}
		r.lost = append(r.lost, fmt.Sprintf("%s: no answer within %s (started %s, after %s)", what, callDeadline, start.Format("15:04:05.000"), last))
	case "uncoded":
		r.uncoded = append(r.uncoded, fmt.Sprintf("%s: an error without a wire code: %.300s", what, ans.text))
		r.errs[ans.code]++
	default:
		r.errs[ans.code]++
	}
	if ans.code != "" && ans.code != "lost" {
		text := strings.TrimSpace(ans.text)
		if len(text) > 200 {
			text = text[:200]
		}
		r.errAnswers = append(r.errAnswers, errAnswer{what: what, code: ans.code, text: text, start: start, end: end})
	}
	r.mu.Unlock()
	r.done.Add(1)
	r.signal()
}

func (r *faultRun) signal() {
	r.mu.Lock()
	close(r.progress)
	r.progress = make(chan struct{})
	r.mu.Unlock()
}

func (r *faultRun) file(list *[]string, format string, args ...any) {
	r.mu.Lock()
	*list = append(*list, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *faultRun) fail(format string, args ...any) {
	r.file(&r.faultErrors, format, args...)
}

// waitCalls waits until n calls have finished; false when the run ended
// first.
func (r *faultRun) waitCalls(n int64) bool {
	for {
		r.mu.Lock()
		ch := r.progress
		r.mu.Unlock()
		if r.done.Load() >= n {
			return true
		}
		select {
		case <-ch:
		case <-r.stop:
			return false
		}
	}
}

func (r *faultRun) currentWatch() *admin.Watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watch
}

// ---- the injector ----

// inject fires the faults in turn, each once every cfg.every finished
// calls; in CI it ends once each fired, in a soak it goes on.
func (r *faultRun) inject() {
	next := int64(r.cfg.every)
	var round []string
	for first := true; ; first = false {
		round = round[:0]
		for _, f := range allFaults {
			if first || !slices.Contains(r.cfg.once, f) {
				round = append(round, f)
			}
		}
		for _, kind := range round {
			for {
				if !r.waitCalls(next) {
					return
				}
				next = r.done.Load() + int64(r.cfg.every)
				r.quiet.Lock()
				fired := r.fire(kind)
				r.quiet.Unlock()
				if fired {
					break
				}
				// No tab to act on yet (agents still opening theirs): try
				// again after the next batch of calls.
			}
		}
		if first {
			close(r.injected)
			if r.cfg.duration == 0 {
				return
			}
		}
	}
}

// fire makes one fault; false when it found nothing to act on.
func (r *faultRun) fire(kind string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := r.s
	switch kind {
	case faultWorker:
		w := r.currentWatch()
		before := extBrowser(w.Last().Browsers)
		if before == nil {
			return false
		}
		i := r.fault(kind)
		if err := s.Chrome.StopServiceWorker(ctx); err != nil {
			r.fail("stopping the worker: %v", err)
			return true
		}
		at := r.happened(i)
		snap, err := w.Until(ctx, func(snap admin.Snapshot) bool {
			b := extBrowser(snap.Browsers)
			return b != nil && b.Since.After(before.Since)
		})
		if err != nil {
			r.fail("the extension never came back after its worker stopped: %v", err)
			return true
		}
		// As after a companion restart the time is counted from the new
		// process's listening: the browser's start of the worker comes
		// first, and is printed.
		back := extBrowser(snap.Browsers).Since
		started, err := s.Chrome.WorkerStarted(ctx)
		if err != nil {
			r.fail("%v", err)
			return true
		}
		r.reconnected("extension after its worker stopped (from the worker's start)", back.Sub(started))
		r.note("extension worker stopped until the browser started it", started.Sub(at))
		r.note("extension worker stopped until it was back", back.Sub(at))
	case faultCompanion:
		i := r.fault(kind)
		if err := s.Reins.Kill(); err != nil {
			r.fail("%v", err)
			return true
		}
		at := r.happened(i)
		if err := s.Reins.Relaunch(ctx); err != nil {
			r.fail("restarting the companion: %v", err)
			return true
		}
		listening, err := s.Reins.WaitLogTime(ctx, "companion listening")
		if err != nil {
			r.fail("%v", err)
			return true
		}
		w, err := s.Reins.Client.Watch(context.WithoutCancel(ctx))
		if err != nil {
			r.fail("watching the restarted companion: %v", err)
			return true
		}
		r.mu.Lock()
		old := r.watch
		r.watch, s.Watch = w, w
		r.mu.Unlock()
		old.Close()
		snap, err := w.Until(ctx, func(snap admin.Snapshot) bool { return harness.BothBrowsers(snap.Browsers) })
		if err != nil {
			r.fail("the browsers never came back after the restart: %v", err)
			return true
		}
		r.reconnected("extension after a companion restart (from listening)", extBrowser(snap.Browsers).Since.Sub(listening))
		for _, b := range snap.Browsers {
			if b.Mode == hub.ModeDev {
				r.note("dev browser relaunched (from listening)", b.Since.Sub(listening))
			}
		}
		r.note("companion killed until both browsers were back", time.Since(at))
	case faultCloseExt, faultCrashExt:
		targets, err := s.Chrome.Targets(ctx)
		if err != nil {
			r.fail("listing targets: %v", err)
			return true
		}
		var pick []harness.TargetInfo
		for _, tg := range targets {
			if tg.Type == "page" && strings.Contains(tg.URL, "/fault?") {
				pick = append(pick, tg)
			}
		}
		if len(pick) == 0 {
			return false
		}
		tg := pick[rand.IntN(len(pick))]
		i := r.fault(kind)
		if kind == faultCloseExt {
			err = s.Chrome.CloseTarget(ctx, tg.TargetID)
		} else {
			err = s.Chrome.CrashTab(ctx, tg.TargetID)
			if errors.Is(err, harness.ErrNoCrash) {
				// Crashed before and not loaded again yet, or navigating
				// away: another time.
				r.unfault(i)
				return false
			}
		}
		if err != nil {
			r.fail("%s: %v", kind, err)
			return true
		}
		r.happened(i)
	case faultCloseDev, faultCrashDev:
		tabs, err := s.Reins.Client.Tabs(ctx)
		if err != nil {
			r.fail("listing tabs: %v", err)
			return true
		}
		var pick []hub.Tab
		for _, tb := range tabs {
			if strings.Contains(tb.URL, "/fault?") && isDev(r.currentWatch().Last().Browsers, tb.BrowserID) {
				pick = append(pick, tb)
			}
		}
		if len(pick) == 0 {
			return false
		}
		tb := pick[rand.IntN(len(pick))]
		i := r.fault(kind)
		if kind == faultCloseDev {
			err = s.Reins.Client.CloseTab(ctx, tb.ID)
		} else {
			// The renderer dies before it could answer; the dev transport
			// fails the call once the browser reports the crash. Whatever
			// comes back is not the injector's failure.
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			s.Reins.Client.CDP(cctx, tb.ID, "Page.crash", nil)
			ccancel()
		}
		if err != nil {
			r.fail("%s: %v", kind, err)
			return true
		}
		r.happened(i)
	case faultPause:
		// As the tray does, over the admin channel.
		cl := admin.NewClient(s.Reins.DataDir)
		defer cl.Close()
		i := r.fault(kind)
		if err := cl.SetPaused(ctx, true); err != nil {
			r.fail("pausing: %v", err)
			return true
		}
		r.happened(i)
		// Every agent meets the pause about once.
		r.waitCalls(r.done.Load() + int64(r.cfg.agents))
		if err := cl.SetPaused(ctx, false); err != nil {
			r.fail("resuming: %v", err)
		}
	}
	return true
}

func extBrowser(bs []hub.BrowserInfo) *hub.BrowserInfo {
	for i := range bs {
		if bs[i].Mode == hub.ModeExtension {
			return &bs[i]
		}
	}
	return nil
}

func isDev(bs []hub.BrowserInfo, id string) bool {
	for _, b := range bs {
		if b.ID == id {
			return b.Mode == hub.ModeDev
		}
	}
	return false
}

// fault files a fault about to be made and returns its index, for
// happened.
func (r *faultRun) fault(kind string) int {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, faultEvent{kind: kind, sent: now, at: now})
	r.fired[kind]++
	return len(r.faults) - 1
}

// unfault takes back fault i, the latest, which did not happen.
func (r *faultRun) unfault(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fired[r.faults[i].kind]--
	r.faults = slices.Delete(r.faults, i, i+1)
}

// happened marks fault i as having happened now, and returns the time.
func (r *faultRun) happened(i int) time.Time {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults[i].at = now
	return now
}

// unrendered reports whether an error is the engine's input timeout: a tab
// that renders no frame (a background tab whose window shows another, here
// one whose renderer just crashed) answers no screenshot or input until
// inputTimeout (10 s). It is a limit of capturing background tabs, not of
// fault handling; those answers are counted and timed apart.
func unrendered(a errAnswer) bool {
	return a.code == string(wire.CodeTimeout) && strings.Contains(a.text, "did not answer")
}

// timesToError times every error answer from the last fault set about
// before it (from when it happened, or from when it was set about for an
// answer that came in between), or from the call's start when that is
// later; unrendered answers apart. The longest comes first.
func (r *faultRun) timesToError(unrenderedToo bool) []timedAnswer {
	var out []timedAnswer
	for _, a := range r.errAnswers {
		if unrendered(a) != unrenderedToo {
			continue
		}
		from, cause := a.start, "no fault"
		for i := len(r.faults) - 1; i >= 0; i-- {
			f := r.faults[i]
			if f.sent.After(a.end) {
				continue
			}
			cause = f.kind
			ev := f.at
			if ev.After(a.end) {
				ev = f.sent
			}
			if ev.After(from) {
				from = ev
			}
			break
		}
		started := "before the fault"
		if from.Equal(a.start) {
			started = "after the fault"
		}
		out = append(out, timedAnswer{d: a.end.Sub(from), what: fmt.Sprintf("%s → %s after %q, the call started %s (%s)", a.what, a.code, cause, started, a.text)})
	}
	slices.SortFunc(out, func(x, y timedAnswer) int { return cmp.Compare(y.d, x.d) })
	return out
}

type timedAnswer struct {
	d    time.Duration
	what string
}

// reconnected files a reconnect time the issue bounds.
func (r *faultRun) reconnected(what string, d time.Duration) {
	r.mu.Lock()
	r.reconnects[what] = max(r.reconnects[what], d)
	r.mu.Unlock()
}

// note files a time that is printed but not bounded.
func (r *faultRun) note(what string, d time.Duration) {
	r.reconnected("("+what+")", d)
}

// ---- the soak's samples ----

type soakSample struct {
	at  time.Duration
	pid int
	rss int64 // KiB
	admin.Runtime
}

func (r *faultRun) sampleUntilStopped(start time.Time) {
	tick := time.NewTicker(r.cfg.sample)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		// Between faults, with both browsers connected: a sample taken
		// while a browser is away would miss its tabs.
		r.quiet.Lock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, werr := r.currentWatch().Until(ctx, func(snap admin.Snapshot) bool { return harness.BothBrowsers(snap.Browsers) })
		// The engine follows a tab from its first call: after a fault the
		// agents' calls bring the states back. Every agent makes a few
		// before the sample.
		if !r.waitCalls(r.done.Load() + int64(8*r.cfg.agents)) {
			// The agents stopped: what is left now is the wind-down, not
			// the steady state the samples compare.
			cancel()
			r.quiet.Unlock()
			return
		}
		rt, err := r.s.Reins.Client.Runtime(ctx)
		cancel()
		pid := r.s.Reins.PID()
		rss, rerr := rssKiB(pid)
		r.quiet.Unlock()
		if werr != nil {
			r.t.Logf("sample skipped: the browsers were not both connected: %v", werr)
			continue
		}
		if err != nil || rerr != nil {
			r.t.Logf("sample skipped: %v %v", err, rerr)
			continue
		}
		sm := soakSample{at: time.Since(start), pid: pid, rss: rss, Runtime: rt}
		r.mu.Lock()
		r.samples = append(r.samples, sm)
		r.mu.Unlock()
		r.t.Logf("sample +%s: pid %d rss %d KiB goroutines %d heap %d KiB tab states %d hub tabs %d remembered %d/%d/%d",
			sm.at.Round(time.Second), pid, rss, rt.Goroutines, rt.HeapAlloc>>10, rt.TabStates, rt.HubTabs, rt.RememberedInstances, rt.RememberedSessions, rt.RememberedTabs)
	}
}

// rssKiB reads a process's resident set from /proc.
func rssKiB(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

// ---- the report ----

func (r *faultRun) report(took time.Duration) {
	t := r.t
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "fault suite: %d agents on two browsers, %s\n", r.cfg.agents, took.Round(time.Second))
	fmt.Fprintf(&b, "  calls %d, ok %d, lost %d, misrouted %d, wrong %d, errors without a code %d\n", r.calls, r.ok, len(r.lost), len(r.misrouted), len(r.wrong), len(r.uncoded))
	codes := make([]string, 0, len(r.errs))
	for c := range r.errs {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	first := map[string]errAnswer{}
	for _, e := range r.errAnswers {
		if _, ok := first[e.code]; !ok {
			first[e.code] = e
		}
	}
	for _, c := range codes {
		fmt.Fprintf(&b, "  errors %-20s %d", c, r.errs[c])
		if e, ok := first[c]; ok {
			fmt.Fprintf(&b, "  (the first: %s → %s)", e.what, e.text)
		}
		b.WriteString("\n")
	}
	for _, f := range allFaults {
		fmt.Fprintf(&b, "  fault %-34s fired %d\n", f, r.fired[f])
	}
	var worstTTE time.Duration
	worstWhat := ""
	ts := r.timesToError(false)
	if len(ts) > 0 {
		worstTTE, worstWhat = ts[0].d, ts[0].what
	}
	fmt.Fprintf(&b, "  worst time to error %s: %s\n", worstTTE.Round(time.Millisecond), worstWhat)
	if len(ts) > 0 {
		over := 0
		for _, te := range ts {
			if te.d > maxTimeToError {
				over++
			}
		}
		at := func(q int) time.Duration { return ts[(len(ts)-1)*(100-q)/100].d.Round(time.Millisecond) }
		fmt.Fprintf(&b, "  times to error of %d error answers: p50 %s, p99 %s, %d over %s\n", len(ts), at(50), at(99), over, maxTimeToError)
		if n := len(r.okTimes); n > 0 {
			// The load's own latency, beside which the errors' is read.
			ok := slices.Sorted(slices.Values(r.okTimes))
			q := func(f float64) time.Duration { return ok[int(float64(n-1)*f)].Round(time.Millisecond) }
			fmt.Fprintf(&b, "  times of the %d right answers: p50 %s, p99 %s, p99.9 %s, worst %s (%s)\n", n, q(.5), q(.99), q(.999), ok[n-1].Round(time.Millisecond), r.okWorst.what)
		}
		for _, te := range ts[1:min(len(ts), 5)] {
			fmt.Fprintf(&b, "    next: %s %s\n", te.d.Round(time.Millisecond), te.what)
		}
	}
	if slow := r.timesToError(true); len(slow) > 0 {
		fmt.Fprintf(&b, "  not bounded: %d input timeouts of a tab that renders no frame, worst %s: %s\n", len(slow), slow[0].d.Round(time.Millisecond), slow[0].what)
	}
	if t.Failed() || worstTTE > maxTimeToError || len(r.lost) > 0 {
		for i, f := range r.faults {
			if i == 40 {
				fmt.Fprintf(&b, "  … %d more faults\n", len(r.faults)-40)
				break
			}
			fmt.Fprintf(&b, "  at %s (set about %s): %s\n", f.at.Format("15:04:05.000"), f.sent.Format("15:04:05.000"), f.kind)
		}
	}
	whats := make([]string, 0, len(r.reconnects))
	for w := range r.reconnects {
		whats = append(whats, w)
	}
	sort.Strings(whats)
	for _, w := range whats {
		fmt.Fprintf(&b, "  worst reconnect %-55s %s\n", w, r.reconnects[w].Round(time.Millisecond))
	}
	t.Log(b.String())

	for _, list := range []struct {
		what string
		l    []string
	}{{"lost", r.lost}, {"misrouted", r.misrouted}, {"wrong", r.wrong}, {"without a wire code", r.uncoded}, {"injector failures", r.faultErrors}} {
		for i, e := range list.l {
			if i == 10 {
				t.Errorf("… and %d more %s", len(list.l)-10, list.what)
				break
			}
			t.Errorf("%s: %s", list.what, e)
		}
	}
	for _, f := range allFaults {
		if r.fired[f] == 0 {
			t.Errorf("fault %q never fired", f)
		}
	}
	if worstTTE > maxTimeToError {
		t.Errorf("worst time to error %s, want ≤ %s: %s", worstTTE.Round(time.Millisecond), maxTimeToError, worstWhat)
	}
	for _, w := range whats {
		if !strings.HasPrefix(w, "(") && r.reconnects[w] > maxReconnect {
			t.Errorf("%s took %s, want ≤ %s", w, r.reconnects[w].Round(time.Millisecond), maxReconnect)
		}
	}
	if r.calls == 0 || r.ok == 0 {
		t.Errorf("%d calls, %d ok: the agents did no work", r.calls, r.ok)
	}
	if r.cfg.duration > 0 {
		r.checkFlat()
	}
}

// checkFlat compares the first sample after the warm-up with the last, of
// the same companion process: RSS, goroutines and tab states within 10 %.
// Tab states and goroutines are small counts that move by one as agents
// open and lose tabs, so a change of at most 2 also passes.
func (r *faultRun) checkFlat() {
	t := r.t
	var first, last *soakSample
	for i := range r.samples {
		sm := &r.samples[i]
		if sm.at < r.cfg.warmup {
			continue
		}
		if first == nil || sm.pid != first.pid {
			first = sm
		}
		last = sm
	}
	if first == nil || first == last {
		t.Errorf("the soak took fewer than two samples after the %s warm-up (%d in all)", r.cfg.warmup, len(r.samples))
		return
	}
	flat := func(what string, a, b int64, slack int64) {
		lim := max(a/10, slack)
		if d := b - a; d > lim || -d > lim {
			t.Errorf("%s went from %d to %d between +%s and +%s (over 10 %%)", what, a, b, first.at.Round(time.Second), last.at.Round(time.Second))
		} else {
			t.Logf("%s: %d → %d between +%s and +%s", what, a, b, first.at.Round(time.Second), last.at.Round(time.Second))
		}
	}
	flat("companion RSS KiB", first.rss, last.rss, 0)
	flat("goroutines", int64(first.Goroutines), int64(last.Goroutines), 2)
	flat("tab states", int64(first.TabStates), int64(last.TabStates), 2)
}
