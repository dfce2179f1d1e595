package tools

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

func TestChordsOnEveryPlatform(t *testing.T) {
	down := func(seq string, mac bool) map[string]any {
		t.Helper()
		combos, err := parseKeys(seq)
		if err != nil {
			t.Fatal(err)
		}
		evs := combos[0].events(mac)
		for _, e := range evs {
			if e["type"] == "rawKeyDown" || e["type"] == "keyDown" {
				if k := e["key"].(string); k != "Control" && k != "Meta" && k != "Shift" && k != "Alt" {
					return e
				}
			}
		}
		t.Fatalf("%s: no key down in %v", seq, evs)
		return nil
	}
	for _, tc := range []struct {
		seq      string
		mac      bool
		mods     int
		key      string
		commands []string
	}{
		{"CmdOrCtrl+k", false, modCtrl, "k", nil},
		{"CmdOrCtrl+k", true, modMeta, "k", nil},
		{"cmd+a", true, modMeta, "a", []string{"selectAll"}},
		{"ctrl+a", true, modCtrl, "a", []string{"selectAll"}},
		{"ctrl+a", false, modCtrl, "a", nil},
		{"cmd+shift+z", true, modMeta | modShift, "Z", []string{"redo"}},
		{"ctrl+c", true, modCtrl, "c", []string{"copy"}},
		{"alt+BackSpace", true, modAlt, "Backspace", []string{"deleteWordBackward"}},
		{"cmd+shift+Left", true, modMeta | modShift, "ArrowLeft", []string{"moveToBeginningOfLineAndModifySelection"}},
		{"Left", true, 0, "ArrowLeft", nil},
		{"Ctrl+K", true, modCtrl, "k", nil},
	} {
		e := down(tc.seq, tc.mac)
		if e["modifiers"] != tc.mods || e["key"] != tc.key {
			t.Errorf("%s (mac %v): modifiers %v key %v, want %d %s", tc.seq, tc.mac, e["modifiers"], e["key"], tc.mods, tc.key)
		}
		got, _ := e["commands"].([]string)
		if strings.Join(got, ",") != strings.Join(tc.commands, ",") {
			t.Errorf("%s (mac %v): commands %v, want %v", tc.seq, tc.mac, got, tc.commands)
		}
	}
	// The primary modifier is never sent as such, and is pressed once.
	combos, _ := parseKeys("ctrl+CmdOrCtrl+s")
	var presses []string
	for _, e := range combos[0].events(false) {
		presses = append(presses, fmt.Sprint(e["type"], ":", e["key"]))
	}
	if got := strings.Join(presses, " "); got != "rawKeyDown:Control rawKeyDown:s keyUp:s keyUp:Control" {
		t.Errorf("ctrl+CmdOrCtrl+s = %s", got)
	}
	if got := clickModifiers(modPrimary|modShift, true); got != modMeta|modShift {
		t.Errorf("clickModifiers on macOS = %d", got)
	}
	if got := clickModifiers(modPrimary, false); got != modCtrl {
		t.Errorf("clickModifiers elsewhere = %d", got)
	}
}

func TestFullPageAndElementScale(t *testing.T) {
	for _, tc := range []struct{ w, h, want float64 }{
		{1280, 4000, 1}, {1280, 12000, 0.5}, {2800, 1000, 0.5}, {1280, 16000, 6000.0 / 16000},
	} {
		s := fullPageScale(tc.w, tc.h)
		if math.Abs(s-tc.want) > 1e-9 {
			t.Errorf("fullPageScale(%g, %g) = %g, want %g", tc.w, tc.h, s, tc.want)
		}
		if tc.w*s > maxEdge+0.5 || tc.h*s > maxTallEdge+0.5 {
			t.Errorf("%g×%g scales to %g×%g", tc.w, tc.h, tc.w*s, tc.h*s)
		}
	}
	for _, tc := range []struct{ w, h, want float64 }{
		{100, 40, maxElementScale}, {1400, 200, 1}, {2800, 100, 0.5}, {0, 0, maxElementScale},
	} {
		if s := elementScale(tc.w, tc.h); math.Abs(s-tc.want) > 1e-9 {
			t.Errorf("elementScale(%g, %g) = %g, want %g", tc.w, tc.h, s, tc.want)
		}
	}
}

func TestFrameTableLimits(t *testing.T) {
	ft := newFrameTable()
	for i := 0; i < maxFrameRecords; i++ {
		ft.record(fmt.Sprintf("F%d", i))
	}
	// F0 is used again, so F1 is the least recently used when one more comes.
	ft.record("F0")
	extra := ft.record("extra")
	if len(ft.byKey) != maxFrameRecords || len(ft.byID) != maxFrameRecords {
		t.Fatalf("%d records, %d ids; the limit is %d", len(ft.byKey), len(ft.byID), maxFrameRecords)
	}
	if _, ok := ft.byID["F1"]; ok {
		t.Fatal("the least recently used frame was kept")
	}
	if _, ok := ft.byID["F0"]; !ok {
		t.Fatal("a frame used again was forgotten")
	}
	if extra.key != maxFrameRecords+1 {
		t.Fatalf("the new frame got number %d; numbers are never reused", extra.key)
	}

	ts := &tabState{id: 4, frames: newFrameTable()}
	f := ts.frames.record("F")
	if got, err := ts.frameOfRef("ref_12"); got != nil || err != nil {
		t.Fatalf("a main ref: %v, %v", got, err)
	}
	if got, err := ts.frameOfRef(fmt.Sprintf("ref_f%d_3", f.key)); got != f || err != nil {
		t.Fatalf("a frame's ref: %v, %v", got, err)
	}
	for ref, want := range map[string]string{"ref_f9_1": "never issued", "ref_f0_1": "never issued"} {
		if _, err := ts.frameOfRef(ref); err == nil || wire.CodeOf(err) != wire.CodeBadParams || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", ref, err)
		}
	}
	delete(ts.frames.byKey, f.key)
	if _, err := ts.frameOfRef(fmt.Sprintf("ref_f%d_3", f.key)); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("a ref of a forgotten frame: %v", err)
	}
}

func TestChildSessionsAreBounded(t *testing.T) {
	h := hub.New(hub.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer h.Close()
	e := &Engine{hub: h, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ts := &tabState{id: 1, e: e, frames: newFrameTable(), watchers: map[*watcher]struct{}{}}
	attach := func(i int) {
		params, _ := json.Marshal(map[string]any{"sessionId": fmt.Sprintf("S%d", i), "targetInfo": map[string]any{"targetId": fmt.Sprintf("T%d", i), "type": "iframe"}})
		ts.targetEvent(hub.TabEvent{Kind: hub.TabCDPEvent, Method: "Target.attachedToTarget", Params: params})
	}
	for i := 0; i < maxChildSessions+10; i++ {
		attach(i)
	}
	e.bg.Wait()
	if len(ts.frames.sessions) != maxChildSessions {
		t.Fatalf("%d sessions; the limit is %d", len(ts.frames.sessions), maxChildSessions)
	}
	if _, ok := ts.frames.sessions[fmt.Sprintf("T%d", maxChildSessions)]; ok {
		t.Fatal("a session past the limit was kept")
	}
	params, _ := json.Marshal(map[string]any{"sessionId": "S3", "targetId": "T3"})
	ts.targetEvent(hub.TabEvent{Kind: hub.TabCDPEvent, Method: "Target.detachedFromTarget", Params: params})
	if _, ok := ts.frames.sessions["T3"]; ok {
		t.Fatal("a detached session was kept")
	}
	// A worker is no frame.
	params, _ = json.Marshal(map[string]any{"sessionId": "W", "targetInfo": map[string]any{"targetId": "TW", "type": "worker"}})
	ts.targetEvent(hub.TabEvent{Kind: hub.TabCDPEvent, Method: "Target.attachedToTarget", Params: params})
	if _, ok := ts.frames.sessions["TW"]; ok {
		t.Fatal("a worker was taken for a frame")
	}
}

func TestTextValue(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{{nil, ""}, {"a\nb", "a\nb"}, {42.0, "42"}, {true, "true"}, {[]any{"x"}, `["x"]`}} {
		if got := textValue(tc.in); got != tc.want {
			t.Errorf("textValue(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
