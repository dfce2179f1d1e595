package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

var handshakeTook = regexp.MustCompile(`msg="link handshake done" mode=(\w+) took=([0-9.]+[µmn]?s)`)

// handshakes lists the handshakes reins logged: their mode and duration.
// loggedHandshakes waits until reins has logged a finished handshake (its
// log reaches the test through a pipe, after the browser shows up in the
// inspection routes) and returns them all.
func loggedHandshakes(ctx context.Context, t *testing.T, r *harness.Reins) (modes []string, took []time.Duration) {
	t.Helper()
	if _, err := r.WaitLogTime(ctx, `msg="link handshake done"`); err != nil {
		t.Fatalf("%v:\n%s", err, harness.Tail(r.Output(), 40))
	}
	return handshakes(r.Output())
}

func handshakes(out string) (modes []string, took []time.Duration) {
	for _, m := range handshakeTook.FindAllStringSubmatch(out, -1) {
		d, err := time.ParseDuration(m[2])
		if err == nil {
			modes = append(modes, m[1])
			took = append(took, d)
		}
	}
	return modes, took
}

// A fresh Chromium with the real extension and a real native host manifest
// (harness.WithNativeHost, in <user-data-dir>/NativeMessagingHosts)
// gets the link key from `reins native-host` and connects with it: the
// whole stack of every Chromium test runs this way. It also reports what
// the handshake adds to a connect.
func TestNativeHostBringsTheKey(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := within(t, 60*time.Second)
	got, err := s.Chrome.LinkKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := linkauth.Load(s.Reins.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("the extension holds another key than the companion's data dir")
	}
	modes, took := loggedHandshakes(ctx, t, s.Reins)
	if len(modes) == 0 || modes[0] != linkauth.ModeKey {
		t.Fatalf("no key-mode handshake in the log:\n%s", harness.Tail(s.Reins.Output(), 40))
	}
	if strings.Contains(s.Reins.Output(), "refused extension link") {
		t.Fatalf("a link was refused:\n%s", harness.Tail(s.Reins.Output(), 40))
	}
	t.Logf("link handshakes (hello to verified proof, real Chromium): %v", took)
}

// fakeCompanion is a plain WebSocket server that plays the companion
// without the key: it records what the extension sends, and tries to make
// it list tabs, run CDP, open and share tabs.
type fakeCompanion struct {
	srv *httptest.Server

	mu     sync.Mutex
	conns  int
	frames []string // everything the extension sent
	closes []websocket.StatusCode
	seen   chan struct{}
}

func startFakeCompanion(t *testing.T, withChallenge func(n int) bool) *fakeCompanion {
	f := &fakeCompanion{seen: make(chan struct{}, 64)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			fmt.Fprint(w, wire.HealthText)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		f.mu.Lock()
		f.conns++
		n := f.conns
		f.mu.Unlock()
		ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
		defer cancel()
		send := func(v any) { data, _ := json.Marshal(v); c.Write(ctx, websocket.MessageText, data) }
		_, hello, err := c.Read(ctx)
		if err != nil {
			return
		}
		f.record(string(hello))
		if withChallenge(n) {
			nonce := make([]byte, 32)
			send(map[string]any{"event": wire.EventAuth, "params": wire.AuthChallenge{Nonce: nonce, Proof: bytes.Repeat([]byte{7}, 32)}})
		}
		send(wire.Req{ID: 1, Method: wire.MethodTabsList})
		send(wire.Req{ID: 2, Method: wire.MethodTabsCreate, Params: map[string]any{"url": "https://attacker.example/", "active": true}})
		send(wire.Req{ID: 3, Method: wire.MethodCDP, Params: map[string]any{"tabId": 1, "method": "Runtime.evaluate", "params": map[string]any{"expression": "document.cookie"}}})
		send(wire.Req{ID: 4, Method: wire.MethodTabsShare, Params: map[string]any{"tabId": 1, "shared": true}})
		send(map[string]any{"event": wire.EventPolicy, "params": map[string]any{"paused": false, "overlay": false}})
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				f.mu.Lock()
				f.closes = append(f.closes, websocket.CloseStatus(err))
				f.mu.Unlock()
				f.seen <- struct{}{}
				return
			}
			f.record(string(data))
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeCompanion) record(s string) {
	f.mu.Lock()
	f.frames = append(f.frames, s)
	f.mu.Unlock()
}

func (f *fakeCompanion) port() int { return f.srv.Listener.Addr().(*net.TCPAddr).Port }

// H-1 in the real browser: the extension pointed at a program that does not
// hold the link key (with a bogus challenge, or none) answers no request,
// shares nothing, opens nothing, sends no tabs, and closes with 4001.
func TestExtensionRefusesAFakeCompanion(t *testing.T) {
	t.Parallel()
	ctx := within(t, 120*time.Second)
	fake := startFakeCompanion(t, func(n int) bool { return n%2 == 0 })
	c, err := harness.StartChromium(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pages := harness.StartPages()
	defer pages.Close()
	tabsBefore, err := c.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The extension holds a key, as a paired one does; the fake has none.
	if err := c.UseCompanion(ctx, fake.port(), linkauth.NewKey().Bytes()); err != nil {
		t.Fatal(err)
	}
	// Two connections: one where the fake sends no challenge, one with a
	// bogus one.
	for i := 0; i < 2; i++ {
		select {
		case <-fake.seen:
		case <-ctx.Done():
			t.Fatalf("the extension connected to the fake %d times; %v", fake.conns, c.Output())
		}
	}
	fake.mu.Lock()
	frames := append([]string(nil), fake.frames...)
	closes := append([]websocket.StatusCode(nil), fake.closes...)
	fake.mu.Unlock()
	for _, fr := range frames {
		var f wire.Frame
		if err := json.Unmarshal([]byte(fr), &f); err != nil || f.Event != wire.EventHello {
			t.Errorf("the extension sent the fake %.200s", fr)
		}
	}
	for _, code := range closes {
		if code != 4001 {
			t.Errorf("the extension closed the fake with %v, want 4001", code)
		}
	}
	tabsAfter, err := c.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tabsAfter {
		if strings.Contains(tt.URL, "attacker.example") {
			t.Errorf("the fake opened a tab: %+v", tt)
		}
	}
	if len(tabsAfter) > len(tabsBefore)+1 { // +1: the options page UseCompanion opened and closed
		t.Errorf("targets before %d, after %d", len(tabsBefore), len(tabsAfter))
	}
	if msg, err := c.WaitConnectionError(ctx, "Reins app"); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("the popup says: %s", msg)
	}
}

// A store install with no native host pairs once with the code the app
// shows (here `reins browsers code`), typed into the popup; it receives the
// key and connects with the key from then on.
func TestPairingCodeInChromium(t *testing.T) {
	t.Parallel()
	ctx := within(t, 120*time.Second)
	r := startReins(ctx, t)
	w, err := r.Client.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c, err := harness.StartChromium(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.UseCompanionPort(ctx, r.Port); err != nil {
		t.Fatal(err)
	}
	if msg, err := c.WaitConnectionError(ctx, "not paired"); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("before pairing the popup says: %s", msg)
	}

	bin, err := harness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin, "browsers", "code", "--data-dir", r.DataDir).CombinedOutput()
	if err != nil {
		t.Fatalf("reins browsers code: %v\n%s", err, out)
	}
	code := regexp.MustCompile(`[0-9A-Z]{5}-[0-9A-Z]{5}`).FindString(string(out))
	if code == "" {
		t.Fatalf("no code in %q", out)
	}
	if err := c.TypePairingCode(ctx, strings.ToLower(code)); err != nil {
		t.Fatal(err)
	}
	b, err := harness.WaitBrowser(ctx, w, wire.EngineChromium, c.Exited())
	if err != nil {
		t.Fatalf("the code-paired extension never connected: %v\n%s", err, harness.Tail(r.Output(), 30))
	}
	key, err := c.LinkKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := linkauth.Load(r.DataDir)
	if !bytes.Equal(key, want.Bytes()) {
		t.Fatal("the extension did not keep the delivered key")
	}
	// A reconnect (the options page's save) uses the key, not the spent code.
	if err := c.UseCompanionPort(ctx, r.Port); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Until(ctx, func(snap admin.Snapshot) bool {
		modes, _ := handshakes(r.Output())
		return len(modes) >= 2 && len(snap.Browsers) == 1
	}); err != nil {
		t.Fatalf("no reconnect: %v\n%s", err, harness.Tail(r.Output(), 30))
	}
	modes, _ := handshakes(r.Output())
	if modes[0] != linkauth.ModeCode || modes[len(modes)-1] != linkauth.ModeKey {
		t.Fatalf("handshake modes %v, want code then key", modes)
	}
	if n := strings.Count(r.Output(), "browser paired with a code"); n != 1 {
		t.Fatalf("paired %d times", n)
	}
	if bs := w.Last().Browsers; len(bs) != 1 || bs[0].ID != b.ID {
		t.Fatalf("browsers after the reconnect %+v, want %s again", bs, b.ID)
	}
}

// H-3: a 70 MiB console.log in a shared tab while another tab's calls are
// in flight. The extension cuts the event below 1 MiB; the link stays up
// and every call succeeds.
func TestHugeConsoleLogKeepsTheLink(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := within(t, 180*time.Second)
	noisy, err := s.OpenShared(ctx, "noisy", false)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := s.OpenShared(ctx, "busy", false)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.Reins.Client.Events(ctx, noisy.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	if _, err := s.Reins.Client.CDP(ctx, noisy.ID, "Runtime.enable", nil); err != nil {
		t.Fatal(err)
	}

	// Another agent's calls, in flight throughout.
	stop := make(chan struct{})
	type outcome struct {
		n   int
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- outcome{n, nil}
				return
			default:
			}
			var v int
			if err := evaluate(ctx, s, busy.ID, "6*7", &v); err != nil || v != 42 {
				done <- outcome{n, fmt.Errorf("call %d on the busy tab: %v (%d)", n, err, v)}
				return
			}
			n++
		}
	}()
	// The log call returns at once; its event is what is huge.
	if err := evaluate(ctx, s, noisy.ID, "console.log('x'.repeat(70 * 1024 * 1024)), 1", nil); err != nil {
		t.Fatalf("the console.log: %v", err)
	}
	var logged admin.Event
	for found := false; !found; {
		select {
		case ev, ok := <-events.C:
			if !ok {
				t.Fatalf("the event stream ended: %v", events.Err())
			}
			if ev.Method == "Runtime.consoleAPICalled" {
				logged, found = ev, true
			}
		case <-ctx.Done():
			t.Fatal("the console event never reached the companion")
		}
	}
	// Calls keep succeeding after the event.
	for i := 0; i < 20; i++ {
		var v int
		if err := evaluate(ctx, s, noisy.ID, "1+1", &v); err != nil || v != 2 {
			t.Fatalf("a call on the noisy tab after the log: %v", err)
		}
	}
	close(stop)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if len(logged.Params) > wire.MaxFrameBytes/64 {
		t.Fatalf("the event that reached the companion is %d bytes", len(logged.Params))
	}
	if !strings.Contains(string(logged.Params), "truncated") {
		t.Fatalf("the event carries no truncation marker: %.300s", logged.Params)
	}
	if strings.Contains(s.Reins.Output(), "browser disconnected") {
		t.Fatalf("the link dropped:\n%s", harness.Tail(s.Reins.Output(), 30))
	}
	bs, err := s.Reins.Client.Browsers(ctx)
	if err != nil || len(bs) != 1 || bs[0].ID != s.Browser.ID || !bs[0].Since.Equal(s.Browser.Since) {
		t.Fatalf("browsers after the log %+v (%v), want the same connection as %+v", bs, err, s.Browser)
	}
	t.Logf("%d calls on the busy tab succeeded meanwhile; the event reached the companion as %d bytes", o.n, len(logged.Params))
}

// After the companion restarts, the extension comes back with the same key
// and, since a link that worked a moment ago is retried every 250 ms, fast:
// the time is measured and logged (issue 15 asks for at most 2 s; the
// retry policy itself is tested in extension/test with a fake clock).
func TestReturnAfterCompanionRestart(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := within(t, 120*time.Second)
	if err := s.Reins.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := s.Reins.Client.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Until(ctx, func(snap admin.Snapshot) bool { return len(snap.Browsers) == 1 }); err != nil {
		t.Fatalf("the extension never came back: %v\n%s", err, harness.Tail(s.Reins.Output(), 30))
	}
	up, err := s.Reins.WaitLogTime(ctx, "companion listening")
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.Reins.WaitLogTime(ctx, "browser connected")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the extension was back %s after the restarted companion listened", back.Sub(up))
}
