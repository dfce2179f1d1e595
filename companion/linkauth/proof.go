package linkauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the handshake version carried in hello's auth.v.
const Version = 1

// NonceSize is the length of each side's nonce in bytes.
const NonceSize = 32

// Modes of a handshake, as hello's auth.mode names them.
const (
	ModeKey  = "key"  // the extension holds the link key
	ModeCode = "code" // the extension holds a pairing code the person typed
)

// The labels that keep each MAC to one purpose. A proof made for one role
// or step can never stand in for another.
const (
	labelCompanion = "reins-link/1 companion"
	labelExtension = "reins-link/1 extension"
	labelCode      = "reins-link/1 code"
	labelWrap      = "reins-link/1 wrap"
)

// Errors of the handshake. The hub closes the socket with a reason made
// from them; none carries secret material.
var (
	ErrBadHello    = errors.New("hello carries no valid link auth")
	ErrBadProof    = errors.New("link proof does not match")
	ErrNoCode      = errors.New("no pairing code is active")
	ErrRateLimited = errors.New("too many pairing attempts")
)

// transcript is what every MAC covers: a label, the port the extension
// dialled (so a relay on another port fails), and both nonces. Every part
// but the label has a fixed length, so no two inputs concatenate alike.
func transcript(label string, port int, ne, nc []byte) []byte {
	b := make([]byte, 0, len(label)+1+2+2*NonceSize)
	b = append(b, label...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(port))
	b = append(b, ne...)
	return append(b, nc...)
}

func mac(key []byte, label string, port int, ne, nc []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(transcript(label, port, ne, nc))
	return m.Sum(nil)
}

// codeKey derives the handshake's secret from a pairing code and both
// nonces: fresh for every attempt, so nothing made under it outlives the
// code.
func codeKey(code string, port int, ne, nc []byte) []byte {
	return mac([]byte(code), labelCode, port, ne, nc)
}

func xor(a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := range a {
		out[i] = a[i] ^ b[i]
	}
	return out
}

func checkNonce(n []byte) error {
	if len(n) != NonceSize {
		return fmt.Errorf("%w: a nonce is %d bytes, not %d", ErrBadHello, NonceSize, len(n))
	}
	return nil
}

func checkPort(port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("port %d is out of range 1-65535", port)
	}
	return nil
}

func newNonce() []byte {
	n := make([]byte, NonceSize)
	rand.Read(n)
	return n
}

// equal compares two MACs in constant time.
func equal(a, b []byte) bool { return hmac.Equal(a, b) }
