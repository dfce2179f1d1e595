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

// AllowDelay is how long Allow stays inactive after an approval window
// appears (or is raised again). The window pops up over whatever the person
// was doing; a click or key press aimed at that must not land on Allow, and
// a page must not be able to time one (clickjacking).
const AllowDelay = time.Second

// afterFunc runs f after d on the Fyne goroutine and returns a function that
// cancels it. Tests give the approval windows a fake one.
type afterFunc func(d time.Duration, f func()) (stop func())

func realAfter(d time.Duration, f func()) func() {
	t := time.AfterFunc(d, func() { fyne.Do(f) })
	return func() { t.Stop() }
}

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
	relay       *widget.Label
	allow, deny *widget.Button

	after    afterFunc
	stopHold func()
	deciding bool
	onClosed func()
}

// NewApprovalWindow builds (but does not show) the window for o. Allow and
// Deny call the companion and close the window; closing it any other way
// leaves the offer pending until it expires.
func NewApprovalWindow(app fyne.App, c Companion, o Offer) *ApprovalWindow {
	a := &ApprovalWindow{win: app.NewWindow("Reins — pairing request"), c: c, offer: o, after: realAfter}
	a.win.SetIcon(assets.AppIcon)
	a.win.SetOnClosed(a.closed)

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
	// that tells bank.example from bank.example.evil.test, and in punycode, so
	// that a look-alike host cannot pass for the one it imitates.
	origin := punycodeURL(o.Origin)
	a.origin = widget.NewLabelWithStyle(origin, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	a.origin.SizeName = theme.SizeNameHeadingText
	a.origin.Wrapping = fyne.TextWrapBreak
	originField := container.NewVBox(
		bold("Requested by"),
		newPanel(a.origin, theme.ColorNameInputBackground, theme.ColorNamePrimary),
	)

	a.brand = widget.NewLabelWithStyle(quoted, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	a.brand.Importance = widget.LowImportance
	a.brand.Truncation = fyne.TextTruncateEllipsis

	server := widget.NewLabel(punycodeURL(o.ServerURL))
	server.Wrapping = fyne.TextWrapBreak
	// Which browser profile passed the offer on: an offer the person did not
	// make in that browser is one to deny.
	a.relay = widget.NewLabel(relayName(o))
	a.relay.Wrapping = fyne.TextWrapWord
	details := container.New(layout.NewFormLayout(),
		quiet("Calls itself"), a.brand,
		quiet("Relayed by"), a.relay,
		quiet("Backend"), server,
		quiet("Transport"), widget.NewLabel(transportName(o.Transport)),
		quiet("Expires"), widget.NewLabel(expiry(o.Expires)),
	)

	allows := widget.NewLabel(quoted + " will be able to open tabs in a Reins tab group, read and control the pages in that group, and take screenshots; you can pause or forget it at any time.")
	allows.Wrapping = fyne.TextWrapWord
	warn := secondary("The page chose that name itself; Reins cannot verify it. Allow only if you just asked " +
		origin + " to connect to your browser.")

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
// is usually triggered from a browser window that has the focus. Allow is
// inactive for AllowDelay each time.
func (a *ApprovalWindow) Show() {
	a.holdAllow()
	a.win.Show()
	a.win.RequestFocus()
}

// holdAllow disables Allow now and enables it AllowDelay later.
func (a *ApprovalWindow) holdAllow() {
	if a.stopHold != nil {
		a.stopHold()
	}
	a.allow.Disable()
	a.stopHold = a.after(AllowDelay, func() {
		a.stopHold = nil
		if !a.deciding {
			a.allow.Enable()
		}
	})
}

func (a *ApprovalWindow) closed() {
	if a.stopHold != nil {
		a.stopHold()
		a.stopHold = nil
	}
	if a.onClosed != nil {
		a.onClosed()
	}
}

func (a *ApprovalWindow) decide(call func(id string) error) func() {
	return func() {
		a.deciding = true
		a.allow.Disable()
		a.deny.Disable()
		if err := call(a.offer.ID); err != nil {
			a.deciding = false
			a.deny.Enable()
			if a.stopHold == nil {
				a.allow.Enable()
			}
			dialog.ShowError(fmt.Errorf("the pairing request could not be answered: %w", err), a.win)
			return
		}
		a.win.Close()
	}
}

// relayName names the browser profile that relayed an offer.
func relayName(o Offer) string {
	browser := untrusted(o.Browser, 32)
	if browser == "" {
		browser = "an unknown browser"
	}
	if p := untrusted(o.Profile, 32); p != "" {
		return browser + ", profile “" + p + "”"
	}
	return browser + ", a profile without a label"
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
	after   afterFunc
}

// NewApprovals returns an empty set of approval windows.
func NewApprovals(app fyne.App, c Companion) *Approvals {
	return &Approvals{app: app, c: c, open: map[string]*ApprovalWindow{}, after: realAfter}
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

// Show opens the window for o, or raises it if it is already open, and
// tells the companion the offer is on screen until the window closes.
func (a *Approvals) Show(o Offer) *ApprovalWindow {
	w, ok := a.open[o.ID]
	if !ok {
		w = NewApprovalWindow(a.app, a.c, o)
		w.after = a.after
		a.open[o.ID] = w
		w.onClosed = func() {
			delete(a.open, o.ID)
			// A decided or expired offer is gone already; that is no error.
			a.c.ShowingOffer(o.ID, false)
		}
		// An offer that is gone already gets its window closed by the next
		// State, which no longer lists it.
		a.c.ShowingOffer(o.ID, true)
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
