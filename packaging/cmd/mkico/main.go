// Command mkico writes a Windows .ico with the standard sizes from one PNG,
// for the installer, the uninstaller and the Start-menu shortcut.
//
//	mkico -o reins.ico assets/icon.png
//
// The 256-pixel image is stored as PNG and the smaller ones as 32-bit DIBs:
// that is the layout every consumer reads, including NSIS's icon
// replacement, which does not accept PNG-compressed small entries.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"

	"golang.org/x/image/draw"
)

// sizes are the ones Explorer, the taskbar and the Start menu ask for at
// 100-200% scaling.
var sizes = []int{16, 24, 32, 48, 64, 256}

func main() {
	out := flag.String("o", "", "output .ico")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mkico -o OUT.ico IN.png")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "mkico:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var b bytes.Buffer
	if err := writeICO(&b, src); err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

func scale(src image.Image, n int) *image.NRGBA {
	dst := image.NewNRGBA(image.Rect(0, 0, n, n))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	return dst
}

func writeICO(w io.Writer, src image.Image) error {
	if b := src.Bounds(); b.Dx() != b.Dy() || b.Dx() < 256 {
		return fmt.Errorf("icon source is %dx%d; it must be square and at least 256 pixels", b.Dx(), b.Dy())
	}
	var images [][]byte
	for _, n := range sizes {
		img := scale(src, n)
		if n == 256 {
			var p bytes.Buffer
			if err := png.Encode(&p, img); err != nil {
				return err
			}
			images = append(images, p.Bytes())
		} else {
			images = append(images, dib(img))
		}
	}
	le := binary.LittleEndian
	hdr := make([]byte, 6+16*len(sizes))
	le.PutUint16(hdr[2:], 1) // type: icon
	le.PutUint16(hdr[4:], uint16(len(sizes)))
	off := uint32(len(hdr))
	for i, n := range sizes {
		e := hdr[6+16*i:]
		e[0], e[1] = byte(n), byte(n) // 256 wraps to 0, which means 256
		le.PutUint16(e[4:], 1)        // planes
		le.PutUint16(e[6:], 32)       // bits per pixel
		le.PutUint32(e[8:], uint32(len(images[i])))
		le.PutUint32(e[12:], off)
		off += uint32(len(images[i]))
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for _, img := range images {
		if _, err := w.Write(img); err != nil {
			return err
		}
	}
	return nil
}

// dib is a BITMAPINFOHEADER, bottom-up BGRA pixels and an all-clear AND
// mask (the alpha channel does the masking on every Windows since XP).
func dib(img *image.NRGBA) []byte {
	n := img.Bounds().Dx()
	maskStride := (n + 31) / 32 * 4
	le := binary.LittleEndian
	out := make([]byte, 40+n*n*4+maskStride*n)
	le.PutUint32(out[0:], 40)
	le.PutUint32(out[4:], uint32(n))
	le.PutUint32(out[8:], uint32(2*n)) // height counts the mask too
	le.PutUint16(out[12:], 1)
	le.PutUint16(out[14:], 32)
	le.PutUint32(out[20:], uint32(n*n*4+maskStride*n))
	p := out[40:]
	for y := n - 1; y >= 0; y-- {
		for x := 0; x < n; x++ {
			i := img.PixOffset(x, y)
			px := img.Pix[i : i+4]
			p[0], p[1], p[2], p[3] = px[2], px[1], px[0], px[3]
			p = p[4:]
		}
	}
	return out
}
