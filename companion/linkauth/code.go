package linkauth

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"
)

// CodeAlphabet is Crockford's base32: digits and letters without I, L, O
// and U, so nothing typed from the screen is ambiguous.
const CodeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// CodeLength is the number of characters in a pairing code: 50 bits.
const CodeLength = 10

// CodeTTL is how long a pairing code stays valid.
const CodeTTL = 5 * time.Minute

// Pairing attempts (handshakes in code mode) are limited to
// MaxCodeAttempts per CodeAttemptWindow; more are refused without touching
// the active code.
const (
	MaxCodeAttempts   = 5
	CodeAttemptWindow = time.Minute
)

// Codes holds the one active pairing code. Issuing a new code replaces the
// old one; a handshake that starts with it burns it, whatever its outcome.
type Codes struct {
	now func() time.Time

	mu       sync.Mutex
	code     string
	expires  time.Time
	attempts []time.Time // start times within the window, oldest first
}

// NewCodes returns an empty code holder; now is the clock (nil: time.Now).
func NewCodes(now func() time.Time) *Codes {
	if now == nil {
		now = time.Now
	}
	return &Codes{now: now}
}

// Issue makes a new code, valid for CodeTTL, and returns it in display form
// (two groups of five) with its expiry.
func (c *Codes) Issue() (code string, expires time.Time) {
	raw := make([]byte, CodeLength)
	// 256 is a multiple of 32: taking the low five bits is unbiased.
	rand.Read(raw)
	for i := range raw {
		raw[i] = CodeAlphabet[raw[i]&31]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.code = string(raw)
	c.expires = c.now().Add(CodeTTL)
	return FormatCode(c.code), c.expires
}

// take burns and returns the active code for a handshake that starts now.
func (c *Codes) take() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	cut := 0
	for cut < len(c.attempts) && now.Sub(c.attempts[cut]) >= CodeAttemptWindow {
		cut++
	}
	c.attempts = c.attempts[cut:]
	if len(c.attempts) >= MaxCodeAttempts {
		return "", fmt.Errorf("%w: at most %d per %s", ErrRateLimited, MaxCodeAttempts, CodeAttemptWindow)
	}
	c.attempts = append(c.attempts, now)
	code := c.code
	c.code = ""
	if code == "" || !now.Before(c.expires) {
		return "", ErrNoCode
	}
	return code, nil
}

// Active reports whether a code is waiting to be used, and until when.
func (c *Codes) Active() (bool, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.code == "" || !c.now().Before(c.expires) {
		return false, time.Time{}
	}
	return true, c.expires
}

// FormatCode shows a code as two groups of five: "ABCDE-FGHJK".
func FormatCode(code string) string {
	if len(code) != CodeLength {
		return code
	}
	return code[:5] + "-" + code[5:]
}

// NormalizeCode turns what a person typed into a code: case, spaces and
// dashes do not matter, and O, I and L read as 0, 1 and 1, as Crockford
// intends.
func NormalizeCode(s string) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch r {
		case ' ', '-', '\t':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		if r > 127 || !strings.ContainsRune(CodeAlphabet, r) {
			return "", fmt.Errorf("a pairing code has only the characters %s", CodeAlphabet)
		}
		b.WriteRune(r)
	}
	if b.Len() != CodeLength {
		return "", fmt.Errorf("a pairing code has %d characters, not %d", CodeLength, b.Len())
	}
	return b.String(), nil
}
