// Package linkauth owns the secret the extension and the companion prove to
// each other before either obeys the other on the extension link: the
// per-install link key in the data dir, the HMAC proofs over fresh nonces
// from both sides, bound to the port the extension dialled, and the short
// pairing codes that bring the key to a browser without the native
// messaging host. It holds no sockets: the hub carries its messages.
//
// Every comparison of a proof is constant-time, and the key never appears
// in a log line or an error.
package linkauth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/reinshq/reins/companion/atomicfile"
)

// KeyFile is the link key's file name in the data dir (mode 0600).
const KeyFile = "link.key"

// KeySize is the link key's length in bytes.
const KeySize = 32

// Key is the per-install link key. Its String, GoString and LogValue hide
// the secret, so printing or logging a Key by mistake leaks nothing.
type Key struct{ b [KeySize]byte }

// NewKey returns a fresh random key.
func NewKey() Key {
	var k Key
	rand.Read(k.b[:])
	return k
}

// KeyFromBytes makes a key from exactly KeySize bytes.
func KeyFromBytes(b []byte) (Key, error) {
	var k Key
	if len(b) != KeySize {
		return k, fmt.Errorf("a link key is %d bytes, not %d", KeySize, len(b))
	}
	copy(k.b[:], b)
	return k, nil
}

// Bytes is a copy of the secret, for the one place that hands it on: the
// native messaging host's reply to the pinned extension.
func (k Key) Bytes() []byte { return append([]byte(nil), k.b[:]...) }

// IsZero reports whether k was never set.
func (k Key) IsZero() bool { return k == Key{} }

func (k Key) String() string             { return "linkauth.Key(hidden)" }
func (k Key) GoString() string           { return "linkauth.Key(hidden)" }
func (k Key) LogValue() slog.Value       { return slog.StringValue("hidden") }
func (k Key) Format(f fmt.State, _ rune) { f.Write([]byte(k.String())) }

// Load reads the link key of dataDir. A missing file is an error wrapping
// fs.ErrNotExist.
func Load(dataDir string) (Key, error) {
	path := filepath.Join(dataDir, KeyFile)
	fi, err := os.Lstat(path)
	if err != nil {
		return Key{}, fmt.Errorf("link key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Key{}, fmt.Errorf("link key %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return Key{}, fmt.Errorf("%w: %s has mode %04o", ErrKeyExposed, path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("link key: %w", err)
	}
	k, err := KeyFromBytes(data)
	if err != nil {
		return Key{}, fmt.Errorf("link key %s: %w", path, err)
	}
	return k, nil
}

// ErrKeyExposed means the key file could be read by other users: it may
// have leaked, so LoadOrCreate replaces it.
var ErrKeyExposed = errors.New("the link key file is readable by other users")

// LoadOrCreate returns dataDir's link key, creating the dir (0700) and a
// fresh key (0600) on first use. A key file that others could read, or that
// is damaged, is replaced, and replaced says so: extensions then fetch the
// new key from the native host, or pair again with a code. Two processes
// starting at once (the app and a native host) end up with the same key:
// the file is created exclusively and the loser reads the winner's.
func LoadOrCreate(dataDir string) (k Key, replaced bool, err error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return Key{}, false, fmt.Errorf("creating data dir: %w", err)
	}
	k, err = Load(dataDir)
	if err == nil {
		return k, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		// Unreadable by us, exposed, the wrong size: a new key is the only
		// safe repair.
		if rerr := os.Remove(filepath.Join(dataDir, KeyFile)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return Key{}, false, fmt.Errorf("replacing the link key: %w", rerr)
		}
		replaced = true
	}
	k = NewKey()
	if err := writeExclusive(filepath.Join(dataDir, KeyFile), k.b[:]); err != nil {
		if errors.Is(err, fs.ErrExist) {
			k, err = Load(dataDir)
			return k, replaced, err
		}
		return Key{}, false, err
	}
	return k, replaced, nil
}

// writeExclusive writes the key whole where none is, so a reader never
// sees half a key and an existing key is never overwritten.
func writeExclusive(path string, data []byte) error {
	if err := atomicfile.Create(path, data, 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("writing the link key: %w", err)
	}
	return nil
}
