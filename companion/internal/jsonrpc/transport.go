package jsonrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Pipe is a Transport over a pair of byte streams carrying NUL-terminated
// messages, as Chromium's --remote-debugging-pipe does on fds 3 and 4.
type Pipe struct {
	r   *bufio.Reader
	w   io.Writer
	max int
	c   []io.Closer

	wmu    sync.Mutex
	broken error
	once   sync.Once
}

// NewPipe reads messages from r and writes them to w; a message over max
// bytes (0: no cap) ends the link. Close closes r and w when they are
// Closers. A w with SetWriteDeadline (an *os.File pipe) gets each write's
// deadline; without it a write has none.
func NewPipe(r io.Reader, w io.Writer, max int) *Pipe {
	p := &Pipe{r: bufio.NewReaderSize(r, 64<<10), w: w, max: max}
	for _, x := range []any{r, w} {
		if c, ok := x.(io.Closer); ok {
			p.c = append(p.c, c)
		}
	}
	return p
}

// ReadMessage returns the next message without its NUL.
func (p *Pipe) ReadMessage() ([]byte, error) {
	var msg []byte
	for {
		chunk, err := p.r.ReadSlice(0)
		if p.max > 0 && len(msg)+len(chunk) > p.max+1 {
			return nil, fmt.Errorf("a message over %d bytes: %w", p.max, ErrTooBig)
		}
		msg = append(msg, chunk...)
		switch {
		case err == nil:
			return msg[:len(msg)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// WriteMessage writes msg and its NUL in one write. A write cut short by
// the deadline breaks the pipe for good: the peer holds half a message.
func (p *Pipe) WriteMessage(ctx context.Context, msg []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.broken != nil {
		return p.broken
	}
	if d, ok := p.w.(writeDeadliner); ok {
		deadline, _ := ctx.Deadline()
		if err := d.SetWriteDeadline(deadline); err != nil && !errors.Is(err, os.ErrNoDeadline) {
			return err
		}
	}
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), 0)
	if _, err := p.w.Write(buf); err != nil {
		p.broken = fmt.Errorf("pipe broken by a failed write: %w", err)
		return err
	}
	return nil
}

// Close closes both streams; a pipe has no way to say why.
func (p *Pipe) Close(error) error {
	var err error
	p.once.Do(func() {
		for _, c := range p.c {
			err = errors.Join(err, c.Close())
		}
	})
	return err
}

// WebSocket is a Transport over a coder/websocket connection, one text
// message per message; a binary message breaks the protocol.
type WebSocket struct {
	c      *websocket.Conn
	status func(cause error) (websocket.StatusCode, string)
}

// NewWebSocket wraps c; c's read limit caps what it reads. status, when not
// nil, names the close frame the link sends for the cause it closes with
// (the close handshake then waits for the peer's answer, bounded by the
// library); nil drops the connection without one.
func NewWebSocket(c *websocket.Conn, status func(cause error) (websocket.StatusCode, string)) *WebSocket {
	return &WebSocket{c: c, status: status}
}

// ReadMessage returns the next message.
func (w *WebSocket) ReadMessage() ([]byte, error) {
	typ, data, err := w.c.Read(context.Background())
	if err == nil && typ != websocket.MessageText {
		return nil, fmt.Errorf("a %v message: %w", typ, ErrProtocol)
	}
	return data, err
}

// WriteMessage writes one text message before ctx ends.
func (w *WebSocket) WriteMessage(ctx context.Context, msg []byte) error {
	return w.c.Write(ctx, websocket.MessageText, msg)
}

// Close closes the connection, with the close frame status chooses.
func (w *WebSocket) Close(cause error) error {
	if w.status == nil {
		return w.c.CloseNow()
	}
	code, reason := w.status(cause)
	return w.c.Close(code, reason)
}
