package linkauth

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The handshake (wire events in parentheses; bytes travel as base64):
//
//	extension → hello          auth: {v: 1, nonce: Ne, mode: "key"|"code"}
//	companion → auth           {nonce: Nc, proof: MAC(S, companion ‖ port ‖ Ne ‖ Nc)}
//	extension → auth           {proof: MAC(S, extension ‖ port ‖ Ne ‖ Nc)}
//	companion → auth.key       code mode only: {key: K ⊕ MAC(S, wrap ‖ …), proof: MAC(K, companion ‖ …)}
//
// S is the link key K in key mode, and in code mode a secret derived from
// the pairing code and both nonces. The companion proves first, so a fake
// companion learns nothing; the extension answers only after checking that
// proof. In code mode the wrapped key goes out only after the extension
// proved the code: sent earlier, it would let anyone who starts a pairing
// handshake guess the 50-bit code offline and so unwrap the permanent key.

// Server is the companion's side of every handshake.
type Server struct {
	key   Key
	codes *Codes
}

// NewServer returns the companion's side for key; codes may be nil when
// pairing by code is off.
func NewServer(key Key, codes *Codes) *Server { return &Server{key: key, codes: codes} }

// Codes is the server's pairing codes (nil when off).
func (s *Server) Codes() *Codes { return s.codes }

// Handshake is one connection's handshake on the companion's side.
type Handshake struct {
	mode   string
	port   int
	ne, nc []byte
	secret []byte // K, or the code-derived key
	key    Key
	proven bool
}

// Begin starts a handshake for an extension that said hello with version v,
// mode and nonce on port. In code mode it burns the active code whatever
// happens next.
func (s *Server) Begin(v int, mode string, port int, nonce []byte) (*Handshake, error) {
	if v != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadHello, v, Version)
	}
	if err := checkNonce(nonce); err != nil {
		return nil, err
	}
	if err := checkPort(port); err != nil {
		return nil, err
	}
	h := &Handshake{mode: mode, port: port, ne: append([]byte(nil), nonce...), nc: newNonce(), key: s.key}
	switch mode {
	case ModeKey:
		h.secret = s.key.b[:]
	case ModeCode:
		if s.codes == nil {
			return nil, ErrNoCode
		}
		code, err := s.codes.take()
		if err != nil {
			return nil, err
		}
		h.secret = codeKey(code, port, h.ne, h.nc)
	default:
		return nil, fmt.Errorf("%w: unknown mode %q", ErrBadHello, clip(mode))
	}
	return h, nil
}

// Mode is the handshake's mode.
func (h *Handshake) Mode() string { return h.mode }

// Challenge is the companion's nonce and its proof, sent in answer to hello.
func (h *Handshake) Challenge() (nonce, proof []byte) {
	return h.nc, mac(h.secret, labelCompanion, h.port, h.ne, h.nc)
}

// Verify checks the extension's proof in constant time.
func (h *Handshake) Verify(proof []byte) error {
	if !equal(proof, mac(h.secret, labelExtension, h.port, h.ne, h.nc)) {
		return ErrBadProof
	}
	h.proven = true
	return nil
}

// Delivery is the link key wrapped for an extension that proved a pairing
// code, with the key-mode proof that lets it check the key it unwraps. It
// is only available in code mode, after Verify succeeded.
func (h *Handshake) Delivery() (wrapped, proof []byte, ok bool) {
	if h.mode != ModeCode || !h.proven {
		return nil, nil, false
	}
	pad := mac(h.secret, labelWrap, h.port, h.ne, h.nc)
	return xor(h.key.b[:], pad), mac(h.key.b[:], labelCompanion, h.port, h.ne, h.nc), true
}

// Client is the extension's side of one handshake. The extension itself is
// JavaScript (extension/lib/linkauth.js); this one serves fake extensions
// in tests and the fuzz target, and both are checked against the same
// vectors (companion/wire/testdata/link_auth.json).
type Client struct {
	mode   string
	port   int
	ne, nc []byte
	key    Key
	secret []byte
	code   string
}

// NewKeyClient starts a key-mode handshake toward port.
func NewKeyClient(key Key, port int) *Client {
	return &Client{mode: ModeKey, port: port, ne: newNonce(), key: key}
}

// NewCodeClient starts a code-mode handshake with what the person typed.
func NewCodeClient(typed string, port int) (*Client, error) {
	code, err := NormalizeCode(typed)
	if err != nil {
		return nil, err
	}
	return &Client{mode: ModeCode, port: port, ne: newNonce(), code: code}, nil
}

// Hello is what goes into hello's auth: the version, mode and nonce.
func (c *Client) Hello() (v int, mode string, nonce []byte) { return Version, c.mode, c.ne }

// Answer checks the companion's challenge and returns the extension's
// proof. An error means the peer is not the companion that holds the key
// (or issued the code): the extension must close and obey nothing.
func (c *Client) Answer(nonce, proof []byte) ([]byte, error) {
	if err := checkNonce(nonce); err != nil {
		return nil, err
	}
	c.nc = append([]byte(nil), nonce...)
	if c.mode == ModeCode {
		c.secret = codeKey(c.code, c.port, c.ne, c.nc)
	} else {
		c.secret = c.key.b[:]
	}
	if !equal(proof, mac(c.secret, labelCompanion, c.port, c.ne, c.nc)) {
		return nil, ErrBadProof
	}
	return mac(c.secret, labelExtension, c.port, c.ne, c.nc), nil
}

// Receive unwraps the link key the companion delivered in code mode and
// checks it against the key-mode proof that came with it.
func (c *Client) Receive(wrapped, proof []byte) (Key, error) {
	if c.mode != ModeCode || c.secret == nil {
		return Key{}, fmt.Errorf("%w: no key is expected", ErrBadProof)
	}
	if len(wrapped) != KeySize {
		return Key{}, fmt.Errorf("%w: the wrapped key is %d bytes", ErrBadProof, len(wrapped))
	}
	k, _ := KeyFromBytes(xor(wrapped, mac(c.secret, labelWrap, c.port, c.ne, c.nc)))
	if !equal(proof, mac(k.b[:], labelCompanion, c.port, c.ne, c.nc)) {
		return Key{}, ErrBadProof
	}
	return k, nil
}

// clip keeps echoed input short, and valid UTF-8, in error text (which
// becomes a WebSocket close reason).
func clip(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= 16 {
		return s
	}
	cut := 16
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
