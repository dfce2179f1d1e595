package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/internal/jsonrpc"
	"github.com/reinshq/reins/companion/wire"
)

// The bounds of a socket that has not yet proved the link key.
const (
	// MaxPreAuthFrame caps every frame before the handshake ends; a larger
	// one closes the socket with StatusMessageTooBig. After it, frames may
	// reach wire.MaxFrameBytes.
	MaxPreAuthFrame = 64 << 10
	// DefaultHelloTimeout bounds hello and the whole link handshake.
	DefaultHelloTimeout = 5 * time.Second
	// DefaultMaxUnauthenticated caps the sockets in their handshake at
	// once; more are refused with 503 before the upgrade.
	DefaultMaxUnauthenticated = 16
)

// StatusUnauthorized closes a socket that did not prove the link key: no
// auth in its hello, a proof that does not match, no active pairing code,
// too many pairing attempts, or no proof within the hello timeout. The
// close reason says which; the extension then asks its native host for the
// key again, or asks the person for a pairing code.
const StatusUnauthorized = websocket.StatusCode(wire.CloseUnauthorized)

// handshake reads hello and, when the hub has an Authenticator, runs the
// link handshake, all under one deadline. It returns the hello with its
// auth removed, or false after closing the socket; release is called as
// soon as the socket stops counting as unauthenticated, before any close
// handshake waits on the peer.
func (h *Hub) handshake(ctx context.Context, conn frameConn, p peer, release func()) (wire.Hello, bool) {
	// The deadline closes the socket itself, with a close frame that says
	// why: a read whose context ends would drop it without one.
	var (
		mu     sync.Mutex
		stage  = "hello"
		closed bool
	)
	closeOnce := func(code websocket.StatusCode, reason string, err error) {
		mu.Lock()
		if closed {
			mu.Unlock()
			return
		}
		closed = true
		mu.Unlock()
		release()
		h.log.Warn("refused extension link", "reason", reason, "err", err, "origin", p.origin, "remote", p.remote)
		conn.Close(code, truncate(reason, 120))
	}
	timer := time.AfterFunc(h.opts.HelloTimeout, func() {
		mu.Lock()
		what := stage
		mu.Unlock()
		closeOnce(StatusUnauthorized, fmt.Sprintf("no %s within %s", what, h.opts.HelloTimeout), nil)
	})
	defer timer.Stop()
	next := func(what string) {
		mu.Lock()
		stage = what
		mu.Unlock()
	}
	refuse := func(code websocket.StatusCode, reason string, err error) (wire.Hello, bool) {
		closeOnce(code, reason, err)
		return wire.Hello{}, false
	}
	readErr := func(err error) (wire.Hello, bool) {
		if errors.Is(err, websocket.ErrMessageTooBig) || websocket.CloseStatus(err) == websocket.StatusMessageTooBig || isReadLimit(err) {
			return refuse(websocket.StatusMessageTooBig, fmt.Sprintf("frame over %d KiB before the link handshake", MaxPreAuthFrame>>10), err)
		}
		mu.Lock()
		done := closed
		closed = true
		mu.Unlock()
		if !done {
			release()
			h.log.Debug("extension left during the link handshake", "err", err, "origin", p.origin, "remote", p.remote)
			conn.CloseNow()
		}
		return wire.Hello{}, false
	}
	wctx, cancel := context.WithTimeout(ctx, h.opts.HelloTimeout)
	defer cancel()

	typ, data, err := conn.Read(ctx)
	if err != nil {
		return readErr(err)
	}
	helloAt := time.Now()
	f, ok := parseFrame(typ, data)
	if !ok {
		return refuse(websocket.StatusPolicyViolation, "frame is not a JSON object", nil)
	}
	if f.Event != wire.EventHello {
		return refuse(websocket.StatusPolicyViolation, "first frame must be hello", nil)
	}
	var hello wire.Hello
	if err := json.Unmarshal(f.Params, &hello); err != nil {
		return refuse(websocket.StatusPolicyViolation, "malformed hello", err)
	}
	auth := hello.Auth
	// The nonce is no business of the graph or the admin channel.
	hello.Auth = nil
	if h.opts.Auth == nil {
		if !timer.Stop() {
			return wire.Hello{}, false
		}
		release()
		return hello, true
	}
	if auth == nil {
		return refuse(StatusUnauthorized, "hello has no link auth: update the Reins extension", nil)
	}
	hs, err := h.opts.Auth.Begin(auth.V, auth.Mode, p.port, auth.Nonce)
	if err != nil {
		return refuse(StatusUnauthorized, err.Error(), nil)
	}
	next("link proof")
	nc, proof := hs.Challenge()
	if err := writeEvent(wctx, conn, wire.EventAuth, wire.AuthChallenge{Nonce: nc, Proof: proof}); err != nil {
		return readErr(err)
	}
	typ, data, err = conn.Read(ctx)
	if err != nil {
		return readErr(err)
	}
	var answer wire.AuthProof
	if f, ok = parseFrame(typ, data); !ok || f.Event != wire.EventAuth || json.Unmarshal(f.Params, &answer) != nil {
		return refuse(StatusUnauthorized, "the frame after hello must be the link proof", nil)
	}
	if err := hs.Verify(answer.Proof); err != nil {
		return refuse(StatusUnauthorized, err.Error(), nil)
	}
	if !timer.Stop() {
		return wire.Hello{}, false // the deadline won the race and closed
	}
	if wrapped, kp, ok := hs.Delivery(); ok {
		if err := writeEvent(wctx, conn, wire.EventAuthKey, wire.AuthKey{Key: wrapped, Proof: kp}); err != nil {
			return readErr(err)
		}
		h.log.Info("browser paired with a code", "browser", hello.Browser, "profile", hello.Profile, "instance", hello.InstanceID)
	}
	// From hello to a verified proof: what the handshake adds to a connect.
	h.log.Debug("link handshake done", "mode", hs.Mode(), "took", time.Since(helloAt), "instance", hello.InstanceID)
	mu.Lock()
	closed = true
	mu.Unlock()
	release()
	return hello, true
}

// isReadLimit recognises coder/websocket's error for a frame over the read
// limit, which it does not export.
func isReadLimit(err error) bool {
	return err != nil && strings.Contains(err.Error(), "read limited")
}

// frameConn is what the handshake needs of a socket; *websocket.Conn is
// one, and the fuzz target feeds it frames without a network.
type frameConn interface {
	Read(ctx context.Context) (websocket.MessageType, []byte, error)
	Write(ctx context.Context, typ websocket.MessageType, data []byte) error
	Close(code websocket.StatusCode, reason string) error
	CloseNow() error
}

func writeEvent(ctx context.Context, conn frameConn, event string, params any) error {
	data, err := jsonrpc.Browspark.EncodeNotification(jsonrpc.Request{Method: event, Params: params})
	if err != nil {
		return err
	}
	return conn.Write(ctx, websocket.MessageText, data)
}

// slots counts the sockets that have not yet proved the link key.
type slots struct {
	mu  sync.Mutex
	n   int
	max int
}

func (s *slots) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= s.max {
		return false
	}
	s.n++
	return true
}

func (s *slots) release() {
	s.mu.Lock()
	s.n--
	s.mu.Unlock()
}

// Unauthenticated is the number of sockets in their handshake now.
func (h *Hub) Unauthenticated() int {
	h.unauth.mu.Lock()
	defer h.unauth.mu.Unlock()
	return h.unauth.n
}
