package app

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/wire"
)

// offerFrom sends a pair.offer from a fake extension and waits until the
// companion has parked it.
func offerFrom(t *testing.T, r *running, x *hubtest.Ext, origin string, cfg map[string]any, brand string) pairing.Offer {
	t.Helper()
	changes, stop := r.c.Changes()
	defer stop()
	raw, _ := json.Marshal(cfg)
	b, _ := json.Marshal(map[string]string{"name": brand})
	if err := x.Send(wire.EventPairOffer, wire.PairOffer{Config: raw, Brand: b, Origin: origin}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		for _, o := range r.c.PendingOffers() {
			if o.Origin == origin {
				return o
			}
		}
		select {
		case <-changes:
		case <-deadline:
			t.Fatal("the offer was not parked")
		}
	}
}

func TestPairAndBackendsCommands(t *testing.T) {
	r := startCompanion(t)
	be := operatortest.New("backend-secret", "")
	defer be.Close()
	x, err := hubtest.Dial(testCtx(t), "ws://127.0.0.1:"+strconv.Itoa(r.port)+"/", wire.Hello{Version: 3, InstanceID: "i", BrowserSessionID: "s"}, hubtest.Options{DataDir: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()

	code, out, _ := run(t, nil, "pair", "list", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "no pairing offers") {
		t.Fatalf("empty list: %d %q", code, out)
	}

	o := offerFrom(t, r, x, "https://crm.example", map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "backend-secret"}, "Example CRM")
	code, out, errOut := run(t, nil, "pair", "list", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, o.ID) || !strings.Contains(out, "https://crm.example") || !strings.Contains(out, "Example CRM") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	if strings.Contains(out, "backend-secret") {
		t.Fatal("pair list printed the offer's token")
	}
	select {
	case <-be.Connected():
		t.Fatal("the backend was contacted before approval")
	default:
	}

	code, out, errOut = run(t, nil, "pair", "approve", o.ID, "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("approve: %d %q %q", code, out, errOut)
	}
	if _, err := be.WaitConnected(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	id, err := be.Send("update_plan", map[string]any{"domains": []string{"crm.example"}, "approach": "read"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := be.Await(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Content(); len(c) != 1 || c[0]["text"] != "update_plan for Example CRM" {
		t.Fatalf("command result %+v", res)
	}

	backends := r.c.Backends()
	if len(backends) != 1 {
		t.Fatalf("%d backends", len(backends))
	}
	code, out, _ = run(t, nil, "backends", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, backends[0].ID) || !strings.Contains(out, "connected") {
		t.Fatalf("backends: %d %q", code, out)
	}
	if _, err := r.tokens.Backend(backends[0].ID); err != nil {
		t.Fatalf("the approved token is not in the store: %v", err)
	}
	code, out, _ = run(t, nil, "backends", "forget", backends[0].ID, "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "forgot") {
		t.Fatalf("forget: %d %q", code, out)
	}
	if _, err := r.tokens.Backend(backends[0].ID); err == nil {
		t.Fatal("the forgotten backend's token is still in the store")
	}
	code, _, errOut = run(t, nil, "backends", "forget", backends[0].ID, "--data-dir", r.dir)
	if code == 0 || !strings.Contains(errOut, "no such backend") {
		t.Fatalf("second forget: %d %q", code, errOut)
	}

	o2 := offerFrom(t, r, x, "https://other.example", map[string]any{"transport": "sse-http", "serverUrl": be.URL(), "token": "t2"}, "Other")
	code, _, _ = run(t, nil, "pair", "deny", o2.ID, "--data-dir", r.dir)
	if code != 0 || len(r.c.PendingOffers()) != 0 {
		t.Fatalf("deny: %d, %d offers left", code, len(r.c.PendingOffers()))
	}
	code, _, errOut = run(t, nil, "pair", "approve", o2.ID, "--data-dir", r.dir)
	if code == 0 || !strings.Contains(errOut, "no such pairing offer") {
		t.Fatalf("approving a denied offer: %d %q", code, errOut)
	}
}

func TestPairNeedsARunningCompanion(t *testing.T) {
	code, _, errOut := run(t, nil, "pair", "list", "--data-dir", dataDir(t))
	if code == 0 || !strings.Contains(errOut, "start Reins") {
		t.Fatalf("%d %q", code, errOut)
	}
	code, _, errOut = run(t, nil, "pair", "frobnicate", "--data-dir", dataDir(t))
	if code == 0 || !strings.Contains(errOut, "usage") {
		t.Fatalf("%d %q", code, errOut)
	}
}

// Which arguments are a browser's launch is nativemsg.LaunchedByBrowser's
// table; here, the command line acts on it.
func TestBrowsersStartTheNativeHost(t *testing.T) {
	// Started by Chromium, reins answers a hello over native messaging.
	var in bytes.Buffer
	frame := []byte(`{"type":"hello"}`)
	binary.Write(&in, binary.LittleEndian, uint32(len(frame)))
	in.Write(frame)
	var out, errOut bytes.Buffer
	code := Main(Env{Args: []string{"reins", "chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/", "--data-dir", dataDir(t)},
		Stdin: &in, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }})
	if code != 0 || out.Len() < 4 || !strings.Contains(out.String(), `"hello"`) || !strings.Contains(out.String(), `"port"`) {
		t.Fatalf("exit %d, out %q, err %q", code, out.String(), errOut.String())
	}
}
