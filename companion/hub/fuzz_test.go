package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// scriptLink is an extension's side of an attached link that sends
// fuzzed frames: it holds them back until the companion's requests are out,
// so answers can name their ids, then ends the link.
type scriptLink struct {
	frames   [][]byte
	requests int // requests written so far
	want     int
	mu       sync.Mutex
	release  chan struct{}
	closed   chan struct{}
	once     sync.Once
}

func (s *scriptLink) ReadMessage() ([]byte, error) {
	select {
	case <-s.release:
	case <-s.closed:
		return nil, io.ErrClosedPipe
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.frames) == 0 {
		return nil, io.EOF
	}
	f := s.frames[0]
	s.frames = s.frames[1:]
	return f, nil
}

func (s *scriptLink) WriteMessage(_ context.Context, msg []byte) error {
	var f wire.Frame
	if json.Unmarshal(msg, &f) == nil && f.ID != nil {
		s.mu.Lock()
		s.requests++
		if s.requests == s.want {
			close(s.release)
		}
		s.mu.Unlock()
	}
	return nil
}

func (s *scriptLink) Close(error) error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// linkRequests are what the companion asks while the fuzzed frames arrive;
// their ids are 1, 2 and 3, which the seeds answer.
var linkRequests = []struct {
	method string
	params any
}{
	{wire.MethodTabsList, nil},
	{wire.MethodCDP, wire.CDPParams{TabID: 7, Method: "Runtime.evaluate", Params: json.RawMessage(`{"expression":"1"}`)}},
	{wire.MethodTabsCreate, wire.CreateParams{URL: "https://example.com/"}},
}

// FuzzLinkFrames feeds fuzzed frames (one a line) to an attached
// extension's link, as the companion reads them after the handshake:
// answers with odd ids, results and errors, events of every kind with odd
// params. Whatever arrives, nothing panics, each of the companion's
// requests gets exactly one answer (a result, or an error whose code is in
// the wire table), and the browser is gone once the link ends.
func FuzzLinkFrames(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"result":[{"id":7,"url":"https://a.example/","shared":true,"windowId":1}]}
{"id":2,"result":{"result":{"type":"number","value":1}}}
{"id":3,"result":{"id":8,"url":"https://example.com/","shared":true,"agent":true,"windowId":1}}`,
		`{"id":2,"error":"boom","code":"no_such_tab"}
{"id":1,"error":"odd","code":"not_a_code"}
{"id":3,"error":"","code":""}`,
		`{"id":-1,"result":1}
{"id":99999999999,"result":null}
{"id":1.5,"result":{}}
{"id":"2","result":{}}
{"id":null,"method":"tabs.list"}
{"id":3,"method":"x","result":1}`,
		`{"event":"tabs","params":[{"id":7,"url":"https://a.example/","shared":true},{"id":7,"url":"https://b.example/"},{"id":-3},{"id":0,"owner":"agent:x","agent":true}]}
{"event":"tabs","params":{"id":1}}
{"event":"tabs","params":null}
{"event":"tabs","params":[]}`,
		`{"event":"cdp.event","params":{"tabId":7,"method":"Page.loadEventFired","params":{"timestamp":1}}}
{"event":"cdp.event","params":{"tabId":"7"}}
{"event":"detached","params":{"tabId":7,"reason":"target_closed"}}
{"event":"detached","params":[1]}
{"event":"tools.policy","params":{"disabled":["x"],"haveCatalog":true}}
{"event":"tools.policy","params":"no"}
{"event":"pair.offer","params":{"origin":"https://x.example"}}
{"event":"hello","params":{"version":3}}
{"event":"ping"}
{"event":"something.new","params":{}}`,
		`not json
{"id":1,"result":1}`,
		`[1,2,3]`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		var frames [][]byte
		for _, line := range bytes.Split(script, []byte("\n")) {
			if len(frames) == 32 {
				break
			}
			frames = append(frames, line)
		}
		attached := make(chan struct{}, 1)
		h := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnChange: func() {
			select {
			case attached <- struct{}{}:
			default:
			}
		}})
		defer h.Close()
		sl := &scriptLink{frames: frames, want: len(linkRequests), release: make(chan struct{}), closed: make(chan struct{})}
		served := make(chan struct{})
		go func() {
			defer close(served)
			h.serveLink(wire.Hello{Version: wire.ProtocolVersion, InstanceID: "fuzz", BrowserSessionID: "s"}, newWSLink(h, sl))
		}()
		var b *Browser
		deadline := time.After(10 * time.Second)
		for b == nil {
			for _, info := range h.Browsers() {
				b, _ = h.Browser(info.ID)
			}
			if b != nil {
				break
			}
			select {
			case <-attached:
			case <-served:
				t.Fatal("the link ended before its browser attached")
			case <-deadline:
				t.Fatal("the browser never attached")
			}
		}
		type outcome struct {
			method string
			res    json.RawMessage
			err    error
		}
		answers := make(chan outcome, len(linkRequests))
		for _, r := range linkRequests {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := b.Call(ctx, r.method, r.params)
				answers <- outcome{r.method, res, err}
			}()
		}
		for range linkRequests {
			a := <-answers
			if a.err == nil {
				continue
			}
			if errors.Is(a.err, context.DeadlineExceeded) || wire.CodeOf(a.err) == wire.CodeTimeout {
				t.Fatalf("%s got no answer: %v", a.method, a.err)
			}
			if code := wire.CodeOf(a.err); !slices.Contains(wire.Codes, code) {
				t.Fatalf("%s failed with code %q, which is not in the wire table: %v", a.method, code, a.err)
			}
		}
		<-served
		select {
		case <-b.Done():
		default:
			t.Fatal("the browser outlived its link")
		}
		if bs := h.Browsers(); len(bs) != 0 {
			t.Fatalf("browsers after the link ended: %+v", bs)
		}
	})
}
