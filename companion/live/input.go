package live

import (
	"fmt"
	"math"

	"github.com/reinshq/reins/companion/wire"
)

// handle acts on one message from a viewer's page.
func (s *Server) handle(v *viewer, m inMsg) {
	switch m.Kind {
	case KindTakeover:
		s.setTakeover(v, m.On)
	case KindMouse:
		s.input(v, func() (string, any, error) { return mouseCommand(m.MouseMsg, s.frameSize(v)) })
	case KindKey:
		s.input(v, func() (string, any, error) { return keyCommand(m.key()) })
	default:
		v.offerControl(encode(NoticeMsg{Kind: KindNotice, Message: fmt.Sprintf("Reins does not know the message kind %q.", m.Kind)}))
	}
}

// input sends one Input.dispatch* command, but only for the viewer holding
// take-over: watching alone never reaches the tab.
func (s *Server) input(v *viewer, build func() (string, any, error)) {
	s.mu.Lock()
	holds := s.holders[v.tab] == v
	s.mu.Unlock()
	if !holds {
		v.offerControl(encode(NoticeMsg{Kind: KindNotice, Message: "You are watching: turn on Take over to use the mouse and keyboard in this tab."}))
		return
	}
	method, params, err := build()
	if err != nil {
		v.offerControl(encode(NoticeMsg{Kind: KindNotice, Message: err.Error()}))
		return
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	if _, err := s.opts.Hub.CDP(ctx, v.tab, method, params, "", Client); err != nil {
		v.log.Info("live input not delivered", "method", method, "err", err)
		v.offerControl(encode(NoticeMsg{Kind: KindNotice, Message: "Your input did not reach the tab: " + err.Error()}))
		return
	}
	if v.cast != nil {
		v.cast.reattached()
	}
}

// frameSize is the tab's viewport in CSS pixels as the newest frame shows
// it, falling back to Page.getLayoutMetrics before the first frame.
func (s *Server) frameSize(v *viewer) Viewport {
	if v.cast != nil {
		if md, ok := v.cast.metadata(); ok {
			return Viewport{Width: md.Width, Height: md.Height}
		}
	}
	vp, err := s.viewport(v.tab)
	if err != nil {
		return Viewport{}
	}
	return vp
}

var mouseTypes = map[string]string{
	"move":  "mouseMoved",
	"down":  "mousePressed",
	"up":    "mouseReleased",
	"wheel": "mouseWheel",
}

var mouseButtons = map[string]bool{"": true, "none": true, "left": true, "middle": true, "right": true, "back": true, "forward": true}

// mouseCommand maps a mouse message onto Input.dispatchMouseEvent. The page
// sends fractions of the picture; the picture shows the whole visual
// viewport (metadata width × height in CSS pixels), so the fraction times
// that size is the point in the viewport's CSS pixels that the command
// wants.
func mouseCommand(m MouseMsg, vp Viewport) (string, any, error) {
	typ, ok := mouseTypes[m.Type]
	if !ok {
		return "", nil, fmt.Errorf("unknown mouse event type %q: %w", m.Type, wire.ErrBadParams)
	}
	if !mouseButtons[m.Button] {
		return "", nil, fmt.Errorf("unknown mouse button %q: %w", m.Button, wire.ErrBadParams)
	}
	if !finite(m.X) || !finite(m.Y) || !finite(m.DeltaX) || !finite(m.DeltaY) {
		return "", nil, fmt.Errorf("mouse coordinates must be numbers: %w", wire.ErrBadParams)
	}
	if vp.Width <= 0 || vp.Height <= 0 {
		return "", nil, fmt.Errorf("the tab's size is not known yet: %w", wire.ErrInternal)
	}
	button := m.Button
	if button == "" {
		button = "none"
	}
	p := map[string]any{
		"type":      typ,
		"x":         clamp01(m.X) * vp.Width,
		"y":         clamp01(m.Y) * vp.Height,
		"button":    button,
		"buttons":   m.Buttons,
		"modifiers": m.Modifiers & 15,
	}
	if typ == "mousePressed" || typ == "mouseReleased" {
		cc := m.ClickCount
		if cc < 1 {
			cc = 1
		}
		p["clickCount"] = cc
	}
	if typ == "mouseWheel" {
		p["deltaX"] = m.DeltaX
		p["deltaY"] = m.DeltaY
	}
	return "Input.dispatchMouseEvent", p, nil
}

// keyCommand maps a key message onto Input.dispatchKeyEvent. A key down
// that produces text is a keyDown with that text (Chromium then inserts it
// and fires keypress), one that does not is a rawKeyDown, as DevTools and
// Puppeteer send them; windowsVirtualKeyCode makes Backspace, Enter and the
// arrows act on the page.
func keyCommand(k KeyMsg) (string, any, error) {
	var typ string
	switch k.Type {
	case "down":
		typ = "rawKeyDown"
		if k.Text != "" {
			typ = "keyDown"
		}
	case "up":
		typ = "keyUp"
	case "char":
		typ = "char"
	default:
		return "", nil, fmt.Errorf("unknown key event type %q: %w", k.Type, wire.ErrBadParams)
	}
	if len(k.Key) > 64 || len(k.Code) > 64 || len(k.Text) > 64 {
		return "", nil, fmt.Errorf("key message too long: %w", wire.ErrBadParams)
	}
	p := map[string]any{
		"type":                  typ,
		"key":                   k.Key,
		"code":                  k.Code,
		"modifiers":             k.Modifiers & 15,
		"windowsVirtualKeyCode": k.KeyCode,
		"nativeVirtualKeyCode":  k.KeyCode,
	}
	if k.Text != "" && typ != "keyUp" && typ != "rawKeyDown" {
		p["text"] = k.Text
		p["unmodifiedText"] = k.Text
	}
	return "Input.dispatchKeyEvent", p, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func clamp01(f float64) float64 { return min(max(f, 0), 1) }

// setTakeover gives the tab to the viewer or takes it back. The person may
// have several views of one tab open; the latest one to ask holds it.
func (s *Server) setTakeover(v *viewer, on bool) {
	s.mu.Lock()
	cur := s.holders[v.tab]
	changed := false
	switch {
	case on && cur != v:
		s.holders[v.tab] = v
		changed = true
	case !on && cur == v:
		delete(s.holders, v.tab)
		changed = true
	}
	s.mu.Unlock()
	if !changed {
		v.offerControl(encode(TakeoverMsg{Kind: KindTakeover, Held: cur != nil, ByYou: cur == v}))
		return
	}
	v.log.Info("take over", "on", on)
	s.takeoverChanged(v.tab)
}

// takeoverChanged tells every viewer of the tab who holds it now.
func (s *Server) takeoverChanged(tab int) {
	s.mu.Lock()
	holder := s.holders[tab]
	var vs []*viewer
	for v := range s.viewers {
		if v.tab == tab {
			vs = append(vs, v)
		}
	}
	s.mu.Unlock()
	for _, v := range vs {
		v.offerControl(encode(TakeoverMsg{Kind: KindTakeover, Held: holder != nil, ByYou: holder == v}))
	}
	s.changed()
}
