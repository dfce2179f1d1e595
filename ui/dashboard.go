package ui

import (
	"fmt"
	"net/url"
	"reflect"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/reinshq/reins/assets"
)

// View names a dashboard view.
type View string

// The dashboard's views, in tab order.
const (
	ViewConnections View = "connections"
	ViewTabs        View = "tabs"
	ViewAgents      View = "agents"
	ViewBackends    View = "backends"
	ViewActivity    View = "activity"
	ViewSettings    View = "settings"
)

// Views lists every view in tab order.
var Views = []View{ViewConnections, ViewTabs, ViewAgents, ViewBackends, ViewActivity, ViewSettings}

// Dashboard is the one main window: an AppTabs with a view per concern.
//
// Closing it only hides it, so reopening from the tray is instant and keeps
// the selected view; hiding also forgets a freshly issued token, which must
// not outlive the moment it was shown.
type Dashboard struct {
	app     fyne.App
	c       Companion
	auto    Autostart
	openURL func(*url.URL) error
	now     func() time.Time
	// openGuide shows the first-run guide; empty views offer it. nil: no
	// guide.
	openGuide func()

	win   fyne.Window
	tabs  *container.AppTabs
	items map[View]*container.TabItem
	state State
	fresh bool // no State applied yet

	graph    *GraphView
	conns    *connectionsView
	shared   *tabsView
	agents   *agentsView
	backends *backendsView
	activity *activityView
	settings *settingsView
}

// NewDashboard builds the dashboard window without showing it. openURL opens
// live views in the default browser (nil: the app's OpenURL); auto may be nil
// where start at login is not supported.
func NewDashboard(app fyne.App, c Companion, auto Autostart, openURL func(*url.URL) error) *Dashboard {
	if openURL == nil {
		openURL = app.OpenURL
	}
	d := &Dashboard{app: app, c: c, auto: auto, openURL: openURL, now: time.Now, fresh: true}
	d.win = app.NewWindow("Reins")
	d.win.SetIcon(assets.AppIcon)

	d.graph = NewGraphView()
	d.conns = newConnectionsView(d)
	d.shared = newTabsView(d)
	d.agents = newAgentsView(d)
	d.backends = newBackendsView(d)
	d.activity = newActivityView()
	d.settings = newSettingsView(d)

	d.items = map[View]*container.TabItem{
		ViewConnections: container.NewTabItemWithIcon("Connections", theme.ComputerIcon(), d.conns.content),
		ViewTabs:        container.NewTabItemWithIcon("Tabs", theme.ViewFullScreenIcon(), d.shared.content),
		ViewAgents:      container.NewTabItemWithIcon("Agents", theme.AccountIcon(), d.agents.content),
		ViewBackends:    container.NewTabItemWithIcon("Backends", theme.StorageIcon(), d.backends.content),
		ViewActivity:    container.NewTabItemWithIcon("Activity", theme.HistoryIcon(), d.activity.content),
		ViewSettings:    container.NewTabItemWithIcon("Settings", theme.SettingsIcon(), d.settings.content),
	}
	d.tabs = container.NewAppTabs()
	for _, v := range Views {
		d.tabs.Append(d.items[v])
	}
	d.win.SetContent(d.tabs)
	d.win.Resize(fyne.NewSize(940, 640))
	d.win.SetCloseIntercept(d.Hide)
	return d
}

// Window is the dashboard window.
func (d *Dashboard) Window() fyne.Window { return d.win }

// Show shows the dashboard on view v (the current view if v is empty) and
// raises it.
func (d *Dashboard) Show(v View) {
	if v != "" {
		d.Select(v)
	}
	d.win.Show()
	d.win.RequestFocus()
}

// Hide hides the window and forgets any token still on screen.
func (d *Dashboard) Hide() {
	d.agents.forgetToken()
	d.win.Hide()
}

// Select switches to view v and reports whether v exists.
func (d *Dashboard) Select(v View) bool {
	item, ok := d.items[v]
	if ok {
		d.tabs.Select(item)
	}
	return ok
}

// Selected is the view on screen.
func (d *Dashboard) Selected() View {
	cur := d.tabs.Selected()
	for v, item := range d.items {
		if item == cur {
			return v
		}
	}
	return ""
}

// Update applies a State to every view whose part of it changed, so a burst
// of activity does not redraw the graph or rebuild the agent list. It must
// run on the Fyne goroutine.
func (d *Dashboard) Update(s State) {
	old := d.state
	d.state = s
	all := d.fresh
	d.fresh = false
	changed := func(a, b any) bool { return all || !reflect.DeepEqual(a, b) }

	if changed(old.Graph, s.Graph) || old.Paused != s.Paused {
		d.graph.SetGraph(s.Graph, s.Paused)
	}
	if changed(old.Graph.Browsers, s.Graph.Browsers) || changed(old.Blocked, s.Blocked) {
		d.conns.update(s.Graph.Browsers, s.Blocked)
	}
	if changed(old.Tabs, s.Tabs) || changed(old.Graph.Browsers, s.Graph.Browsers) {
		d.shared.update(s.Tabs, s.Graph.Browsers)
	}
	if changed(old.Agents, s.Agents) || old.MCPURL != s.MCPURL {
		d.agents.update(s.Agents, s.MCPURL)
	}
	if changed(old.Backends, s.Backends) {
		d.backends.update(s.Backends)
	}
	if changed(old.Activity, s.Activity) {
		d.activity.update(s.Activity)
	}
	d.settings.update(s)
}

// guideButton is an empty view's way to the first-run guide, or nil when
// there is no guide.
func (d *Dashboard) guideButton(label string) fyne.CanvasObject {
	if d.openGuide == nil {
		return nil
	}
	b := widget.NewButtonWithIcon(label, theme.HelpIcon(), d.openGuide)
	b.Importance = widget.HighImportance
	return container.NewHBox(b)
}

// fail reports a failed action in the dashboard.
func (d *Dashboard) fail(err error) {
	dialog.ShowError(err, d.win)
}

// confirmDanger asks before a destructive action: its button says verb, and
// act runs only on that button. An error from act is reported as failing
// to doing (e.g. "revoking \"cursor\"").
func (d *Dashboard) confirmDanger(title, message, verb, doing string, act func() error) *dialog.ConfirmDialog {
	c := dialog.NewConfirm(title, message, func(ok bool) {
		if !ok {
			return
		}
		if err := act(); err != nil {
			d.fail(fmt.Errorf("%s: %w", doing, err))
		}
	}, d.win)
	c.SetConfirmText(verb)
	c.SetDismissText("Cancel")
	c.SetConfirmImportance(widget.DangerImportance)
	c.Show()
	return c
}
