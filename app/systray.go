//go:build !nogui

package app

import (
	"bytes"
	"image"
	_ "image/png" // the tray icons
	"log/slog"
	"runtime"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/systray"
	"github.com/fyne-io/image/ico"
)

// trayIcon is the tray's icon, menu and tooltip (the desktop.App that
// ui.Tray drives) on fyne.io/systray, the library under Fyne's own tray.
//
// Fyne's tray also creates a hidden window, only to hear when the app is
// asked to quit, and every window it creates gets a GL context. A GL
// context loads the graphics driver: under a software renderer that is
// 54 MiB of Mesa (its LLVM and DRI code) in an idle tray app that draws
// nothing until the person opens a window. Here no window exists until one
// is shown, so an idle tray holds no GL context at all.
//
// Fyne ends its loop when the last window closes, and that hidden window
// was also what kept a tray app alive with every window closed; keeper
// does that here. A window that is never shown has no native window and no
// context, and the loop passes over it.
//
// Every method runs on the Fyne goroutine.
type trayIcon struct {
	log     *slog.Logger
	keeper  fyne.Window
	started bool // start ran: systray's platform code may be called
	begin   func()
	end     func()
	icon    []byte     // in the platform's format
	menu    *fyne.Menu // nil until ui.Tray sets it
	tip     string
	built   *trayBuild // the platform menu as last built; nil before
}

// trayBuild is the platform menu made for one shape of the menu: its items
// in the order addItems made them (each before its children), with what
// each shows and does now.
type trayBuild struct {
	shape    string
	items    []*systray.MenuItem
	labels   []string
	disabled []bool
	actions  []func()
}

var _ desktop.App = (*trayIcon)(nil)

func newTrayIcon(a fyne.App, log *slog.Logger) *trayIcon {
	t := &trayIcon{log: log, keeper: a.NewWindow("Reins")}
	// Registered now, as Fyne's tray registers before its loop runs: on
	// Windows and macOS this creates the platform's tray objects on this
	// thread, whose events the loop then pumps.
	t.begin, t.end = systray.RunWithExternalLoop(nil, nil)
	return t
}

// start shows the icon; the Fyne loop must be running (call it from the
// lifecycle's OnStarted).
func (t *trayIcon) start() {
	t.begin()
	t.started = true
	// Some panels misdraw an item without a title.
	systray.SetTitle("Reins")
	if t.icon != nil {
		systray.SetIcon(t.icon)
	}
	if t.tip != "" {
		systray.SetTooltip(t.tip)
	}
	t.refresh()
}

// stop removes the icon; call it before the driver stops.
func (t *trayIcon) stop() {
	if t.started {
		t.started = false
		t.end()
	}
}

func (t *trayIcon) SetSystemTrayIcon(r fyne.Resource) {
	img, err := platformIcon(r.Content())
	if err != nil {
		t.log.Warn("the tray icon could not be converted", "icon", r.Name(), "err", err)
		return
	}
	t.icon = img
	if t.started {
		systray.SetIcon(img)
	}
}

func (t *trayIcon) SetSystemTrayMenu(m *fyne.Menu) {
	t.menu = m
	t.refresh()
}

// SetSystemTrayWindow makes a click on the icon show w (ui.Tray has a menu
// and no such window; this completes desktop.App).
func (t *trayIcon) SetSystemTrayWindow(w fyne.Window) {
	w.SetCloseIntercept(w.Hide)
	systray.SetOnTapped(func() { fyne.Do(w.Show) })
}

func (t *trayIcon) setTooltip(s string) {
	t.tip = s
	if t.started {
		systray.SetTooltip(s)
	}
}

// refresh brings the platform menu up to date with t.menu. While the menu
// keeps its shape (the same items in the same places; a label, an enabled
// state or an action changed) its items are updated where they are and keep
// their ids: a panel sends a click by the id of the menu it showed, and a
// rebuilt menu would drop a click made a moment after a tab's title changed
// (Pause automation among them). Otherwise it is built again; removing the
// old items closes their click channels, which ends the goroutines that
// served them.
func (t *trayIcon) refresh() {
	if !t.started || t.menu == nil {
		return
	}
	shape := menuShape(t.menu)
	if b := t.built; b != nil && b.shape == shape {
		i := 0
		b.update(t.menu, &i)
		return
	}
	systray.ResetMenu()
	t.built = &trayBuild{shape: shape}
	t.built.add(t.menu, nil)
}

// menuShape is what a menu's platform items depend on: which items are
// separators, which have a check box, and their submenus.
func menuShape(m *fyne.Menu) string {
	var b strings.Builder
	for _, it := range m.Items {
		switch {
		case it.IsSeparator:
			b.WriteByte('-')
		case it.Checked:
			b.WriteByte('x')
		default:
			b.WriteByte('o')
		}
		if it.ChildMenu != nil {
			b.WriteString("(" + menuShape(it.ChildMenu) + ")")
		}
	}
	return b.String()
}

func (b *trayBuild) add(m *fyne.Menu, parent *systray.MenuItem) {
	for _, it := range m.Items {
		if it.IsSeparator {
			if parent == nil {
				systray.AddSeparator()
			} else {
				parent.AddSeparator()
			}
			continue
		}
		var item *systray.MenuItem
		switch {
		case parent == nil && it.Checked:
			item = systray.AddMenuItemCheckbox(it.Label, "", true)
		case parent == nil:
			item = systray.AddMenuItem(it.Label, "")
		case it.Checked:
			item = parent.AddSubMenuItemCheckbox(it.Label, "", true)
		default:
			item = parent.AddSubMenuItem(it.Label, "")
		}
		if it.Disabled {
			item.Disable()
		}
		i := len(b.items)
		b.items = append(b.items, item)
		b.labels = append(b.labels, it.Label)
		b.disabled = append(b.disabled, it.Disabled)
		b.actions = append(b.actions, it.Action)
		if it.ChildMenu != nil {
			b.add(it.ChildMenu, item)
		}
		go func() {
			for range item.ClickedCh {
				fyne.Do(func() {
					if action := b.actions[i]; action != nil {
						action()
					}
				})
			}
		}()
	}
}

// update brings the items from *i on up to date with m, of the shape they
// were made for.
func (b *trayBuild) update(m *fyne.Menu, i *int) {
	for _, it := range m.Items {
		if it.IsSeparator {
			continue
		}
		k := *i
		*i++
		item := b.items[k]
		b.actions[k] = it.Action
		if it.Label != b.labels[k] {
			b.labels[k] = it.Label
			item.SetTitle(it.Label)
		}
		if it.Disabled != b.disabled[k] {
			b.disabled[k] = it.Disabled
			if it.Disabled {
				item.Disable()
			} else {
				item.Enable()
			}
		}
		if it.ChildMenu != nil {
			b.update(it.ChildMenu, i)
		}
	}
}

// platformIcon is a PNG icon as the platform's tray takes it: Windows
// wants an ICO.
func platformIcon(png []byte) ([]byte, error) {
	if runtime.GOOS != "windows" {
		return png, nil
	}
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := ico.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
