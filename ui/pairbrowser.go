package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/reinshq/reins/assets"
)

// PairBrowser is the small window of the tray's "Pair a browser…": a
// one-time code for a browser whose extension cannot reach the native host
// (installed from a store before the app), and how long it is valid. The
// person types the code into the extension's popup.
type PairBrowser struct {
	w       fyne.Window
	c       Companion
	code    *widget.Label
	expires *widget.Label
	problem *widget.Label
}

// NewPairBrowser builds the window and asks the companion for a code; the
// caller shows it.
func NewPairBrowser(app fyne.App, c Companion) *PairBrowser {
	p := &PairBrowser{w: app.NewWindow("Reins — Pair a browser"), c: c}
	p.w.SetIcon(assets.AppIcon)

	p.code = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{Monospace: true})
	p.code.SizeName = theme.SizeNameHeadingText
	p.code.Selectable = true
	p.expires = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{})
	p.problem = widget.NewLabel("")
	p.problem.Wrapping = fyne.TextWrapWord
	p.problem.Hide()

	steps := widget.NewLabel("In the browser, open the Reins extension (its toolbar button), choose “Pair with a code”, and type this code. " +
		"Browsers that found the Reins app by themselves do not need one.")
	steps.Wrapping = fyne.TextWrapWord

	again := widget.NewButton("New code", p.Refresh)
	done := widget.NewButton("Close", p.w.Close)
	done.Importance = widget.HighImportance

	p.w.SetContent(container.NewPadded(container.NewVBox(
		heading("Pair a browser"),
		steps,
		p.code,
		p.expires,
		p.problem,
		container.NewHBox(layout.NewSpacer(), again, done),
	)))
	p.w.Resize(fyne.NewSize(420, 0))
	p.Refresh()
	return p
}

// Window is the window, to show or close.
func (p *PairBrowser) Window() fyne.Window { return p.w }

// Code is the code the window shows ("" after a failure).
func (p *PairBrowser) Code() string { return p.code.Text }

// Refresh asks for a new code; the one shown before stops working.
func (p *PairBrowser) Refresh() {
	code, exp, err := p.c.PairingCode()
	if err != nil {
		p.code.SetText("")
		p.expires.SetText("")
		p.problem.SetText("No code: " + err.Error())
		p.problem.Show()
		return
	}
	p.problem.Hide()
	p.code.SetText(code)
	p.expires.SetText(fmt.Sprintf("Valid until %s (%s), for one browser.", exp.Local().Format("15:04:05"), untilText(time.Until(exp))))
}

// untilText is "5 minutes" or "45 seconds".
func untilText(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= 90*time.Second {
		return fmt.Sprintf("%d minutes", int(d.Round(time.Minute)/time.Minute))
	}
	return fmt.Sprintf("%d seconds", int(d/time.Second))
}
