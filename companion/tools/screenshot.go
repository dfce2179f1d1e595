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

// capture takes a JPEG of a CSS-px region of the page (the viewport when
// region is nil) at scale screenshot px per CSS px. The quality steps down,
// then the scale, until the base64 fits the limit: a screenshot is never
// refused for size.
func (c *call) capture(ctx context.Context, tabID int, vp viewportInfo, region *rectF, scale float64) (shot, error) {
	dpr := vp.DPR
	if dpr <= 0 {
		dpr = 1
	}
	clip := rectF{X: vp.VX, Y: vp.VY, W: float64(vp.W), H: float64(vp.H)}
	if region != nil {
		clip = rectF{X: vp.VX + region.X, Y: vp.VY + region.Y, W: region.W, H: region.H}
	}
	qualities := []int{80, 65, 50, 35, 25}
	for attempt := 0; attempt < 12; attempt++ {
		q := qualities[min(attempt, len(qualities)-1)]
		if attempt >= len(qualities) {
			scale *= 0.75
		}
		params := map[string]any{"format": "jpeg", "quality": q, "optimizeForSpeed": true, "captureBeyondViewport": false}
		// Without a clip Chromium captures device pixels; a clip lets it
		// scale while capturing instead of in Go afterwards.
		if region != nil || scale != 1 || dpr != 1 {
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
		if max(cfg.Width, cfg.Height) > maxEdge {
			// Some browsers ignore the clip scale; shrink here instead.
			if s, err = shrink(data, maxEdge, q); err != nil {
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
