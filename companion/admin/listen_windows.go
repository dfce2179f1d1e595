//go:build windows

package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// Address is the named pipe of dataDir's admin channel. The pipe namespace
// is machine-wide, so the name is derived from the data dir (two data dirs,
// two companions) and the user (two users, two companions).
func Address(dataDir string) string {
	sid, _ := userSID()
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(sid + "\x00" + strings.ToLower(abs)))
	return `\\.\pipe\reins-admin-` + hex.EncodeToString(sum[:12])
}

// Listen opens the admin channel of dataDir: a named pipe whose DACL grants
// access to the current user only and that refuses remote clients. If
// another companion already serves the data dir, Listen returns
// ErrAlreadyRunning.
func Listen(dataDir string) (net.Listener, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	sid, err := userSID()
	if err != nil {
		return nil, fmt.Errorf("admin pipe: finding the current user: %w", err)
	}
	ln, err := winio.ListenPipe(Address(dataDir), &winio.PipeConfig{
		// Protected DACL, one entry: generic all for this user.
		SecurityDescriptor: "D:P(A;;GA;;;" + sid + ")",
	})
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if c, derr := dial(ctx, dataDir); derr == nil {
			c.Close()
			return nil, fmt.Errorf("%w (%s)", ErrAlreadyRunning, dataDir)
		}
		return nil, fmt.Errorf("admin pipe: %w", err)
	}
	return ln, nil
}

func userSID() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", err
	}
	return tu.User.Sid.String(), nil
}

func cleanup(net.Listener) {}

func dial(ctx context.Context, dataDir string) (net.Conn, error) {
	c, err := winio.DialPipeContext(ctx, Address(dataDir))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
			return nil, fmt.Errorf("%w: %w", ErrNotRunning, err)
		}
		return nil, fmt.Errorf("admin pipe: %w", err)
	}
	return c, nil
}
