package companion_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

// startOn runs a companion on a free port with dir as its data dir.
func startOn(t *testing.T, dir string) (*companion.Companion, int) {
	t.Helper()
	return companiontest.Start(t, companion.Config{DataDir: dir, NoAdmin: true})
}

// waitBrowsers waits until the companion has n browsers connected.
func waitBrowsers(t *testing.T, c *companion.Companion, n int) []hub.BrowserInfo {
	t.Helper()
	changes, stop := c.Changes()
	defer stop()
	deadline := time.After(10 * time.Second)
	for {
		if bs := c.Hub().Browsers(); len(bs) == n {
			return bs
		}
		select {
		case <-changes:
		case <-deadline:
			t.Fatalf("timed out waiting for %d browsers; have %+v", n, c.Hub().Browsers())
		}
	}
}

func dialExt(t testing.TB, dir string, port int, instance string) *hubtest.Ext {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x, err := hubtest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/", wire.Hello{
		Version: 3, Browser: "Chrome", BrowserEngine: wire.EngineChromium, Profile: "Work", InstanceID: instance, BrowserSessionID: "s1",
	}, hubtest.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Kill)
	return x
}

// The person blocks a connected browser profile: it is closed with the
// refused status at once, refused on reconnect and after a restart of the
// companion, and admitted again once unblocked.
func TestBlockedBrowserStaysOutUntilUnblocked(t *testing.T) {
	dir := t.TempDir()
	c, port := startOn(t, dir)
	x := dialExt(t, dir, port, "profile-1")
	bs := waitBrowsers(t, c, 1)

	if err := c.BlockBrowser("b404"); err == nil {
		t.Fatal("blocking a browser that is not connected succeeded")
	}
	if err := c.BlockBrowser(bs[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := x.CloseStatus(); got != hub.StatusRefused {
		t.Fatalf("the blocked browser was closed with %v (%v), want %v", got, x.Err(), hub.StatusRefused)
	}
	waitBrowsers(t, c, 0)
	blocked := c.BlockedBrowsers()
	if len(blocked) != 1 || blocked[0].InstanceID != "profile-1" || blocked[0].Name != bs[0].Name || blocked[0].Since.IsZero() {
		t.Fatalf("blocked list %+v", blocked)
	}
	if got := dialExt(t, dir, port, "profile-1").CloseStatus(); got != hub.StatusRefused {
		t.Fatalf("the blocked profile reconnecting: close status %v, want %v", got, hub.StatusRefused)
	}
	// Another profile of the same browser is not affected.
	dialExt(t, dir, port, "profile-2")
	waitBrowsers(t, c, 1)

	// Across a restart, from settings.json.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	again, port2 := startOn(t, dir)
	if got := dialExt(t, dir, port2, "profile-1").CloseStatus(); got != hub.StatusRefused {
		t.Fatalf("after a restart the blocked profile got close status %v, want %v", got, hub.StatusRefused)
	}
	if err := again.UnblockBrowser("no-such-profile"); err == nil {
		t.Fatal("unblocking an unknown profile succeeded")
	}
	if err := again.UnblockBrowser("profile-1"); err != nil {
		t.Fatal(err)
	}
	if n := len(again.BlockedBrowsers()); n != 0 {
		t.Fatalf("%d blocked after unblocking", n)
	}
	dialExt(t, dir, port2, "profile-1")
	waitBrowsers(t, again, 1)
}
