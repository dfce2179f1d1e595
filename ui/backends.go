package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// backendsView lists paired hosted products. As in the approval window, the
// origin is the identity and the brand is quoted secondary text.
type backendsView struct {
	d       *Dashboard
	list    *fyne.Container
	content fyne.CanvasObject
	forgets map[string]*widget.Button // by backend id, for tests
	confirm *dialog.ConfirmDialog
}

func newBackendsView(d *Dashboard) *backendsView {
	v := &backendsView{d: d, list: container.NewVBox(), forgets: map[string]*widget.Button{}}
	v.content = container.NewVScroll(container.NewPadded(v.list))
	return v
}

func (v *backendsView) update(backends []Backend) {
	v.list.RemoveAll()
	v.forgets = map[string]*widget.Button{}
	if len(backends) == 0 {
		v.list.Add(heading("No paired products"))
		v.list.Add(secondary("A hosted product can ask to pair from its web page. Reins then opens a window naming the page's origin, and nothing is paired until you click Allow."))
		return
	}
	for _, b := range backends {
		id, origin := b.ID, untrusted(b.Origin, 0)
		forget := widget.NewButtonWithIcon("Forget", theme.DeleteIcon(), func() { v.askForget(id, origin) })
		forget.Importance = widget.DangerImportance
		v.forgets[id] = forget

		status := widget.NewLabel("")
		switch {
		case b.Revoked:
			status.SetText("revoked")
			status.Importance = widget.LowImportance
		case b.Connected:
			status.SetText("connected")
			status.Importance = widget.SuccessImportance
		default:
			msg := "disconnected"
			if b.LastError != "" {
				msg += ": " + untrusted(b.LastError, 120)
			}
			status.SetText(msg)
			status.Importance = widget.WarningImportance
		}
		status.Truncation = fyne.TextTruncateEllipsis

		brand := secondary("calls itself “" + untrusted(b.Brand, maxBrand) + "”")
		brand.TextStyle.Italic = true
		brand.Wrapping = fyne.TextWrapOff
		brand.Truncation = fyne.TextTruncateEllipsis
		where := secondary(transportName(b.Transport) + " · " + untrusted(b.ServerURL, 0))
		where.Wrapping = fyne.TextWrapBreak

		originLabel := bold(origin)
		originLabel.Wrapping = fyne.TextWrapBreak
		v.list.Add(container.NewBorder(nil, nil, nil, container.NewVBox(forget),
			container.NewVBox(originLabel, brand, where, status)))
		v.list.Add(widget.NewSeparator())
	}
}

func (v *backendsView) askForget(id, origin string) {
	v.confirm = v.d.confirmDanger("Forget "+origin+"?",
		"Reins disconnects from this product and deletes its token.\nIt can only come back by pairing again, with your approval.",
		"Forget", "forgetting "+origin, func() error { return v.d.c.ForgetBackend(id) })
}
