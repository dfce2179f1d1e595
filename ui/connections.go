package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/reinshq/reins/assets"
)

// connectionsView is the graph with, under it, the browser profiles that
// run the extension, each with Block, and the blocked ones with Unblock.
type connectionsView struct {
	d        *Dashboard
	profiles *fyne.Container
	content  fyne.CanvasObject

	blocks   map[string]*widget.Button // by browser id, for tests
	unblocks map[string]*widget.Button // by instance id, for tests
	confirm  *dialog.ConfirmDialog
}

func newConnectionsView(d *Dashboard) *connectionsView {
	v := &connectionsView{d: d, profiles: container.NewVBox()}
	legend := container.NewHBox(
		glyph(assets.Chromium, 16), quiet("Chromium"),
		glyph(assets.Firefox, 16), quiet("Firefox"),
		quiet("·  extension: a profile running the Reins extension  ·  dev: a browser Reins launched"),
	)
	bottom := container.NewVBox(v.profiles, container.NewPadded(legend))
	v.content = container.NewBorder(nil, bottom, nil, nil, container.NewVScroll(d.graph))
	return v
}

// update lists the extension profiles and the blocked ones. A browser
// Reins launched itself (dev) is closed, not blocked, so it has no button.
func (v *connectionsView) update(browsers []BrowserNode, blocked []BlockedBrowser) {
	v.profiles.RemoveAll()
	v.blocks = map[string]*widget.Button{}
	v.unblocks = map[string]*widget.Button{}
	row := func(engine, name, detail string, b *widget.Button) {
		// The name keeps its width; the detail takes what is left.
		info := quiet(detail)
		info.Truncation = fyne.TextTruncateEllipsis
		v.profiles.Add(container.NewBorder(nil, nil, container.NewHBox(engineGlyph(engine, 20), bold(name)), b, info))
	}
	for _, br := range browsers {
		if br.Mode != ModeExtension {
			continue
		}
		id, name := br.ID, br.Name
		b := widget.NewButtonWithIcon("Block", theme.CancelIcon(), func() { v.askBlock(id, name) })
		v.blocks[id] = b
		row(br.Engine, name, fmt.Sprintf("%s · %s", br.ID, plural(br.SharedTabs, "shared tab")), b)
	}
	for _, bl := range blocked {
		id, name := bl.InstanceID, bl.Name
		b := widget.NewButtonWithIcon("Unblock", theme.ConfirmIcon(), func() {
			if err := v.d.c.UnblockBrowser(id); err != nil {
				v.d.fail(fmt.Errorf("unblocking %s: %w", name, err))
			}
		})
		v.unblocks[id] = b
		row(bl.Engine, name, "blocked since "+bl.Since.Local().Format("2 Jan 15:04"), b)
	}
	if len(v.profiles.Objects) > 0 {
		v.profiles.Objects = append([]fyne.CanvasObject{widget.NewSeparator()}, v.profiles.Objects...)
	} else if b := v.d.guideButton("Open the setup guide"); b != nil {
		v.profiles.Add(container.NewPadded(container.NewVBox(
			secondary("No browser is connected. The setup guide finds your browsers, adds the extension and connects your first agent."),
			b)))
	}
	v.profiles.Refresh()
}

func (v *connectionsView) askBlock(id, name string) {
	v.confirm = v.d.confirmDanger("Block "+name+"?",
		"Reins disconnects this browser profile now and refuses its extension until you unblock it here.\nAgents lose the tabs shared from it.",
		"Block", "blocking "+name, func() error { return v.d.c.BlockBrowser(id) })
}
