package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func TestICOLayout(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 256, 256))
	for i := range src.Pix {
		src.Pix[i] = 0xff
	}
	src.SetNRGBA(0, 255, color.NRGBA{R: 10, G: 20, B: 30, A: 40}) // bottom-left corner
	var b bytes.Buffer
	if err := writeICO(&b, src); err != nil {
		t.Fatal(err)
	}
	ico := b.Bytes()
	le := binary.LittleEndian
	if le.Uint16(ico[0:]) != 0 || le.Uint16(ico[2:]) != 1 || int(le.Uint16(ico[4:])) != len(sizes) {
		t.Fatalf("bad header % x", ico[:6])
	}
	for i, n := range sizes {
		e := ico[6+16*i:]
		size, off := le.Uint32(e[8:]), le.Uint32(e[12:])
		data := ico[off : off+size]
		if n == 256 {
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil || img.Bounds().Dx() != 256 || e[0] != 0 {
				t.Fatalf("256 entry: %v %v", err, e[0])
			}
			continue
		}
		if int(e[0]) != n || le.Uint32(data[0:]) != 40 || int(le.Uint32(data[8:])) != 2*n {
			t.Fatalf("%d entry header wrong", n)
		}
		// The first stored pixel is the bottom-left one, in BGRA order.
		if n == 64 {
			got := data[40:44]
			if got[3] == 0xff || got[0] == got[2] && got[0] == 0xff {
				t.Errorf("bottom-left pixel not stored first: % x", got)
			}
		}
	}
	if err := writeICO(&b, image.NewNRGBA(image.Rect(0, 0, 64, 64))); err == nil {
		t.Error("small source accepted")
	}
}
