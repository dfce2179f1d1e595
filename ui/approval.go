package ui

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/reinshq/reins/assets"
)

// maxBrand bounds the self-declared brand name. A long brand could push the
// real origin out of view or dress itself up as a sentence; cut short it stays
// recognisable and harmless.
const maxBrand = 40

// ApprovalWindow asks the person to allow or deny one pair offer.
//
// The page's real origin is the only trustworthy thing in an offer, so it gets
// its own large, labelled field that nothing else is ever written to. The
// brand, which the page chose, appears only as quoted, truncated, plain
// secondary text (never rich text, never in the origin's place), so a brand
// such as "https://bank.example — verified" cannot pass for the requester.
type ApprovalWindow struct {
	win   fyne.Window
	c     Companion
	offer Offer

	origin      *widget.Label
	brand       *widget.Label
	allow, deny *widget.Button
}

// NewApprovalWindow builds (but does not show) the window for o. Allow and
// Deny call the companion and close the window; closing it any other way
// leaves the offer pending until it expires.
func NewApprovalWindow(app fyne.App, c Companion, o Offer) *ApprovalWindow {
	a := &ApprovalWindow{win: app.NewWindow("Reins — pairing request"), c: c, offer: o}
	a.win.SetIcon(assets.AppIcon)

	brand := untrusted(o.Brand, maxBrand)
	if brand == "" {
		brand = "This product"
	}
	quoted := "“" + brand + "”"

	icon := canvas.NewImageFromResource(assets.AppIcon)
	icon.FillMode = canvas.ImageFillContain
	icon.SetMinSize(fyne.NewSize(48, 48))
	title := heading("A web page wants to connect to Reins")
	head := container.NewBorder(nil, nil, icon, nil,
		container.NewVBox(title, secondary("Nothing is shared until you allow it.")))

	// The origin comes from the browser, not from the page; it is shown whole
	// and wrapped, never truncated, because the end of a host name is the part
	// that tells bank.example from bank.example.evil.test.
	a.origin = widget.NewLabelWithStyle(untrusted(o.Origin, 0), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	a.origin.SizeName = theme.SizeNameHeadingText
	a.origin.Wrapping = fyne.TextWrapBreak
	originField := container.NewVBox(
		bold("Requested by"),
		newPanel(a.origin, theme.ColorNameInputBackground, theme.ColorNamePrimary),
	)

	a.brand = widget.NewLabelWithStyle(quoted, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	a.brand.Importance = widget.LowImportance
	a.brand.Truncation = fyne.TextTruncateEllipsis

	server := widget.NewLabel(untrusted(o.ServerURL, 0))
	server.Wrapping = fyne.TextWrapBreak
	details := container.New(layout.NewFormLayout(),
		quiet("Calls itself"), a.brand,
		quiet("Backend"), server,
		quiet("Transport"), widget.NewLabel(transportName(o.Transport)),
		quiet("Expires"), widget.NewLabel(expiry(o.Expires)),
	)

	allows := widget.NewLabel(quoted + " will be able to open tabs in a Reins tab group, read and control the pages in that group, and take screenshots; you can pause or forget it at any time.")
	allows.Wrapping = fyne.TextWrapWord
	warn := secondary("The page chose that name itself; Reins cannot verify it. Allow only if you just asked " +
		untrusted(o.Origin, 0) + " to connect to your browser.")

	a.deny = widget.NewButtonWithIcon("Deny", theme.CancelIcon(), a.decide(c.DenyOffer))
	a.allow = widget.NewButtonWithIcon("Allow", theme.ConfirmIcon(), a.decide(c.ApproveOffer))
	a.allow.Importance = widget.HighImportance
	buttons := container.NewHBox(layout.NewSpacer(), a.deny, a.allow)

	body := container.NewVBox(
		head,
		widget.NewSeparator(),
		originField,
		details,
		widget.NewSeparator(),
		allows,
		warn,
	)
	a.win.SetContent(container.NewPadded(container.NewBorder(nil, buttons, nil, nil, body)))
	a.win.Resize(fyne.NewSize(540, 0)) // width for the wrapping text; height follows content
	return a
}

// Window is the approval window.
func (a *ApprovalWindow) Window() fyne.Window { return a.win }

// Offer is the offer this window decides.
func (a *ApprovalWindow) Offer() Offer { return a.offer }

// Show shows the window and asks the window manager to raise it: the request
// is usually triggered from a browser window that has the focus.
func (a *ApprovalWindow) Show() {
	a.win.Show()
	a.win.RequestFocus()
}

func (a *ApprovalWindow) decide(call func(id string) error) func() {
	return func() {
		a.allow.Disable()
		a.deny.Disable()
		if err := call(a.offer.ID); err != nil {
			a.allow.Enable()
			a.deny.Enable()
			dialog.ShowError(fmt.Errorf("the pairing request could not be answered: %w", err), a.win)
			return
		}
		a.win.Close()
	}
}

func expiry(t time.Time) string {
	if t.IsZero() {
		return "when Reins restarts"
	}
	return "at " + t.Local().Format("15:04:05")
}

// Approvals keeps at most one approval window per pending offer and closes
// windows whose offer is no longer pending (decided elsewhere, for example
// with `reins pair approve`, or expired).
type Approvals struct {
	app     fyne.App
	c       Companion
	pending []Offer
	open    map[string]*ApprovalWindow
}

// NewApprovals returns an empty set of approval windows.
func NewApprovals(app fyne.App, c Companion) *Approvals {
	return &Approvals{app: app, c: c, open: map[string]*ApprovalWindow{}}
}

// Update records the pending offers and closes windows of offers that are
// gone. It must run on the Fyne goroutine.
func (a *Approvals) Update(offers []Offer) {
	a.pending = offers
	ids := make(map[string]bool, len(offers))
	for _, o := range offers {
		ids[o.ID] = true
	}
	for id, w := range a.open {
		if !ids[id] {
			w.win.Close()
		}
	}
}

// Show opens the window for o, or raises it if it is already open.
func (a *Approvals) Show(o Offer) *ApprovalWindow {
	w, ok := a.open[o.ID]
	if !ok {
		w = NewApprovalWindow(a.app, a.c, o)
		a.open[o.ID] = w
		w.win.SetOnClosed(func() { delete(a.open, o.ID) })
	}
	w.Show()
	return w
}

// ShowPending opens or raises a window for every pending offer.
func (a *Approvals) ShowPending() {
	for _, o := range a.pending {
		a.Show(o)
	}
}

// Open returns the open window for an offer id, if any.
func (a *Approvals) Open(id string) (*ApprovalWindow, bool) {
	w, ok := a.open[id]
	return w, ok
}
