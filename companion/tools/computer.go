package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

type computerArgs struct {
	Action          string    `json:"action" jsonschema:"what to do"`
	TabID           int       `json:"tabId" jsonschema:"tab id"`
	Coordinate      []float64 `json:"coordinate,omitempty" jsonschema:"[x, y] in screenshot pixels: where to click, hover or scroll, or where a drag ends"`
	Ref             string    `json:"ref,omitempty" jsonschema:"element ref (ref_12) instead of a coordinate; screenshot captures just it; left_click_drag starts there"`
	TargetRef       string    `json:"target_ref,omitempty" jsonschema:"for left_click_drag: ref of the element to drop on"`
	FullPage        bool      `json:"fullPage,omitempty" jsonschema:"for screenshot: the whole page, not just the viewport"`
	Text            string    `json:"text,omitempty" jsonschema:"for type: the text to type; for key: keys in xdotool style, space separated (\"ctrl+a Delete\", \"Return\")"`
	ScrollDirection string    `json:"scroll_direction,omitempty" jsonschema:"for scroll: up, down, left or right"`
	ScrollAmount    int       `json:"scroll_amount,omitempty" jsonschema:"for scroll: wheel ticks (default 3)"`
	Duration        float64   `json:"duration,omitempty" jsonschema:"for wait: seconds to wait, at most 30"`
	StartCoordinate []float64 `json:"start_coordinate,omitempty" jsonschema:"for left_click_drag: [x, y] where the drag starts"`
	Region          []float64 `json:"region,omitempty" jsonschema:"for zoom: [x0, y0, x1, y1] to capture"`
	Modifiers       string    `json:"modifiers,omitempty" jsonschema:"for clicks: modifier keys to hold, e.g. \"shift\" or \"ctrl+shift\""`
	Repeat          int       `json:"repeat,omitempty" jsonschema:"for key: times to press (default 1)"`
}

var computerActions = []string{"screenshot", "left_click", "right_click", "double_click", "triple_click", "hover",
	"type", "key", "scroll", "scroll_to", "wait", "left_click_drag", "zoom"}

func registerComputer(e *Engine) {
	define(e, Info{
		Name: "computer",
		Description: "Look at and operate a tab with mouse and keyboard. screenshot returns a JPEG whose pixels are the coordinates you pass; " +
			"clicks, hover and scroll take a coordinate or a ref; type inserts text at the focus; key presses xdotool keys or chords (ctrl+k); " +
			"zoom captures a region larger. Actions that change the page are refused if the tab left the origin you last saw.",
		Destructive: true, Mutating: true, Batchable: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "action", computerActions...)
		enum(s, "scroll_direction", "up", "down", "left", "right")
		items(s, "coordinate", 2)
		items(s, "start_coordinate", 2)
		items(s, "region", 4)
		bounds(s, "scroll_amount", 0, 50)
		bounds(s, "duration", 0, 30)
		bounds(s, "repeat", 0, 100)
	}, runComputer)
}

func runComputer(ctx context.Context, c *call, in *computerArgs) (*Result, error) {
	switch in.Action {
	case "screenshot":
		if in.FullPage || in.Ref != "" {
			ts, _, err := c.page(ctx, in.TabID, accessRead)
			if err != nil {
				return nil, err
			}
			if in.Ref != "" {
				return c.elementShot(ctx, ts, in.TabID, in.Ref)
			}
			return c.fullPage(ctx, ts, in.TabID)
		}
		return c.screenshot(ctx, in.TabID)
	case "zoom":
		return c.zoom(ctx, in)
	case "wait":
		return c.wait(ctx, in)
	case "left_click", "right_click", "double_click", "triple_click":
		return c.click(ctx, in)
	case "hover":
		return c.hover(ctx, in)
	case "type":
		return c.typeText(ctx, in)
	case "key":
		return c.key(ctx, in)
	case "scroll":
		return c.scroll(ctx, in)
	case "scroll_to":
		return c.scrollTo(ctx, in)
	case "left_click_drag":
		return c.drag(ctx, in)
	}
	return nil, wire.Errorf(wire.CodeBadParams, "unknown action %q; use one of %s", in.Action, strings.Join(computerActions, ", "))
}

// ---- looking

func (c *call) screenshot(ctx context.Context, tabID int) (*Result, error) {
	ts, _, err := c.page(ctx, tabID, accessRead)
	if err != nil {
		return nil, err
	}
	var vp viewportInfo
	href, err := ts.helper(ctx, c.s.Label, "viewport", &vp)
	if err != nil {
		return nil, err
	}
	if vp.W <= 0 || vp.H <= 0 {
		return nil, wire.Errorf(wire.CodeInternal, "tab %d has no viewport (is its window minimised?)", tabID)
	}
	sh, err := c.capture(ctx, tabID, vp, nil, shotScale(vp.W, vp.H))
	if err != nil {
		return nil, err
	}
	c.s.setView(tabID, viewMap{scale: float64(sh.width) / float64(vp.W), width: vp.W, height: vp.H})
	c.observe(tabID, href)
	id := c.s.addImage(&image{tab: tabID, data: sh.data, width: sh.width, height: sh.height})
	text := fmt.Sprintf("Screenshot %s of tab %d (%s): %d×%d px", id, tabID, href, sh.width, sh.height)
	if sh.width != vp.W {
		text += fmt.Sprintf(", scaled from a %d×%d viewport; give coordinates in screenshot pixels", vp.W, vp.H)
	}
	return &Result{Content: []Content{{Type: "text", Text: text}, {Type: "image", Data: sh.b64, MimeType: "image/jpeg"}}}, nil
}

func (c *call) zoom(ctx context.Context, in *computerArgs) (*Result, error) {
	if len(in.Region) != 4 {
		return nil, wire.Errorf(wire.CodeBadParams, "zoom needs region [x0, y0, x1, y1]")
	}
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	v, err := c.viewFor(ctx, ts)
	if err != nil {
		return nil, err
	}
	x0, y0 := v.toCSS(math.Min(in.Region[0], in.Region[2]), math.Min(in.Region[1], in.Region[3]))
	x1, y1 := v.toCSS(math.Max(in.Region[0], in.Region[2]), math.Max(in.Region[1], in.Region[3]))
	if x1-x0 < 1 || y1-y0 < 1 {
		return nil, wire.Errorf(wire.CodeBadParams, "region is empty")
	}
	var vp viewportInfo
	href, err := ts.helper(ctx, c.s.Label, "viewport", &vp)
	if err != nil {
		return nil, err
	}
	x0, y0 = math.Max(0, x0), math.Max(0, y0)
	x1, y1 = math.Min(float64(vp.W), x1), math.Min(float64(vp.H), y1)
	if x1 <= x0 || y1 <= y0 {
		return nil, wire.Errorf(wire.CodeBadParams, "region lies outside the viewport")
	}
	w, h := x1-x0, y1-y0
	scale := math.Min(maxZoom, float64(maxEdge)/math.Max(w, h))
	sh, err := c.capture(ctx, in.TabID, vp, &rectF{X: x0, Y: y0, W: w, H: h}, scale)
	if err != nil {
		return nil, err
	}
	c.observe(in.TabID, href)
	id := c.s.addImage(&image{tab: in.TabID, data: sh.data, width: sh.width, height: sh.height})
	text := fmt.Sprintf("Zoom %s of tab %d: region [%g, %g, %g, %g] at %d×%d px. Coordinates for other actions stay in full-screenshot pixels.",
		id, in.TabID, in.Region[0], in.Region[1], in.Region[2], in.Region[3], sh.width, sh.height)
	return &Result{Content: []Content{{Type: "text", Text: text}, {Type: "image", Data: sh.b64, MimeType: "image/jpeg"}}}, nil
}

func (c *call) wait(ctx context.Context, in *computerArgs) (*Result, error) {
	if _, _, err := c.tab(in.TabID, accessRead); err != nil {
		return nil, err
	}
	d := in.Duration
	if d <= 0 {
		d = 1
	}
	if d > 30 {
		return nil, wire.Errorf(wire.CodeBadParams, "wait is at most 30 seconds")
	}
	// The agent asked for this pause; it still ends with the call's context.
	timer := time.NewTimer(time.Duration(d * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return textResult(fmt.Sprintf("Waited %g s.", d)), nil
}

// ---- pointing

// target is where a pointer action lands, in CSS px.
type target struct {
	x, y    float64
	desc    string
	covered string
	href    string
	label   string // how to name the spot in results
}

type probeReply struct {
	Desc  string `json:"desc"`
	Frame *struct {
		opaqueFrame
		OX float64 `json:"ox"`
		OY float64 `json:"oy"`
	} `json:"frame"`
}

// probeFrames names what lies at a point inside frames the main helper
// cannot enter, for the action's report.
func (c *call) probeFrames(ctx context.Context, ts *tabState, r *probeReply, x, y float64) {
	var parent *frameRec
	for nest := 0; r.Frame != nil && nest < maxFrameDepth; nest++ {
		f, err := c.frameFor(ctx, ts, parent, r.Frame.opaqueFrame)
		if err != nil {
			return
		}
		x, y = x-r.Frame.OX, y-r.Frame.OY
		var in probeReply
		if _, err := ts.callIn(ctx, c.s.Label, f, "probe", &in, true, x, y); err != nil {
			return
		}
		*r, parent = in, f
	}
}

// point resolves a ref (in any frame) or a screenshot coordinate to a CSS
// point of the tab's viewport.
func (c *call) point(ctx context.Context, ts *tabState, ref string, coord []float64, what string) (target, error) {
	if ref != "" {
		at, err := c.locate(ctx, ts, ref)
		if err != nil {
			return target{href: at.href}, err
		}
		v, err := c.viewFor(ctx, ts)
		if err != nil {
			return target{}, err
		}
		sx, sy := v.toShot(at.x, at.y)
		return target{x: at.x, y: at.y, desc: at.desc, covered: at.covered, href: at.href, label: fmt.Sprintf("%s [%s] at (%d, %d)", at.desc, ref, sx, sy)}, nil
	}
	if len(coord) != 2 {
		return target{}, wire.Errorf(wire.CodeBadParams, "%s needs coordinate [x, y] or ref", what)
	}
	v, err := c.viewFor(ctx, ts)
	if err != nil {
		return target{}, err
	}
	if !v.contains(coord[0], coord[1]) {
		return target{}, wire.Errorf(wire.CodeBadParams, "coordinate (%g, %g) is outside the screenshot (%d×%d)", coord[0], coord[1],
			int(math.Round(float64(v.width)*v.scale)), int(math.Round(float64(v.height)*v.scale)))
	}
	x, y := v.toCSS(coord[0], coord[1])
	var r probeReply
	href, err := ts.helper(ctx, c.s.Label, "probe", &r, x, y)
	if err != nil {
		return target{}, err
	}
	c.probeFrames(ctx, ts, &r, x, y)
	label := fmt.Sprintf("(%g, %g)", coord[0], coord[1])
	if r.Desc != "" {
		label += " on " + r.Desc
	}
	return target{x: x, y: y, desc: r.Desc, href: href, label: label}, nil
}

func (c *call) mouse(ctx context.Context, tabID int, typ string, x, y float64, button string, buttons, clicks, mods int) error {
	p := map[string]any{"type": typ, "x": x, "y": y, "modifiers": mods, "pointerType": "mouse"}
	if button != "" {
		p["button"] = button
		p["buttons"] = buttons
		p["clickCount"] = clicks
	}
	return c.cdp(ctx, tabID, "Input.dispatchMouseEvent", p, nil)
}

func (c *call) click(ctx context.Context, in *computerArgs) (*Result, error) {
	mods, err := parseModifiers(in.Modifiers)
	if err != nil {
		return nil, err
	}
	mods = clickModifiers(mods, c.macOS(in.TabID))
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	tg, err := c.point(ctx, ts, in.Ref, in.Coordinate, in.Action)
	if err != nil {
		return nil, err
	}
	if err := c.guard(in.TabID, tg.href); err != nil {
		return nil, err
	}
	button, buttons, count := "left", 1, 1
	switch in.Action {
	case "right_click":
		button, buttons = "right", 2
	case "double_click":
		count = 2
	case "triple_click":
		count = 3
	}
	w := ts.watch()
	defer w.stop()
	if err := c.mouse(ctx, in.TabID, "mouseMoved", tg.x, tg.y, "", 0, 0, mods); err != nil {
		return nil, err
	}
	for i := 1; i <= count; i++ {
		if err := c.mouse(ctx, in.TabID, "mousePressed", tg.x, tg.y, button, buttons, i, mods); err != nil {
			return nil, err
		}
		if err := c.mouse(ctx, in.TabID, "mouseReleased", tg.x, tg.y, button, 0, i, mods); err != nil {
			return nil, err
		}
	}
	verb := map[string]string{"left_click": "Clicked", "right_click": "Right-clicked", "double_click": "Double-clicked", "triple_click": "Triple-clicked"}[in.Action]
	lines := []string{verb + " " + tg.label + "."}
	if tg.covered != "" {
		lines = append(lines, "Note: "+tg.covered+" covers that element's centre, so it received the click.")
	}
	return c.after(ctx, ts, w, in.TabID, lines)
}

// after waits for the page to settle, records a navigation the action
// caused (the agent is told about it, so it has seen it) and reports.
func (c *call) after(ctx context.Context, ts *tabState, w *watcher, tabID int, lines []string) (*Result, error) {
	st, err := c.settle(ctx, ts, w)
	if err != nil {
		return nil, err
	}
	lines = append(lines, st.downloads...)
	switch {
	case st.navigated:
		c.observe(tabID, st.href)
		c.s.forgetView(tabID)
		msg := fmt.Sprintf("The page navigated to %s (%q).", st.href, st.title)
		if st.loading {
			msg += " It was still loading when the wait ended."
		}
		lines = append(lines, msg)
	case st.pending:
		lines = append(lines, fmt.Sprintf("A navigation started but had not finished after %s; the tab still shows %s.", c.e.opts.NavigationTimeout, st.href))
	case st.sameDoc:
		c.observe(tabID, st.href)
		lines = append(lines, "The URL is now "+st.href+" (same page).")
	}
	return textResult(lines...), nil
}

func (c *call) hover(ctx context.Context, in *computerArgs) (*Result, error) {
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	tg, err := c.point(ctx, ts, in.Ref, in.Coordinate, "hover")
	if err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	if err := c.mouse(ctx, in.TabID, "mouseMoved", tg.x, tg.y, "", 0, 0, 0); err != nil {
		return nil, err
	}
	lines := []string{"Hovered over " + tg.label + "."}
	if c.engine(in.TabID) == wire.EngineFirefox {
		var hr struct {
			Rules int `json:"rules"`
		}
		if _, err := ts.helper(ctx, c.s.Label, "hoverRules", &hr, tg.x, tg.y); err == nil && hr.Rules > 0 {
			lines = append(lines, fmt.Sprintf("Firefox cannot show :hover styles for Reins' synthetic pointer, and %d style rule(s) here change on :hover: what they would reveal stays hidden. Menus that scripts open on mouseover do open.", hr.Rules))
		}
	}
	return c.after(ctx, ts, w, in.TabID, lines)
}

// engine is the browser engine of a tab ("" if the tab is gone).
func (c *call) engine(tabID int) wire.Engine {
	_, b, err := c.e.hub.Tab(tabID)
	if err != nil {
		return ""
	}
	return b.Engine()
}

func (c *call) drag(ctx context.Context, in *computerArgs) (*Result, error) {
	if in.Ref == "" && len(in.StartCoordinate) != 2 {
		return nil, wire.Errorf(wire.CodeBadParams, "left_click_drag needs ref or start_coordinate where the drag starts")
	}
	if in.TargetRef == "" && len(in.Coordinate) != 2 {
		return nil, wire.Errorf(wire.CodeBadParams, "left_click_drag needs target_ref or coordinate where the drag ends")
	}
	mods, err := parseModifiers(in.Modifiers)
	if err != nil {
		return nil, err
	}
	mods = clickModifiers(mods, c.macOS(in.TabID))
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	if in.TargetRef != "" {
		// A target that is gone fails before any button goes down.
		if _, err := ts.frameOfRef(in.TargetRef); err != nil {
			return nil, err
		}
	}
	from, err := c.point(ctx, ts, in.Ref, in.StartCoordinate, "left_click_drag")
	if err != nil {
		return nil, err
	}
	if err := c.guard(in.TabID, from.href); err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	engine := c.engine(in.TabID)
	if engine == wire.EngineFirefox && in.Ref != "" {
		// Firefox gives extensions no native drag and drop: an HTML5 drag
		// is played with synthetic drag events in the page.
		if res, done, err := c.syntheticDrag(ctx, ts, w, in); done || err != nil {
			return res, err
		}
	}
	if engine == wire.EngineChromium {
		// A native HTML5 drag is handed to the engine instead of starting
		// an OS drag loop, which synthetic input could not finish.
		if err := c.cdp(ctx, in.TabID, "Input.setInterceptDrags", map[string]any{"enabled": true}, nil); err != nil {
			return nil, err
		}
		defer func() {
			if err := c.cdp(context.WithoutCancel(ctx), in.TabID, "Input.setInterceptDrags", map[string]any{"enabled": false}, nil); err != nil {
				c.e.log.Debug("could not stop intercepting drags", "tab", in.TabID, "err", err)
			}
		}()
		if in.Ref != "" {
			_, _, err = c.helperFor(ctx, ts, in.Ref, "dragArm", nil)
		} else {
			_, err = ts.helper(ctx, c.s.Label, "dragArm", nil, "", from.x, from.y)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := c.mouse(ctx, in.TabID, "mouseMoved", from.x, from.y, "", 0, 0, mods); err != nil {
		return nil, err
	}
	if err := c.mouse(ctx, in.TabID, "mousePressed", from.x, from.y, "left", 1, 1, mods); err != nil {
		return nil, err
	}
	to, html5, err := c.dragTo(ctx, ts, w, in, from, engine, mods)
	if err != nil {
		// Never leave the button held down.
		if rerr := c.mouse(context.WithoutCancel(ctx), in.TabID, "mouseReleased", from.x, from.y, "left", 0, 1, mods); rerr != nil {
			c.e.log.Debug("could not release the mouse", "tab", in.TabID, "err", rerr)
		}
		return nil, err
	}
	if err := c.mouse(ctx, in.TabID, "mouseReleased", to.x, to.y, "left", 0, 1, mods); err != nil {
		return nil, err
	}
	line := fmt.Sprintf("Dragged from %s to %s.", from.label, to.label)
	if html5 {
		line = fmt.Sprintf("Dragged from %s and dropped on %s.", from.label, to.label)
	}
	return c.after(ctx, ts, w, in.TabID, []string{line})
}

// dragSteps is how many moves carry a mouse drag to its end: pages track
// drags through mousemove, and many ignore a jump straight to the end.
const dragSteps = 10

// dragTo moves a held mouse from from to the target. A few px of movement
// start a drag; if the page began an HTML5 one (Chromium hands those over),
// the target is brought into view and the drag dropped there. Otherwise
// the mouse moves on to the target in steps.
func (c *call) dragTo(ctx context.Context, ts *tabState, w *watcher, in *computerArgs, from target, engine wire.Engine, mods int) (target, bool, error) {
	for _, d := range []float64{3, 6} {
		if err := c.mouse(ctx, in.TabID, "mouseMoved", from.x+d, from.y+d, "left", 1, 0, mods); err != nil {
			return target{}, false, err
		}
	}
	if engine == wire.EngineChromium {
		var ds struct {
			Started   bool `json:"started"`
			Prevented bool `json:"prevented"`
		}
		var err error
		if in.Ref != "" {
			_, _, err = c.helperFor(ctx, ts, in.Ref, "dragState", &ds)
		} else {
			_, err = ts.helper(ctx, c.s.Label, "dragState", &ds)
		}
		if err != nil {
			return target{}, false, err
		}
		if ds.Started && !ds.Prevented {
			data, err := c.interceptedDrag(ctx, w, in.TabID)
			if err != nil {
				return target{}, false, err
			}
			// The page may scroll now: the drag is the engine's to finish.
			to, err := c.point(ctx, ts, in.TargetRef, in.Coordinate, "left_click_drag")
			if err != nil {
				return target{}, false, err
			}
			for _, typ := range []string{"dragEnter", "dragOver", "drop"} {
				if err := c.cdp(ctx, in.TabID, "Input.dispatchDragEvent", map[string]any{"type": typ, "x": to.x, "y": to.y, "data": data, "modifiers": mods}, nil); err != nil {
					return target{}, false, err
				}
			}
			return to, true, nil
		}
	}
	to, err := c.point(ctx, ts, in.TargetRef, in.Coordinate, "left_click_drag")
	if err != nil {
		return target{}, false, err
	}
	for i := 1; i <= dragSteps; i++ {
		f := float64(i) / dragSteps
		x, y := from.x+(to.x-from.x)*f, from.y+(to.y-from.y)*f
		if err := c.mouse(ctx, in.TabID, "mouseMoved", x, y, "left", 1, 0, mods); err != nil {
			return target{}, false, err
		}
	}
	return to, false, nil
}

// dragWait bounds the wait for an intercepted drag once the page started it.
const dragWait = 5 * time.Second

// interceptedDrag waits for the drag the page started, which Chromium
// hands over instead of running it, and returns its data.
func (c *call) interceptedDrag(ctx context.Context, w *watcher, tabID int) (json.RawMessage, error) {
	wctx, cancel := context.WithTimeout(ctx, dragWait)
	defer cancel()
	for {
		ev, err := w.next(wctx)
		if err != nil && wctx.Err() == nil {
			return nil, err // the page crashed
		}
		if err != nil {
			return nil, wire.Errorf(wire.CodeTimeout, "the page started a drag, but the browser did not hand it over within %s", dragWait)
		}
		if ev.Kind == hub.TabClosed || ev.Kind == hub.TabGone {
			return nil, wire.Errorf(wire.CodeNoSuchTab, "tab %d closed", tabID)
		}
		if ev.Method == "Input.dragIntercepted" {
			var p struct {
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(ev.Params, &p); err != nil || len(p.Data) == 0 {
				return nil, wire.Errorf(wire.CodeInternal, "the browser handed over a drag without data")
			}
			return p.Data, nil
		}
	}
}

// syntheticDrag plays an HTML5 drag and drop from the ref in the page.
// done is false when the source is not HTML5-draggable: the mouse drags it.
func (c *call) syntheticDrag(ctx context.Context, ts *tabState, w *watcher, in *computerArgs) (*Result, bool, error) {
	src, err := ts.frameOfRef(in.Ref)
	if err != nil {
		return nil, false, err
	}
	dst, x, y, label := "", 0.0, 0.0, ""
	if in.TargetRef == "" && src == nil {
		to, err := c.point(ctx, ts, "", in.Coordinate, "left_click_drag")
		if err != nil {
			return nil, false, err
		}
		x, y, label = to.x, to.y, to.label
	}
	if in.TargetRef != "" {
		tf, err := ts.frameOfRef(in.TargetRef)
		if err != nil {
			return nil, false, err
		}
		if tf != src {
			return nil, false, wire.Errorf(wire.CodeBadParams, "in Firefox, a drag and drop must stay in one frame: %s and %s are in different ones", in.Ref, in.TargetRef)
		}
		dst = in.TargetRef
	} else if src != nil {
		return nil, false, wire.Errorf(wire.CodeBadParams, "in Firefox, drop on an element of a frame by target_ref")
	}
	var r struct {
		HTML5   bool   `json:"html5"`
		Started bool   `json:"started"`
		Allowed bool   `json:"allowed"`
		Dropped bool   `json:"dropped"`
		Src     string `json:"src"`
		Dst     string `json:"dst"`
	}
	expect := c.s.observed(ts.id)
	if src != nil {
		href, err := c.topHref(ctx, ts)
		if err != nil {
			return nil, false, err
		}
		if err := c.guard(ts.id, href); err != nil {
			return nil, false, err
		}
	}
	if _, href, err := c.helperFor(ctx, ts, in.Ref, "dragDrop", &r, dst, x, y, expect); err != nil {
		if wire.CodeOf(err) == wire.CodeNavigatedAway && src == nil {
			if gerr := c.guard(ts.id, href); gerr != nil {
				return nil, false, gerr
			}
		}
		return nil, false, err
	}
	if !r.HTML5 {
		return nil, false, nil
	}
	if in.TargetRef != "" {
		label = fmt.Sprintf("%s [%s]", r.Dst, in.TargetRef)
	}
	var line string
	switch {
	case !r.Started:
		line = fmt.Sprintf("The page refused to start dragging %s [%s].", r.Src, in.Ref)
	case !r.Allowed:
		line = fmt.Sprintf("Dragged %s [%s] to %s, which does not accept drops there.", r.Src, in.Ref, label)
	default:
		line = fmt.Sprintf("Dragged %s [%s] and dropped it on %s.", r.Src, in.Ref, label)
		if !r.Dropped {
			line += " The page did not handle the drop."
		}
	}
	res, err := c.after(ctx, ts, w, in.TabID, []string{line})
	return res, true, err
}

// ---- keyboard

func (c *call) focusedGuard(ctx context.Context, ts *tabState, tabID int) error {
	href, err := ts.helper(ctx, c.s.Label, "info", nil)
	if err != nil {
		return err
	}
	return c.guard(tabID, href)
}

func (c *call) typeText(ctx context.Context, in *computerArgs) (*Result, error) {
	if in.Text == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "type needs text")
	}
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	if err := c.focusedGuard(ctx, ts, in.TabID); err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	if err := c.typeString(ctx, in.TabID, in.Text); err != nil {
		return nil, err
	}
	return c.after(ctx, ts, w, in.TabID, []string{fmt.Sprintf("Typed %d characters.", len([]rune(in.Text)))})
}

// typeString types text into the focused element: each line as inserted
// text, each newline as a press of Enter, so forms submit and editors
// break lines.
func (c *call) typeString(ctx context.Context, tabID int, text string) error {
	enter := keyCombo{key: namedKeys["return"]}
	for i, part := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if i > 0 {
			if err := c.pressKeys(ctx, tabID, []keyCombo{enter}, 1); err != nil {
				return err
			}
		}
		if part == "" {
			continue
		}
		if err := c.cdp(ctx, tabID, "Input.insertText", map[string]any{"text": part}, nil); err != nil {
			return err
		}
	}
	return nil
}

func (c *call) key(ctx context.Context, in *computerArgs) (*Result, error) {
	combos, err := parseKeys(in.Text)
	if err != nil {
		return nil, err
	}
	repeat := in.Repeat
	if repeat <= 0 {
		repeat = 1
	}
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	if err := c.focusedGuard(ctx, ts, in.TabID); err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	if err := c.pressKeys(ctx, in.TabID, combos, repeat); err != nil {
		return nil, err
	}
	msg := "Pressed " + strings.Join(strings.Fields(in.Text), " ")
	if repeat > 1 {
		msg += fmt.Sprintf(" %d times", repeat)
	}
	return c.after(ctx, ts, w, in.TabID, []string{msg + "."})
}

// ---- scrolling

// wheelTick is the distance of one wheel notch in CSS px, as Chromium
// scrolls for a mouse wheel.
const wheelTick = 100

func (c *call) scroll(ctx context.Context, in *computerArgs) (*Result, error) {
	amount := in.ScrollAmount
	if amount <= 0 {
		amount = 3
	}
	var dx, dy float64
	switch in.ScrollDirection {
	case "down", "":
		dy = float64(amount * wheelTick)
	case "up":
		dy = -float64(amount * wheelTick)
	case "right":
		dx = float64(amount * wheelTick)
	case "left":
		dx = -float64(amount * wheelTick)
	default:
		return nil, wire.Errorf(wire.CodeBadParams, "scroll_direction must be up, down, left or right")
	}
	dir := in.ScrollDirection
	if dir == "" {
		dir = "down"
	}
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	var x, y float64
	label := "the middle of the viewport"
	if len(in.Coordinate) == 2 || in.Ref != "" {
		tg, err := c.point(ctx, ts, in.Ref, in.Coordinate, "scroll")
		if err != nil {
			return nil, err
		}
		x, y, label = tg.x, tg.y, tg.label
	} else {
		v, err := c.viewFor(ctx, ts)
		if err != nil {
			return nil, err
		}
		x, y = float64(v.width)/2, float64(v.height)/2
	}
	var before viewportInfo
	if _, err := ts.helper(ctx, c.s.Label, "viewport", &before); err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	if err := c.cdp(ctx, in.TabID, "Input.dispatchMouseEvent", map[string]any{
		"type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy, "pointerType": "mouse",
	}, nil); err != nil {
		return nil, err
	}
	res, err := c.after(ctx, ts, w, in.TabID, []string{fmt.Sprintf("Scrolled %s %d ticks at %s.", dir, amount, label)})
	if err != nil {
		return nil, err
	}
	var now viewportInfo
	if _, err := ts.helper(ctx, c.s.Label, "viewport", &now); err == nil {
		if now.SX == before.SX && now.SY == before.SY {
			res.Content[0].Text += fmt.Sprintf("\nThe window stayed at scroll position (%d, %d); an inner scroll area may have moved instead, or the page is at its end.", int(now.SX), int(now.SY))
		} else {
			res.Content[0].Text += fmt.Sprintf("\nThe window's scroll position is now (%d, %d).", int(now.SX), int(now.SY))
		}
	}
	return res, nil
}

func (c *call) scrollTo(ctx context.Context, in *computerArgs) (*Result, error) {
	if in.Ref == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "scroll_to needs ref")
	}
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	var r struct {
		X    float64 `json:"x"`
		Y    float64 `json:"y"`
		Desc string  `json:"desc"`
	}
	w := ts.watch()
	defer w.stop()
	f, _, err := c.helperFor(ctx, ts, in.Ref, "scrollTo", &r)
	if err != nil {
		return nil, err
	}
	if f != nil {
		// The element scrolled into its frame's view; bring the frame into
		// the tab's and measure from there.
		at, err := c.locate(ctx, ts, in.Ref)
		if err != nil {
			return nil, err
		}
		r.X, r.Y = at.x, at.y
	}
	v, err := c.viewFor(ctx, ts)
	if err != nil {
		return nil, err
	}
	sx, sy := v.toShot(r.X, r.Y)
	return c.after(ctx, ts, w, in.TabID, []string{fmt.Sprintf("Scrolled %s [%s] into view; its centre is now at (%d, %d).", r.Desc, in.Ref, sx, sy)})
}
