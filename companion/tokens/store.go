package tokens

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/reinshq/reins/companion/wire"
)

// Service is the one keychain service name every Reins secret is filed under.
const Service = "Reins"

// ErrNotFound reports a secret, token name or backend that does not exist.
var ErrNotFound error = &wire.Error{Code: wire.CodeNotFound, Message: "not found"}

// Store keeps secrets by account ("agent:NAME", "backend:ID"). Get and Delete
// return an error wrapping ErrNotFound for an unknown account. Managers
// serialise their calls, but a Store must tolerate other processes using the
// same backing storage.
type Store interface {
	Set(account, secret string) error
	Get(account string) (string, error)
	Delete(account string) error
}

// Check writes, reads back and deletes a probe secret, so a broken or locked
// keychain is found at start-up rather than when the first agent connects.
func Check(s Store) error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	// A random account keeps two processes probing at once from colliding.
	account := "probe:" + hex.EncodeToString(b[:])
	want := "reins-probe-" + hex.EncodeToString(b[:])
	if err := s.Set(account, want); err != nil {
		return fmt.Errorf("probe write: %w", err)
	}
	got, err := s.Get(account)
	if err != nil {
		_ = s.Delete(account)
		return fmt.Errorf("probe read: %w", err)
	}
	if err := s.Delete(account); err != nil {
		return fmt.Errorf("probe delete: %w", err)
	}
	if got != want {
		return fmt.Errorf("probe read back a different secret than it wrote: %w", errProbeMismatch)
	}
	return nil
}

var errProbeMismatch = errors.New("store returned the wrong secret")

func account(k Kind, name string) string { return string(k) + ":" + name }
