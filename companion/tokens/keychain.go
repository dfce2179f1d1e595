package tokens

import (
	"errors"
	"fmt"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/reinshq/reins/companion/wire"
)

// ErrKeychainUnavailable matches (errors.Is) every error caused by an OS
// keychain that cannot be reached, is locked, or misbehaves.
var ErrKeychainUnavailable error = &wire.Error{Code: wire.CodeKeychainUnavailable, Message: "the OS keychain is not reachable"}

// UnavailableError says the keychain failed and how to run without one. It
// unwraps to both ErrKeychainUnavailable and the keychain's own error.
type UnavailableError struct {
	Cause error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("the OS keychain is not reachable (%v); start with --keyring file to keep tokens in a 0600 file in the data dir instead", e.Cause)
}

func (e *UnavailableError) Unwrap() []error { return []error{ErrKeychainUnavailable, e.Cause} }

// Keyring is the shape of github.com/zalando/go-keyring, so tests can hand a
// KeychainStore a fake that fails the way a real keychain does.
type Keyring interface {
	Set(service, user, password string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
}

// SystemKeyring is the platform keychain through go-keyring: Secret Service
// on Linux, Keychain on macOS, Credential Manager on Windows.
func SystemKeyring() Keyring { return systemKeyring{} }

type systemKeyring struct{}

func (systemKeyring) Set(service, user, password string) error {
	return keyring.Set(service, user, password)
}
func (systemKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (systemKeyring) Delete(service, user string) error        { return keyring.Delete(service, user) }

// DefaultKeychainTimeout bounds one keychain call. It is long because a locked
// keychain may show the person an unlock prompt; it exists because go-keyring
// waits on that prompt with no deadline of its own.
const DefaultKeychainTimeout = 60 * time.Second

// KeychainStore keeps secrets in a Keyring under Service. Every failure other
// than a missing secret becomes an *UnavailableError, so the person is always
// told about --keyring file and never silently given a plaintext fallback.
type KeychainStore struct {
	kr      Keyring
	timeout time.Duration
}

// NewKeychainStore wraps kr; timeout <= 0 means DefaultKeychainTimeout.
func NewKeychainStore(kr Keyring, timeout time.Duration) *KeychainStore {
	if timeout <= 0 {
		timeout = DefaultKeychainTimeout
	}
	return &KeychainStore{kr: kr, timeout: timeout}
}

func (k *KeychainStore) Set(account, secret string) error {
	_, err := k.call(func() (string, error) { return "", k.kr.Set(Service, account, secret) })
	return err
}

func (k *KeychainStore) Get(account string) (string, error) {
	return k.call(func() (string, error) { return k.kr.Get(Service, account) })
}

func (k *KeychainStore) Delete(account string) error {
	_, err := k.call(func() (string, error) { return "", k.kr.Delete(Service, account) })
	return err
}

// call runs f with a deadline. On timeout the goroutine is abandoned: the
// keychain library offers no way to cancel, and a stuck start-up is worse
// than one parked goroutine.
func (k *KeychainStore) call(f func() (string, error)) (string, error) {
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := f()
		done <- result{s, err}
	}()
	t := time.NewTimer(k.timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.s, classify(r.err)
	case <-t.C:
		return "", &UnavailableError{Cause: fmt.Errorf("no answer within %s; is it locked with no way to prompt for the password?", k.timeout)}
	}
}

func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keyring.ErrNotFound), errors.Is(err, ErrNotFound):
		return fmt.Errorf("keychain: %w", ErrNotFound)
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return fmt.Errorf("keychain: %w", err)
	default:
		return &UnavailableError{Cause: err}
	}
}
