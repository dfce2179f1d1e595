package hub

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

// fuzzConn plays the extension's side of the socket from fuzzed frames.
// With realProof it answers the companion's challenge with the proof the
// key makes (for the nonce its hello carried), so the fuzzer also explores
// what follows a successful handshake.
type fuzzConn struct {
	frames    [][]byte
	realProof bool
	key       linkauth.Key
	port      int
	client    *linkauth.Client // set when the hello was given its nonce
	read      int

	written [][]byte
	closed  websocket.StatusCode
	reason  string
}

func (c *fuzzConn) Read(context.Context) (websocket.MessageType, []byte, error) {
	if len(c.frames) == 0 {
		return 0, nil, io.EOF
	}
	f := c.frames[0]
	c.frames = c.frames[1:]
	c.read++
	if c.read == 1 && c.realProof {
		f = c.withNonce(f)
	}
	return websocket.MessageText, f, nil
}

// withNonce gives a hello whose auth is an object the nonce of a real key
// client, keeping every other fuzzed field, so its proof can be made.
func (c *fuzzConn) withNonce(f []byte) []byte {
	var frame map[string]any
	if json.Unmarshal(f, &frame) != nil {
		return f
	}
	params, _ := frame["params"].(map[string]any)
	auth, _ := params["auth"].(map[string]any)
	if auth == nil {
		return f
	}
	c.client = linkauth.NewKeyClient(c.key, c.port)
	_, _, ne := c.client.Hello()
	auth["nonce"] = ne
	out, err := json.Marshal(frame)
	if err != nil {
		return f
	}
	return out
}

func (c *fuzzConn) Write(_ context.Context, _ websocket.MessageType, data []byte) error {
	c.written = append(c.written, append([]byte(nil), data...))
	if c.client == nil {
		return nil
	}
	var f wire.Frame
	var ch wire.AuthChallenge
	if json.Unmarshal(data, &f) != nil || f.Event != wire.EventAuth || json.Unmarshal(f.Params, &ch) != nil {
		return nil
	}
	proof, err := c.client.Answer(ch.Nonce, ch.Proof)
	if err != nil {
		return nil
	}
	raw, _ := json.Marshal(wire.AuthProof{Proof: proof})
	frame, _ := json.Marshal(wire.Evt{Event: wire.EventAuth, Params: raw})
	c.frames = append([][]byte{frame}, c.frames...)
	return nil
}

func (c *fuzzConn) Close(code websocket.StatusCode, reason string) error {
	c.closed, c.reason = code, reason
	return nil
}

func (c *fuzzConn) CloseNow() error { c.closed = -1; return nil }

// FuzzHandshake feeds the hello and link-proof frames, as the companion
// reads them, to the handshake. Whatever arrives, it must not panic, must
// only attach an extension that proved the key, must say nothing but the
// challenge (and, for a pairing code, the key) before that, and must close
// every socket it refuses with a valid close reason.
func FuzzHandshake(f *testing.F) {
	f.Fuzz(func(t *testing.T, hello, proof []byte, realProof bool) {
		key, _ := linkauth.KeyFromBytes([]byte(strings.Repeat("k", linkauth.KeySize)))
		h := New(Options{
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Auth:   linkauth.NewServer(key, linkauth.NewCodes(nil)),
		})
		defer h.Close()
		conn := &fuzzConn{frames: [][]byte{hello, proof}, realProof: realProof, key: key, port: 47100}
		released := 0
		got, ok := h.handshake(context.Background(), conn, peer{port: 47100}, func() { released++ })
		if released != 1 {
			t.Fatalf("the unauthenticated slot was released %d times", released)
		}
		for i, w := range conn.written {
			var fr wire.Frame
			if err := json.Unmarshal(w, &fr); err != nil || fr.Method != "" || (fr.Event != wire.EventAuth && fr.Event != wire.EventAuthKey) || i > 1 {
				t.Fatalf("the companion sent %q during the handshake", w)
			}
		}
		if !ok {
			if conn.closed == 0 {
				t.Fatal("a refused socket was left open")
			}
			if len(conn.reason) > 123 || !utf8Valid(conn.reason) {
				t.Fatalf("close reason %q is not a valid WebSocket close reason", conn.reason)
			}
			return
		}
		if !realProof {
			t.Fatalf("attached without the key's proof: hello %q proof %q", hello, proof)
		}
		if got.Auth != nil {
			t.Fatal("the attached hello still carries its auth")
		}
		if conn.closed != 0 {
			t.Fatalf("an accepted socket was closed (%d %q)", conn.closed, conn.reason)
		}
	})
}

// The fuzz harness can reach an attached extension: with the key's proof,
// a well-formed hello gets through, so the invariants above are checked on
// both sides of the handshake.
func TestFuzzHarnessReachesSuccess(t *testing.T) {
	key, _ := linkauth.KeyFromBytes([]byte(strings.Repeat("k", linkauth.KeySize)))
	h := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Auth: linkauth.NewServer(key, nil)})
	defer h.Close()
	hello := `{"event":"hello","params":{"version":3,"instanceId":"i","auth":{"v":1,"mode":"key","nonce":""}}}`
	conn := &fuzzConn{frames: [][]byte{[]byte(hello), nil}, realProof: true, key: key, port: 47100}
	got, ok := h.handshake(context.Background(), conn, peer{port: 47100}, func() {})
	if !ok || got.InstanceID != "i" || got.Auth != nil {
		t.Fatalf("ok %v hello %+v closed %d %q", ok, got, conn.closed, conn.reason)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
