package nativemsg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func frame(body string) []byte {
	b := make([]byte, 4+len(body))
	binary.LittleEndian.PutUint32(b, uint32(len(body)))
	copy(b[4:], body)
	return b
}

func header(n uint32) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, n)
	return b
}

func TestReadMessage(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		max  int
		want string
		err  error
	}{
		{"object", frame(`{"type":"hello"}`), 0, `{"type":"hello"}`, nil},
		{"unicode", frame(`{"t":"héllo ✓"}`), 0, `{"t":"héllo ✓"}`, nil},
		{"scalar is json", frame(`42`), 0, `42`, nil},
		{"exactly max", frame(`"abcd"`), 6, `"abcd"`, nil},
		{"over max", frame(`"abcde"`), 6, "", ErrTooLarge},
		{"over default cap", header(MaxExtensionMessage + 1), 0, "", ErrTooLarge},
		{"huge header", header(0xffffffff), 0, "", ErrTooLarge},
		{"zero length", header(0), 0, "", ErrEmpty},
		{"empty stream", nil, 0, "", io.EOF},
		{"truncated header", []byte{5, 0}, 0, "", io.ErrUnexpectedEOF},
		{"truncated body", frame(`{"type":"hello"}`)[:10], 0, "", io.ErrUnexpectedEOF},
		{"header only", header(10), 0, "", io.ErrUnexpectedEOF},
		{"big claim short body", append(header(60<<20), `{}`...), 0, "", io.ErrUnexpectedEOF},
		{"bad json", frame(`{"type":`), 0, "", ErrBadJSON},
		{"trailing garbage", frame(`{} x`), 0, "", ErrBadJSON},
		{"not json", frame(`hello`), 0, "", ErrBadJSON},
		{"bad utf8 in string", frame("{\"t\":\"\xff\xfe\"}"), 0, "", ErrBadJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadMessage(bytes.NewReader(c.in), c.max)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				if c.err == io.EOF && err != io.EOF {
					t.Fatalf("clean end must be io.EOF itself, got %#v", err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("= %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestReadMessageSequence(t *testing.T) {
	var in []byte
	for _, b := range []string{`{"a":1}`, `[]`, `"x"`} {
		in = append(in, frame(b)...)
	}
	r := bytes.NewReader(in)
	for _, want := range []string{`{"a":1}`, `[]`, `"x"`} {
		got, err := ReadMessage(r, 0)
		if err != nil || string(got) != want {
			t.Fatalf("= %q, %v; want %q", got, err, want)
		}
	}
	if _, err := ReadMessage(r, 0); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestWriteMessage(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMessage(&buf, map[string]any{"type": "hello", "port": 47100}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMessage(&buf, 0)
	if err != nil || string(got) != `{"port":47100,"type":"hello"}` {
		t.Fatalf("round trip = %q, %v", got, err)
	}

	// A JSON string of n-2 chars plus its quotes is exactly n bytes.
	atLimit := strings.Repeat("a", MaxHostMessage-2)
	buf.Reset()
	if err := WriteMessage(&buf, atLimit); err != nil {
		t.Fatalf("message of exactly MaxHostMessage: %v", err)
	}
	if buf.Len() != 4+MaxHostMessage {
		t.Fatalf("wrote %d bytes", buf.Len())
	}

	buf.Reset()
	err = WriteMessage(&buf, atLimit+"a")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "at most 1048576") {
		t.Fatalf("oversized write = %v, want ErrTooLarge naming the limit", err)
	}
	if buf.Len() != 0 {
		t.Fatal("an oversized message was partly written")
	}

	if err := WriteMessage(&buf, make(chan int)); err == nil {
		t.Fatal("unencodable value accepted")
	}
	if err := WriteMessage(failWriter{}, "x"); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("write error = %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
