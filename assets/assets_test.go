package assets

import (
	"bytes"
	"image"
	"image/png"
	"testing"

	"fyne.io/fyne/v2"
)

func decode(t *testing.T, r fyne.Resource) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(r.Content()))
	if err != nil {
		t.Fatalf("%s: %v", r.Name(), err)
	}
	return img
}

func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		res  fyne.Resource
		size int
	}{
		{AppIcon, 256},
		{AppIconSmall, 64},
		{TrayNormal, 64},
		{TrayPaused, 64},
		{TrayOffer, 64},
		{Chromium, 64},
		{Firefox, 64},
	} {
		b := decode(t, tc.res).Bounds()
		if b.Dx() != tc.size || b.Dy() != tc.size {
			t.Errorf("%s is %dx%d, want %dx%d", tc.res.Name(), b.Dx(), b.Dy(), tc.size, tc.size)
		}
	}
}

// TestTrayReadableOnAnyPanel checks that each tray icon is a mostly opaque
// badge whose own pixels contrast with it, so it reads on light and dark
// panels alike instead of relying on the panel colour for contrast.
func TestTrayReadableOnAnyPanel(t *testing.T) {
	for _, res := range []fyne.Resource{TrayNormal, TrayPaused, TrayOffer} {
		img := decode(t, res)
		var opaque, light, dark, total int
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				total++
				r, g, bl, a := img.At(x, y).RGBA()
				if a < 0xf000 {
					continue
				}
				opaque++
				lum := (299*r + 587*g + 114*bl) / 1000 >> 8
				switch {
				case lum > 200:
					light++
				case lum < 140:
					dark++
				}
			}
		}
		if opaque*10 < total*8 {
			t.Errorf("%s: only %d of %d pixels opaque; a see-through icon depends on the panel colour", res.Name(), opaque, total)
		}
		if light*10 < opaque || dark*10 < opaque {
			t.Errorf("%s: light %d / dark %d of %d opaque pixels; glyph and badge must contrast", res.Name(), light, dark, opaque)
		}
	}
}

func TestTrayStatesDiffer(t *testing.T) {
	seen := map[string]string{}
	for _, res := range []fyne.Resource{TrayNormal, TrayPaused, TrayOffer} {
		if other, ok := seen[string(res.Content())]; ok {
			t.Errorf("%s has the same pixels as %s", res.Name(), other)
		}
		seen[string(res.Content())] = res.Name()
	}
}
