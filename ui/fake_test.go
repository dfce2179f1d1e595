package ui

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Snapshots format times; pin the zone so they match on every machine.
	time.Local = time.UTC
	dir, err := os.MkdirTemp("", "reins-ui-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var errFake = errors.New("fake failure")

// fakeCompanion behaves like the companion as far as the UI can tell: it
// records calls and, for calls that change state, publishes a new snapshot.
type fakeCompanion struct {
	mu      sync.Mutex
	state   State
	subs    map[chan State]bool
	calls   []string
	showing []string // ShowingOffer reports, "id true|false"
	fail    bool     // every action returns errFake
}

func newFake(s State) *fakeCompanion {
	return &fakeCompanion{state: s, subs: map[chan State]bool{}}
}

func (f *fakeCompanion) Subscribe() (<-chan State, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan State, 64)
	ch <- f.state
	f.subs[ch] = true
	return ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.subs[ch] { // not already closed by a test playing a shutdown
			delete(f.subs, ch)
			close(ch)
		}
	}
}

// publish changes the state and sends the new snapshot to every subscriber.
func (f *fakeCompanion) publish(change func(*State)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(&f.state)
	for ch := range f.subs {
		ch <- f.state
	}
}

func (f *fakeCompanion) record(format string, args ...any) error {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return errFake
	}
	return nil
}

func (f *fakeCompanion) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeCompanion) SetPaused(p bool) error {
	if err := f.record("SetPaused(%v)", p); err != nil {
		return err
	}
	f.publish(func(s *State) { s.Paused = p })
	return nil
}

func (f *fakeCompanion) ApproveOffer(id string) error {
	if err := f.record("ApproveOffer(%s)", id); err != nil {
		return err
	}
	f.publish(func(s *State) {
		s.Offers = slices.DeleteFunc(slices.Clone(s.Offers), func(o Offer) bool { return o.ID == id })
	})
	return nil
}

func (f *fakeCompanion) DenyOffer(id string) error { return f.record("DenyOffer(%s)", id) }

// ShowingOffer is recorded apart from the calls: windows report it as they
// open and close, which is not a decision of the person's.
func (f *fakeCompanion) ShowingOffer(id string, showing bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.showing = append(f.showing, fmt.Sprintf("%s %v", id, showing))
	return nil
}

func (f *fakeCompanion) Showing() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.showing)
}

func (f *fakeCompanion) IssueToken(name string) (string, error) {
	if err := f.record("IssueToken(%s)", name); err != nil {
		return "", err
	}
	return "rt_secret_" + name, nil
}

func (f *fakeCompanion) RevokeToken(name string) error { return f.record("RevokeToken(%s)", name) }

func (f *fakeCompanion) AgentFolder(name string) (string, error) {
	if err := f.record("AgentFolder(%s)", name); err != nil {
		return "", err
	}
	return "/home/p/.local/share/reins/agents/agent-" + name, nil
}

func (f *fakeCompanion) BlockBrowser(id string) error { return f.record("BlockBrowser(%s)", id) }

func (f *fakeCompanion) UnblockBrowser(instanceID string) error {
	return f.record("UnblockBrowser(%s)", instanceID)
}
func (f *fakeCompanion) ForgetBackend(id string) error { return f.record("ForgetBackend(%s)", id) }
func (f *fakeCompanion) StopSharing(tabID int) error   { return f.record("StopSharing(%d)", tabID) }
func (f *fakeCompanion) SetOverlay(on bool) error      { return f.record("SetOverlay(%v)", on) }
func (f *fakeCompanion) SetManageExtensions(on bool) error {
	return f.record("SetManageExtensions(%v)", on)
}
func (f *fakeCompanion) SetDeveloperAgent(id string, on bool) error {
	return f.record("SetDeveloperAgent(%s, %v)", id, on)
}
func (f *fakeCompanion) SetDialogTimeout(d time.Duration) error {
	return f.record("SetDialogTimeout(%v)", d)
}
func (f *fakeCompanion) SetDisabledTools(n []string) error {
	return f.record("SetDisabledTools(%v)", n)
}

func (f *fakeCompanion) LiveViewURL(tabID int) (string, error) {
	if err := f.record("LiveViewURL(%d)", tabID); err != nil {
		return "", err
	}
	return fmt.Sprintf("http://127.0.0.1:47100/live/%d?ticket=t%d", tabID, tabID), nil
}

func (f *fakeCompanion) PairingCode() (string, time.Time, error) {
	if err := f.record("PairingCode()"); err != nil {
		return "", time.Time{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == "PairingCode()" {
			n++
		}
	}
	return fmt.Sprintf("ABCDE-FGH%02d", n)[:11], time.Now().Add(5 * time.Minute), nil
}

type fakeAutostart struct {
	on   bool
	sets []bool
}

func (a *fakeAutostart) Enabled() bool { return a.on }
func (a *fakeAutostart) SetEnabled(on bool) error {
	a.sets = append(a.sets, on)
	a.on = on
	return nil
}

// trayApp is the test app plus the desktop tray extension, which the test
// driver lacks, recording what the UI asks of the OS.
type trayApp struct {
	fyne.App
	mu       sync.Mutex
	menu     *fyne.Menu
	menuSets int
	icon     fyne.Resource
	opened   []string
	notes    []string
}

var _ desktop.App = (*trayApp)(nil)

func newTrayApp(t *testing.T) *trayApp {
	return &trayApp{App: test.NewTempApp(t)}
}

func (a *trayApp) SetSystemTrayMenu(m *fyne.Menu) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.menu = m
	a.menuSets++
}

func (a *trayApp) SetSystemTrayIcon(r fyne.Resource) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.icon = r
}

func (a *trayApp) SetSystemTrayWindow(fyne.Window) {}

func (a *trayApp) OpenURL(u *url.URL) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.opened = append(a.opened, u.String())
	return nil
}

func (a *trayApp) SendNotification(n *fyne.Notification) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, n.Title+": "+n.Content)
}

func (a *trayApp) trayIcon() fyne.Resource {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.icon
}

// uiLoop stands in for the Fyne goroutine. Functions handed to do wait in a
// queue until the test goroutine runs them, as the real driver runs them on
// its main loop; so State updates and the test's taps never run concurrently.
type uiLoop struct {
	q    chan func()
	last *State
}

func newUILoop() *uiLoop { return &uiLoop{q: make(chan func(), 256)} }

func (l *uiLoop) do(f func()) { l.q <- f }

// applied records a State the UI applied; it runs inside a queued function.
func (l *uiLoop) applied(s State) { l.last = &s }

// waitFor runs queued UI work until a newly applied State satisfies ok,
// failing after a deadline instead of sleeping a fixed time.
func (l *uiLoop) waitFor(t *testing.T, ok func(State) bool) State {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if l.last != nil {
			s := *l.last
			l.last = nil
			if ok(s) {
				return s
			}
		}
		select {
		case f := <-l.q:
			f()
		case <-deadline:
			t.Fatal("timed out waiting for a State to be applied")
		}
	}
}

func anyState(State) bool { return true }

// startShell starts a Shell whose UI work runs on the test goroutine and
// waits for the first State.
func startShell(t *testing.T, app *trayApp, fc *fakeCompanion) (*Shell, *uiLoop) {
	t.Helper()
	loop := newUILoop()
	sh := start(app, fc, nil, nil, Options{}, loop.do, loop.applied)
	t.Cleanup(sh.Stop)
	loop.waitFor(t, anyState)
	return sh, loop
}

// sampleState is a small but complete companion state.
func sampleState() State {
	seen := time.Date(2025, 12, 2, 9, 30, 0, 0, time.UTC)
	return State{
		Port:    47100,
		MCPURL:  "http://127.0.0.1:47100/mcp",
		Version: "0.1.0",
		Graph: Graph{
			Agents: []Node{
				{ID: "claude-code", Name: "claude-code", Kind: KindAgent, Connected: true},
				{ID: "be1", Name: "Acme Copilot", Kind: KindBackend, Connected: true},
				{ID: "cursor", Name: "cursor", Kind: KindAgent, LastSeen: seen},
			},
			Browsers: []BrowserNode{
				{ID: "b1", Name: "Chrome — Work", Mode: ModeExtension, Engine: EngineChromium, SharedTabs: 2},
				{ID: "b2", Name: "Firefox — Personal", Mode: ModeExtension, Engine: EngineFirefox, SharedTabs: 1, Paused: true},
				{ID: "b3", Name: "Chromium (dev)", Mode: ModeDev, Engine: EngineChromium},
			},
			Edges: []Edge{
				{AgentID: "claude-code", BrowserID: "b1", Tabs: 2},
				{AgentID: "be1", BrowserID: "b2", Tabs: 1},
				{AgentID: "claude-code", BrowserID: "b3", Tabs: 0},
			},
		},
		Tabs: []Tab{
			{ID: 11, Title: "Inbox (3) - mail", URL: "https://mail.example/inbox", BrowserID: "b1", BrowserName: "Chrome — Work", AgentName: "claude-code"},
			{ID: 12, Title: "Quarterly report", URL: "https://docs.example/q3", BrowserID: "b1", BrowserName: "Chrome — Work", AgentName: "claude-code"},
			{ID: 21, Title: "Flights", URL: "https://travel.example/", BrowserID: "b2", BrowserName: "Firefox — Personal", AgentName: "Acme Copilot"},
		},
		Agents: []Agent{
			{ID: "agent:t1", Name: "claude-code", Created: seen.Add(-48 * time.Hour), Connected: true},
			{ID: "agent:t2", Name: "cursor", Created: seen.Add(-24 * time.Hour), LastSeen: seen, Developer: true},
		},
		Backends: []Backend{
			{ID: "be1", Brand: "Acme Copilot", Origin: "https://app.acme.example", ServerURL: "https://api.acme.example/bop", Transport: "sse", Connected: true},
		},
		Tools:         []string{"tabs.list", "page.navigate", "page.click", "page.screenshot"},
		DisabledTools: []string{"page.screenshot"},
		DialogTimeout: time.Minute,
	}
}

func sampleOffer() Offer {
	return Offer{
		ID:        "offer-1",
		Brand:     "Acme Copilot",
		Origin:    "https://app.acme.example",
		BrowserID: "b1",
		Browser:   "Chrome",
		Profile:   "Work",
		ServerURL: "wss://api.acme.example/bop/ws",
		Transport: "websocket",
		Received:  time.Date(2025, 12, 2, 10, 0, 0, 0, time.UTC),
		Expires:   time.Date(2025, 12, 2, 10, 2, 0, 0, time.UTC),
	}
}

// fakeTimers is the approval windows' clock in tests: timers fire when the
// test advances it, never on their own.
type fakeTimers struct {
	mu     sync.Mutex
	now    time.Duration
	timers []*fakeTimer
}

type fakeTimer struct {
	due     time.Duration
	f       func()
	stopped bool
}

func (c *fakeTimers) after(d time.Duration, f func()) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{due: c.now + d, f: f}
	c.timers = append(c.timers, t)
	return func() {
		c.mu.Lock()
		t.stopped = true
		c.mu.Unlock()
	}
}

// advance moves the clock and runs, on the caller's goroutine (the test
// plays the Fyne goroutine), every timer that came due.
func (c *fakeTimers) advance(d time.Duration) {
	c.mu.Lock()
	c.now += d
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case t.due <= c.now:
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}
