package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/reinshq/reins/assets"
)

// tabsView lists shared tabs grouped per browser, each with Live view and
// Stop sharing.
type tabsView struct {
	d       *Dashboard
	list    *fyne.Container
	content fyne.CanvasObject
	rows    map[int]*tabRow // by tab id, for tests
}

type tabRow struct {
	tab        Tab
	live, stop *widget.Button
}

func newTabsView(d *Dashboard) *tabsView {
	v := &tabsView{d: d, list: container.NewVBox(), rows: map[int]*tabRow{}}
	v.content = container.NewVScroll(container.NewPadded(v.list))
	return v
}

func (v *tabsView) update(tabs []Tab, browsers []BrowserNode) {
	v.list.RemoveAll()
	v.rows = map[int]*tabRow{}
	if len(tabs) == 0 {
		v.list.Add(heading("No shared tabs"))
		v.list.Add(secondary("Tabs that agents may read and control appear here, grouped by browser, while they are shared."))
		if len(browsers) == 0 {
			if b := v.d.guideButton("Open the setup guide"); b != nil {
				v.list.Add(b)
			}
		}
		return
	}

	// Group in the graph's browser order, so the list does not jump around;
	// tabs of a browser the graph does not know yet go last.
	type group struct {
		name, engine string
		tabs         []Tab
	}
	var order []string
	groups := map[string]*group{}
	for _, b := range browsers {
		groups[b.ID] = &group{name: b.Name, engine: b.Engine}
		order = append(order, b.ID)
	}
	for _, t := range tabs {
		g, ok := groups[t.BrowserID]
		if !ok {
			g = &group{name: t.BrowserName}
			groups[t.BrowserID] = g
			order = append(order, t.BrowserID)
		}
		g.tabs = append(g.tabs, t)
	}

	for _, id := range order {
		g := groups[id]
		if len(g.tabs) == 0 {
			continue
		}
		name := untrusted(g.name, 60)
		if name == "" {
			name = "Unknown browser"
		}
		head := container.NewHBox(engineGlyph(g.engine, 20), bold(name), quiet(plural(len(g.tabs), "shared tab")))
		v.list.Add(head)
		for _, t := range g.tabs {
			v.list.Add(v.row(t))
		}
		v.list.Add(widget.NewSeparator())
	}
}

func (v *tabsView) row(t Tab) fyne.CanvasObject {
	id := t.ID
	r := &tabRow{tab: t}
	r.live = widget.NewButtonWithIcon("Live view", theme.VisibilityIcon(), func() {
		if err := openLiveView(v.d.c, v.d.openURL, id); err != nil {
			v.d.fail(err)
		}
	})
	r.stop = widget.NewButtonWithIcon("Stop sharing", theme.CancelIcon(), func() {
		if err := v.d.c.StopSharing(id); err != nil {
			v.d.fail(err)
		}
	})
	v.rows[id] = r

	title := untrusted(t.Title, 120)
	if title == "" {
		title = "Untitled tab"
	}
	titleLabel := bold(title)
	titleLabel.Truncation = fyne.TextTruncateEllipsis
	detail := untrusted(t.URL, 200)
	if t.AgentName != "" {
		detail += "  ·  shared with " + untrusted(t.AgentName, 40)
	}
	detailLabel := secondary(detail)
	detailLabel.Wrapping = fyne.TextWrapOff
	detailLabel.Truncation = fyne.TextTruncateEllipsis

	buttons := container.NewVBox(layout.NewSpacer(), container.NewHBox(r.live, r.stop), layout.NewSpacer())
	return container.NewBorder(nil, nil, nil, buttons, container.NewVBox(titleLabel, detailLabel))
}

func glyph(res fyne.Resource, size float32) *canvas.Image {
	img := canvas.NewImageFromResource(res)
	img.FillMode = canvas.ImageFillContain
	img.SetMinSize(fyne.NewSize(size, size))
	return img
}

func engineGlyph(engine string, size float32) fyne.CanvasObject {
	switch engine {
	case EngineChromium:
		return glyph(assets.Chromium, size)
	case EngineFirefox:
		return glyph(assets.Firefox, size)
	}
	return glyph(theme.ComputerIcon(), size)
}
