package companion_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

// startPairingCompanion runs a companion with a file token store on a
// random port, stopped when the test ends.
func startPairingCompanion(t *testing.T) (c *companion.Companion, port int, dir string) {
	t.Helper()
	dir = t.TempDir()
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	c, port = companion.StartForTest(t, companion.Config{DataDir: dir, Tokens: tm, NoAdmin: true}, nil)
	return c, port, dir
}

// The attack over a real socket: a browser floods the companion with pair
// offers, each of which would open a window in front of the person. At most
// pairing.MaxParked wait, and each names the browser profile that relayed it.
func TestOfferFloodIsBounded(t *testing.T) {
	c, port, dir := startPairingCompanion(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	x, err := hubtest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/",
		wire.Hello{Version: 3, InstanceID: "i", BrowserSessionID: "s", Browser: "Chrome", Profile: "Work"}, hubtest.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()
	raw, _ := json.Marshal(map[string]any{"transport": "websocket", "serverUrl": "wss://api.example/ws", "token": "t"})
	for i := range 300 {
		if err := x.Send(wire.EventPairOffer, wire.PairOffer{Config: raw, Origin: "https://page-" + strconv.Itoa(i) + ".example"}); err != nil {
			t.Fatal(err)
		}
	}
	// The browser's events are handled in order: once this tab shows, every
	// offer before it was handled.
	x.SendTabs([]wire.TabInfo{{ID: 1, URL: "https://after.example/"}})
	changes, stop := c.Changes()
	defer stop()
	for len(c.Hub().Tabs()) == 0 {
		select {
		case <-changes:
		case <-ctx.Done():
			t.Fatal("the tabs event never arrived")
		}
	}
	offers := c.PendingOffers()
	if len(offers) != pairing.MaxParked {
		t.Fatalf("%d offers parked, want %d", len(offers), pairing.MaxParked)
	}
	for _, o := range offers {
		if o.Browser != "Chrome" || o.Profile != "Work" || o.BrowserID == "" {
			t.Fatalf("offer %+v does not name its browser and profile", o)
		}
	}
}

// An approved backend's commands run through the real tool engine, and the
// tray's Pause stops them like any agent's.
func TestBackendCommandsObeyPause(t *testing.T) {
	c, port, dir := startPairingCompanion(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	x, err := hubtest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/", wire.Hello{Version: 3, InstanceID: "i", BrowserSessionID: "s"}, hubtest.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()
	be := operatortest.New("tok", "")
	defer be.Close()

	changes, stopChanges := c.Changes()
	defer stopChanges()
	raw, _ := json.Marshal(map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "tok"})
	x.Send(wire.EventPairOffer, wire.PairOffer{Config: raw, Brand: json.RawMessage(`{"name":"CRM"}`), Origin: "https://crm.example"})
	for len(c.PendingOffers()) == 0 {
		select {
		case <-changes:
		case <-ctx.Done():
			t.Fatal("offer never parked")
		}
	}
	if _, err := c.ApproveOffer(c.PendingOffers()[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := be.WaitConnected(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	plan := map[string]any{"domains": []string{"crm.example"}, "approach": []string{"look around"}}
	run := func() operatortest.Result {
		t.Helper()
		id, err := be.Send("update_plan", plan)
		if err != nil {
			t.Fatal(err)
		}
		r, err := be.Await(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(); r.Error != "" {
		t.Fatalf("before pause: %+v", r)
	}
	c.Pause()
	if r := run(); !strings.Contains(r.Error, "paused") {
		t.Fatalf("while paused: %+v", r)
	}
	c.Resume()
	if r := run(); r.Error != "" {
		t.Fatalf("after resume: %+v", r)
	}
}
