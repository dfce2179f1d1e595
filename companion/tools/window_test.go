package tools_test

import (
	"strings"
	"testing"
)

func TestResizeWindow(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:resizer", "resizer")
	tab := r.newTab(s, "/text")
	out := r.ok(s, "resize_window", map[string]any{"tabId": tab, "width": 800, "height": 600})
	if !strings.Contains(out, "800×600") {
		t.Fatal(out)
	}
	var size []int
	r.js(s, tab, "[innerWidth, innerHeight]", &size)
	if size[0] != 800 || size[1] != 600 {
		t.Fatalf("viewport after resize: %v (%s)", size, out)
	}
	res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
	if w, h, _ := decodeShot(t, res); w != 800 || h != 600 {
		t.Fatalf("screenshot after resize %d×%d", w, h)
	}
	r.fails(s, "resize_window", map[string]any{"tabId": tab, "width": 10, "height": 600}, "bad_params")
}
