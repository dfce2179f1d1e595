package desktoptest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// The desktop panel's side of the StatusNotifierItem protocol: a panel owns
// org.kde.StatusNotifierWatcher, tray icons register with it, and the
// panel reads each icon's menu over com.canonical.dbusmenu.
const (
	watcherName  = "org.kde.StatusNotifierWatcher"
	watcherPath  = "/StatusNotifierWatcher"
	dbusmenu     = "com.canonical.dbusmenu"
	trayMenuPath = "/StatusNotifierMenu" // where fyne.io/systray exports its menu
)

// panel plays a desktop panel on the session bus.
type panel struct {
	conn  *dbus.Conn
	items chan registration
}

type registration struct {
	sender  string // the tray icon's unique bus name
	service string
	at      time.Time
}

// newPanel joins the bus and takes the watcher name, as a panel that shows
// tray icons does.
func newPanel(t testing.TB, bus string) *panel {
	t.Helper()
	conn, err := dbus.Connect(bus)
	if err != nil {
		t.Fatalf("joining the session bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	p := &panel{conn: conn, items: make(chan registration, 8)}
	if err := conn.Export(watcher{p}, watcherPath, watcherName); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(watcherName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("taking %s: %v (reply %v)", watcherName, err, reply)
	}
	return p
}

type watcher struct{ p *panel }

// RegisterStatusNotifierItem is the call a tray icon makes to appear.
func (w watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	select {
	case w.p.items <- registration{sender: string(sender), service: service, at: time.Now()}:
	default:
	}
	return nil
}

// waitItem waits for a tray icon to register.
func (p *panel) waitItem(t testing.TB) registration {
	t.Helper()
	select {
	case r := <-p.items:
		return r
	case <-time.After(Deadline):
		t.Fatalf("no tray icon registered with the panel within %v", Deadline)
	}
	return registration{}
}

// menuItem is one entry of a dbusmenu layout.
type menuItem struct {
	ID       int32
	Label    string
	Enabled  bool
	Toggled  bool
	Children []menuItem
}

func (m menuItem) find(label string) (menuItem, bool) {
	if m.Label == label {
		return m, true
	}
	for _, c := range m.Children {
		if f, ok := c.find(label); ok {
			return f, true
		}
	}
	return menuItem{}, false
}

func (m menuItem) labels() []string {
	var out []string
	if m.Label != "" {
		out = append(out, m.Label)
	}
	for _, c := range m.Children {
		out = append(out, c.labels()...)
	}
	return out
}

// layout reads the icon's whole menu.
func (p *panel) layout(t *testing.T, item string) menuItem {
	t.Helper()
	m, err := p.readLayout(item)
	if err != nil {
		t.Fatalf("GetLayout: %v", err)
	}
	return m
}

func (p *panel) readLayout(item string) (menuItem, error) {
	var rev uint32
	var root struct {
		ID    int32
		Props map[string]dbus.Variant
		Kids  []dbus.Variant
	}
	call := p.conn.Object(item, trayMenuPath).Call(dbusmenu+".GetLayout", 0, int32(0), int32(-1), []string{})
	if err := call.Store(&rev, &root); err != nil {
		return menuItem{}, err
	}
	return toItem(root.ID, root.Props, root.Kids), nil
}

// quit clicks the menu's Quit and waits for reins to exit. The tray
// rebuilds its menu, with new item ids, whenever what it shows changes (the
// first snapshot, start at login turned on at the first run), and a click
// on an id of the menu it replaced does nothing; so every new layout gets
// the click again until the process is gone. Errors from a process that is
// going away are expected and ignored.
func (p *panel) quit(t *testing.T, item string, proc *proc) {
	t.Helper()
	signals, stop := p.menuSignals(t, item)
	defer stop()
	deadline := time.After(Deadline)
	for {
		if m, err := p.readLayout(item); err == nil {
			if q, ok := m.find("Quit"); ok {
				p.conn.Object(item, trayMenuPath).Call(dbusmenu+".Event", 0, q.ID, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix()))
			}
		}
		select {
		case <-proc.done:
			return
		case <-signals:
		case <-deadline:
			t.Fatalf("reins did not exit within %v of Quit; log:\n%s", Deadline, proc.log())
		}
	}
}

func toItem(id int32, props map[string]dbus.Variant, kids []dbus.Variant) menuItem {
	m := menuItem{ID: id, Enabled: true}
	if v, ok := props["label"]; ok {
		m.Label, _ = v.Value().(string)
	}
	if v, ok := props["enabled"]; ok {
		m.Enabled, _ = v.Value().(bool)
	}
	if v, ok := props["toggle-state"]; ok {
		n, _ := v.Value().(int32)
		m.Toggled = n == 1
	}
	for _, k := range kids {
		fields, ok := k.Value().([]any)
		if !ok || len(fields) != 3 {
			continue
		}
		cid, _ := fields[0].(int32)
		cprops, _ := fields[1].(map[string]dbus.Variant)
		ckids, _ := fields[2].([]dbus.Variant)
		m.Children = append(m.Children, toItem(cid, cprops, ckids))
	}
	return m
}

// menuSignals delivers the icon's menu signals (a new layout, changed item
// properties) until stop.
func (p *panel) menuSignals(t *testing.T, item string) (signals <-chan *dbus.Signal, stop func()) {
	t.Helper()
	ch := make(chan *dbus.Signal, 16)
	p.conn.Signal(ch)
	opts := []dbus.MatchOption{dbus.WithMatchSender(item), dbus.WithMatchInterface(dbusmenu)}
	if err := p.conn.AddMatchSignal(opts...); err != nil {
		p.conn.RemoveSignal(ch)
		t.Fatal(err)
	}
	return ch, func() {
		p.conn.RemoveMatchSignal(opts...)
		p.conn.RemoveSignal(ch)
	}
}

// waitMenu reads the menu until ok accepts it, re-reading whenever the
// icon announces a new layout or changed item properties. The tray rebuilds
// its menu item by item, announcing each step, so only a layout that has
// reached its last item, Quit, is offered to ok.
func (p *panel) waitMenu(t *testing.T, item string, what string, ok func(menuItem) bool) menuItem {
	t.Helper()
	signals, stop := p.menuSignals(t, item)
	defer stop()
	deadline := time.After(Deadline)
	for {
		m := p.layout(t, item)
		if n := len(m.Children); n > 0 && m.Children[n-1].Label == "Quit" && ok(m) {
			return m
		}
		select {
		case <-signals:
		case <-deadline:
			t.Fatalf("the tray menu never showed %s; it shows %q", what, m.labels())
		}
	}
}

// click activates a menu item as a panel does when the person clicks it.
func (p *panel) click(t *testing.T, item string, m menuItem) {
	t.Helper()
	call := p.conn.Object(item, trayMenuPath).Call(dbusmenu+".Event", 0, m.ID, "clicked", dbus.MakeVariant(""), uint32(time.Now().Unix()))
	if call.Err != nil {
		t.Fatalf("clicking %q: %v", m.Label, call.Err)
	}
}

func (m menuItem) String() string {
	return fmt.Sprintf("%d %q toggled=%v [%s]", m.ID, m.Label, m.Toggled, strings.Join(m.labels(), ", "))
}

// tooltip reads the icon's tooltip title, as a panel shows it on hover.
// The property is a (name, icons, title, description) structure.
func (p *panel) tooltip(t *testing.T, item string) string {
	t.Helper()
	v, err := p.conn.Object(item, "/StatusNotifierItem").GetProperty("org.kde.StatusNotifierItem.ToolTip")
	if err != nil {
		t.Fatalf("reading the tooltip: %v", err)
	}
	fields, ok := v.Value().([]any)
	if !ok || len(fields) != 4 {
		t.Fatalf("tooltip %v", v)
	}
	title, _ := fields[2].(string)
	return title
}

// notification is one desktop notification: its title and text.
type notification struct{ Summary, Body string }

type notifier struct{ ch chan notification }

// Notify is org.freedesktop.Notifications.Notify, the call apps make to
// show a notification.
func (n notifier) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	select {
	case n.ch <- notification{summary, body}:
	default:
	}
	return 1, nil
}

// serveNotifications plays the desktop's notification server on the bus.
func (p *panel) serveNotifications(t *testing.T) <-chan notification {
	t.Helper()
	n := notifier{ch: make(chan notification, 16)}
	if err := p.conn.Export(n, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := p.conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("taking org.freedesktop.Notifications: %v (reply %v)", err, reply)
	}
	return n.ch
}
