package live

import (
	"encoding/base64"
	"encoding/json"
	"image/color"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/wire"
)

func TestHelloFramesAndAcks(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	hello, _ := v.waitKind(t, 0, KindHello)
	tab := hello["tab"].(map[string]any)
	if int(tab["id"].(float64)) != e.tab || tab["title"] != "Example page" || tab["url"] != "https://example.com/page" || tab["browser"] != "Chromium" {
		t.Fatalf("hello tab %v", tab)
	}
	vp := hello["viewport"].(map[string]any)
	if vp["width"] != 800.0 || vp["height"] != 600.0 {
		t.Fatalf("hello viewport %v", vp)
	}
	if m, _ := v.waitKind(t, 0, KindTakeover); m["held"] != false {
		t.Fatalf("initial take-over state %v", m)
	}

	start := e.rec.waitN(t, "Page.startScreencast", 1)
	var sp map[string]any
	json.Unmarshal(start.Params, &sp)
	if sp["format"] != "jpeg" || sp["quality"] == nil || sp["maxWidth"] == nil || sp["maxHeight"] == nil {
		t.Fatalf("startScreencast params %v", sp)
	}
	hold := e.rec.waitN(t, wire.MethodTabsHold, 1)
	if !strings.Contains(string(hold.Params), `"hold":true`) {
		t.Fatalf("tabs.hold %s", hold.Params)
	}

	img := testJPEG(t, 40, 30, color.RGBA{200, 10, 10, 255})
	for i := 1; i <= 5; i++ {
		e.sendFrame(t, img, 1000+i, 800, 600, float64(i))
	}
	// Every frame is acked with its own screencast session id.
	e.rec.waitN(t, "Page.screencastFrameAck", 5)
	acked := map[int]bool{}
	for _, c := range e.rec.all("Page.screencastFrameAck") {
		var p struct{ SessionID int }
		json.Unmarshal(c.Params, &p)
		acked[p.SessionID] = true
	}
	for i := 1; i <= 5; i++ {
		if !acked[1000+i] {
			t.Fatalf("frame %d not acked: %v", 1000+i, acked)
		}
	}
	m, _ := v.waitMsg(t, 0, "the last frame", func(m map[string]any) bool { return m["kind"] == KindFrame && frameTS(m) == 5 })
	if m["data"] != img {
		t.Fatal("frame data changed on the way")
	}
	md := m["metadata"].(map[string]any)
	if md["width"] != 800.0 || md["height"] != 600.0 || md["pageScaleFactor"] != 1.0 || md["scrollOffsetY"] != 12.0 {
		t.Fatalf("metadata %v", md)
	}
	if m["seq"].(float64) < 1 {
		t.Fatalf("seq %v", m["seq"])
	}
}

func TestSecondViewerSharesTheScreencastAndGetsTheLastFrame(t *testing.T) {
	e := newEnv(t)
	a := e.view(t)
	e.rec.waitN(t, "Page.startScreencast", 1)
	img := testJPEG(t, 40, 30, color.RGBA{10, 200, 10, 255})
	e.sendFrame(t, img, 1, 800, 600, 1)
	a.waitMsg(t, 0, "frame 1", func(m map[string]any) bool { return frameTS(m) == 1 })

	b := e.view(t)
	// A still page sends no new frames: the newcomer gets the newest one.
	b.waitMsg(t, 0, "the cached frame", func(m map[string]any) bool { return frameTS(m) == 1 })
	e.sendFrame(t, img, 2, 800, 600, 2)
	a.waitMsg(t, 0, "frame 2 in a", func(m map[string]any) bool { return frameTS(m) == 2 })
	b.waitMsg(t, 0, "frame 2 in b", func(m map[string]any) bool { return frameTS(m) == 2 })
	if n := e.rec.count("Page.startScreencast"); n != 1 {
		t.Fatalf("startScreencast sent %d times for two viewers of one tab", n)
	}
}

// A viewer that never reads must not slow down the tab or the other viewer:
// frames keep being acked and the reading viewer keeps receiving them while
// the stalled viewer's socket is full.
func TestStalledViewerDoesNotStallOthers(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.WriteTimeout = time.Minute })
	reader := e.view(t)
	stalled, _, err := e.dial(t, e.open(t, e.tab), dialOpts{tinyBuffer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()
	e.rec.waitN(t, "Page.startScreencast", 1)

	big := randomB64(64 << 10) // incompressible, so socket buffers fill
	i := 0
	frame := func() {
		i++
		e.sendFrame(t, big, i, 800, 600, float64(i))
		// Acks come back for every frame whatever the viewers do.
		e.rec.waitN(t, "Page.screencastFrameAck", i)
		// The reading viewer gets each one (or a newer one).
		reader.waitMsg(t, 0, "a frame in the reading viewer", func(m map[string]any) bool { return frameTS(m) >= float64(i) })
	}
	// Send until the never-reading viewer's writer is stuck in a write.
	for !e.stalledViewer() {
		if i > 1000 {
			t.Fatal("the never-reading viewer's socket never filled; the test would prove nothing")
		}
		frame()
	}
	for range 20 {
		frame()
	}
	if !e.stalledViewer() {
		t.Fatal("the stalled viewer came unstuck without reading")
	}
}

// A viewer stuck for longer than the write timeout is closed, not waited on.
func TestStalledViewerIsClosedAfterTheWriteTimeout(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.WriteTimeout = 300 * time.Millisecond })
	stalled, _, err := e.dial(t, e.open(t, e.tab), dialOpts{tinyBuffer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()
	e.rec.waitN(t, "Page.startScreencast", 1)
	big := randomB64(64 << 10)
	// Its leaving ends the screencast, as any last viewer's does. A
	// stopScreencast alone says nothing: adapting the quality to the
	// stalled viewer restarts the screencast with one.
	gone := func() bool {
		e.live.mu.Lock()
		defer e.live.mu.Unlock()
		return len(e.live.viewers) == 0
	}
	for i := 1; !gone(); i++ {
		if i > 1000 {
			t.Fatal("the stalled viewer was never closed")
		}
		e.sendFrame(t, big, i, 800, 600, float64(i))
		// The last viewer leaves before its screencast stops, so the
		// stop's call wakes this wait with the viewer gone.
		e.rec.waitFor(t, "an ack or the stalled viewer's leaving", func() bool {
			return e.rec.count("Page.screencastFrameAck") >= i || gone()
		})
	}
	e.rec.waitFor(t, "the screencast to stop", func() bool {
		return e.rec.count("Page.stopScreencast") == e.rec.count("Page.startScreencast")
	})
}

func randomB64(n int) string {
	rnd := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(rnd.Uint32())
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// stalledViewer reports whether some viewer has been stuck in one write for
// longer than stallAfter.
func (e *env) stalledViewer() bool {
	e.live.mu.Lock()
	defer e.live.mu.Unlock()
	for v := range e.live.viewers {
		if v.stalled() {
			return true
		}
	}
	return false
}

func TestTakeoverGatesInput(t *testing.T) {
	e := newEnv(t)
	a := e.view(t)
	a.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	e.sendFrame(t, testJPEG(t, 40, 30, color.RGBA{1, 2, 3, 255}), 1, 800, 600, 1)
	a.waitKind(t, 0, KindFrame)

	// Watching never injects input.
	a.send(t, map[string]any{"kind": "mouse", "type": "down", "x": 0.5, "y": 0.5, "button": "left", "buttons": 1, "clickCount": 1})
	if m, _ := a.waitKind(t, 0, KindNotice); !strings.Contains(m["message"].(string), "Take over") {
		t.Fatalf("notice %v", m)
	}
	if n := e.rec.count("Input.dispatchMouseEvent"); n != 0 {
		t.Fatalf("%d mouse events reached the tab without take-over", n)
	}
	if got := e.live.TakenOver(e.tab); got != "" {
		t.Fatalf("TakenOver before take-over = %q", got)
	}

	_, i := a.waitKind(t, 0, KindTakeover)
	a.send(t, map[string]any{"kind": "takeover", "on": true})
	a.waitMsg(t, i+1, "take-over granted", func(m map[string]any) bool { return m["kind"] == KindTakeover && m["byYou"] == true })
	if got := e.live.TakenOver(e.tab); got != TakenOverBy {
		t.Fatalf("TakenOver = %q", got)
	}
	<-e.changes

	a.send(t, map[string]any{"kind": "mouse", "type": "down", "x": 0.5, "y": 0.25, "button": "left", "buttons": 1, "clickCount": 1})
	c := e.rec.waitN(t, "Input.dispatchMouseEvent", 1)
	var mp map[string]any
	json.Unmarshal(c.Params, &mp)
	if mp["type"] != "mousePressed" || mp["x"] != 400.0 || mp["y"] != 150.0 || mp["button"] != "left" || mp["clickCount"] != 1.0 {
		t.Fatalf("mouse event %v", mp)
	}
	a.send(t, map[string]any{"kind": "key", "type": "down", "key": "a", "code": "KeyA", "text": "a", "keyCode": 65})
	c = e.rec.waitN(t, "Input.dispatchKeyEvent", 1)
	var kp map[string]any
	json.Unmarshal(c.Params, &kp)
	if kp["type"] != "keyDown" || kp["text"] != "a" || kp["windowsVirtualKeyCode"] != 65.0 {
		t.Fatalf("key event %v", kp)
	}

	// A second view of the tab takes it over; the first is told.
	b := e.view(t)
	_, j := b.waitKind(t, 0, KindTakeover)
	b.send(t, map[string]any{"kind": "takeover", "on": true})
	b.waitMsg(t, j+1, "b holds it", func(m map[string]any) bool { return m["kind"] == KindTakeover && m["byYou"] == true })
	a.waitMsg(t, i+1, "a is told", func(m map[string]any) bool {
		return m["kind"] == KindTakeover && m["byYou"] == false && m["held"] == true
	})
	// The viewer holding it leaves: the take-over ends with it.
	b.conn.Close(websocket.StatusNormalClosure, "bye")
	_, r := a.waitMsg(t, i+1, "take-over released", func(m map[string]any) bool {
		return m["kind"] == KindTakeover && m["held"] == false
	})
	if got := e.live.TakenOver(e.tab); got != "" {
		t.Fatalf("TakenOver after the holder left = %q", got)
	}

	// Release by toggling.
	a.send(t, map[string]any{"kind": "takeover", "on": true})
	// From after the release: a held it once before, and that message
	// must not stand in for this one.
	_, k := a.waitMsg(t, r+1, "a holds it again", func(m map[string]any) bool { return m["kind"] == KindTakeover && m["byYou"] == true })
	a.send(t, map[string]any{"kind": "takeover", "on": false})
	a.waitMsg(t, k+1, "a released", func(m map[string]any) bool { return m["kind"] == KindTakeover && m["held"] == false })
	if got := e.live.TakenOver(e.tab); got != "" {
		t.Fatalf("TakenOver after release = %q", got)
	}
}

func expectEnd(t *testing.T, v *client, code wire.Code, text string) {
	t.Helper()
	m, _ := v.waitKind(t, 0, KindError)
	if m["code"] != string(code) || !strings.Contains(m["message"].(string), text) {
		t.Fatalf("error %v, want code %s and %q", m, code, text)
	}
	err := v.waitEnd(t)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("view ended with %s, want a normal close", errorOf(err))
	}
}

func TestTabClosedEndsTheView(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	e.setTabs(t, nil)
	expectEnd(t, v, wire.CodeNoSuchTab, "closed")
}

func TestUnsharingEndsTheView(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	e.setTabs(t, []wire.TabInfo{{ID: nativeTab, URL: "https://example.com/page", Title: "Example page", Shared: false, WindowID: 1}})
	expectEnd(t, v, wire.CodeNotShared, "no longer shared")
}

func TestBrowserGoneEndsTheView(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	e.ext.Kill()
	expectEnd(t, v, wire.CodeNoSuchBrowser, "browser")
}

func TestTitleChangesReachTheViewer(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	e.setTabs(t, []wire.TabInfo{{ID: nativeTab, URL: "https://example.com/next", Title: "Next page", Shared: true, WindowID: 1}})
	m, _ := v.waitKind(t, 0, KindTab)
	if tab := m["tab"].(map[string]any); tab["title"] != "Next page" || tab["url"] != "https://example.com/next" {
		t.Fatalf("tab message %v", m)
	}
}

func TestLastViewerLeavingStopsTheScreencast(t *testing.T) {
	e := newEnv(t)
	a := e.view(t)
	b := e.view(t)
	a.waitKind(t, 0, KindHello)
	b.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	a.conn.Close(websocket.StatusNormalClosure, "bye")
	b.waitKind(t, 0, KindTakeover) // b still served
	b.conn.Close(websocket.StatusNormalClosure, "bye")
	e.rec.waitN(t, "Page.stopScreencast", 1)
	release := e.rec.waitN(t, wire.MethodTabsHold, 2)
	if !strings.Contains(string(release.Params), `"hold":false`) {
		t.Fatalf("last tabs.hold %s, want a release", release.Params)
	}
	if n := e.rec.count("Page.stopScreencast"); n != 1 {
		t.Fatalf("stopScreencast sent %d times", n)
	}
	// A new viewer starts it again.
	c := e.view(t)
	c.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 2)
}

func TestDetachRestartsTheScreencast(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	if err := e.ext.Send(wire.EventDetached, wire.Detached{TabID: nativeTab, Reason: "idle"}); err != nil {
		t.Fatal(err)
	}
	e.rec.waitN(t, "Page.startScreencast", 2)
}

func TestDetachByThePersonWaitsForReattach(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	if err := e.ext.Send(wire.EventDetached, wire.Detached{TabID: nativeTab, Reason: "canceled_by_user"}); err != nil {
		t.Fatal(err)
	}
	m, _ := v.waitKind(t, 0, KindNotice)
	if !strings.Contains(m["message"].(string), "detached") {
		t.Fatalf("notice %v", m)
	}
	// Something else attaches again (an agent's command): its events say so.
	if n := e.rec.count("Page.startScreencast"); n != 1 {
		t.Fatalf("screencast restarted behind the person's back (%d starts)", n)
	}
	params, _ := json.Marshal(map[string]any{"frame": map[string]any{"id": "f"}})
	if err := e.ext.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: nativeTab, Method: "Page.frameNavigated", Params: params}); err != nil {
		t.Fatal(err)
	}
	e.rec.waitN(t, "Page.startScreencast", 2)
}

func TestShutdownEndsViews(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	e.rec.waitN(t, "Page.startScreencast", 1)
	e.live.Close()
	// The last message says why; the connection then closes without the
	// close handshake, which would wait for viewers that do not answer.
	m, _ := v.waitKind(t, 0, KindError)
	if m["code"] != "shutting_down" || !strings.Contains(m["message"].(string), "shutting down") {
		t.Fatalf("the last message: %v", m)
	}
	v.waitEnd(t)
}

func TestUnknownMessagesAreNoticedNotFatal(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	v.send(t, map[string]any{"kind": "teleport"})
	if m, _ := v.waitKind(t, 0, KindNotice); !strings.Contains(m["message"].(string), "teleport") {
		t.Fatalf("notice %v", m)
	}
	if err := v.conn.Write(ctxT(t), websocket.MessageText, []byte("not json")); err != nil {
		t.Fatal(err)
	}
	v.waitMsg(t, 0, "a second notice", func(m map[string]any) bool {
		return m["kind"] == KindNotice && strings.Contains(m["message"].(string), "could not read")
	})
}

func TestRestrictedPageWaitsForAWebPage(t *testing.T) {
	e := newEnv(t)
	e.setTabs(t, []wire.TabInfo{{ID: nativeTab, URL: "chrome://settings/", Title: "Settings", Shared: true, WindowID: 1}})
	e.waitHub(t, "the tab to show a browser page", func() bool {
		tb, _, err := e.hub.Tab(e.tab)
		return err == nil && tb.Unsupported != ""
	})
	v := e.view(t)
	v.waitKind(t, 0, KindHello)
	if m, _ := v.waitKind(t, 0, KindNotice); !strings.Contains(m["message"].(string), "cannot be shown") {
		t.Fatalf("notice %v", m)
	}
	// A viewer who joins later is told too: the notice stands until the
	// picture is back. (The first viewer's notice could also be sent before
	// it joined the screencast; the same rule covers that.)
	late := e.view(t)
	late.waitKind(t, 0, KindHello)
	if m, _ := late.waitKind(t, 0, KindNotice); !strings.Contains(m["message"].(string), "cannot be shown") {
		t.Fatalf("notice to the later viewer %v", m)
	}
	if n := e.rec.count("Page.startScreencast"); n != 0 {
		t.Fatalf("startScreencast reached the extension for a browser page (%d)", n)
	}
	e.setTabs(t, []wire.TabInfo{{ID: nativeTab, URL: "https://example.com/back", Title: "Back", Shared: true, WindowID: 1}})
	e.rec.waitN(t, "Page.startScreencast", 1)
}

// A viewer that keeps up makes adaptation step the quality up after a few
// windows. The new setting needs a new Page.startScreencast, which Chromium
// refuses while the old screencast runs ("Screencast is already active"):
// the old one must stop first, and the viewer must hear nothing of it.
func TestQualityChangeStopsTheScreencastBeforeStartingAgain(t *testing.T) {
	e := newEnv(t)
	v := e.view(t)
	e.rec.waitN(t, "Page.startScreencast", 1)
	img := testJPEG(t, 40, 30, color.RGBA{20, 20, 200, 255})
	n := 0
	frame := func() {
		n++
		e.sendFrame(t, img, n, 800, 600, float64(n))
		// Taken before the next one is sent: the viewer drops nothing.
		v.waitMsg(t, 0, "the frame just sent", func(m map[string]any) bool { return frameTS(m) == float64(n) })
	}
	for range upAfter * adaptWindow {
		frame()
	}
	second := e.rec.waitN(t, "Page.startScreencast", 2)
	var sp map[string]any
	json.Unmarshal(second.Params, &sp)
	if sp["quality"] != float64(levels[startLevel-1].Quality) {
		t.Fatalf("the second screencast runs at %v, want the next level up (%d)", sp["quality"], levels[startLevel-1].Quality)
	}
	// The order the fake extension saw: start, stop, start.
	var order []string
	e.rec.mu.Lock()
	calls := append([]call(nil), e.rec.calls...)
	e.rec.mu.Unlock()
	for _, c := range calls {
		if strings.HasPrefix(c.Method, "Page.") && strings.HasSuffix(c.Method, "Screencast") {
			order = append(order, c.Method)
		}
	}
	if strings.Join(order, ",") != "Page.startScreencast,Page.stopScreencast,Page.startScreencast" {
		t.Fatalf("screencast commands %v, want start, stop, start", order)
	}
	// A notice of a failed start would reach the viewer before the next
	// frame does.
	frame()
	if got := v.count(KindNotice); got != 0 {
		t.Fatalf("the viewer got %d notices during a quality change", got)
	}
}

// A shutdown must be over within the companion's 2 s whatever the viewers
// do: one that reads nothing (so never answers the close handshake, which
// waits 5 s) and one whose socket is full (so the last message cannot go).
func TestShutdownDoesNotWaitForViewersThatDoNotAnswer(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.WriteTimeout = time.Minute })
	silent, _, err := e.dial(t, e.open(t, e.tab), dialOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.CloseNow()
	stalled, _, err := e.dial(t, e.open(t, e.tab), dialOpts{tinyBuffer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()
	e.rec.waitN(t, "Page.startScreencast", 1)
	big := randomB64(64 << 10)
	for i := 1; !e.stalledViewer(); i++ {
		if i > 1000 {
			t.Fatal("the stalled viewer's socket never filled")
		}
		e.sendFrame(t, big, i, 800, 600, float64(i))
		e.rec.waitN(t, "Page.screencastFrameAck", i)
	}
	start := time.Now()
	e.live.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %s with viewers that do not answer", took)
	}
}
