package ui

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/reinshq/reins/assets"
)

func labels(items []*fyne.MenuItem) []string {
	var out []string
	for _, it := range items {
		if it.IsSeparator {
			out = append(out, "---")
			continue
		}
		out = append(out, it.Label)
	}
	return out
}

func item(t *testing.T, m *fyne.Menu, label string) *fyne.MenuItem {
	t.Helper()
	for _, it := range m.Items {
		if it.Label == label {
			return it
		}
	}
	t.Fatalf("no menu item %q in %q", label, labels(m.Items))
	return nil
}

func hasItem(m *fyne.Menu, label string) bool {
	return slices.Contains(labels(m.Items), label)
}

func TestStatusLine(t *testing.T) {
	full := sampleState()
	for _, tc := range []struct {
		name string
		s    State
		want string
	}{
		{"empty", State{}, "0 agents · 0 browsers · 0 shared tabs"},
		{"counts connected agents only", full, "2 agents · 3 browsers · 3 shared tabs"},
		{"singular", State{
			Graph: Graph{Agents: []Node{{ID: "a", Connected: true}}, Browsers: []BrowserNode{{ID: "b"}}},
			Tabs:  []Tab{{ID: 1}},
		}, "1 agent · 1 browser · 1 shared tab"},
		{"paused", State{Paused: true, Tabs: []Tab{{ID: 1}}}, "Paused"},
		{"offer", State{Offers: []Offer{{ID: "o"}}}, "0 agents · 0 browsers · 0 shared tabs · 1 pairing request"},
		{"paused with offers", State{Paused: true, Offers: []Offer{{ID: "o"}, {ID: "p"}}}, "Paused · 2 pairing requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusLine(tc.s); got != tc.want {
				t.Errorf("statusLine = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTrayMenu(t *testing.T) {
	app := newTrayApp(t)
	auto := &fakeAutostart{on: true}
	var dash []View
	tr := NewTray(app, newFake(State{}), auto, TrayActions{OpenDashboard: func(v View) { dash = append(dash, v) }})
	tr.Update(sampleState())

	if app.menu != tr.Menu() {
		t.Fatal("the tray menu was not installed with SetSystemTrayMenu")
	}
	want := []string{
		"2 agents · 3 browsers · 3 shared tabs", "---",
		"Pause automation", "---",
		"Open dashboard", "Live view", "Connect an agent…", "Pair a browser…", "---",
		"Start at login", "---",
		"Quit",
	}
	if got := labels(tr.Menu().Items); !slices.Equal(got, want) {
		t.Errorf("menu items\n got %q\nwant %q", got, want)
	}
	m := tr.Menu()
	if !m.Items[0].Disabled {
		t.Error("the status line must be disabled")
	}
	if item(t, m, "Pause automation").Checked {
		t.Error("Pause automation is checked while running")
	}
	if !item(t, m, "Start at login").Checked {
		t.Error("Start at login does not reflect Autostart.Enabled")
	}
	if !item(t, m, "Quit").IsQuit {
		t.Error("Quit is not marked IsQuit")
	}
	if app.trayIcon() != assets.TrayNormal {
		t.Errorf("icon = %v, want TrayNormal", app.trayIcon().Name())
	}

	item(t, m, "Open dashboard").Action()
	item(t, m, "Connect an agent…").Action()
	if !slices.Equal(dash, []View{ViewConnections, ViewAgents}) {
		t.Errorf("dashboard opened on %v", dash)
	}

	item(t, m, "Start at login").Action()
	if !slices.Equal(auto.sets, []bool{false}) || item(t, tr.Menu(), "Start at login").Checked {
		t.Errorf("Start at login toggle: sets %v, checked %v", auto.sets, item(t, tr.Menu(), "Start at login").Checked)
	}
}

func TestTrayWithoutAutostart(t *testing.T) {
	tr := NewTray(newTrayApp(t), newFake(State{}), nil, TrayActions{})
	if hasItem(tr.Menu(), "Start at login") {
		t.Error("Start at login shown without an Autostart")
	}
}

func TestTrayLiveViewSubmenu(t *testing.T) {
	app := newTrayApp(t)
	fc := newFake(State{})
	tr := NewTray(app, fc, nil, TrayActions{})

	live := item(t, tr.Menu(), "Live view").ChildMenu
	if got := labels(live.Items); !slices.Equal(got, []string{"No shared tabs"}) || !live.Items[0].Disabled {
		t.Errorf("empty live view submenu = %q", got)
	}

	tr.Update(sampleState())
	live = item(t, tr.Menu(), "Live view").ChildMenu
	want := []string{
		"Inbox (3) - mail — Chrome — Work",
		"Quarterly report — Chrome — Work",
		"Flights — Firefox — Personal",
	}
	if got := labels(live.Items); !slices.Equal(got, want) {
		t.Fatalf("live view submenu\n got %q\nwant %q", got, want)
	}

	live.Items[1].Action()
	if got := fc.Calls(); !slices.Equal(got, []string{"LiveViewURL(12)"}) {
		t.Errorf("calls = %q", got)
	}
	if want := []string{"http://127.0.0.1:47100/live/12?ticket=t12"}; !slices.Equal(app.opened, want) {
		t.Errorf("opened %q, want %q", app.opened, want)
	}

	fc.fail = true
	live.Items[0].Action()
	if len(app.notes) != 1 {
		t.Errorf("a failed live view must be reported; notifications: %q", app.notes)
	}
}

func TestTrayPairingRequests(t *testing.T) {
	app := newTrayApp(t)
	var shown int
	var announced []string
	tr := NewTray(app, newFake(State{}), nil, TrayActions{
		ShowOffers: func() { shown++ },
		NewOffer:   func(o Offer) { announced = append(announced, o.ID) },
	})
	s := sampleState()
	tr.Update(s)
	for _, l := range labels(tr.Menu().Items) {
		if len(l) >= 8 && l[:8] == "Pairing " {
			t.Fatalf("pairing item %q shown without offers", l)
		}
	}

	o2 := sampleOffer()
	o2.ID = "offer-2"
	s.Offers = []Offer{sampleOffer(), o2}
	tr.Update(s)
	it := item(t, tr.Menu(), "Pairing requests (2)")
	it.Action()
	if shown != 1 {
		t.Errorf("ShowOffers called %d times", shown)
	}
	if app.trayIcon() != assets.TrayOffer {
		t.Errorf("icon = %s, want TrayOffer", app.trayIcon().Name())
	}
	if got := tr.Menu().Items[0].Label; got != "2 agents · 3 browsers · 3 shared tabs · 2 pairing requests" {
		t.Errorf("status = %q", got)
	}

	tr.Update(s) // the same offers again must not be announced twice
	if !slices.Equal(announced, []string{"offer-1", "offer-2"}) {
		t.Errorf("announced %q", announced)
	}

	s.Offers = nil
	tr.Update(s)
	if hasItem(tr.Menu(), "Pairing requests (2)") || app.trayIcon() != assets.TrayNormal {
		t.Errorf("offers gone but menu %q icon %s", labels(tr.Menu().Items), app.trayIcon().Name())
	}
}

// TestTrayPauseRoundTrip drives the whole loop: the menu item calls the
// companion, the companion publishes, the Shell applies the new State through
// fyne.Do, and the tray shows it.
func TestTrayPauseRoundTrip(t *testing.T) {
	app := newTrayApp(t)
	fc := newFake(sampleState())
	sh, loop := startShell(t, app, fc)

	item(t, sh.Tray().Menu(), "Pause automation").Action()
	loop.waitFor(t, func(s State) bool { return s.Paused })
	if got := fc.Calls(); !slices.Equal(got, []string{"SetPaused(true)"}) {
		t.Errorf("calls = %q", got)
	}
	m := sh.Tray().Menu()
	if !item(t, m, "Pause automation").Checked || m.Items[0].Label != "Paused" {
		t.Errorf("paused menu: %q checked=%v", labels(m.Items), item(t, m, "Pause automation").Checked)
	}
	if app.trayIcon() != assets.TrayPaused {
		t.Errorf("icon = %s, want TrayPaused", app.trayIcon().Name())
	}

	item(t, m, "Pause automation").Action()
	loop.waitFor(t, func(s State) bool { return !s.Paused })
	if app.trayIcon() != assets.TrayNormal {
		t.Errorf("icon = %s after resuming, want TrayNormal", app.trayIcon().Name())
	}
	if got := fc.Calls(); !slices.Equal(got, []string{"SetPaused(true)", "SetPaused(false)"}) {
		t.Errorf("calls = %q", got)
	}
}

// TestTrayMenuKeptForUnrelatedChanges checks that activity, which changes
// with every tool call, does not rebuild the OS menu (which would flicker or
// close an open menu).
func TestTrayMenuKeptForUnrelatedChanges(t *testing.T) {
	app := newTrayApp(t)
	tr := NewTray(app, newFake(State{}), nil, TrayActions{})
	s := sampleState()
	tr.Update(s)
	before := app.menuSets
	s.Activity = append(s.Activity, Activity{Tool: "page.click", Outcome: "ok"})
	tr.Update(s)
	if app.menuSets != before {
		t.Errorf("menu reinstalled %d times for an activity change", app.menuSets-before)
	}
	s.Tabs = s.Tabs[:1]
	tr.Update(s)
	if app.menuSets != before+1 {
		t.Errorf("menu not reinstalled when tabs changed")
	}
}

func TestTrayAnnouncesNewBrowsers(t *testing.T) {
	app := newTrayApp(t)
	tr := NewTray(app, newFake(State{}), nil, TrayActions{})
	s := sampleState()
	tr.Update(s)
	if len(app.notes) != 0 {
		t.Fatalf("browsers present at start announced: %q", app.notes)
	}
	withBrave := append(slices.Clone(s.Graph.Browsers), BrowserNode{ID: "b4", Name: "Brave — Research", Engine: EngineChromium})
	s.Graph.Browsers = withBrave
	tr.Update(s)
	tr.Update(s)
	// It goes away and comes back (a restarted worker): not news again.
	s.Graph.Browsers = withBrave[:len(withBrave)-1]
	tr.Update(s)
	s.Graph.Browsers = withBrave
	tr.Update(s)
	want := []string{"Reins: new browser connected: Brave — Research (Chromium) can now share tabs with your agents. See it in the dashboard, where you can also block it."}
	if !slices.Equal(app.notes, want) {
		t.Errorf("notifications %q, want %q", app.notes, want)
	}
}
