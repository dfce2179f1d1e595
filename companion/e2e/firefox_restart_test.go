package e2e

import (
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/wire"
)

// TestFirefoxBackgroundRestart lets Firefox stop the background script the
// way it does on a real profile (here after 4 s idle instead of 30 s; the
// WebSocket pings do not count as activity) and checks that the keep-alive
// alarm brings it back: the extension reconnects with the same instanceId
// and browserSessionId, so its tabs keep their public ids.
func TestFirefoxBackgroundRestart(t *testing.T) {
	ctx := within(t, harness.FirefoxHelloTimeout+3*time.Minute)
	r := startReins(ctx, t)
	w, err := r.Client.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ff, err := harness.StartFirefox(ctx, r.DataDir, "extensions.background.idle.timeout=4000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("--- reins output (tail):\n" + harness.Tail(r.Output(), 30))
			t.Log("--- web-ext/firefox output (tail):\n" + harness.Tail(ff.Output(), 30))
		}
		ff.Close()
	})
	first, err := harness.WaitBrowser(ctx, w, wire.EngineFirefox, ff.Exited())
	if err != nil {
		t.Fatalf("firefox never said hello: %v", err)
	}
	// The idle timer stops the background script and its socket with it.
	if _, err := w.Until(ctx, func(snap admin.Snapshot) bool { return len(snap.Browsers) == 0 }); err != nil {
		t.Fatalf("the background script was never stopped: %v", err)
	}
	gone := time.Now()
	second, err := harness.WaitBrowser(ctx, w, wire.EngineFirefox, ff.Exited())
	if err != nil {
		t.Fatalf("the extension never came back: %v", err)
	}
	helloAt := time.Now()
	back := helloAt.Sub(gone)
	// The script that said hello is a new one: its start line came after
	// the old one stopped. From that start to the hello is the reconnect.
	started, err := ff.StartedAfter(ctx, gone)
	if err != nil {
		t.Fatalf("the background script said hello without starting again: %v", err)
	}
	t.Logf("background stopped; the alarm brought it back %s later, and it said hello %s after starting",
		started.Sub(gone).Round(time.Millisecond), helloAt.Sub(started).Round(time.Millisecond))
	// The alarm fires every 30 s.
	if back > 40*time.Second {
		t.Errorf("the extension took %s to come back", back)
	}
	if second.Hello.InstanceID != first.Hello.InstanceID || second.Hello.BrowserSessionID != first.Hello.BrowserSessionID {
		t.Fatalf("ids changed across the restart: %+v then %+v", first.Hello, second.Hello)
	}
}
