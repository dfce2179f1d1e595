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

// NewErrorWindow builds a plain window for a problem Reins cannot solve on
// its own, such as "port 47100 is taken by another program" or "no keychain
// reachable". It says what went wrong and what the person can do; the remedy
// is selectable so a command in it can be copied. The Close button and the
// window's close box both call dismiss, which for a fatal problem ends the
// app without closing the window first; with dismiss nil they close the
// window. The caller shows it.
func NewErrorWindow(app fyne.App, title, message, remedy string, dismiss func()) fyne.Window {
	w := app.NewWindow("Reins — " + title)
	w.SetIcon(assets.AppIcon)

	icon := canvas.NewImageFromResource(theme.NewErrorThemedResource(theme.ErrorIcon()))
	icon.FillMode = canvas.ImageFillContain
	icon.SetMinSize(fyne.NewSize(40, 40))

	msg := widget.NewLabel(message)
	msg.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(heading(title), msg)
	if remedy != "" {
		fix := widget.NewLabel(remedy)
		fix.Wrapping = fyne.TextWrapWord
		fix.Selectable = true
		body.Add(bold("What to do"))
		body.Add(fix)
	}

	if dismiss == nil {
		dismiss = w.Close
	}
	w.SetCloseIntercept(dismiss)
	closeBtn := widget.NewButton("Close", dismiss)
	closeBtn.Importance = widget.HighImportance
	buttons := container.NewHBox(layout.NewSpacer(), closeBtn)

	content := container.NewBorder(nil, buttons, container.NewVBox(icon), nil, body)
	w.SetContent(container.NewPadded(content))
	w.Resize(fyne.NewSize(480, 0))
	return w
}
