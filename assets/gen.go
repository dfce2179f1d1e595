//go:build ignore

// gen draws every PNG in this folder. The icons are plain geometry (signed
// distance fields with analytic anti-aliasing) so they stay crisp at any size
// without a font or a design tool, and anyone can change them by editing code.
//
//	go generate ./assets
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

// Palette. The tray badges are filled and saturated so they stay legible on
// both light and dark panels; a white glyph on a transparent icon would vanish
// on a light GNOME panel and a black one on Windows' dark taskbar.
var (
	teal      = rgb(0x0f, 0x76, 0x6e)
	tealLight = rgb(0x14, 0xb8, 0xa6)
	slate     = rgb(0x4b, 0x55, 0x63)
	slateDark = rgb(0x37, 0x41, 0x51)
	amber     = rgb(0xf5, 0x9e, 0x0b)
	orange    = rgb(0xea, 0x58, 0x0c)
	white     = rgb(0xff, 0xff, 0xff)

	chromeRed    = rgb(0xdb, 0x44, 0x37)
	chromeYellow = rgb(0xf4, 0xb4, 0x00)
	chromeGreen  = rgb(0x0f, 0x9d, 0x58)
	chromeBlue   = rgb(0x42, 0x85, 0xf4)
	foxOrange    = rgb(0xff, 0x71, 0x39)
	foxYellow    = rgb(0xff, 0xbd, 0x4f)
	foxPurple    = rgb(0x59, 0x2a, 0xcb)
)

func main() {
	write("icon.png", appIcon(256))
	write("icon_64.png", appIcon(64))
	write("tray_normal.png", trayIcon(64, false, false))
	write("tray_paused.png", trayIcon(64, true, false))
	write("tray_offer.png", trayIcon(64, false, true))
	write("chromium.png", chromium(64))
	write("firefox.png", firefox(64))
}

// sdf is a signed distance in pixels: negative inside the shape.
type sdf func(x, y float64) float64

type canvas struct {
	img  *image.NRGBA
	size float64
}

func newCanvas(px int) *canvas {
	return &canvas{img: image.NewNRGBA(image.Rect(0, 0, px, px)), size: float64(px)}
}

// fill paints shape (designed on a 256-unit square) with a per-pixel colour.
func (c *canvas) fill(shape sdf, paint func(u, v float64) color.NRGBA) {
	k := c.size / 256
	b := c.img.Bounds()
	for py := b.Min.Y; py < b.Max.Y; py++ {
		for px := b.Min.X; px < b.Max.X; px++ {
			u, v := (float64(px)+0.5)/k, (float64(py)+0.5)/k
			// Distance in output pixels gives one pixel of anti-aliasing at any size.
			d := shape(u, v) * k
			cov := clamp(0.5-d, 0, 1)
			if cov == 0 {
				continue
			}
			col := paint(u, v)
			over(c.img, px, py, col, cov)
		}
	}
}

func (c *canvas) solid(shape sdf, col color.NRGBA) {
	c.fill(shape, func(_, _ float64) color.NRGBA { return col })
}

// over composites col with coverage cov onto the pixel (straight alpha).
func over(img *image.NRGBA, x, y int, col color.NRGBA, cov float64) {
	dst := img.NRGBAAt(x, y)
	sa := float64(col.A) / 255 * cov
	da := float64(dst.A) / 255
	oa := sa + da*(1-sa)
	if oa == 0 {
		return
	}
	mix := func(s, d uint8) uint8 {
		return uint8(math.Round((float64(s)*sa + float64(d)*da*(1-sa)) / oa))
	}
	img.SetNRGBA(x, y, color.NRGBA{mix(col.R, dst.R), mix(col.G, dst.G), mix(col.B, dst.B), uint8(math.Round(oa * 255))})
}

func circle(cx, cy, r float64) sdf {
	return func(x, y float64) float64 { return math.Hypot(x-cx, y-cy) - r }
}

func roundRect(x0, y0, x1, y1, r float64) sdf {
	cx, cy := (x0+x1)/2, (y0+y1)/2
	hx, hy := (x1-x0)/2-r, (y1-y0)/2-r
	return func(x, y float64) float64 {
		qx, qy := math.Abs(x-cx)-hx, math.Abs(y-cy)-hy
		out := math.Hypot(math.Max(qx, 0), math.Max(qy, 0))
		return out + math.Min(math.Max(qx, qy), 0) - r
	}
}

// capsule is a thick line segment with round caps.
func capsule(ax, ay, bx, by, r float64) sdf {
	return func(x, y float64) float64 { return segDist(x, y, ax, ay, bx, by) - r }
}

func segDist(x, y, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	t := clamp(((x-ax)*dx+(y-ay)*dy)/(dx*dx+dy*dy), 0, 1)
	return math.Hypot(x-ax-t*dx, y-ay-t*dy)
}

// curve is a thick quadratic Bézier, measured against a fine polyline.
func curve(x0, y0, cx, cy, x1, y1, r float64) sdf {
	const n = 48
	pts := make([][2]float64, n+1)
	for i := range pts {
		t := float64(i) / n
		a, b, c := (1-t)*(1-t), 2*(1-t)*t, t*t
		pts[i] = [2]float64{a*x0 + b*cx + c*x1, a*y0 + b*cy + c*y1}
	}
	return func(x, y float64) float64 {
		d := math.Inf(1)
		for i := 0; i < n; i++ {
			d = math.Min(d, segDist(x, y, pts[i][0], pts[i][1], pts[i+1][0], pts[i+1][1]))
		}
		return d - r
	}
}

func ring(cx, cy, r, w float64) sdf {
	return func(x, y float64) float64 { return math.Abs(math.Hypot(x-cx, y-cy)-r) - w/2 }
}

// sector keeps the part of shape whose angle around (cx, cy), in degrees
// clockwise from 12 o'clock, lies in [from, to).
func sector(shape sdf, cx, cy, from, to float64) sdf {
	return func(x, y float64) float64 {
		a := math.Mod(math.Atan2(x-cx, -(y-cy))*180/math.Pi+360, 360)
		if from <= to && (a < from || a >= to) || from > to && a < from && a >= to {
			return math.Inf(1)
		}
		return shape(x, y)
	}
}

func union(shapes ...sdf) sdf {
	return func(x, y float64) float64 {
		d := math.Inf(1)
		for _, s := range shapes {
			d = math.Min(d, s(x, y))
		}
		return d
	}
}

func minus(a, b sdf) sdf {
	return func(x, y float64) float64 { return math.Max(a(x, y), -b(x, y)) }
}

// reinsMark is the Reins glyph: two reins sweeping down from the top corners
// into the ring of a bit. Thickness grows for small renderings.
func reinsMark(weight float64) sdf {
	w := 11 * weight
	r := 34 + 2*weight
	// The reins meet the ring at 45° so the hole stays open.
	ex, ey := r*math.Sqrt2/2, 180-r*math.Sqrt2/2
	return union(
		ring(128, 180, r, 2*w),
		curve(58, 50, 62, 150, 128-ex, ey, w),
		curve(198, 50, 194, 150, 128+ex, ey, w),
	)
}

func gradient(top, bottom color.NRGBA) func(u, v float64) color.NRGBA {
	return func(u, v float64) color.NRGBA {
		t := clamp((u+v)/512, 0, 1)
		return lerp(top, bottom, t)
	}
}

func appIcon(px int) *image.NRGBA {
	c := newCanvas(px)
	c.fill(roundRect(8, 8, 248, 248, 56), gradient(tealLight, teal))
	c.solid(reinsMark(1), white)
	return c.img
}

func trayIcon(px int, paused, offer bool) *image.NRGBA {
	c := newCanvas(px)
	bg := gradient(tealLight, teal)
	if paused {
		bg = gradient(slate, slateDark)
	}
	c.fill(roundRect(4, 4, 252, 252, 60), bg)
	if paused {
		// Pause bars replace the mark: the state matters more than the brand here.
		c.solid(union(roundRect(78, 64, 114, 192, 10), roundRect(142, 64, 178, 192, 10)), white)
	} else {
		c.solid(reinsMark(1.5), white)
	}
	if offer {
		// A notification dot with a white halo reads on either panel colour.
		c.solid(circle(204, 52, 56), white)
		c.fill(circle(204, 52, 44), gradient(amber, orange))
		c.solid(union(roundRect(196, 22, 212, 64, 7), circle(204, 80, 9)), white)
	}
	return c.img
}

func chromium(px int) *image.NRGBA {
	c := newCanvas(px)
	disc := circle(128, 128, 120)
	c.solid(sector(disc, 128, 128, 300, 60), chromeRed)
	c.solid(sector(disc, 128, 128, 60, 180), chromeYellow)
	c.solid(sector(disc, 128, 128, 180, 300), chromeGreen)
	c.solid(circle(128, 128, 56), white)
	c.solid(circle(128, 128, 42), chromeBlue)
	return c.img
}

func firefox(px int) *image.NRGBA {
	c := newCanvas(px)
	c.solid(circle(128, 128, 120), foxPurple)
	// The tail: a crescent of warm colour wrapping the globe.
	tail := minus(circle(128, 128, 120), circle(150, 104, 92))
	c.fill(tail, func(u, v float64) color.NRGBA { return lerp(foxYellow, foxOrange, clamp(v/256, 0, 1)) })
	return c.img
}

func write(name string, img image.Image) {
	f, err := os.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 0xff} }

func lerp(a, b color.NRGBA, t float64) color.NRGBA {
	m := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*t)) }
	return color.NRGBA{m(a.R, b.R), m(a.G, b.G), m(a.B, b.B), m(a.A, b.A)}
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
