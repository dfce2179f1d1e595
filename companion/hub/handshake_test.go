package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

// rawDial opens a socket to the hub as any local process can.
func rawDial(t *testing.T, e *env) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctxT(t), e.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func send(t *testing.T, c *websocket.Conn, event string, params any) {
	t.Helper()
	raw, _ := json.Marshal(params)
	data, _ := json.Marshal(wire.Evt{Event: event, Params: raw})
	if err := c.Write(ctxT(t), websocket.MessageText, data); err != nil {
		t.Fatal(err)
	}
}

// closedWith reads until the socket ends and returns the close status and
// reason; any other frame is returned in frames.
func closedWith(t *testing.T, c *websocket.Conn) (code websocket.StatusCode, reason string, frames []string) {
	t.Helper()
	for {
		_, data, err := c.Read(ctxT(t))
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason, frames
			}
			return -1, err.Error(), frames
		}
		frames = append(frames, string(data))
	}
}

// A frame over 64 KiB before the handshake ends closes the socket; the same
// hello under the limit is fine.
func TestPreAuthFrameLimit(t *testing.T) {
	e := newEnv(t, hub.Options{})
	big := hello("i", "s")
	big.UserAgent = strings.Repeat("a", hub.MaxPreAuthFrame)
	c := rawDial(t, e)
	send(t, c, wire.EventHello, big)
	if code, reason, _ := closedWith(t, c); code != websocket.StatusMessageTooBig {
		t.Fatalf("a 64 KiB hello: close %v %q, want message too big", code, reason)
	}
	ok := hello("i", "s")
	ok.UserAgent = strings.Repeat("a", hub.MaxPreAuthFrame-1024)
	x, err := hubtest.Dial(ctxT(t), e.url, ok, hubtest.Options{Key: e.key})
	if err != nil {
		t.Fatalf("a hello just under the limit: %v", err)
	}
	x.Kill()
}

// Hello and the proof must both arrive within the hello timeout.
func TestHelloAndProofDeadline(t *testing.T) {
	e := newEnv(t, hub.Options{HelloTimeout: 300 * time.Millisecond})
	silent := rawDial(t, e)
	if code, reason, _ := closedWith(t, silent); code != hub.StatusUnauthorized || !strings.Contains(reason, "no hello within") {
		t.Fatalf("a silent socket: close %v %q", code, reason)
	}
	noProof := rawDial(t, e)
	h := hello("i", "s")
	h.Auth = &wire.HelloAuth{V: 1, Mode: linkauth.ModeKey, Nonce: make([]byte, linkauth.NonceSize)}
	send(t, noProof, wire.EventHello, h)
	code, reason, frames := closedWith(t, noProof)
	if code != hub.StatusUnauthorized || !strings.Contains(reason, "no link proof within") {
		t.Fatalf("a hello without a proof: close %v %q", code, reason)
	}
	if len(frames) != 1 || !strings.Contains(frames[0], `"event":"auth"`) {
		t.Fatalf("frames before the close: %q, want only the challenge", frames)
	}
	if n := len(e.hub.Browsers()); n != 0 {
		t.Fatalf("%d browsers attached", n)
	}
}

// The default deadline is 5 s: a socket that says nothing is closed then,
// and not before the hello timeout's own number says.
func TestDefaultHelloDeadline(t *testing.T) {
	e := newEnv(t, hub.Options{})
	start := time.Now()
	c := rawDial(t, e)
	code, reason, _ := closedWith(t, c)
	if code != hub.StatusUnauthorized || !strings.Contains(reason, "no hello within 5s") {
		t.Fatalf("close %v %q", code, reason)
	}
	t.Logf("closed after %s", time.Since(start).Round(time.Millisecond))
}

// Sockets in their handshake are capped (16 by default); the extra one is
// refused before the upgrade, and an authenticated browser does not take a
// slot.
func TestUnauthenticatedSocketCap(t *testing.T) {
	const max = hub.DefaultMaxUnauthenticated
	if max != 16 {
		t.Fatalf("the documented cap is 16, the code says %d", max)
	}
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	for i := range max + 2 {
		dial(t, e, hello(fmt.Sprint("inst-", i), "s"))
	}
	waitFor(t, changed, "the browsers", func() bool { return len(e.hub.Browsers()) == max+2 })

	var silent []*websocket.Conn
	for range max {
		silent = append(silent, rawDial(t, e))
	}
	waitUnauth(t, e, max)
	_, resp, err := websocket.Dial(ctxT(t), e.url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a socket over the cap: %v %v, want 503", err, resp)
	}
	if _, err := hubtest.Dial(ctxT(t), e.url, hello("late", "s"), hubtest.Options{Key: e.key}); err == nil {
		t.Fatal("an extension got in over the cap")
	}
	silent[0].CloseNow()
	waitUnauth(t, e, max-1)
	dial(t, e, hello("late", "s"))
	waitFor(t, changed, "the late browser", func() bool { return len(e.hub.Browsers()) == max+3 })
}

// waitUnauth waits, with a deadline, until n sockets are in their handshake.
func waitUnauth(t *testing.T, e *env, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.hub.Unauthenticated() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d sockets in their handshake, want %d", e.hub.Unauthenticated(), n)
		}
		// The count changes on the hub's goroutines; there is no signal.
		<-time.After(5 * time.Millisecond)
	}
}

// The hub keeps at most MaxRemembered (64 by default) disconnected
// profiles; the most recent keeps its browser id and public tab ids across
// a reconnect, the oldest is forgotten.
func TestRememberedBrowsersArePruned(t *testing.T) {
	const max = hub.DefaultMaxRemembered
	if max != 64 {
		t.Fatalf("the documented bound is 64, the code says %d", max)
	}
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	type run struct {
		browser string
		tab     int
	}
	runs := map[string]run{}
	last := fmt.Sprint("inst-", max+5)
	for i := range max + 6 {
		inst := fmt.Sprint("inst-", i)
		x := dial(t, e, hello(inst, "s"))
		x.SendTabs([]wire.TabInfo{{ID: 7, URL: "https://a.test/", Shared: true}})
		var r run
		waitFor(t, changed, "the browser and its tab", func() bool {
			for _, b := range e.hub.Browsers() {
				if b.Hello.InstanceID == inst {
					for _, tab := range e.hub.Tabs() {
						if tab.BrowserID == b.ID {
							r = run{b.ID, tab.ID}
							return true
						}
					}
				}
			}
			return false
		})
		runs[inst] = r
		x.Kill()
		waitFor(t, changed, "the browser to leave", func() bool { return len(e.hub.Browsers()) == 0 })
		inst2, sess, tabs := e.hub.Remembered()
		if inst2 > max || sess > max || tabs > max {
			t.Fatalf("after %d browsers the hub remembers %d profiles, %d runs, %d tabs; want at most %d", i+1, inst2, sess, tabs, max)
		}
	}
	x := dial(t, e, hello(last, "s"))
	x.SendTabs([]wire.TabInfo{{ID: 7, URL: "https://a.test/", Shared: true}})
	waitFor(t, changed, "the recent browser back with its ids", func() bool {
		tabs := e.hub.Tabs()
		return len(tabs) == 1 && tabs[0].BrowserID == runs[last].browser && tabs[0].ID == runs[last].tab
	})
	x.Kill()
	waitFor(t, changed, "the browser to leave", func() bool { return len(e.hub.Browsers()) == 0 })
	y := dial(t, e, hello("inst-0", "s"))
	waitFor(t, changed, "the forgotten browser", func() bool { return len(e.hub.Browsers()) == 1 })
	if id := e.hub.Browsers()[0].ID; id == runs["inst-0"].browser {
		t.Fatalf("the forgotten profile got its old id %s back", id)
	}
	y.Kill()
}
