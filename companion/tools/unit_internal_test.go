package tools

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestParseKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // per chord: mods|key|code|vk|text
		err  bool
	}{
		{in: "Return", want: "0|Enter|Enter|13|\r"},
		{in: "enter", want: "0|Enter|Enter|13|\r"},
		{in: "ctrl+a", want: "2|a|KeyA|65|"},
		{in: "ctrl+shift+Tab", want: "10|Tab|Tab|9|"},
		{in: "shift+Tab", want: "8|Tab|Tab|9|"},
		{in: "BackSpace", want: "0|Backspace|Backspace|8|"},
		{in: "Page_Down", want: "0|PageDown|PageDown|34|"},
		{in: "F5", want: "0|F5|F5|116|"},
		{in: "space", want: "0| |Space|32| "},
		{in: "a", want: "0|a|KeyA|65|a"},
		{in: "A", want: "0|A|KeyA|65|A"},
		{in: "ctrl+A", want: "2|a|KeyA|65|"},
		{in: "Ctrl+K", want: "2|k|KeyK|75|"},
		{in: "Cmd+Shift+P", want: "12|p|KeyP|80|"},
		{in: "⌘+a", want: "4|a|KeyA|65|"},
		{in: "Shift+Tab", want: "8|Tab|Tab|9|"},
		{in: "CmdOrCtrl+s", want: "16|s|KeyS|83|"},
		{in: "!", want: "8|!|Digit1|49|!"},
		{in: "ctrl++", want: "10|+|Equal|187|"},
		{in: "cmd+c", want: "4|c|KeyC|67|"},
		{in: "alt+Left", want: "1|ArrowLeft|ArrowLeft|37|"},
		{in: "é", want: "0|é||0|é"},
		{in: "ctrl+a Delete", want: "2|a|KeyA|65| 0|Delete|Delete|46|"},
		{in: "shift", want: "8|Shift|ShiftLeft|16|"},
		{in: "", err: true},
		{in: "ctrl+", err: true},
		{in: "a+b", err: true},
		{in: "nosuchkey", err: true},
		{in: "\x01", err: true},
	} {
		combos, err := parseKeys(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("parseKeys(%q) succeeded", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseKeys(%q): %v", tc.in, err)
			continue
		}
		var got []string
		for _, c := range combos {
			text := c.key.Text
			if c.mods&(modCtrl|modAlt|modMeta|modPrimary) != 0 || c.modOnly {
				text = ""
			}
			got = append(got, strings.Join([]string{itoa(c.mods), c.key.Key, c.key.Code, itoa(c.key.VK), text}, "|"))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("parseKeys(%q) = %q, want %q", tc.in, g, tc.want)
		}
	}
}

func TestKeyEvents(t *testing.T) {
	combos, _ := parseKeys("ctrl+shift+a")
	evs := combos[0].events(false)
	var seq []string
	for _, e := range evs {
		seq = append(seq, e["type"].(string)+":"+e["key"].(string)+":"+itoa(e["modifiers"].(int)))
		if _, ok := e["text"]; ok {
			t.Errorf("a shortcut types text: %v", e)
		}
	}
	want := "rawKeyDown:Control:2 rawKeyDown:Shift:10 rawKeyDown:A:10 keyUp:A:10 keyUp:Shift:2 keyUp:Control:0"
	if g := strings.Join(seq, " "); g != want {
		t.Fatalf("events = %s\nwant     %s", g, want)
	}
	combos, _ = parseKeys("shift+a")
	evs = combos[0].events(false)
	if evs[1]["type"] != "keyDown" || evs[1]["text"] != "A" || evs[1]["key"] != "A" {
		t.Fatalf("shift+a = %v", evs[1])
	}
	if mods, err := parseModifiers("ctrl+shift"); err != nil || mods != modCtrl|modShift {
		t.Fatalf("parseModifiers = %d, %v", mods, err)
	}
	if _, err := parseModifiers("hyper"); err == nil {
		t.Fatal("unknown modifier accepted")
	}
}

func TestScreenshotScaling(t *testing.T) {
	for _, tc := range []struct {
		w, h  int
		scale float64
	}{
		{1280, 800, 1}, {1400, 900, 1}, {1401, 900, 1400.0 / 1401}, {2000, 1250, 0.7}, {2800, 1800, 0.5},
		{800, 2800, 0.5}, {0, 0, 1}, {390, 844, 1},
	} {
		if got := shotScale(tc.w, tc.h); math.Abs(got-tc.scale) > 1e-9 {
			t.Errorf("shotScale(%d, %d) = %v, want %v", tc.w, tc.h, got, tc.scale)
		}
		s := shotScale(tc.w, tc.h)
		if w, h := int(math.Round(float64(tc.w)*s)), int(math.Round(float64(tc.h)*s)); max(w, h) > maxEdge {
			t.Errorf("%d×%d scales to %d×%d", tc.w, tc.h, w, h)
		}
	}
	for _, tc := range []struct{ w, h, edge, ww, wh int }{
		{2560, 1600, 1400, 1400, 875}, {1000, 500, 1400, 1000, 500}, {100, 3000, 1400, 47, 1400},
	} {
		if w, h := fitEdge(tc.w, tc.h, tc.edge); w != tc.ww || h != tc.wh {
			t.Errorf("fitEdge(%d, %d) = %d×%d, want %d×%d", tc.w, tc.h, w, h, tc.ww, tc.wh)
		}
	}
}

func TestCoordinateMapping(t *testing.T) {
	v := viewMap{scale: 0.7, width: 2000, height: 1250}
	for _, tc := range []struct{ sx, sy, cx, cy float64 }{
		{0, 0, 0, 0}, {700, 437.5, 1000, 625}, {1400, 875, 2000, 1250}, {7, 7, 10, 10},
	} {
		x, y := v.toCSS(tc.sx, tc.sy)
		if math.Abs(x-tc.cx) > 1e-9 || math.Abs(y-tc.cy) > 1e-9 {
			t.Errorf("toCSS(%v, %v) = %v, %v", tc.sx, tc.sy, x, y)
		}
		bx, by := v.toShot(x, y)
		if bx != int(math.Round(tc.sx)) || by != int(math.Round(tc.sy)) {
			t.Errorf("toShot(toCSS(%v, %v)) = %d, %d", tc.sx, tc.sy, bx, by)
		}
	}
	if !v.contains(1400, 875) || v.contains(1402, 10) || v.contains(-1, 10) {
		t.Error("contains disagrees with the screenshot's size")
	}
	if x, y := (viewMap{}).toCSS(5, 6); x != 5 || y != 6 {
		t.Error("an unknown scale must map 1:1")
	}
}

func TestNormalizeURLAndOrigins(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"example.com", "https://example.com"},
		{"example.com/a?b#c", "https://example.com/a?b#c"},
		{"localhost:3000/x", "http://localhost:3000/x"},
		{"127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"[::1]:9000/", "http://[::1]:9000/"},
		{"https://example.com", "https://example.com"},
		{"HTTP://Example.com", "HTTP://Example.com"},
		{"about:blank", "about:blank"},
		{"data:text/html,hi", "data:text/html,hi"},
		{"file:///tmp/x.html", "file:///tmp/x.html"},
		{"chrome://settings", "chrome://settings"},
	} {
		got, err := normalizeURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("normalizeURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := normalizeURL("javascript:alert(1)"); err == nil {
		t.Error("javascript: URL accepted")
	}
	for _, tc := range []struct{ in, want string }{
		{"https://Example.com/path", "https://example.com"},
		{"https://example.com:443/", "https://example.com"},
		{"http://example.com:80/", "http://example.com"},
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080"},
		{"http://[::1]:8080/x", "http://[::1]:8080"},
		{"about:blank", "about:"},
		{"data:text/html,x", "data:"},
		{"file:///etc/hosts", "file://"},
	} {
		if got := originOf(tc.in); got != tc.want {
			t.Errorf("originOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBuffersAreBounded(t *testing.T) {
	cl := newConsoleLog(3, maxLogBytes)
	for i := 0; i < 5; i++ {
		cl.add("Runtime.consoleAPICalled", []byte(`{"type":"log","args":[{"type":"number","value":`+itoa(i)+`}]}`))
	}
	entries, dropped := cl.snapshot(true)
	if len(entries) != 3 || dropped != 2 || formatConsole(entries[0]).text != "2" {
		t.Fatalf("console ring: %d entries, %d dropped, first %q", len(entries), dropped, formatConsole(entries[0]).text)
	}
	if e, _ := cl.snapshot(false); len(e) != 0 {
		t.Fatal("clear kept entries")
	}
	nl := newNetworkLog(2, maxLogBytes)
	for i := 0; i < 4; i++ {
		id := "r" + itoa(i)
		nl.add("Network.requestWillBeSent", []byte(`{"requestId":"`+id+`","request":{"url":"http://x/`+id+`","method":"GET"},"type":"Fetch"}`))
		nl.add("Network.responseReceived", []byte(`{"requestId":"`+id+`","type":"Fetch","response":{"status":200,"mimeType":"text/plain"}}`))
	}
	ns, dropped := nl.snapshot(false)
	if len(ns) != 2 || dropped != 2 || ns[1].url != "http://x/r3" || ns[1].status != 200 {
		t.Fatalf("network ring: %+v dropped %d", ns, dropped)
	}
}

func TestSessionKeepsRecentImages(t *testing.T) {
	s := &Session{Principal: "agent:a", Label: "a"}
	var ids []string
	for i := 0; i < maxImages+5; i++ {
		ids = append(ids, s.addImage(&image{tab: 1, data: []byte{byte(i)}}))
	}
	if s.image(ids[0]) != nil || s.image(ids[4]) != nil {
		t.Fatal("old images were kept")
	}
	if img := s.image(ids[5]); img == nil || img.data[0] != 5 {
		t.Fatal("a recent image was dropped")
	}
	if s.image(ids[len(ids)-1]) == nil || len(s.images) != maxImages {
		t.Fatalf("%d images kept", len(s.images))
	}
}

// A 70 MiB console message is never held whole: it is formatted on arrival
// and its text cut to maxConsoleEntryBytes with a marker saying how much was
// left out.
func TestHugeConsoleMessageIsCut(t *testing.T) {
	huge := strings.Repeat("x", 70<<20)
	params := []byte(`{"type":"log","args":[{"type":"string","value":"` + huge + `"}]}`)
	cl := newConsoleLog(maxLogEntries, maxLogBytes)
	cl.add("Runtime.consoleAPICalled", params)
	entries, _ := cl.snapshot(false)
	if len(entries) != 1 {
		t.Fatalf("%d entries", len(entries))
	}
	e := entries[0]
	if e.params != nil || e.size() > maxConsoleEntryBytes || cl.bytes > maxConsoleEntryBytes {
		t.Fatalf("the buffer holds %d bytes for one message (raw params kept: %v), want at most %d", cl.bytes, e.params != nil, maxConsoleEntryBytes)
	}
	line := formatConsole(e)
	if line.level != "log" || !strings.HasPrefix(line.text, "xxxx") || !strings.HasSuffix(line.text, "…") {
		t.Fatalf("cut message: level %q, text %q…%q", line.level, line.text[:20], line.text[len(line.text)-20:])
	}
	if kept := len(strings.TrimSuffix(line.text, "…")); kept+line.omitted != 70<<20 {
		t.Fatalf("kept %d + omitted %d bytes, want the message's %d", kept, line.omitted, 70<<20)
	}
}

// Console and network buffers are bounded in bytes as well as in entries:
// many big entries evict the oldest long before 500 are kept.
func TestBuffersAreBoundedInBytes(t *testing.T) {
	cl := newConsoleLog(maxLogEntries, maxLogBytes)
	text := strings.Repeat("y", maxConsoleEntryBytes-100)
	for i := 0; i < maxLogEntries; i++ {
		cl.add("Runtime.consoleAPICalled", []byte(`{"type":"log","args":[{"type":"string","value":"`+itoa(i)+text+`"}]}`))
	}
	entries, dropped := cl.snapshot(false)
	if cl.bytes > maxLogBytes || len(entries)+dropped != maxLogEntries || len(entries) >= maxLogEntries/2 {
		t.Fatalf("console buffer: %d bytes in %d entries (%d dropped), bound %d bytes", cl.bytes, len(entries), dropped, maxLogBytes)
	}
	if last := formatConsole(entries[len(entries)-1]).text; !strings.HasPrefix(last, itoa(maxLogEntries-1)+"y") {
		t.Fatalf("the newest message was not kept: %.20q", last)
	}

	nl := newNetworkLog(maxLogEntries, maxLogBytes)
	bigURL := "data:text/plain," + strings.Repeat("z", 10<<20)
	nl.add("Network.requestWillBeSent", []byte(`{"requestId":"big","request":{"url":"`+bigURL+`","method":"GET"},"type":"Other"}`))
	got, _ := nl.snapshot(false)
	if len(got) != 1 || len(got[0].url) > maxNetURLBytes+len("…") || !strings.HasPrefix(got[0].url, "data:text/plain,zzz") {
		t.Fatalf("a 10 MiB URL is kept as %d bytes", len(got[0].url))
	}
	long := "https://example.com/" + strings.Repeat("p", maxNetURLBytes)
	for i := 0; i < maxLogEntries; i++ {
		nl.add("Network.requestWillBeSent", []byte(`{"requestId":"r`+itoa(i)+`","request":{"url":"`+long+`","method":"GET"},"type":"Fetch"}`))
	}
	got, dropped = nl.snapshot(false)
	if nl.bytes > maxLogBytes || len(got) >= maxLogEntries || len(nl.byID) != len(got) {
		t.Fatalf("network buffer: %d bytes in %d entries (%d dropped, %d by id), bound %d bytes", nl.bytes, len(got), dropped, len(nl.byID), maxLogBytes)
	}
	nl.snapshot(true)
	if nl.bytes != 0 {
		t.Fatalf("a cleared buffer counts %d bytes", nl.bytes)
	}
}

// A paired backend's session knows the Browser Operator catalog only: Reins'
// own tools are unknown to it, as a call and as a browser_batch step, while
// an MCP agent's session runs them.
func TestOperatorCatalogHidesExtendedTools(t *testing.T) {
	e := NewEngine(Options{})
	defer e.Close()
	define(e, Info{Name: "reins_only", Extended: true, Batchable: true}, nil, func(context.Context, *call, *struct{}) (*Result, error) {
		return textResult("ran"), nil
	})
	agent := e.NewSession("agent:a1", "alice")
	if res := e.Call(context.Background(), agent, "reins_only", nil); res.IsError {
		t.Fatalf("an agent's call: %+v", res)
	}
	backend := e.NewSession("backend:b1", "Example CRM")
	backend.OperatorCatalog = true
	res := e.Call(context.Background(), backend, "reins_only", nil)
	if res.Code != wire.CodeUnknownTool || res.Content[0].Text != "[unknown_tool] Unknown tool: reins_only" {
		t.Fatalf("a backend's call: %+v", res)
	}
	res = e.Call(context.Background(), backend, "browser_batch", json.RawMessage(`{"steps":[{"tool":"reins_only","args":{}}]}`))
	if res.Code != wire.CodeUnknownTool || !strings.Contains(res.Content[len(res.Content)-1].Text, "Unknown tool: reins_only") {
		t.Fatalf("a backend's batch step: %+v", res)
	}
}
