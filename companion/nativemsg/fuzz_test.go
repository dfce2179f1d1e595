package nativemsg

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzReadMessage: whatever the bytes, ReadMessage returns a body that is
// exactly the framed bytes and valid UTF-8 JSON within the limit, or one of
// the documented errors; it never panics.
func FuzzReadMessage(f *testing.F) {
	f.Add(frame(`{"type":"hello"}`))
	f.Add(header(0))
	f.Add([]byte{1, 0})
	f.Add(header(1 << 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 16
		body, err := ReadMessage(bytes.NewReader(data), max)
		if err != nil {
			for _, known := range []error{io.EOF, io.ErrUnexpectedEOF, ErrEmpty, ErrTooLarge, ErrBadJSON} {
				if errors.Is(err, known) {
					if known == io.EOF && len(data) != 0 {
						t.Fatalf("io.EOF with %d bytes of input", len(data))
					}
					return
				}
			}
			t.Fatalf("undocumented error %v", err)
		}
		n := binary.LittleEndian.Uint32(data)
		if int(n) != len(body) || n == 0 || n > max {
			t.Fatalf("header %d, body %d bytes", n, len(body))
		}
		if !bytes.Equal(body, data[4:4+n]) {
			t.Fatal("body differs from the framed bytes")
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatal("accepted a body that is not UTF-8 JSON")
		}
	})
}

// FuzzServe: whatever an extension sends, the host ends (no hang, no panic)
// and everything it wrote is well-framed JSON replies a browser accepts,
// with at most one error after a broken frame.
func FuzzServe(f *testing.F) {
	f.Add(frame(`{"type":"hello","id":1}`))
	f.Add(append(frame(`{"type":"start"}`), frame(`{"type":"hello"}`)...))
	f.Add(frame(`{"type":"nope"}`))
	f.Add(header(0))
	f.Add(append(frame(`{"type":"hello"}`), 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		app := &fakeApp{port: 47100, upOnLaunch: true}
		var out bytes.Buffer
		err := (&Host{Handler: app, StartTimeout: time.Second}).Serve(ctx, bytes.NewReader(data), &out)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("Serve ran for 10s on a finite input")
		}
		replies := 0
		for {
			b, rerr := ReadMessage(&out, MaxHostMessage)
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				t.Fatalf("host wrote a bad frame: %v", rerr)
			}
			var m map[string]any
			if json.Unmarshal(b, &m) != nil {
				t.Fatalf("reply is not an object: %s", b)
			}
			if typ, _ := m["type"].(string); typ != TypeHello && typ != TypeStart && typ != TypeError {
				t.Fatalf("reply type %q", m["type"])
			}
			replies++
		}
		// Non-empty input holds a frame (answered) or a broken one (an
		// error), so a silent clean exit means input was dropped.
		if err == nil && replies == 0 && len(data) > 0 {
			t.Fatalf("clean exit without a reply to %x", data)
		}
	})
}
