package tools_test

import (
	"bytes"
	"encoding/base64"
	"image/jpeg"
	"math"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1.5 }

func TestComputerClicks(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:clicker", "clicker")
	tab := r.newTab(s, "/record")
	r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})

	for _, tc := range []struct {
		action string
		mods   string
		typ    string
		button int
		detail int
		shift  bool
	}{
		{"left_click", "", "click", 0, 1, false},
		{"left_click", "shift", "click", 0, 1, true},
		{"right_click", "", "contextmenu", 2, 1, false},
		{"double_click", "", "dblclick", 0, 2, false},
		{"triple_click", "", "click", 0, 3, false},
	} {
		t.Run(tc.action+tc.mods, func(t *testing.T) {
			r.clearLog(s, tab)
			out := r.ok(s, "computer", map[string]any{"action": tc.action, "tabId": tab, "coordinate": []int{200, 180}, "modifiers": tc.mods})
			if !strings.Contains(out, "pad") {
				t.Errorf("result does not name the element: %s", out)
			}
			evs := only(r.log(s, tab), tc.typ)
			if len(evs) == 0 {
				t.Fatalf("no %s recorded: %+v", tc.typ, r.log(s, tab))
			}
			last := evs[len(evs)-1]
			if !near(last.X, 200) || !near(last.Y, 180) || last.Button != tc.button || last.ID != "pad" || last.Shift != tc.shift {
				t.Fatalf("%s recorded %+v", tc.typ, last)
			}
			downs := only(r.log(s, tab), "mousedown")
			if len(downs) != tc.detail {
				t.Fatalf("%d mousedowns for %s", len(downs), tc.action)
			}
			// The click count rises with each press, as a person's would.
			for i, d := range downs {
				if d.Detail != i+1 || d.Button != tc.button {
					t.Fatalf("mousedown %d = %+v", i, d)
				}
			}
		})
	}

	t.Run("click by ref", func(t *testing.T) {
		r.clearLog(s, tab)
		tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
		ref := refFor(t, tree, `"Press me"`)
		out := r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": ref})
		if !strings.Contains(out, "Press me") {
			t.Errorf("result: %s", out)
		}
		clicks := only(r.log(s, tab), "click")
		if len(clicks) != 1 || clicks[0].ID != "btn" || !near(clicks[0].X, 660) || !near(clicks[0].Y, 120) {
			t.Fatalf("clicks = %+v", clicks)
		}
		var title string
		r.js(s, tab, "document.title", &title)
		if title != "clicked" {
			t.Fatalf("button handler did not run: title %q", title)
		}
	})

	t.Run("click far element by ref scrolls it into view", func(t *testing.T) {
		r.clearLog(s, tab)
		tree := r.ok(s, "read_page", map[string]any{"tabId": tab})
		ref := refFor(t, tree, `"Far away"`)
		r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": ref})
		clicks := only(r.log(s, tab), "click")
		if len(clicks) != 1 || clicks[0].ID != "far" {
			t.Fatalf("clicks = %+v", clicks)
		}
		r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "scrollTo(0, 0)"})
	})

	t.Run("hover", func(t *testing.T) {
		r.clearLog(s, tab)
		r.ok(s, "computer", map[string]any{"action": "hover", "tabId": tab, "coordinate": []int{650, 320}})
		overs := only(r.log(s, tab), "mouseover")
		if len(overs) == 0 || overs[len(overs)-1].ID != "hov" {
			t.Fatalf("mouseover = %+v", overs)
		}
		if len(only(r.log(s, tab), "click")) != 0 {
			t.Fatal("hover clicked")
		}
	})

	t.Run("coordinate outside the screenshot", func(t *testing.T) {
		r.fails(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{5000, 10}}, wire.CodeBadParams)
	})
	t.Run("missing target", func(t *testing.T) {
		r.fails(s, "computer", map[string]any{"action": "left_click", "tabId": tab}, wire.CodeBadParams)
	})
	t.Run("unknown action", func(t *testing.T) {
		r.fails(s, "computer", map[string]any{"action": "juggle", "tabId": tab}, wire.CodeBadParams)
	})
}

func TestComputerKeyboard(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:typist", "typist")
	tab := r.newTab(s, "/record")
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{650, 210}})
	r.clearLog(s, tab)

	r.ok(s, "computer", map[string]any{"action": "type", "tabId": tab, "text": "héllo wörld"})
	var v string
	r.js(s, tab, "document.getElementById('name').value", &v)
	if v != "héllo wörld" {
		t.Fatalf("typed value %q", v)
	}
	inputs := only(r.log(s, tab), "input")
	if len(inputs) == 0 || inputs[len(inputs)-1].Value != "héllo wörld" {
		t.Fatalf("input events %+v", inputs)
	}

	r.clearLog(s, tab)
	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "Left", "repeat": 5})
	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "shift+Home BackSpace"})
	r.js(s, tab, "document.getElementById('name').value", &v)
	if v != "wörld" {
		t.Fatalf("after Left×5, shift+Home, BackSpace the value is %q", v)
	}
	keys := only(r.log(s, tab), "keydown")
	var names []string
	for _, k := range keys {
		names = append(names, k.Key)
	}
	if got := strings.Join(names, ","); got != "ArrowLeft,ArrowLeft,ArrowLeft,ArrowLeft,ArrowLeft,Shift,Home,Backspace" {
		t.Fatalf("keydowns = %s", got)
	}
	for _, k := range keys {
		if k.Key == "Home" && (!k.Shift || k.Code != "Home") {
			t.Fatalf("Home keydown = %+v", k)
		}
	}

	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "ctrl+a"})
	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "Delete"})
	r.js(s, tab, "document.getElementById('name').value", &v)
	if v != "" {
		t.Fatalf("ctrl+a Delete left %q", v)
	}

	r.clearLog(s, tab)
	r.ok(s, "computer", map[string]any{"action": "type", "tabId": tab, "text": "Ada\n"})
	evs := r.log(s, tab)
	if len(only(evs, "submit")) != 1 {
		t.Fatalf("a newline did not submit the form: %+v", evs)
	}

	r.fails(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "ctrl+nosuchkey"}, wire.CodeBadParams)
	r.fails(s, "computer", map[string]any{"action": "type", "tabId": tab}, wire.CodeBadParams)
}

func TestComputerScrollAndDrag(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:scroller", "scroller")
	tab := r.newTab(s, "/record")
	r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})

	out := r.ok(s, "computer", map[string]any{"action": "scroll", "tabId": tab, "coordinate": []int{300, 300}, "scroll_direction": "down", "scroll_amount": 3})
	var y float64
	r.js(s, tab, "scrollY", &y)
	if y < 250 {
		t.Fatalf("scroll down 3 ticks moved to %v: %s", y, out)
	}
	wheels := only(r.log(s, tab), "wheel")
	if len(wheels) != 1 || !near(wheels[0].X, 300) || wheels[0].DY <= 0 {
		t.Fatalf("wheel events %+v", wheels)
	}
	r.ok(s, "computer", map[string]any{"action": "scroll", "tabId": tab, "scroll_direction": "up", "scroll_amount": 10})
	r.js(s, tab, "scrollY", &y)
	if y != 0 {
		t.Fatalf("scroll up left scrollY=%v", y)
	}

	tree := r.ok(s, "read_page", map[string]any{"tabId": tab})
	ref := refFor(t, tree, "Far away")
	r.ok(s, "computer", map[string]any{"action": "scroll_to", "tabId": tab, "ref": ref})
	var inView bool
	r.js(s, tab, "(() => { const b = document.getElementById('far').getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; })()", &inView)
	if !inView {
		t.Fatal("scroll_to did not bring the element into view")
	}
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "scrollTo(0, 0)"})
	r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})

	r.clearLog(s, tab)
	r.ok(s, "computer", map[string]any{"action": "left_click_drag", "tabId": tab, "start_coordinate": []int{850, 450}, "coordinate": []int{1000, 550}})
	evs := r.log(s, tab)
	downs, ups, moves := only(evs, "mousedown"), only(evs, "mouseup"), only(evs, "dragmove")
	if len(downs) != 1 || !near(downs[0].X, 850) || !near(downs[0].Y, 450) || downs[0].ID != "drag" {
		t.Fatalf("mousedown %+v", downs)
	}
	if len(ups) != 1 || !near(ups[0].X, 1000) || !near(ups[0].Y, 550) {
		t.Fatalf("mouseup %+v", ups)
	}
	if len(moves) < 5 || !near(moves[len(moves)-1].X, 1000) {
		t.Fatalf("drag moves %+v", moves)
	}
}

func decodeShot(t *testing.T, res *tools.Result) (w, h, b64len int) {
	t.Helper()
	for _, c := range res.Content {
		if c.Type != "image" {
			continue
		}
		if c.MimeType != "image/jpeg" {
			t.Fatalf("mime %s", c.MimeType)
		}
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("screenshot does not decode as JPEG: %v", err)
		}
		b := img.Bounds()
		return b.Dx(), b.Dy(), len(c.Data)
	}
	t.Fatal("no image in result")
	return
}

// redAt reports whether the screenshot pixel at (x, y) is red.
func redAt(t *testing.T, res *tools.Result, x, y int) bool {
	t.Helper()
	for _, c := range res.Content {
		if c.Type != "image" {
			continue
		}
		data, _ := base64.StdEncoding.DecodeString(c.Data)
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r, g, b, _ := img.At(x, y).RGBA()
		return r>>8 > 200 && g>>8 < 60 && b>>8 < 60
	}
	t.Fatal("no image")
	return false
}

func TestScreenshotGeometry(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:geometry", "geometry")
	tab := r.newTab(s, "/colors")
	r.ok(s, "resize_window", map[string]any{"tabId": tab, "width": 1280, "height": 800})
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "scrollTo(0, 1200)"})
	// The box is at CSS (300..500, 300..400) in the scrolled viewport.
	res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
	if !redAt(t, res, 400, 350) || redAt(t, res, 400, 250) || redAt(t, res, 600, 350) {
		t.Fatal("the screenshot does not show the scrolled viewport")
	}
	zoom := r.call(s, "computer", map[string]any{"action": "zoom", "tabId": tab, "region": []int{250, 250, 550, 450}})
	w, h, _ := decodeShot(t, zoom)
	// 300×200 at 4×: the box fills the middle, white around it.
	if w != 1200 || h != 800 || !redAt(t, zoom, 600, 400) || redAt(t, zoom, 100, 100) {
		t.Fatalf("zoom of a scrolled page: %d×%d", w, h)
	}

	t.Run("high DPI", func(t *testing.T) {
		ctx := ctxFor(t)
		if _, err := shared.hub.CDP(ctx, tab, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 800, "deviceScaleFactor": 2, "mobile": false}, "", "test"); err != nil {
			t.Fatal(err)
		}
		defer shared.hub.CDP(ctx, tab, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false}, "", "test")
		res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
		w, h, _ := decodeShot(t, res)
		if w != 1280 || h != 800 || !redAt(t, res, 400, 350) || redAt(t, res, 400, 250) {
			t.Fatalf("a DPR 2 viewport of 1280×800 CSS px gave %d×%d or the wrong area", w, h)
		}
	})
}

func TestScreenshotsAndZoom(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:photographer", "photographer")
	tab := r.newTab(s, "/record")
	r.ok(s, "resize_window", map[string]any{"tabId": tab, "width": 1280, "height": 800})
	res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
	w, h, n := decodeShot(t, res)
	if w != 1280 || h != 800 || n > 1<<20 {
		t.Fatalf("1280×800 viewport gave %d×%d, %d base64 bytes", w, h, n)
	}

	t.Run("large viewport is scaled and clicks map back", func(t *testing.T) {
		r.ok(s, "resize_window", map[string]any{"tabId": tab, "width": 2000, "height": 1250})
		res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
		w, h, n := decodeShot(t, res)
		if w != 1400 || h != 875 || n > 1<<20 {
			t.Fatalf("2000×1250 viewport gave %d×%d, %d bytes", w, h, n)
		}
		r.clearLog(s, tab)
		// (700, 437.5) in the screenshot is (1000, 625) CSS px.
		r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []float64{700, 437.5}})
		clicks := only(r.log(s, tab), "click")
		if len(clicks) != 1 || !near(clicks[0].X, 1000) || !near(clicks[0].Y, 625) {
			t.Fatalf("click mapped to %+v", clicks)
		}
		r.ok(s, "resize_window", map[string]any{"tabId": tab, "width": 1280, "height": 800})
	})

	t.Run("noisy page steps quality down instead of refusing", func(t *testing.T) {
		r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/noise"})
		res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
		w, h, n := decodeShot(t, res)
		if max(w, h) > 1400 || n > 1<<20 {
			t.Fatalf("noise screenshot %d×%d, %d base64 bytes", w, h, n)
		}
	})

	t.Run("zoom", func(t *testing.T) {
		r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/record"})
		r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
		res := r.call(s, "computer", map[string]any{"action": "zoom", "tabId": tab, "region": []int{600, 100, 720, 140}})
		if res.IsError {
			t.Fatal(text(res))
		}
		w, h, _ := decodeShot(t, res)
		if w != 480 || h != 160 {
			t.Fatalf("zoom of 120×40 px gave %d×%d, want 4× scale", w, h)
		}
		if !strings.Contains(text(res), "img_") {
			t.Fatalf("zoom has no image id: %s", text(res))
		}
		r.fails(s, "computer", map[string]any{"action": "zoom", "tabId": tab}, wire.CodeBadParams)
	})

	t.Run("wait", func(t *testing.T) {
		out := r.ok(s, "computer", map[string]any{"action": "wait", "tabId": tab, "duration": 0.05})
		if !strings.Contains(out, "Waited") {
			t.Fatal(out)
		}
		r.fails(s, "computer", map[string]any{"action": "wait", "tabId": tab, "duration": 31}, wire.CodeBadParams)
	})
}
