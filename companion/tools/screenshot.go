package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	goimage "image"
	"image/jpeg"
	"math"

	"golang.org/x/image/draw"

	"github.com/reinshq/reins/companion/wire"
)

// Screenshot limits: models downscale anything larger anyway, and the MCP
// result must stay small.
const (
	maxEdge     = 1400
	maxImageB64 = 1 << 20
	maxZoom     = 4.0
	// A full-page screenshot keeps the width readable and may be taller:
	// its longest edge is at most maxTallEdge image px, and it shows at
	// most maxPageCSS CSS px of the page's height.
	maxTallEdge = 6000
	maxPageCSS  = 16000
	// An element screenshot enlarges a small element up to this scale.
	maxElementScale = 2.0
)

// shotScale is the screenshot px per CSS px for a viewport of w×h CSS px.
func shotScale(w, h int) float64 {
	m := max(w, h)
	if m <= maxEdge || m <= 0 {
		return 1
	}
	return float64(maxEdge) / float64(m)
}

// toCSS maps a screenshot-space point to CSS px.
func (v viewMap) toCSS(x, y float64) (float64, float64) {
	if v.scale <= 0 {
		return x, y
	}
	return x / v.scale, y / v.scale
}

// toShot maps a CSS px point to screenshot space.
func (v viewMap) toShot(x, y float64) (int, int) {
	s := v.scale
	if s <= 0 {
		s = 1
	}
	return int(math.Round(x * s)), int(math.Round(y * s))
}

// contains reports whether a screenshot-space point lies on the last
// screenshot (one pixel of slack for rounding).
func (v viewMap) contains(x, y float64) bool {
	w := float64(v.width) * v.scale
	h := float64(v.height) * v.scale
	return x >= 0 && y >= 0 && x <= w+1 && y <= h+1
}

type viewportInfo struct {
	W   int     `json:"w"`
	H   int     `json:"h"`
	DPR float64 `json:"dpr"`
	SX  float64 `json:"sx"`
	SY  float64 `json:"sy"`
	VX  float64 `json:"vx"`
	VY  float64 `json:"vy"`
	PW  int     `json:"pw"` // the document's scroll size
	PH  int     `json:"ph"`
}

// viewFor returns the session's mapping for the tab, measuring the
// viewport when no screenshot was taken yet.
func (c *call) viewFor(ctx context.Context, ts *tabState) (viewMap, error) {
	if v, ok := c.s.view(ts.id); ok {
		return v, nil
	}
	var vp viewportInfo
	if _, err := ts.helper(ctx, c.s.Label, "viewport", &vp); err != nil {
		return viewMap{}, err
	}
	v := viewMap{scale: shotScale(vp.W, vp.H), width: vp.W, height: vp.H}
	c.s.setView(ts.id, v)
	return v, nil
}

type shot struct {
	data   []byte // JPEG
	b64    string
	width  int
	height int
}

// capture takes a JPEG of a CSS-px region of the viewport (all of it when
// region is nil) at scale screenshot px per CSS px.
func (c *call) capture(ctx context.Context, tabID int, vp viewportInfo, region *rectF, scale float64) (shot, error) {
	clip := rectF{X: vp.VX, Y: vp.VY, W: float64(vp.W), H: float64(vp.H)}
	if region != nil {
		clip = rectF{X: vp.VX + region.X, Y: vp.VY + region.Y, W: region.W, H: region.H}
	}
	return c.captureArea(ctx, tabID, vp, clip, region != nil, false, scale, maxEdge)
}

// captureArea takes a JPEG of clip, a rectangle of the page in CSS px from
// the document's top left, at scale image px per CSS px; beyond captures
// what lies outside the viewport too. The quality steps down, then the
// scale, until the base64 fits maxImageB64: a screenshot is never refused
// for size.
func (c *call) captureArea(ctx context.Context, tabID int, vp viewportInfo, clip rectF, region, beyond bool, scale float64, edge int) (shot, error) {
	dpr := vp.DPR
	if dpr <= 0 {
		dpr = 1
	}
	qualities := []int{80, 65, 50, 35, 25}
	for attempt := 0; attempt < 12; attempt++ {
		q := qualities[min(attempt, len(qualities)-1)]
		if attempt >= len(qualities) {
			scale *= 0.75
		}
		params := map[string]any{"format": "jpeg", "quality": q, "optimizeForSpeed": true, "captureBeyondViewport": beyond}
		// Without a clip Chromium captures device pixels; a clip lets it
		// scale while capturing instead of in Go afterwards.
		if region || beyond || scale != 1 || dpr != 1 {
			params["clip"] = map[string]any{"x": clip.X, "y": clip.Y, "width": clip.W, "height": clip.H, "scale": scale / dpr}
		}
		var res struct {
			Data string `json:"data"`
		}
		if err := c.cdp(ctx, tabID, "Page.captureScreenshot", params, &res); err != nil {
			return shot{}, err
		}
		if len(res.Data) > maxImageB64 {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(res.Data)
		if err != nil {
			return shot{}, wire.Errorf(wire.CodeInternal, "screenshot data is not base64: %w", err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return shot{}, wire.Errorf(wire.CodeInternal, "screenshot is not a JPEG: %w", err)
		}
		s := shot{data: data, b64: res.Data, width: cfg.Width, height: cfg.Height}
		if max(cfg.Width, cfg.Height) > edge {
			// Some browsers ignore the clip scale; shrink here instead.
			if s, err = shrink(data, edge, q); err != nil {
				return shot{}, err
			}
			if len(s.b64) > maxImageB64 {
				continue
			}
		}
		return s, nil
	}
	return shot{}, wire.Errorf(wire.CodeInternal, "could not make the screenshot small enough")
}

// shrink re-encodes a JPEG so its longest edge is at most edge px.
func shrink(data []byte, edge, quality int) (shot, error) {
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return shot{}, wire.Errorf(wire.CodeInternal, "decoding screenshot: %w", err)
	}
	b := src.Bounds()
	w, h := fitEdge(b.Dx(), b.Dy(), edge)
	dst := goimage.NewRGBA(goimage.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: quality}); err != nil {
		return shot{}, fmt.Errorf("encoding screenshot: %w", err)
	}
	out := buf.Bytes()
	return shot{data: out, b64: base64.StdEncoding.EncodeToString(out), width: w, height: h}, nil
}

// fitEdge scales w×h down so the longest edge is at most edge.
func fitEdge(w, h, edge int) (int, int) {
	m := max(w, h)
	if m <= edge {
		return w, h
	}
	f := float64(edge) / float64(m)
	return max(1, int(math.Round(float64(w)*f))), max(1, int(math.Round(float64(h)*f)))
}

type rectF struct{ X, Y, W, H float64 }

// fullPageScale is the scale of a full-page screenshot of a page of w×h
// CSS px: its width fits maxEdge and its height maxTallEdge.
func fullPageScale(w, h float64) float64 {
	s := 1.0
	if w > 0 {
		s = math.Min(s, float64(maxEdge)/w)
	}
	if h > 0 {
		s = math.Min(s, float64(maxTallEdge)/h)
	}
	return s
}

// elementScale is the scale of a screenshot of an element of w×h CSS px:
// small ones are enlarged up to maxElementScale, large ones fit maxEdge.
func elementScale(w, h float64) float64 {
	return math.Min(maxElementScale, float64(maxEdge)/math.Max(1, math.Max(w, h)))
}

// fullPage captures the whole page, or its top maxPageCSS CSS px.
func (c *call) fullPage(ctx context.Context, ts *tabState, tabID int) (*Result, error) {
	var vp viewportInfo
	href, err := ts.helper(ctx, c.s.Label, "viewport", &vp)
	if err != nil {
		return nil, err
	}
	w, h := float64(max(vp.PW, vp.W)), float64(max(vp.PH, vp.H))
	shown := math.Min(h, maxPageCSS)
	scale := fullPageScale(w, shown)
	sh, err := c.captureArea(ctx, tabID, vp, rectF{W: w, H: shown}, true, true, scale, maxTallEdge)
	if err != nil {
		return nil, err
	}
	c.observe(tabID, href)
	id := c.s.addImage(&image{tab: tabID, data: sh.data, width: sh.width, height: sh.height})
	text := fmt.Sprintf("Full-page screenshot %s of tab %d (%s): %d×%d px of a %d×%d CSS px page", id, tabID, href, sh.width, sh.height, int(w), int(h))
	if shown < h {
		text += fmt.Sprintf(", its top %d CSS px", int(shown))
	}
	text += ". Its pixels are page positions, not click coordinates: click by ref, or scroll and take a screenshot."
	return &Result{Content: []Content{{Type: "text", Text: text}, {Type: "image", Data: sh.b64, MimeType: "image/jpeg"}}}, nil
}

// elementShot captures one element, in any frame, scrolled into view.
func (c *call) elementShot(ctx context.Context, ts *tabState, tabID int, ref string) (*Result, error) {
	at, err := c.locate(ctx, ts, ref)
	if err != nil {
		return nil, err
	}
	if at.w < 1 || at.h < 1 {
		return nil, wire.Errorf(wire.CodeBadParams, "%s (%s) has no size on the page", ref, at.desc)
	}
	var vp viewportInfo
	if _, err := ts.helper(ctx, c.s.Label, "viewport", &vp); err != nil {
		return nil, err
	}
	x0, y0 := at.x-at.w/2, at.y-at.h/2
	// The part of the element outside the page cannot be captured.
	clip := rectF{X: math.Max(0, vp.VX+x0), Y: math.Max(0, vp.VY+y0)}
	clip.W = math.Min(vp.VX+x0+at.w, float64(max(vp.PW, vp.W))) - clip.X
	clip.H = math.Min(vp.VY+y0+at.h, math.Min(float64(max(vp.PH, vp.H)), clip.Y+maxPageCSS)) - clip.Y
	if clip.W < 1 || clip.H < 1 {
		return nil, wire.Errorf(wire.CodeBadParams, "%s (%s) lies outside the page", ref, at.desc)
	}
	beyond := x0 < 0 || y0 < 0 || x0+at.w > float64(vp.W) || y0+at.h > float64(vp.H)
	sh, err := c.captureArea(ctx, tabID, vp, clip, true, beyond, elementScale(clip.W, clip.H), maxEdge)
	if err != nil {
		return nil, err
	}
	c.observe(tabID, at.href)
	id := c.s.addImage(&image{tab: tabID, data: sh.data, width: sh.width, height: sh.height})
	text := fmt.Sprintf("Screenshot %s of %s [%s] in tab %d: %d×%d px. Its pixels are not click coordinates; act on the element by ref.", id, at.desc, ref, tabID, sh.width, sh.height)
	return &Result{Content: []Content{{Type: "text", Text: text}, {Type: "image", Data: sh.b64, MimeType: "image/jpeg"}}}, nil
}
