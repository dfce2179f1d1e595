package ui

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
)

// TestImportDirection keeps ui free of the companion and app packages: app
// adapts the companion to ui's interface, never the other way round.
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/reinshq/reins/companion", "github.com/reinshq/reins/app", "github.com/reinshq/reins/cmd"} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("ui depends on %s", p)
			}
		}
	}
}

func TestUntrusted(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Acme", "Acme"},
		{"  Acme \n\t Copilot  ", "Acme Copilot"},
		{"pay\u202epal\u202c", "paypal"},
		{"zero\u200bwidth", "zerowidth"},
		{"bell\x07", "bell"},
		{strings.Repeat("a", 50), strings.Repeat("a", 39) + "…"},
		{"", ""},
	} {
		if got := untrusted(tc.in, 40); got != tc.want {
			t.Errorf("untrusted(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatting(t *testing.T) {
	now := time.Date(2025, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ got, want string }{
		{lastSeen(true, time.Time{}, now), "connected"},
		{lastSeen(false, time.Time{}, now), "never connected"},
		{lastSeen(false, now.Add(-time.Hour), now), "last seen 11:00:00"},
		{lastSeen(false, now.Add(-48*time.Hour), now), "last seen Nov 30 12:00"},
		{clock(now.AddDate(-1, 0, 0), now), "Dec 2 2024 12:00"},
		{duration(300 * time.Microsecond), "<1 ms"},
		{duration(42 * time.Millisecond), "42 ms"},
		{duration(1500 * time.Millisecond), "1.5 s"},
		{duration(90 * time.Second), "1m30s"},
		{transportName("sse"), "SSE + HTTP"},
		{transportName("websocket"), "WebSocket"},
		{plural(0, "tab"), "0 tabs"},
		{plural(1, "tab"), "1 tab"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestFollowCoalescesAndStops feeds a burst of States and checks that they
// apply in order ending with the last, that Stop cancels the subscription and
// that an apply already queued when Stop is called does nothing.
func TestFollowCoalescesAndStops(t *testing.T) {
	test.NewTempApp(t)
	fc := newFake(State{})
	loop := newUILoop()
	var seen []int
	stop := follow(fc, func(s State) {
		seen = append(seen, s.Port)
		loop.applied(s)
	}, loop.do)
	for i := 1; i <= 50; i++ {
		fc.publish(func(s *State) { s.Port = i })
	}
	loop.waitFor(t, func(s State) bool { return s.Port == 50 })
	if !slices.IsSorted(seen) || len(seen) > 51 {
		t.Errorf("States applied out of order or repeated: %v", seen)
	}

	fc.publish(func(s *State) { s.Port = 60 })
	var queued func()
	select {
	case queued = <-loop.q:
	case <-time.After(5 * time.Second):
		t.Fatal("no apply queued for a new State")
	}
	stop()
	stop() // idempotent
	queued()
	if slices.Contains(seen, 60) {
		t.Error("a State was applied after Stop")
	}
	fc.mu.Lock()
	subs := len(fc.subs)
	fc.mu.Unlock()
	if subs != 0 {
		t.Error("Stop did not cancel the subscription")
	}
}

func TestFollowEndsWithStream(t *testing.T) {
	test.NewTempApp(t)
	fc := newFake(State{})
	loop := newUILoop()
	stop := follow(fc, loop.applied, loop.do)
	loop.waitFor(t, anyState)
	fc.mu.Lock()
	for ch := range fc.subs {
		close(ch) // the companion shuts down
		delete(fc.subs, ch)
	}
	fc.mu.Unlock()
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("stop hung after the stream ended")
	}
}

func TestErrorWindow(t *testing.T) {
	app := newTrayApp(t)
	dismissed := 0
	w := NewErrorWindow(app, "Port 47100 is taken", "Another program listens on port 47100.", "Start Reins with --port N.", func() { dismissed++ })
	w.Show()

	var texts []string
	for _, l := range allLabels(w.Content()) {
		texts = append(texts, l.Text)
	}
	for _, want := range []string{"Port 47100 is taken", "Another program listens on port 47100.", "What to do", "Start Reins with --port N."} {
		if !slices.Contains(texts, want) {
			t.Errorf("error window lacks %q; has %q", want, texts)
		}
	}
	if !strings.Contains(w.Title(), "Port 47100 is taken") {
		t.Errorf("title %q", w.Title())
	}
	test.Tap(findButtons(w.Content(), "Close")[0])
	if dismissed != 1 {
		t.Errorf("Close called dismiss %d times, want 1", dismissed)
	}
	if !windowOpen(w) {
		t.Error("Close closed the window itself; dismiss decides")
	}

	// Without dismiss, Close closes the window.
	plain := NewErrorWindow(app, "Keychain", "No keychain.", "", nil)
	plain.Show()
	test.Tap(findButtons(plain.Content(), "Close")[0])
	if windowOpen(plain) {
		t.Error("Close did not close the window")
	}
}
