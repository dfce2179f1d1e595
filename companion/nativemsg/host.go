package nativemsg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/reinshq/reins/companion/wire"
)

// Message types an extension may send, and that the host answers with.
const (
	TypeHello = "hello"
	TypeStart = "start"
	TypeError = "error"
)

// DefaultStartTimeout bounds how long a start request waits for a launched
// companion to answer its health check.
const DefaultStartTimeout = 10 * time.Second

// Handler is what the host needs from the machine; tests pass fakes.
type Handler interface {
	// Version is the Reins version reported in hello replies.
	Version() string
	// Running asks the companion of the data dir for its port over the
	// admin channel, which only this user can open: whatever answers on a
	// TCP port proves nothing. ok is false when none runs. It must return
	// by ctx's deadline.
	Running(ctx context.Context) (port int, ok bool)
	// Port is where a companion that is not running will listen: the port
	// the app last recorded in the data dir, else the default.
	Port() int
	// LinkKey is the link key the extension proves on every connection,
	// created in the data dir on first use.
	LinkKey() ([]byte, error)
	// Launch starts the tray app detached, so it outlives this host.
	Launch() error
}

// Request is what an extension sends. ID, when present, is echoed so the
// extension can match replies (Prickly puts an id on every request).
type Request struct {
	Type string          `json:"type"`
	ID   json.RawMessage `json:"id,omitempty"`
}

// HelloReply answers hello. Key is the link key (base64): the browser
// starts this host only for the extension ids its manifest pins, so this
// is how the real extension, and nothing else, learns it.
type HelloReply struct {
	Type    string          `json:"type"`
	ID      json.RawMessage `json:"id,omitempty"`
	Port    int             `json:"port"`
	Version string          `json:"version"`
	Running bool            `json:"running"`
	Key     []byte          `json:"key,omitempty"`
}

// StartReply answers a start that found or brought up the companion.
type StartReply struct {
	Type    string          `json:"type"`
	ID      json.RawMessage `json:"id,omitempty"`
	Running bool            `json:"running"`
	Port    int             `json:"port"`
}

// ErrorReply reports a failed request or a broken frame. Code is one of
// wire's error codes; Request names the request type that failed, when one
// was understood.
type ErrorReply struct {
	Type    string          `json:"type"`
	ID      json.RawMessage `json:"id,omitempty"`
	Request string          `json:"request,omitempty"`
	Code    wire.Code       `json:"code"`
	Error   string          `json:"error"`
}

// Host serves one extension connection.
type Host struct {
	Handler Handler
	// StartTimeout bounds a start request; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
}

// Serve runs a Host with the default start timeout.
func Serve(ctx context.Context, r io.Reader, w io.Writer, h Handler) error {
	return (&Host{Handler: h}).Serve(ctx, r, w)
}

// Serve answers requests from r on w until r ends (nil), a frame is broken
// (one ErrorReply is written if possible, then the framing error is
// returned), a reply cannot be written, or ctx ends while a request is being
// handled. A read blocked on r is not interrupted by ctx: the browser closes
// stdin when it is done with the host, and that ends Serve.
func (h *Host) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		body, err := ReadMessage(r, MaxExtensionMessage)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// After a bad length the stream is out of step, so there is no
			// next frame to read; say why and go.
			_ = WriteMessage(w, ErrorReply{Type: TypeError, Code: wire.CodeBadParams, Error: err.Error()})
			return err
		}
		reply, err := h.handle(ctx, body)
		if err != nil {
			return err
		}
		if err := WriteMessage(w, reply); err != nil {
			return err
		}
	}
}

func (h *Host) handle(ctx context.Context, body []byte) (any, error) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return ErrorReply{Type: TypeError, Code: wire.CodeBadParams, Error: "a request is a JSON object with a string \"type\""}, nil
	}
	id, idErr := checkID(req.ID)
	if idErr != "" {
		return ErrorReply{Type: TypeError, Code: wire.CodeBadParams, Error: idErr}, nil
	}
	switch req.Type {
	case TypeHello:
		key, err := h.Handler.LinkKey()
		if err != nil {
			return ErrorReply{Type: TypeError, ID: id, Request: TypeHello, Code: wire.CodeInternal, Error: fmt.Sprintf("reading the link key: %v", err)}, nil
		}
		port, running := h.running(ctx, time.Now().Add(2*time.Second))
		return HelloReply{Type: TypeHello, ID: id, Port: port, Version: h.Handler.Version(), Running: running, Key: key}, nil
	case TypeStart:
		return h.start(ctx, id)
	case "":
		return ErrorReply{Type: TypeError, ID: id, Code: wire.CodeBadParams, Error: "request has no \"type\""}, nil
	default:
		return ErrorReply{Type: TypeError, ID: id, Code: wire.CodeUnknownMethod, Error: fmt.Sprintf("unknown request type %q: want %q or %q", clip(req.Type), TypeHello, TypeStart)}, nil
	}
}

// start launches the app if needed and waits for its health check with
// backoff until the deadline: the wait ends on the companion answering,
// not on a timer.
func (h *Host) start(ctx context.Context, id json.RawMessage) (any, error) {
	timeout := h.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	deadline := time.Now().Add(timeout)
	if port, ok := h.running(ctx, deadline); ok {
		return StartReply{Type: TypeStart, ID: id, Running: true, Port: port}, nil
	}
	if err := h.Handler.Launch(); err != nil {
		return ErrorReply{Type: TypeError, ID: id, Request: TypeStart, Code: wire.CodeInternal, Error: fmt.Sprintf("start reins: %v", err)}, nil
	}
	backoff := 25 * time.Millisecond
	for {
		// The new app says its port once its admin channel is up.
		port, ok := h.running(ctx, deadline)
		if ok {
			return StartReply{Type: TypeStart, ID: id, Running: true, Port: port}, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ErrorReply{Type: TypeError, ID: id, Request: TypeStart, Code: wire.CodeTimeout,
				Error: fmt.Sprintf("reins was started but did not answer within %s (it would listen on port %d)", timeout, port)}, nil
		}
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(backoff*2, time.Second)
	}
}

// running is the running companion's port, or the port one would use and
// false.
func (h *Host) running(ctx context.Context, deadline time.Time) (int, bool) {
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if port, ok := h.Handler.Running(cctx); ok && port > 0 && port <= 65535 {
		return port, true
	}
	return h.Handler.Port(), false
}

// checkID accepts a string or number id of modest size, so echoing it can
// never push a reply over MaxHostMessage.
func checkID(id json.RawMessage) (json.RawMessage, string) {
	if len(id) == 0 || string(id) == "null" {
		return nil, ""
	}
	if len(id) > 128 {
		return nil, "\"id\" is longer than 128 bytes"
	}
	var v any
	if err := json.Unmarshal(id, &v); err != nil {
		return nil, "\"id\" is not valid JSON"
	}
	switch v.(type) {
	case string, float64:
		return id, ""
	default:
		return nil, "\"id\" must be a string or a number"
	}
}

// clip keeps echoed input short in error text.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
