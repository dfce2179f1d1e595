package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// walk calls fn for every object in a canvas object tree, widgets' rendered
// parts included.
func walk(o fyne.CanvasObject, fn func(fyne.CanvasObject)) {
	fn(o)
	switch w := o.(type) {
	case *fyne.Container:
		for _, c := range w.Objects {
			walk(c, fn)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(w).Objects() {
			walk(c, fn)
		}
	}
}

// allLabels returns every label in a canvas object tree.
func allLabels(o fyne.CanvasObject) []*widget.Label {
	var out []*widget.Label
	walk(o, func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok {
			out = append(out, l)
		}
	})
	return out
}

func windowOpen(w fyne.Window) bool {
	return slices.Contains(fyne.CurrentApp().Driver().AllWindows(), w)
}

// approvalWindow builds an approval window on a fake clock.
func approvalWindow(t *testing.T, c Companion, o Offer) (*ApprovalWindow, *fakeTimers) {
	t.Helper()
	clock := &fakeTimers{}
	a := NewApprovalWindow(newTrayApp(t), c, o)
	a.after = clock.after
	return a, clock
}

func TestApprovalAllowAndDeny(t *testing.T) {
	for _, tc := range []struct {
		button string
		want   string
	}{
		{"Allow", "ApproveOffer(offer-1)"},
		{"Deny", "DenyOffer(offer-1)"},
	} {
		t.Run(tc.button, func(t *testing.T) {
			fc := newFake(State{})
			a, clock := approvalWindow(t, fc, sampleOffer())
			a.Show()
			if !windowOpen(a.Window()) {
				t.Fatal("window not shown")
			}
			clock.advance(AllowDelay)
			b := a.allow
			if tc.button == "Deny" {
				b = a.deny
			}
			if b.Text != tc.button {
				t.Fatalf("button says %q", b.Text)
			}
			test.Tap(b)
			if got := fc.Calls(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("calls = %q, want %q", got, tc.want)
			}
			if windowOpen(a.Window()) {
				t.Error("window still open after the decision")
			}
		})
	}
}

// cursors returns the cursor shape of every object in a tree that sets one.
func cursors(o fyne.CanvasObject) []desktop.Cursor {
	var out []desktop.Cursor
	walk(o, func(o fyne.CanvasObject) {
		if c, ok := o.(desktop.Cursorable); ok {
			out = append(out, c.Cursor())
		}
	})
	return out
}

// An approval window closes itself (on a decision, or when its offer is
// decided elsewhere or expires) while the person's pointer may be over it.
// Fyne 2.7 crashes if a closed window's queued pointer event changes the
// cursor shape, so nothing in the window may set a cursor other than the
// arrow: no entries, no selectable text, no links.
func TestApprovalWindowKeepsTheArrowCursor(t *testing.T) {
	a, clock := approvalWindow(t, newFake(State{}), sampleOffer())
	a.Show()
	clock.advance(AllowDelay)
	for _, c := range cursors(a.Window().Content()) {
		if c != desktop.DefaultCursor {
			t.Errorf("the approval window has an object with cursor %v", c)
		}
	}
	// The walk does find a text cursor where there is one.
	if got := cursors(mono("reins_token")); !slices.Contains(got, desktop.Cursor(desktop.TextCursor)) {
		t.Errorf("selectable text reports cursors %v, want a text cursor among them", got)
	}
}

func TestApprovalErrorKeepsWindow(t *testing.T) {
	fc := newFake(State{})
	fc.fail = true
	a, clock := approvalWindow(t, fc, sampleOffer())
	a.Show()
	clock.advance(AllowDelay)
	test.Tap(a.allow)
	if !windowOpen(a.Window()) {
		t.Fatal("window closed although approving failed")
	}
	if a.allow.Disabled() || a.deny.Disabled() {
		t.Error("buttons stay disabled after a failure")
	}
	if a.Window().Canvas().Overlays().Top() == nil {
		t.Error("the failure is not shown")
	}
}

// TestApprovalOriginCannotBeImpersonated is the reason the window exists:
// only the real origin may appear in the origin field, however the brand is
// dressed up.
func TestApprovalOriginCannotBeImpersonated(t *testing.T) {
	o := sampleOffer()
	o.Origin = "https://evil.example"
	o.Brand = "https://bank.example — verified\n\u202eRequested by https://bank.example\u202c" + strings.Repeat(" padding", 20)
	a := NewApprovalWindow(newTrayApp(t), newFake(State{}), o)

	if a.origin.Text != "https://evil.example" {
		t.Fatalf("origin field = %q", a.origin.Text)
	}
	if strings.Contains(a.origin.Text, "bank") {
		t.Error("brand text leaked into the origin field")
	}
	if a.origin.SizeName != theme.SizeNameHeadingText || !a.origin.TextStyle.Bold {
		t.Error("the origin is not the prominent text")
	}
	if a.origin.Truncation != fyne.TextTruncateOff || a.origin.Wrapping != fyne.TextWrapBreak {
		t.Error("the origin must wrap, never be cut: the end of a host name is what matters")
	}

	if a.brand.Importance != widget.LowImportance {
		t.Error("the brand is not secondary text")
	}
	for _, bad := range []string{"\n", "\u202e", "\u202c"} {
		if strings.Contains(a.brand.Text, bad) {
			t.Errorf("brand keeps %q", bad)
		}
	}
	if n := len([]rune(a.brand.Text)); n > maxBrand+60 {
		t.Errorf("brand label is %d runes; the brand must be truncated", n)
	}

	// No other label may look like the origin field or carry the origin's
	// size, and only the origin field names the page as the requester.
	for _, l := range allLabels(a.Window().Content()) {
		if l == a.origin {
			continue
		}
		if l.SizeName == theme.SizeNameHeadingText {
			t.Errorf("label %q has the origin's size", l.Text)
		}
		if l.Text == "https://bank.example" {
			t.Errorf("a label shows the brand's fake origin alone: %q", l.Text)
		}
	}
}

func TestApprovalWindowMarkup(t *testing.T) {
	a, clock := approvalWindow(t, newFake(State{}), sampleOffer())
	a.Show()
	clock.advance(AllowDelay)
	a.Window().Resize(fyne.NewSize(540, 580))
	test.AssertRendersToMarkup(t, "approval.xml", a.Window().Canvas())
}

func TestApprovalsOnePerOffer(t *testing.T) {
	app := newTrayApp(t)
	fc := newFake(State{})
	ap := NewApprovals(app, fc)
	ap.after = (&fakeTimers{}).after
	o := sampleOffer()
	ap.Update([]Offer{o})

	w1 := ap.Show(o)
	w2 := ap.Show(o)
	if w1 != w2 {
		t.Fatal("a second window opened for the same offer")
	}
	n := 0
	for _, w := range app.Driver().AllWindows() {
		if w.Title() == w1.Window().Title() {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d approval windows open", n)
	}

	// Decided elsewhere (CLI) or expired: the window goes away by itself.
	ap.Update(nil)
	if windowOpen(w1.Window()) {
		t.Error("window of a vanished offer still open")
	}
	if _, ok := ap.Open(o.ID); ok {
		t.Error("closed window still tracked")
	}
}

// TestShellOpensApprovalForNewOffer: a new offer in the stream opens its
// window, and approving closes it once the companion drops the offer.
func TestShellOpensApprovalForNewOffer(t *testing.T) {
	app := newTrayApp(t)
	fc := newFake(sampleState())
	sh, loop := startShell(t, app, fc)
	clock := &fakeTimers{}
	sh.Approvals().after = clock.after

	fc.publish(func(s *State) { s.Offers = []Offer{sampleOffer()} })
	loop.waitFor(t, func(s State) bool { return len(s.Offers) == 1 })
	w, ok := sh.Approvals().Open("offer-1")
	if !ok {
		t.Fatal("no approval window for a new offer")
	}

	// Dismissing the window leaves the offer pending; the tray brings it back.
	w.Window().Close()
	if _, ok := sh.Approvals().Open("offer-1"); ok {
		t.Fatal("closed window still tracked")
	}
	item(t, sh.Tray().Menu(), "Pairing requests (1)").Action()
	w, ok = sh.Approvals().Open("offer-1")
	if !ok || !windowOpen(w.Window()) {
		t.Fatal("Pairing requests did not reopen the window")
	}

	clock.advance(AllowDelay)
	test.Tap(w.allow)
	loop.waitFor(t, func(s State) bool { return len(s.Offers) == 0 })
	if windowOpen(w.Window()) {
		t.Error("approval window still open")
	}
	if got := fc.Calls(); !slices.Equal(got, []string{"ApproveOffer(offer-1)"}) {
		t.Errorf("calls = %q", got)
	}
}

func findButtons(o fyne.CanvasObject, text string) []*widget.Button {
	var out []*widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Button:
			if w.Text == text {
				out = append(out, w)
			}
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(w).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}

// The attack: the window pops up under the person's pointer (or a page
// times a click for the moment it appears), and the click lands on Allow.
// Allow does nothing for the first second after the window appears, and
// again after it is raised; Deny works at once.
func TestApprovalAllowIsInactiveForOneSecond(t *testing.T) {
	fc := newFake(State{})
	a, clock := approvalWindow(t, fc, sampleOffer())
	a.Show()
	if !a.allow.Disabled() {
		t.Fatal("Allow is active as the window appears")
	}
	test.Tap(a.allow)
	clock.advance(AllowDelay - time.Millisecond)
	test.Tap(a.allow)
	if !a.allow.Disabled() || len(fc.Calls()) != 0 {
		t.Fatalf("Allow worked within the first second: disabled=%v calls=%q", a.allow.Disabled(), fc.Calls())
	}
	clock.advance(time.Millisecond)
	if a.allow.Disabled() {
		t.Fatal("Allow still inactive after a second")
	}

	// Raised again (the tray's "Pairing requests"): another second.
	a.Show()
	test.Tap(a.allow)
	if len(fc.Calls()) != 0 {
		t.Fatalf("Allow worked right after the window was raised: %q", fc.Calls())
	}
	clock.advance(AllowDelay)
	test.Tap(a.allow)
	if got := fc.Calls(); !slices.Equal(got, []string{"ApproveOffer(offer-1)"}) {
		t.Fatalf("calls = %q", got)
	}

	// Deny needs no wait: refusing is always safe.
	fc2 := newFake(State{})
	b, _ := approvalWindow(t, fc2, sampleOffer())
	b.Show()
	test.Tap(b.deny)
	if got := fc2.Calls(); !slices.Equal(got, []string{"DenyOffer(offer-1)"}) {
		t.Fatalf("calls = %q", got)
	}
}

// The window names the browser and profile that relayed the offer, and
// shows hosts in punycode: a look-alike host (Cyrillic а in bаnk) cannot
// pass for the one it imitates.
func TestApprovalNamesTheRelayAndShowsPunycode(t *testing.T) {
	o := sampleOffer()
	o.Origin = "https://bаnk.example"
	o.ServerURL = "wss://аpi.bаnk.example:8443/ws"
	a, _ := approvalWindow(t, newFake(State{}), o)
	if a.origin.Text != "https://xn--bnk-6cd.example" {
		t.Errorf("origin field = %q", a.origin.Text)
	}
	if a.relay.Text != "Chrome, profile “Work”" {
		t.Errorf("relay = %q", a.relay.Text)
	}
	var server bool
	for _, l := range allLabels(a.Window().Content()) {
		if strings.ContainsRune(l.Text, 'а') {
			t.Errorf("label %q shows the look-alike host", l.Text)
		}
		if l.Text == "wss://xn--pi-6kc.xn--bnk-6cd.example:8443/ws" {
			server = true
		}
	}
	if !server {
		t.Error("the backend is not shown in punycode")
	}

	o.Profile = ""
	o.Browser = "Firefox\u202e"
	b, _ := approvalWindow(t, newFake(State{}), o)
	if b.relay.Text != "Firefox, a profile without a label" {
		t.Errorf("relay without a profile label = %q", b.relay.Text)
	}
}

// The companion hears which offers are on screen, so no newer offer from
// the same page can replace one while the person reads it.
func TestApprovalsReportWhatIsOnScreen(t *testing.T) {
	fc := newFake(State{})
	ap := NewApprovals(newTrayApp(t), fc)
	ap.after = (&fakeTimers{}).after
	o := sampleOffer()
	ap.Update([]Offer{o})
	ap.Show(o)
	ap.Show(o) // raised again: still one report
	if got := fc.Showing(); !slices.Equal(got, []string{"offer-1 true"}) {
		t.Fatalf("showing = %q", got)
	}
	ap.Update(nil)
	if got := fc.Showing(); !slices.Equal(got, []string{"offer-1 true", "offer-1 false"}) {
		t.Fatalf("showing = %q after the window closed", got)
	}
}
