package nativemsg

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Size limits of one message, without its 4-byte header.
const (
	// MaxHostMessage is the most a native host may send to an extension;
	// Chrome and Firefox drop the connection on anything bigger.
	MaxHostMessage = 1 << 20
	// MaxExtensionMessage caps what the host reads from an extension.
	// Browsers allow up to 4 GB; nothing Reins sends this way comes close,
	// and the cap keeps a broken peer from making us allocate gigabytes.
	MaxExtensionMessage = 64 << 20
)

var (
	// ErrTooLarge reports a message over the limit in either direction.
	ErrTooLarge = errors.New("native message too large")
	// ErrEmpty reports a frame whose header says zero bytes; no JSON value
	// is zero bytes long.
	ErrEmpty = errors.New("native message has zero length")
	// ErrBadJSON reports a body that is not UTF-8 JSON.
	ErrBadJSON = errors.New("native message is not UTF-8 JSON")
)

// ReadMessage reads one framed message and returns its JSON body. max <= 0
// means MaxExtensionMessage. It returns io.EOF, unwrapped, when r ends
// before a header starts (the browser closed the pipe), and an error
// wrapping io.ErrUnexpectedEOF when r ends inside a frame.
func ReadMessage(r io.Reader, max int) ([]byte, error) {
	if max <= 0 {
		max = MaxExtensionMessage
	}
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("read native message header: %w", err)
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0 {
		return nil, ErrEmpty
	}
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: header says %d bytes, the limit is %d", ErrTooLarge, n, max)
	}
	// Grow as bytes arrive rather than trusting the header with one big
	// allocation up front.
	var buf bytes.Buffer
	buf.Grow(int(min(n, 64<<10)))
	got, err := io.CopyN(&buf, r, int64(n))
	if got < int64(n) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read native message body (%d of %d bytes): %w", got, n, err)
	}
	body := buf.Bytes()
	// json.Valid lets invalid UTF-8 through inside strings; browsers never
	// send it, so a body with it is corrupt.
	if !utf8.Valid(body) || !json.Valid(body) {
		return nil, ErrBadJSON
	}
	return body, nil
}

// WriteMessage encodes v as JSON and writes it as one frame, refusing
// anything over MaxHostMessage since the browser would drop the connection.
// A json.RawMessage is written as given (after validation).
func WriteMessage(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode native message: %w", err)
	}
	if len(body) > MaxHostMessage {
		return fmt.Errorf("%w: %d bytes, a browser accepts at most %d from a native host", ErrTooLarge, len(body), MaxHostMessage)
	}
	// One Write, so a frame is never split between two writers' pieces.
	frame := make([]byte, 4+len(body))
	binary.LittleEndian.PutUint32(frame, uint32(len(body)))
	copy(frame[4:], body)
	if _, err := w.Write(frame); err != nil {
		return fmt.Errorf("write native message: %w", err)
	}
	return nil
}
