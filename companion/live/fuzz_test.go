package live

import (
	"bytes"
	"encoding/json"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// FuzzViewerMessages sends fuzzed messages (one a line) from a viewer's
// page over the real live socket, watching or holding take-over. Whatever
// arrives, the view keeps reading (a probe after them is answered), a
// watcher's messages never reach the tab, and what a holder's do reach it
// is only Input.dispatchMouseEvent inside the picture, with finite numbers,
// or Input.dispatchKeyEvent with short strings.
func FuzzViewerMessages(f *testing.F) {
	for _, seed := range []struct {
		takeover bool
		lines    string
	}{
		{true, `{"kind":"mouse","type":"down","x":0.5,"y":0.5,"button":"left","buttons":1,"clickCount":1}
{"kind":"mouse","type":"wheel","x":2,"y":-1,"deltaX":1e308,"deltaY":-5}
{"kind":"key","type":"down","key":"a","code":"KeyA","text":"a","keyCode":65}
{"kind":"key","type":"char","text":"é"}`},
		{true, `{"kind":"mouse","type":"move","x":"NaN","y":null}
{"kind":"mouse","type":"teleport"}
{"kind":"mouse","type":"down","button":"sideways"}
{"kind":"key","type":"up","key":"` + strings.Repeat("k", 100) + `"}
{"kind":"takeover","on":false}
{"kind":"mouse","type":"down","x":0.1,"y":0.1}`},
		{false, `{"kind":"mouse","type":"down","x":0.5,"y":0.5,"button":"left"}
{"kind":"key","type":"down","key":"Enter"}
{"kind":"takeover","on":"yes"}`},
		{false, `not json
[]
null
{"kind":1}
{}`},
	} {
		f.Add(seed.takeover, []byte(seed.lines))
	}
	f.Fuzz(func(t *testing.T, takeover bool, script []byte) {
		e := newEnv(t)
		v := e.view(t)
		v.waitKind(t, 0, KindHello)
		e.rec.waitN(t, "Page.startScreencast", 1)
		e.sendFrame(t, testJPEG(t, 8, 6, color.RGBA{1, 2, 3, 255}), 1, 800, 600, 1)
		v.waitKind(t, 0, KindFrame)
		if takeover {
			v.send(t, map[string]any{"kind": "takeover", "on": true})
			v.waitMsg(t, 0, "take-over granted", func(m map[string]any) bool { return m["kind"] == KindTakeover && m["byYou"] == true })
		}
		sent := 0
		for _, line := range bytes.Split(script, []byte("\n")) {
			if sent == 16 || len(line) > maxInBytes {
				break
			}
			if err := v.conn.Write(ctxT(t), websocket.MessageText, line); err != nil {
				t.Fatalf("the view stopped reading: %v", err)
			}
			sent++
		}
		// Messages are handled in order: the probe's notice comes after
		// every message above was.
		v.send(t, map[string]any{"kind": "fuzz-probe"})
		v.waitMsg(t, 0, "the probe's notice", func(m map[string]any) bool {
			msg, _ := m["message"].(string)
			return m["kind"] == KindNotice && strings.Contains(msg, "fuzz-probe")
		})
		mouse, keys := e.rec.all("Input.dispatchMouseEvent"), e.rec.all("Input.dispatchKeyEvent")
		if !takeover && len(mouse)+len(keys) > 0 {
			t.Fatalf("a watcher's messages reached the tab: %d mouse, %d key events", len(mouse), len(keys))
		}
		for _, c := range mouse {
			var p map[string]any
			if err := json.Unmarshal(c.Params, &p); err != nil {
				t.Fatalf("mouse event params %s: %v", c.Params, err)
			}
			x, xok := p["x"].(float64)
			y, yok := p["y"].(float64)
			if !xok || !yok || x < 0 || x > 800 || y < 0 || y > 600 {
				t.Fatalf("a mouse event outside the 800×600 picture: %s", c.Params)
			}
			for _, k := range []string{"deltaX", "deltaY"} {
				if d, ok := p[k].(float64); ok && (math.IsNaN(d) || math.IsInf(d, 0)) {
					t.Fatalf("a mouse event with %s %v: %s", k, d, c.Params)
				}
			}
			if typ := p["type"]; typ != "mouseMoved" && typ != "mousePressed" && typ != "mouseReleased" && typ != "mouseWheel" {
				t.Fatalf("a mouse event of type %v", typ)
			}
		}
		for _, c := range keys {
			var p struct{ Type, Key, Code, Text string }
			if err := json.Unmarshal(c.Params, &p); err != nil {
				t.Fatalf("key event params %s: %v", c.Params, err)
			}
			if len(p.Key) > 64 || len(p.Code) > 64 || len(p.Text) > 64 {
				t.Fatalf("a key event with a long string: %s", c.Params)
			}
			if p.Type != "rawKeyDown" && p.Type != "keyDown" && p.Type != "keyUp" && p.Type != "char" {
				t.Fatalf("a key event of type %q", p.Type)
			}
		}
	})
}
