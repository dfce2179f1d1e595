package ui

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/reinshq/reins/assets"
)

// TrayActions are what the tray asks its owner to do. Nil fields are no-ops,
// except OpenURL (defaults to the app's) and Quit (defaults to app.Quit).
type TrayActions struct {
	// OpenDashboard shows the dashboard on a view ("Open dashboard",
	// "Connect an agent…").
	OpenDashboard func(View)
	// OpenURL opens a live-view URL in the default browser.
	OpenURL func(*url.URL) error
	// ShowOffers brings every pending approval window to the front.
	ShowOffers func()
	// NewOffer is called once per offer id, the first time a State carries
	// it. The owner decides whether that opens an approval window.
	NewOffer func(Offer)
	// OpenGuide shows the first-run guide ("Set up…"); nil: no such item.
	OpenGuide func()
	// PairBrowser shows the window with a pairing code ("Pair a
	// browser…"); nil opens a new one from the tray itself.
	PairBrowser func()
	// SetTooltip sets the tray icon's tooltip, where the platform shows
	// one.
	SetTooltip func(string)
	Quit       func()
}

// Tray keeps the system tray menu and icon in step with the State.
type Tray struct {
	app  fyne.App
	desk desktop.App // nil when the driver has no system tray
	c    Companion
	auto Autostart
	act  TrayActions

	menu     *fyne.Menu
	icon     fyne.Resource
	state    State
	shown    *trayModel      // what the menu currently shows
	tip      string          // the tooltip set last
	seen     map[string]bool // offer ids already announced
	browsers map[string]bool // browser ids known; nil until the first State
}

// trayModel is everything the menu displays. The OS menu is only rebuilt
// when it changes: most State changes (activity, last-seen times) do not
// touch the menu, and rebuilding an open tray menu makes it flicker or close.
type trayModel struct {
	Status    string
	Paused    bool
	Tabs      []liveItem
	Offers    int
	Autostart bool
}

type liveItem struct {
	TabID int
	Label string
}

// NewTray builds the tray menu and, when the app's driver supports a system
// tray, installs the menu and icon. Fyne starts its single systray loop on the
// first SetSystemTrayMenu; nothing here starts another. Call Update with each
// State on the Fyne goroutine.
func NewTray(app fyne.App, c Companion, auto Autostart, act TrayActions) *Tray {
	if act.OpenURL == nil {
		act.OpenURL = app.OpenURL
	}
	if act.Quit == nil {
		act.Quit = app.Quit
	}
	t := &Tray{
		app:  app,
		c:    c,
		auto: auto,
		act:  act,
		menu: fyne.NewMenu("Reins"),
		seen: map[string]bool{},
	}
	t.desk, _ = app.(desktop.App)
	t.render(State{})
	return t
}

// Menu is the tray menu; its Items are replaced when the State changes.
func (t *Tray) Menu() *fyne.Menu { return t.menu }

// Icon is the tray icon for the current State.
func (t *Tray) Icon() fyne.Resource { return t.icon }

// Update brings menu and icon up to date with s, reports offers not seen
// before to TrayActions.NewOffer and announces browsers that connect for the
// first time. It must run on the Fyne goroutine.
func (t *Tray) Update(s State) {
	t.render(s)

	current := make(map[string]bool, len(s.Offers))
	for _, o := range s.Offers {
		current[o.ID] = true
		if !t.seen[o.ID] && t.act.NewOffer != nil {
			t.act.NewOffer(o)
		}
	}
	t.seen = current

	// The first State is the baseline: browsers already connected when Reins
	// starts are not news. Nor is a browser coming back (its worker
	// restarted, its computer woke up): browser ids stay the same for a
	// profile, and every id seen is remembered for the run.
	first := t.browsers == nil
	if first {
		t.browsers = make(map[string]bool, len(s.Graph.Browsers))
	}
	for _, b := range s.Graph.Browsers {
		if !first && !t.browsers[b.ID] {
			t.app.SendNotification(fyne.NewNotification("Reins: new browser connected",
				untrusted(b.Name, 60)+" ("+engineName(b.Engine)+") can now share tabs with your agents. See it in the dashboard, where you can also block it."))
		}
		t.browsers[b.ID] = true
	}
}

// render updates the icon and, when what it shows changed, the menu.
func (t *Tray) render(s State) {
	t.state = s

	icon := assets.TrayNormal
	switch {
	case len(s.Offers) > 0:
		icon = assets.TrayOffer // needs the person; wins over paused
	case s.Paused:
		icon = assets.TrayPaused
	}
	if icon != t.icon {
		t.icon = icon
		if t.desk != nil {
			t.desk.SetSystemTrayIcon(icon)
		}
	}

	if tip := tooltip(s); tip != t.tip && t.act.SetTooltip != nil {
		t.tip = tip
		t.act.SetTooltip(tip)
	}

	m := t.model(s)
	if t.shown == nil || !reflect.DeepEqual(*t.shown, m) {
		t.shown = &m
		t.menu.Items = t.items(m)
		if t.desk != nil {
			t.desk.SetSystemTrayMenu(t.menu)
		}
	}
}

func (t *Tray) model(s State) trayModel {
	m := trayModel{Status: statusLine(s), Paused: s.Paused, Offers: len(s.Offers)}
	for _, tab := range s.Tabs {
		m.Tabs = append(m.Tabs, liveItem{TabID: tab.ID, Label: liveLabel(tab)})
	}
	if t.auto != nil {
		m.Autostart = t.auto.Enabled()
	}
	return m
}

// statusLine is the disabled first line of the tray menu.
func statusLine(s State) string {
	var parts []string
	if s.Paused {
		parts = append(parts, "Paused")
	} else {
		agents := 0
		for _, n := range s.Graph.Agents {
			if n.Connected {
				agents++
			}
		}
		parts = append(parts,
			plural(agents, "agent"),
			plural(len(s.Graph.Browsers), "browser"),
			plural(len(s.Tabs), "shared tab"))
	}
	if n := len(s.Offers); n > 0 {
		parts = append(parts, plural(n, "pairing request"))
	}
	return strings.Join(parts, " · ")
}

// tooltip says what Reins is doing, for a person who hovers the icon.
func tooltip(s State) string {
	switch {
	case s.Paused:
		return "Reins: automation paused; agents' calls fail until you resume"
	case len(s.Graph.Browsers) == 0:
		return "Reins is running, waiting for a browser: Set up… shows how"
	}
	return "Reins is running: " + statusLine(s)
}

func liveLabel(tab Tab) string {
	title := untrusted(tab.Title, 48)
	if title == "" {
		title = "Untitled tab"
	}
	browser := untrusted(tab.BrowserName, 32)
	if browser == "" {
		return title
	}
	return title + " — " + browser
}

func (t *Tray) items(m trayModel) []*fyne.MenuItem {
	status := fyne.NewMenuItem(m.Status, nil)
	status.Disabled = true

	pause := fyne.NewMenuItem("Pause automation", t.togglePause)
	pause.Checked = m.Paused

	live := fyne.NewMenu("Live view")
	for _, it := range m.Tabs {
		id := it.TabID
		live.Items = append(live.Items, fyne.NewMenuItem(it.Label, func() { t.openLiveView(id) }))
	}
	if len(live.Items) == 0 {
		none := fyne.NewMenuItem("No shared tabs", nil)
		none.Disabled = true
		live.Items = append(live.Items, none)
	}
	liveItem := fyne.NewMenuItem("Live view", nil)
	liveItem.ChildMenu = live

	items := []*fyne.MenuItem{
		status,
		fyne.NewMenuItemSeparator(),
		pause,
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Open dashboard", func() { t.openDashboard(ViewConnections) }),
		liveItem,
	}
	if t.act.OpenGuide != nil {
		items = append(items, fyne.NewMenuItem("Set up…", t.act.OpenGuide))
	}
	if m.Offers > 0 {
		items = append(items, fyne.NewMenuItem(fmt.Sprintf("Pairing requests (%d)", m.Offers), func() {
			if t.act.ShowOffers != nil {
				t.act.ShowOffers()
			}
		}))
	}
	items = append(items,
		fyne.NewMenuItem("Connect an agent…", func() { t.openDashboard(ViewAgents) }),
		fyne.NewMenuItem("Pair a browser…", t.pairBrowser),
		fyne.NewMenuItemSeparator(),
	)
	if t.auto != nil {
		login := fyne.NewMenuItem("Start at login", t.toggleAutostart)
		login.Checked = m.Autostart
		items = append(items, login, fyne.NewMenuItemSeparator())
	}
	quit := fyne.NewMenuItem("Quit", t.act.Quit)
	quit.IsQuit = true
	return append(items, quit)
}

func (t *Tray) togglePause() {
	if err := t.c.SetPaused(!t.state.Paused); err != nil {
		t.notify("Could not change the pause state", err)
	}
	// No optimistic update: the menu follows the companion's next State, so
	// it never claims a pause that did not happen.
}

func (t *Tray) toggleAutostart() {
	if err := t.auto.SetEnabled(!t.auto.Enabled()); err != nil {
		t.notify("Could not change start at login", err)
	}
	t.render(t.state) // autostart is not in the State stream
}

func (t *Tray) openDashboard(v View) {
	if t.act.OpenDashboard != nil {
		t.act.OpenDashboard(v)
	}
}

func (t *Tray) pairBrowser() {
	if t.act.PairBrowser != nil {
		t.act.PairBrowser()
		return
	}
	NewPairBrowser(t.app, t.c).Window().Show()
}

func (t *Tray) openLiveView(tabID int) {
	if err := openLiveView(t.c, t.act.OpenURL, tabID); err != nil {
		t.notify("Could not open the live view", err)
	}
}

// notify reports a failed tray action. The tray has no window to hang a
// dialog on, so a desktop notification is the least intrusive choice.
func (t *Tray) notify(what string, err error) {
	t.app.SendNotification(fyne.NewNotification("Reins: "+what, err.Error()))
}

// openLiveView asks the companion for a one-time live-view URL and opens it.
func openLiveView(c Companion, open func(*url.URL) error, tabID int) error {
	raw, err := c.LiveViewURL(tabID)
	if err != nil {
		return fmt.Errorf("live view of tab %d: %w", tabID, err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("live view of tab %d: %w", tabID, err)
	}
	return open(u)
}
