package live

import (
	"errors"
	"math"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestMouseCommand(t *testing.T) {
	vp := Viewport{Width: 1280, Height: 800}
	cases := []struct {
		name string
		in   MouseMsg
		vp   Viewport
		want map[string]any
		err  bool
	}{
		{"move at the centre", MouseMsg{Type: "move", X: 0.5, Y: 0.5}, vp,
			map[string]any{"type": "mouseMoved", "x": 640.0, "y": 400.0, "button": "none"}, false},
		{"left press", MouseMsg{Type: "down", X: 0.25, Y: 0.75, Button: "left", Buttons: 1, ClickCount: 1}, vp,
			map[string]any{"type": "mousePressed", "x": 320.0, "y": 600.0, "button": "left", "buttons": 1, "clickCount": 1}, false},
		{"release defaults clickCount to 1", MouseMsg{Type: "up", X: 0, Y: 0, Button: "right"}, vp,
			map[string]any{"type": "mouseReleased", "x": 0.0, "y": 0.0, "button": "right", "clickCount": 1}, false},
		{"double click", MouseMsg{Type: "down", X: 1, Y: 1, Button: "left", ClickCount: 2}, Viewport{Width: 640, Height: 400},
			map[string]any{"type": "mousePressed", "x": 640.0, "y": 400.0, "clickCount": 2}, false},
		{"wheel carries deltas", MouseMsg{Type: "wheel", X: 0.5, Y: 0.5, DeltaX: 3, DeltaY: -120}, vp,
			map[string]any{"type": "mouseWheel", "deltaX": 3.0, "deltaY": -120.0}, false},
		{"outside the picture is clamped", MouseMsg{Type: "move", X: -0.2, Y: 1.7}, vp,
			map[string]any{"x": 0.0, "y": 800.0}, false},
		{"modifiers keep the four CDP bits", MouseMsg{Type: "move", X: 0.5, Y: 0.5, Modifiers: 0xff}, vp,
			map[string]any{"modifiers": 15}, false},
		{"unknown type", MouseMsg{Type: "teleport"}, vp, nil, true},
		{"unknown button", MouseMsg{Type: "down", Button: "fourth"}, vp, nil, true},
		{"NaN", MouseMsg{Type: "move", X: math.NaN()}, vp, nil, true},
		{"size unknown", MouseMsg{Type: "move", X: 0.5, Y: 0.5}, Viewport{}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method, params, err := mouseCommand(tc.in, tc.vp)
			if tc.err {
				if err == nil {
					t.Fatalf("accepted %+v", tc.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if method != "Input.dispatchMouseEvent" {
				t.Fatalf("method %s", method)
			}
			p := params.(map[string]any)
			for k, want := range tc.want {
				if p[k] != want {
					t.Errorf("%s = %v (%T), want %v", k, p[k], p[k], want)
				}
			}
		})
	}
}

func TestKeyCommand(t *testing.T) {
	cases := []struct {
		in   KeyMsg
		want map[string]any
		text bool
	}{
		{KeyMsg{Type: "down", Key: "a", Code: "KeyA", Text: "a", KeyCode: 65}, map[string]any{"type": "keyDown", "text": "a", "windowsVirtualKeyCode": 65}, true},
		{KeyMsg{Type: "down", Key: "Backspace", Code: "Backspace", KeyCode: 8}, map[string]any{"type": "rawKeyDown", "windowsVirtualKeyCode": 8}, false},
		{KeyMsg{Type: "down", Key: "Enter", Code: "Enter", Text: "\r", KeyCode: 13}, map[string]any{"type": "keyDown", "text": "\r"}, true},
		{KeyMsg{Type: "up", Key: "a", Code: "KeyA", Text: "a", KeyCode: 65}, map[string]any{"type": "keyUp"}, false},
		{KeyMsg{Type: "char", Key: "é", Text: "é"}, map[string]any{"type": "char", "text": "é"}, true},
		{KeyMsg{Type: "down", Key: "A", Code: "KeyA", Text: "A", Modifiers: 8, KeyCode: 65}, map[string]any{"modifiers": 8}, true},
	}
	for _, tc := range cases {
		method, params, err := keyCommand(tc.in)
		if err != nil || method != "Input.dispatchKeyEvent" {
			t.Fatalf("%+v: %s %v", tc.in, method, err)
		}
		p := params.(map[string]any)
		for k, want := range tc.want {
			if p[k] != want {
				t.Errorf("%+v: %s = %v, want %v", tc.in, k, p[k], want)
			}
		}
		if _, has := p["text"]; has != tc.text {
			t.Errorf("%+v: text present = %v, want %v", tc.in, has, tc.text)
		}
	}
	if _, _, err := keyCommand(KeyMsg{Type: "press"}); !errors.Is(err, wire.ErrBadParams) {
		t.Fatalf("unknown key type: %v", err)
	}
}

func TestAdapterStepsDownOnDropsAndUpWhenKeepingUp(t *testing.T) {
	a := adapter{level: startLevel}
	if lv, changed := a.windowDone(0.5); !changed || lv != startLevel+1 {
		t.Fatalf("heavy drops: level %d changed %v", lv, changed)
	}
	if _, changed := a.windowDone(0.1); changed {
		t.Fatal("light drops changed the level")
	}
	for i := 0; i < upAfter-1; i++ {
		if _, changed := a.windowDone(0); changed {
			t.Fatalf("stepped up after %d clean windows", i+1)
		}
	}
	if lv, changed := a.windowDone(0); !changed || lv != startLevel {
		t.Fatalf("after %d clean windows: level %d changed %v", upAfter, lv, changed)
	}
	// Bounded at both ends.
	for i := 0; i < 20; i++ {
		a.windowDone(1)
	}
	if a.level != len(levels)-1 {
		t.Fatalf("level %d after many bad windows", a.level)
	}
	for i := 0; i < 20*upAfter; i++ {
		a.windowDone(0)
	}
	if a.level != 0 {
		t.Fatalf("level %d after many good windows", a.level)
	}
}
