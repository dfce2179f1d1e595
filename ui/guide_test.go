package ui

import (
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// fakeSetup is a machine with the browsers and clients a test gives it.
type fakeSetup struct {
	mu       sync.Mutex
	browsers []InstalledBrowser
	clients  []MCPClient
	calls    []string
	fail     error // ConnectClient, DisconnectClient and OpenDemo return it
}

func (f *fakeSetup) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeSetup) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeSetup) Browsers() []InstalledBrowser { return slices.Clone(f.browsers) }
func (f *fakeSetup) Clients() []MCPClient         { return slices.Clone(f.clients) }

func (f *fakeSetup) AddExtension(id string) (ExtensionHelp, error) {
	f.record("AddExtension(%s)", id)
	for _, b := range f.browsers {
		if b.ID == id && b.Store {
			return ExtensionHelp{Opened: "https://store.example/reins"}, nil
		}
		if b.ID == id && b.Engine == EngineFirefox {
			return ExtensionHelp{Opened: "about:debugging#/runtime/this-firefox", Folder: "/usr/share/reins/extension"}, nil
		}
	}
	return ExtensionHelp{Opened: "chrome://extensions", Folder: "/usr/share/reins/extension"}, nil
}

func (f *fakeSetup) RestartBrowser(id string) error {
	f.record("RestartBrowser(%s)", id)
	return nil
}

func (f *fakeSetup) ConnectClient(id string) (ClientResult, error) {
	f.record("ConnectClient(%s)", id)
	if f.fail != nil {
		return ClientResult{}, f.fail
	}
	for i := range f.clients {
		if f.clients[i].ID == id {
			f.clients[i].Connected, f.clients[i].Agent = true, id
			return ClientResult{Client: f.clients[i], Backup: f.clients[i].ConfigPath + ".reins-backup-1"}, nil
		}
	}
	return ClientResult{}, errors.New("no such client")
}

func (f *fakeSetup) DisconnectClient(id string) error {
	f.record("DisconnectClient(%s)", id)
	if f.fail != nil {
		return f.fail
	}
	for i := range f.clients {
		if f.clients[i].ID == id {
			f.clients[i].Connected, f.clients[i].Agent = false, ""
		}
	}
	return nil
}

func (f *fakeSetup) ShowFile(path string) error {
	f.record("ShowFile(%s)", path)
	return nil
}

func (f *fakeSetup) OpenDemo(browserID string) (DemoTab, error) {
	f.record("OpenDemo(%s)", browserID)
	if f.fail != nil {
		return DemoTab{}, f.fail
	}
	return DemoTab{TabID: 7, URL: "http://127.0.0.1:40000/demo", Prompt: "Use Reins: add oat milk to the list in the demo tab."}, nil
}

// machine is a Linux desktop with Chrome (two profiles), Chromium (offered
// the packed extension by the package), Firefox, and two MCP clients.
func machine() *fakeSetup {
	return &fakeSetup{
		browsers: []InstalledBrowser{
			{ID: "chrome", Name: "Google Chrome", Engine: EngineChromium, Profiles: []string{"Work", "Person 1"}},
			{ID: "chromium", Name: "Chromium", Engine: EngineChromium, Profiles: []string{"Person 1"}, Offered: true},
			{ID: "firefox", Name: "Firefox", Engine: EngineFirefox},
		},
		clients: []MCPClient{
			{ID: "claude-desktop", Name: "Claude Desktop", Installed: true, ConfigPath: "/home/me/.config/Claude/claude_desktop_config.json", Restart: "Quit Claude Desktop and open it again."},
			{ID: "cursor", Name: "Cursor", Installed: true, ConfigPath: "/home/me/.cursor/mcp.json"},
			{ID: "windsurf", Name: "Windsurf", ConfigPath: "/home/me/.codeium/windsurf/mcp_config.json"},
		},
	}
}

func startGuideShell(t *testing.T, s State, setup *fakeSetup) (*Shell, *uiLoop, *fakeCompanion, *trayApp) {
	t.Helper()
	app := newTrayApp(t)
	fc := newFake(s)
	loop := newUILoop()
	var opts Options
	if setup != nil {
		opts.Setup = setup
	}
	sh := start(app, fc, nil, nil, opts, loop.do, loop.applied)
	t.Cleanup(sh.Stop)
	loop.waitFor(t, anyState)
	return sh, loop, fc, app
}

func guideText(g *Guide) string {
	var b strings.Builder
	for _, l := range allLabels(g.Window().Content()) {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// The whole guide, step by step, driven only by the State stream and the
// person's taps: each step turns green when what it waits for happens.
func TestGuideTurnsGreenStepByStep(t *testing.T) {
	setup := machine()
	sh, loop, fc, app := startGuideShell(t, State{MCPURL: "http://127.0.0.1:47100/mcp"}, setup)
	g := sh.Guide()
	if g == nil || !g.Visible() {
		t.Fatal("the guide did not open at first run")
	}
	if got := g.Done(); got != [5]bool{true, false, false, false, false} {
		t.Fatalf("steps at first run: %v", got)
	}
	text := guideText(g)
	for _, want := range []string{"Google Chrome", "profiles Work, Person 1", "Chromium offers Reins the next time it starts", "Waiting for a browser", "Claude Desktop", "Not connected."} {
		if !strings.Contains(text, want) {
			t.Errorf("the guide lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Windsurf") {
		t.Error("a client that is not installed is offered")
	}
	if !g.demoBtn.Disabled() {
		t.Error("the demo can be opened before a browser is connected")
	}
	app.mu.Lock()
	notes := slices.Clone(app.notes)
	app.mu.Unlock()
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "Reins is running: Reins lives in your tray") {
		t.Errorf("first notification: %q", notes)
	}

	// The extension's hello arrives: steps 2 and 3 turn green at once,
	// naming the profile.
	fc.publish(func(s *State) {
		s.Graph.Browsers = []BrowserNode{{ID: "b1", Name: "Chrome (Work)", Browser: "Chrome", Profile: "Work", Mode: ModeExtension, Engine: EngineChromium}}
	})
	loop.waitFor(t, func(s State) bool { return len(s.Graph.Browsers) == 1 })
	if got := g.Done(); got != [5]bool{true, true, true, false, false} {
		t.Fatalf("steps after hello: %v", got)
	}
	if !strings.Contains(guideText(g), "Chrome — Work profile is connected") {
		t.Errorf("no connected line:\n%s", guideText(g))
	}

	// Connect writes the client's config; the step waits for the agent.
	test.Tap(g.connects["claude-desktop"])
	if !slices.Contains(setup.Calls(), "ConnectClient(claude-desktop)") {
		t.Fatalf("calls %q", setup.Calls())
	}
	if g.Done()[3] {
		t.Error("step 4 is green before the agent connected")
	}
	if text := guideText(g); !strings.Contains(text, "Set up as agent claude-desktop. Quit Claude Desktop and open it again.") {
		t.Errorf("after Connect:\n%s", text)
	}
	if g.discos["claude-desktop"] == nil {
		t.Error("no Disconnect after Connect")
	}
	fc.publish(func(s *State) { s.Agents = []Agent{{Name: "claude-desktop", Connected: true}} })
	loop.waitFor(t, func(s State) bool { return len(s.Agents) == 1 })
	if !g.Done()[3] || !strings.Contains(guideText(g), "Claude Desktop is using Reins as agent claude-desktop.") {
		t.Fatalf("step 4 after the agent connected: %v\n%s", g.Done(), guideText(g))
	}

	// Try it: a demo tab with a prompt to copy, then the first call.
	fc.publish(func(s *State) {
		s.Activity = []Activity{{Time: time.Now(), Agent: "claude-desktop", Tool: "tabs_context_mcp", Outcome: "ok"}}
	})
	loop.waitFor(t, func(s State) bool { return len(s.Activity) == 1 })
	test.Tap(g.demoBtn)
	if !slices.Contains(setup.Calls(), "OpenDemo(b1)") || g.prompt == nil || !strings.Contains(g.prompt.Text, "oat milk") {
		t.Fatalf("demo: %q, prompt %v", setup.Calls(), g.prompt)
	}
	if g.Done()[4] {
		t.Error("a call from before the demo counts as the first call")
	}
	for _, b := range findButtons(g.Window().Content(), "Copy") {
		test.Tap(b)
	}
	if got := app.Clipboard().Content(); !strings.Contains(got, "oat milk") {
		t.Errorf("clipboard %q", got)
	}
	fc.publish(func(s *State) {
		s.Activity = append(slices.Clone(s.Activity), Activity{Time: time.Now(), Agent: "claude-desktop", Tool: "computer", TabID: 7, Outcome: "ok"})
	})
	loop.waitFor(t, func(s State) bool { return len(s.Activity) == 2 })
	if g.Done() != [5]bool{true, true, true, true, true} || !strings.Contains(guideText(g), "claude-desktop called computer: ok") {
		t.Fatalf("after the first call: %v\n%s", g.Done(), guideText(g))
	}
	test.Tap(findButtons(g.Window().Content(), "Open Activity")[0])
	if sh.Dashboard().Selected() != ViewActivity {
		t.Errorf("Open Activity shows %s", sh.Dashboard().Selected())
	}
	test.Tap(findButtons(g.Window().Content(), "Close")[0])
	if g.Visible() {
		t.Error("Close left the guide on screen")
	}
}

// Without a store listing, Add copies the folder and shows the three
// steps with their picture; Firefox gets its own steps.
func TestGuideLoadUnpacked(t *testing.T) {
	setup := machine()
	sh, _, _, app := startGuideShell(t, State{}, setup)
	g := sh.Guide()
	test.Tap(g.adds["chrome"])
	if got := app.Clipboard().Content(); got != "/usr/share/reins/extension" {
		t.Errorf("clipboard %q", got)
	}
	text := guideText(g)
	for _, want := range []string{"1. Turn on Developer mode", "2. Click Load unpacked.", "3. Paste the folder's path", "chrome://extensions"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	if len(findButtons(g.Window().Content(), "Load unpacked")) != 1 {
		t.Error("no picture of the Load unpacked button")
	}
	test.Tap(g.adds["firefox"])
	if text := guideText(g); !strings.Contains(text, "Load Temporary Add-on") {
		t.Errorf("no Firefox steps:\n%s", text)
	}
	if g.adds["chromium"] != nil || g.restarts["chromium"] == nil {
		t.Error("an offered browser gets Add instead of Restart")
	}
}

// A configured store listing opens instead, with no folder to paste.
func TestGuideStoreListing(t *testing.T) {
	setup := machine()
	setup.browsers[0].Store = true
	sh, _, _, app := startGuideShell(t, State{}, setup)
	g := sh.Guide()
	if g.adds["chrome"].Text != "Get Reins for Google Chrome" {
		t.Fatalf("button %q", g.adds["chrome"].Text)
	}
	test.Tap(g.adds["chrome"])
	if app.Clipboard().Content() != "" || !strings.Contains(guideText(g), "store page is open") || strings.Contains(guideText(g), "Developer mode") {
		t.Errorf("store flow:\n%s", guideText(g))
	}
}

// Restart is one click, like a browser's own Relaunch: its label says
// the tabs come back.
func TestGuideRestartOfferedBrowser(t *testing.T) {
	setup := machine()
	sh, _, _, _ := startGuideShell(t, State{}, setup)
	g := sh.Guide()
	if g.restarts["chromium"].Text != "Restart Chromium (your tabs reopen)" {
		t.Errorf("label %q", g.restarts["chromium"].Text)
	}
	test.Tap(g.restarts["chromium"])
	if !slices.Equal(setup.Calls(), []string{"RestartBrowser(chromium)"}) {
		t.Errorf("calls %q", setup.Calls())
	}
}

// A config Reins cannot read: the reason, and Show the file.
func TestGuideMalformedClient(t *testing.T) {
	setup := machine()
	setup.clients[1].Problem = "malformed config file: invalid character '}'"
	sh, _, _, _ := startGuideShell(t, State{}, setup)
	g := sh.Guide()
	if g.connects["cursor"] != nil {
		t.Error("Connect offered for an unreadable config")
	}
	if !strings.Contains(guideText(g), "Reins cannot read its settings file and left it as it was: malformed config file") {
		t.Errorf("no reason:\n%s", guideText(g))
	}
	test.Tap(g.showFile["cursor"])
	if !slices.Equal(setup.Calls(), []string{"ShowFile(/home/me/.cursor/mcp.json)"}) {
		t.Errorf("calls %q", setup.Calls())
	}
}

// A failed Connect says why in the client's row; Disconnect takes it out.
func TestGuideConnectFailsThenDisconnect(t *testing.T) {
	setup := machine()
	sh, _, _, _ := startGuideShell(t, State{}, setup)
	g := sh.Guide()
	setup.fail = errors.New("config file is read-only")
	test.Tap(g.connects["cursor"])
	if !strings.Contains(guideText(g), "config file is read-only") || g.connects["cursor"] == nil {
		t.Fatalf("failure:\n%s", guideText(g))
	}
	setup.fail = nil
	test.Tap(g.connects["cursor"])
	if strings.Contains(guideText(g), "read-only") {
		t.Error("the old failure stays after a success")
	}
	test.Tap(g.discos["cursor"])
	if g.connects["cursor"] == nil || !slices.Contains(setup.Calls(), "DisconnectClient(cursor)") {
		t.Errorf("after Disconnect: %q", setup.Calls())
	}
}

// A machine with nothing on it says what to install.
func TestGuideEmptyMachine(t *testing.T) {
	sh, _, _, _ := startGuideShell(t, State{}, &fakeSetup{})
	g := sh.Guide()
	text := guideText(g)
	for _, want := range []string{"No supported browser found", "No MCP client found"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	if g.Done() != [5]bool{} {
		t.Errorf("steps %v", g.Done())
	}
	test.Tap(findButtons(g.Window().Content(), "Other clients…")[0])
	if sh.Dashboard().Selected() != ViewAgents {
		t.Errorf("Other clients shows %s", sh.Dashboard().Selected())
	}
}

// The guide opens by itself only while nothing is set up; the tray's
// Set up… and a request for Reins while nothing is connected open it too.
func TestShellOpensTheGuide(t *testing.T) {
	set := State{Agents: []Agent{{Name: "cursor"}}}
	sh, _, _, app := startGuideShell(t, set, machine())
	if sh.guide != nil && sh.guide.Visible() {
		t.Fatal("the guide opened although an agent is set up")
	}
	if len(app.notes) != 0 {
		t.Errorf("notification on a later run: %q", app.notes)
	}
	item(t, sh.Tray().Menu(), "Set up…").Action()
	if !sh.Guide().Visible() {
		t.Fatal("Set up… did not open the guide")
	}
	sh.Guide().Hide()
	sh.ShowDashboard(ViewConnections)
	if !sh.Guide().Visible() {
		t.Error("asking for Reins while nothing is connected did not bring the guide")
	}

	connected := sampleState()
	sh2, _, _, _ := startGuideShell(t, connected, machine())
	sh2.ShowDashboard(ViewConnections)
	if sh2.guide != nil && sh2.guide.Visible() {
		t.Error("the guide opened although browsers and agents are connected")
	}

	// Without a Setup there is no guide and no menu item.
	sh3, _ := startShell(t, newTrayApp(t), newFake(State{}))
	if hasItem(sh3.Tray().Menu(), "Set up…") || sh3.Guide() != nil {
		t.Error("a guide without a Setup")
	}
}

// The empty dashboard views point at the guide.
func TestDashboardEmptyStatesOpenTheGuide(t *testing.T) {
	sh, _, _, _ := startGuideShell(t, State{}, machine())
	sh.Guide().Hide()
	d := sh.Dashboard()
	for _, v := range []struct {
		view  View
		label string
	}{{ViewConnections, "Open the setup guide"}, {ViewAgents, "Connect an agent for me"}, {ViewTabs, "Open the setup guide"}} {
		d.Select(v.view)
		var content fyne.CanvasObject
		switch v.view {
		case ViewConnections:
			content = d.conns.content
		case ViewAgents:
			content = d.agents.content
		case ViewTabs:
			content = d.shared.content
		}
		bs := findButtons(content, v.label)
		if len(bs) != 1 {
			t.Fatalf("%s: %d %q buttons", v.view, len(bs), v.label)
		}
		test.Tap(bs[0])
		if !sh.Guide().Visible() {
			t.Errorf("%s: the button did not open the guide", v.view)
		}
		sh.Guide().Hide()
	}
}

func TestTrayTooltip(t *testing.T) {
	var tips []string
	app := newTrayApp(t)
	tr := NewTray(app, newFake(State{}), nil, TrayActions{SetTooltip: func(s string) { tips = append(tips, s) }})
	tr.Update(State{})
	tr.Update(State{}) // unchanged: not set again
	tr.Update(sampleState())
	s := sampleState()
	s.Paused = true
	tr.Update(s)
	want := []string{
		"Reins is running, waiting for a browser: Set up… shows how",
		"Reins is running: 2 agents · 3 browsers · 3 shared tabs",
		"Reins: automation paused; agents' calls fail until you resume",
	}
	if !slices.Equal(tips, want) {
		t.Errorf("tooltips %q\nwant %q", tips, want)
	}
}

func TestConnectedLabel(t *testing.T) {
	installed := []InstalledBrowser{
		{ID: "chrome", Name: "Google Chrome", Profiles: []string{"Work", "Home"}},
		{ID: "edge", Name: "Microsoft Edge", Profiles: []string{"Ada"}},
	}
	for _, tc := range []struct {
		b    BrowserNode
		want string
	}{
		{BrowserNode{Name: "Chrome (Work)", Browser: "Chrome", Profile: "Work"}, "Chrome — Work profile is connected"},
		{BrowserNode{Name: "Chrome", Browser: "Chrome"}, "Chrome is connected"},
		{BrowserNode{Name: "Edge", Browser: "Edge"}, "Edge — Ada profile is connected"},
		{BrowserNode{Name: "Chromium"}, "Chromium is connected"},
		{BrowserNode{Name: "Chrome (x)", Browser: "Chrome", Profile: "Evil\u202eexe.txt"}, "Chrome — Evilexe.txt profile is connected"},
	} {
		if got := connectedLabel(tc.b, installed); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.b, got, tc.want)
		}
	}
}

// The Load unpacked steps as the person sees them, rendered by the test
// driver with the app's theme. With REINS_SCREENSHOTS=DIR (make
// screenshots) the picture is kept for the README.
func TestGuideLoadUnpackedPicture(t *testing.T) {
	setup := &fakeSetup{browsers: []InstalledBrowser{{ID: "chrome", Name: "Google Chrome", Engine: EngineChromium, Profiles: []string{"Work", "Person 1"}}}}
	sh, _, _, _ := startGuideShell(t, State{}, setup)
	fyne.CurrentApp().Settings().SetTheme(theme.DefaultTheme())
	g := sh.Guide()
	test.Tap(g.adds["chrome"])
	g.Window().Resize(fyne.NewSize(720, 820))
	img := g.Window().Canvas().Capture()
	// Not blank: the picture's primary border and buttons are drawn.
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0}] = true
		}
	}
	if len(seen) < 50 {
		t.Fatalf("the capture has %d colours", len(seen))
	}
	if dir := os.Getenv("REINS_SCREENSHOTS"); dir != "" {
		f, err := os.Create(filepath.Join(dir, "guide-load-unpacked.png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
	}
}
