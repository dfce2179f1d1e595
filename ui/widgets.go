package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// panel draws content on a rounded, theme-coloured box. It is a widget rather
// than a bare rectangle so its colours follow a light/dark theme switch.
type panel struct {
	widget.BaseWidget
	content fyne.CanvasObject
	fill    fyne.ThemeColorName
	stroke  fyne.ThemeColorName // "" for none
}

func newPanel(content fyne.CanvasObject, fill, stroke fyne.ThemeColorName) *panel {
	p := &panel{content: content, fill: fill, stroke: stroke}
	p.ExtendBaseWidget(p)
	return p
}

func (p *panel) CreateRenderer() fyne.WidgetRenderer {
	bg := canvas.NewRectangle(nil)
	r := &panelRenderer{p: p, bg: bg, objects: []fyne.CanvasObject{bg, container.NewPadded(p.content)}}
	r.Refresh()
	return r
}

type panelRenderer struct {
	p       *panel
	bg      *canvas.Rectangle
	objects []fyne.CanvasObject
}

func (r *panelRenderer) Layout(s fyne.Size) {
	for _, o := range r.objects {
		o.Resize(s)
		o.Move(fyne.NewPos(0, 0))
	}
}

func (r *panelRenderer) MinSize() fyne.Size           { return r.objects[1].MinSize() }
func (r *panelRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *panelRenderer) Destroy()                     {}

func (r *panelRenderer) Refresh() {
	th := r.p.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	r.bg.FillColor = th.Color(r.p.fill, v)
	r.bg.CornerRadius = th.Size(theme.SizeNameInputRadius)
	if r.p.stroke != "" {
		r.bg.StrokeColor = th.Color(r.p.stroke, v)
		r.bg.StrokeWidth = 2
	}
	r.bg.Refresh()
	r.objects[1].Refresh()
}

func heading(text string) *widget.Label {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.SizeName = theme.SizeNameSubHeadingText
	return l
}

// secondary is text that explains rather than informs.
func secondary(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Importance = widget.LowImportance
	l.Wrapping = fyne.TextWrapWord
	return l
}

// quiet is low-key text that keeps its width: form keys and text in a row.
// A wrapping label has almost no minimum width, so a form or an HBox would
// squeeze it to a letter a line.
func quiet(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Importance = widget.LowImportance
	return l
}

func bold(text string) *widget.Label {
	return widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// mono is selectable monospace text for tokens, URLs and snippets.
func mono(text string) *widget.Label {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	l.Selectable = true
	l.Wrapping = fyne.TextWrapBreak
	return l
}

// copyButton copies get() to the clipboard and says "Copied" until resetCopy
// is called when the text it copies changes; no timer puts the label back.
func copyButton(app fyne.App, get func() string) *widget.Button {
	var b *widget.Button
	b = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		app.Clipboard().SetContent(get())
		b.SetText("Copied")
	})
	return b
}

// resetCopy puts a copy button back to its idle label after its text changed.
func resetCopy(b *widget.Button) {
	if b.Text != "Copy" {
		b.SetText("Copy")
	}
}
