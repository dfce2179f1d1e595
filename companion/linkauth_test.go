package companion_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

// attacker is a local process that dials the extension socket and plays
// an extension as far as it can.
type attacker struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialAttacker(t *testing.T, port int, origin string) *attacker {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("origin %q: %v", origin, err)
	}
	c.SetReadLimit(wire.MaxFrameBytes)
	t.Cleanup(func() { c.CloseNow() })
	return &attacker{t: t, conn: c}
}

func (a *attacker) send(event string, params any) {
	raw, _ := json.Marshal(params)
	data, _ := json.Marshal(wire.Evt{Event: event, Params: raw})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The companion may already have closed: what it does is the test.
	_ = a.conn.Write(ctx, websocket.MessageText, data)
}

// read returns the next frame, or nil and the error once the socket is
// closed.
func (a *attacker) readErr() (*wire.Frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, data, err := a.conn.Read(ctx)
	if err != nil {
		return nil, err
	}
	var f wire.Frame
	json.Unmarshal(data, &f)
	return &f, nil
}

func (a *attacker) read() *wire.Frame {
	f, _ := a.readErr()
	return f
}

// outcome reads until the close and returns its status, reason, and every
// frame but the companion's challenge.
func (a *attacker) outcome() (websocket.StatusCode, string, []wire.Frame) {
	var got []wire.Frame
	for {
		f, err := a.readErr()
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason, got
			}
			return -1, err.Error(), got
		}
		if f.Event != wire.EventAuth {
			got = append(got, *f)
		}
	}
}

func nonce() []byte {
	n := make([]byte, linkauth.NonceSize)
	rand.Read(n)
	return n
}

func attackerHello(auth *wire.HelloAuth) wire.Hello {
	return wire.Hello{Version: 3, ExtensionVersion: "0.1.0", Browser: "Chrome", BrowserEngine: wire.EngineChromium,
		InstanceID: "victim-instance", BrowserSessionID: "victim-session", Auth: auth}
}

var offer = func() wire.PairOffer {
	raw, _ := json.Marshal(map[string]any{"transport": "websocket", "serverUrl": "ws://127.0.0.1:9/attacker", "token": "attacker-token"})
	return wire.PairOffer{Config: raw, Brand: json.RawMessage(`{"name":"Claude"}`), Origin: "https://claude.ai"}
}()

// H-2: a WebSocket that does not prove the link key gets nothing: it is
// closed with 4001, never joins the graph, cannot park a pair offer and
// receives no request, whatever Origin it claims.
func TestUnprovenExtensionsGetNothing(t *testing.T) {
	dir := t.TempDir()
	c, port := startOn(t, dir)
	key, err := linkauth.Load(dir)
	if err != nil {
		t.Fatal(err)
	}

	// A real extension's handshake, recorded: its nonce and its proof.
	rec := dialAttacker(t, port, "")
	real := linkauth.NewKeyClient(key, port)
	v, mode, ne := real.Hello()
	rec.send(wire.EventHello, attackerHello(&wire.HelloAuth{V: v, Mode: mode, Nonce: ne}))
	var ch wire.AuthChallenge
	json.Unmarshal(rec.read().Params, &ch)
	recordedProof, err := real.Answer(ch.Nonce, ch.Proof)
	if err != nil {
		t.Fatal(err)
	}
	rec.send(wire.EventAuth, wire.AuthProof{Proof: recordedProof})
	waitBrowsers(t, c, 1)
	rec.conn.Close(websocket.StatusNormalClosure, "")
	waitBrowsers(t, c, 0)

	wrongKey := linkauth.NewKey()
	for _, tc := range []struct {
		name   string
		origin string
		play   func(a *attacker)
	}{
		{"no Origin, a plain v3 hello", "", func(a *attacker) {
			a.send(wire.EventHello, attackerHello(nil))
		}},
		{"a forged moz-extension Origin", "moz-extension://0c3c6bd5-3d9a-4f3e-9d0e-6a1f2b3c4d5e", func(a *attacker) {
			a.send(wire.EventHello, attackerHello(nil))
		}},
		{"the Reins extension's own Origin", "chrome-extension://" + companion.ExtensionID, func(a *attacker) {
			a.send(wire.EventHello, attackerHello(nil))
		}},
		{"a wrong proof", "", func(a *attacker) {
			a.send(wire.EventHello, attackerHello(&wire.HelloAuth{V: 1, Mode: linkauth.ModeKey, Nonce: nonce()}))
			a.read()
			a.send(wire.EventAuth, wire.AuthProof{Proof: nonce()})
		}},
		{"a proof made with another key", "", func(a *attacker) {
			cl := linkauth.NewKeyClient(wrongKey, port)
			v, mode, ne := cl.Hello()
			a.send(wire.EventHello, attackerHello(&wire.HelloAuth{V: v, Mode: mode, Nonce: ne}))
			a.read()
			// It cannot check the companion; it proves what it has.
			proof, _ := linkauth.NewKeyClient(wrongKey, port).Answer(nonce(), nonce())
			a.send(wire.EventAuth, wire.AuthProof{Proof: proof})
		}},
		{"a replayed proof", "", func(a *attacker) {
			a.send(wire.EventHello, attackerHello(&wire.HelloAuth{V: v, Mode: mode, Nonce: ne}))
			a.read()
			a.send(wire.EventAuth, wire.AuthProof{Proof: recordedProof})
		}},
		{"the companion's proof reflected", "", func(a *attacker) {
			a.send(wire.EventHello, attackerHello(&wire.HelloAuth{V: 1, Mode: linkauth.ModeKey, Nonce: nonce()}))
			var ch wire.AuthChallenge
			if f := a.read(); f != nil {
				json.Unmarshal(f.Params, &ch)
			}
			a.send(wire.EventAuth, wire.AuthProof{Proof: ch.Proof})
		}},
		{"no proof, straight to business", "", func(a *attacker) {
			a.send(wire.EventHello, attackerHello(&wire.HelloAuth{V: 1, Mode: linkauth.ModeKey, Nonce: nonce()}))
		}},
		{"a pairing code that was never issued", "", func(a *attacker) {
			a.send(wire.EventHello, attackerHello(&wire.HelloAuth{V: 1, Mode: linkauth.ModeCode, Nonce: nonce()}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := dialAttacker(t, port, tc.origin)
			tc.play(a)
			// What it would do as a browser: claim tabs, park an offer.
			a.send(wire.EventTabs, []wire.TabInfo{{ID: 1, URL: "https://bank.example/", Shared: true}})
			a.send(wire.EventPairOffer, offer)
			code, reason, frames := a.outcome()
			if code != hub.StatusUnauthorized {
				t.Fatalf("closed with %v %q, want %v", code, reason, hub.StatusUnauthorized)
			}
			for _, f := range frames {
				if f.Method != "" || f.Event != "" {
					t.Fatalf("the companion sent it %+v", f)
				}
			}
			if bs := c.Hub().Browsers(); len(bs) != 0 {
				t.Fatalf("it joined the graph: %+v", bs)
			}
			if tabs := c.Hub().Tabs(); len(tabs) != 0 {
				t.Fatalf("its tabs are listed: %+v", tabs)
			}
			if offers := c.PendingOffers(); len(offers) != 0 {
				t.Fatalf("it parked an offer: %+v", offers)
			}
			t.Logf("closed with %d %q", code, reason)
		})
	}

	// The same offer from the real extension does park: the refusals above
	// were the handshake's doing.
	x, err := hubtest.Dial(context.Background(), "ws://127.0.0.1:"+strconv.Itoa(port)+"/", attackerHello(nil), hubtest.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()
	waitBrowsers(t, c, 1)
	x.Send(wire.EventPairOffer, offer)
	changes, stop := c.Changes()
	defer stop()
	deadline := time.After(10 * time.Second)
	for len(c.PendingOffers()) == 0 {
		select {
		case <-changes:
		case <-deadline:
			t.Fatal("the real extension's offer never parked")
		}
	}
}

// A browser without the native host pairs with a code from the app, then
// connects with the key it was given.
func TestPairingCodeThenKey(t *testing.T) {
	dir := t.TempDir()
	c, port := startOn(t, dir)
	url := "ws://127.0.0.1:" + strconv.Itoa(port) + "/"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hello := wire.Hello{Version: 3, Browser: "Chrome", InstanceID: "store-install", BrowserSessionID: "s"}

	code, expires := c.PairingCode()
	if time.Until(expires) < linkauth.CodeTTL-time.Minute {
		t.Fatalf("the code expires at %v", expires)
	}
	wrong := "0000000000"
	if strings.ReplaceAll(code, "-", "") == wrong {
		wrong = "1111111111"
	}
	if _, err := hubtest.Dial(ctx, url, hello, hubtest.Options{Code: wrong}); !errors.Is(err, linkauth.ErrBadProof) {
		t.Fatalf("a wrong code: %v", err)
	}
	// The wrong attempt burned the code.
	if x, err := hubtest.Dial(ctx, url, hello, hubtest.Options{Code: code}); err == nil {
		x.Kill()
		t.Fatal("a burned code paired")
	}

	code, _ = c.PairingCode()
	x, err := hubtest.Dial(ctx, url, hello, hubtest.Options{Code: code})
	if err != nil {
		t.Fatalf("pairing with the code: %v", err)
	}
	waitBrowsers(t, c, 1)
	want, _ := linkauth.Load(dir)
	if x.LinkKey != want {
		t.Fatal("the extension did not receive the link key")
	}
	x.Kill()
	waitBrowsers(t, c, 0)
	// Single use.
	if _, err := hubtest.Dial(ctx, url, hello, hubtest.Options{Code: code}); err == nil {
		t.Fatal("the code paired twice")
	}
	// From now on the key.
	y, err := hubtest.Dial(ctx, url, hello, hubtest.Options{Key: x.LinkKey})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Kill()
	waitBrowsers(t, c, 1)
}

// The link key survives a restart: an extension that holds it connects to
// the restarted companion without pairing again.
func TestLinkKeyPersists(t *testing.T) {
	dir := t.TempDir()
	_, port := startOn(t, dir)
	key, err := linkauth.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	c2, port2 := startOn(t, dir)
	if port2 == port {
		t.Fatal("same port")
	}
	x, err := hubtest.Dial(context.Background(), "ws://127.0.0.1:"+strconv.Itoa(port2)+"/", attackerHello(nil), hubtest.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()
	waitBrowsers(t, c2, 1)
}
