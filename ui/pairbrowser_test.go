package ui

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// findButton finds a button by its label in a window's content.
func findButton(t *testing.T, o fyne.CanvasObject, label string) *widget.Button {
	t.Helper()
	var found *widget.Button
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == label {
			found = b
		}
		if c, ok := o.(*fyne.Container); ok {
			for _, x := range c.Objects {
				walk(x)
			}
		}
	}
	walk(o)
	if found == nil {
		t.Fatalf("no %q button", label)
	}
	return found
}

// The tray's "Pair a browser…" opens a window with a fresh code and when it
// expires; "New code" replaces it, and a failure says why.
func TestPairBrowserWindow(t *testing.T) {
	app := newTrayApp(t)
	f := newFake(State{})
	tr := NewTray(app, f, nil, TrayActions{})
	tr.Update(State{})
	item(t, tr.Menu(), "Pair a browser…").Action()

	var w fyne.Window
	for _, x := range app.Driver().AllWindows() {
		if x.Title() == "Reins — Pair a browser" {
			if w != nil {
				t.Fatal("two pairing windows")
			}
			w = x
		}
	}
	if w == nil {
		t.Fatal("no pairing window")
	}
	text := strings.Join(labelsIn(w.Content()), "\n")
	if !strings.Contains(text, "ABCDE-FGH01") || !regexp.MustCompile(`Valid until \d\d:\d\d:\d\d \(5 minutes\), for one browser`).MatchString(text) {
		t.Fatalf("window says:\n%s", text)
	}
	test.Tap(findButton(t, w.Content(), "New code"))
	if text := strings.Join(labelsIn(w.Content()), "\n"); !strings.Contains(text, "ABCDE-FGH02") {
		t.Fatalf("after New code:\n%s", text)
	}
	if n := strings.Count(strings.Join(f.Calls(), ","), "PairingCode()"); n != 2 {
		t.Fatalf("%d codes asked for, want 2", n)
	}

	f.fail = true
	test.Tap(findButton(t, w.Content(), "New code"))
	if text := strings.Join(labelsIn(w.Content()), "\n"); !strings.Contains(text, "No code: fake failure") || strings.Contains(text, "ABCDE") {
		t.Fatalf("after a failure:\n%s", text)
	}
	test.Tap(findButton(t, w.Content(), "Close"))
	if slices.Contains(app.Driver().AllWindows(), w) {
		t.Fatal("Close left the window open")
	}
}

func TestUntilText(t *testing.T) {
	for d, want := range map[time.Duration]string{5 * time.Minute: "5 minutes", 299 * time.Second: "5 minutes", 45 * time.Second: "45 seconds", 0: "0 seconds"} {
		if got := untilText(d); got != want {
			t.Errorf("untilText(%s) = %q, want %q", d, got, want)
		}
	}
}

// labelsIn lists the visible labels' texts.
func labelsIn(o fyne.CanvasObject) []string {
	var out []string
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if !o.Visible() {
			return
		}
		if l, ok := o.(*widget.Label); ok {
			out = append(out, l.Text)
		}
		if c, ok := o.(*fyne.Container); ok {
			for _, x := range c.Objects {
				walk(x)
			}
		}
	}
	walk(o)
	return out
}
