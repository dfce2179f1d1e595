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

// ErrSquatted means the admin pipe's name is held by a pipe that another
// user created: the companion cannot serve on it, and the CLI refuses to
// talk to it (it would hand that user its requests and tokens).
var ErrSquatted = errors.New("the admin pipe is held by another user")

// Address is the named pipe of dataDir's admin channel. The pipe namespace
// is machine-wide, so the name is per user: it is derived from the user's
// SID and the data dir (two users, two pipes; two data dirs, two
// companions). Another user can compute it, which is why Listen creates the
// pipe exclusively and both ends check who owns it.
func Address(dataDir string) string {
	sid, err := userSID()
	if err != nil {
		return pipeName("", dataDir)
	}
	return pipeName(sid.String(), dataDir)
}

func pipeName(sid, dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(sid + "\x00" + strings.ToLower(abs)))
	return `\\.\pipe\reins-admin-` + hex.EncodeToString(sum[:12])
}

// pipeSDDL is the pipe's security descriptor: owned by the user, with a
// protected DACL of one entry that grants the user, and nobody else, all
// access. The explicit owner is what a client checks; another user cannot
// make a pipe of theirs owned by this user.
func pipeSDDL(sid string) string {
	return "O:" + sid + "D:P(A;;GA;;;" + sid + ")"
}

// Listen opens the admin channel of dataDir: a named pipe that refuses
// remote clients and whose security descriptor admits the current user
// only. The first instance is created exclusively (go-winio opens it with
// the FILE_CREATE disposition, which is what FILE_FLAG_FIRST_PIPE_INSTANCE
// asks of CreateNamedPipe), so a pipe of the same name that exists already
// is never joined: if it is this user's own companion, Listen returns
// ErrAlreadyRunning; if another user created it, ErrSquatted.
func Listen(dataDir string) (net.Listener, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	sid, err := userSID()
	if err != nil {
		return nil, fmt.Errorf("admin pipe: finding the current user: %w", err)
	}
	name := pipeName(sid.String(), dataDir)
	ln, err := winio.ListenPipe(name, &winio.PipeConfig{SecurityDescriptor: pipeSDDL(sid.String())})
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		c, derr := dial(ctx, dataDir)
		switch {
		case derr == nil:
			c.Close()
			return nil, fmt.Errorf("%w (%s)", ErrAlreadyRunning, dataDir)
		case errors.Is(derr, ErrSquatted):
			return nil, derr
		}
		return nil, fmt.Errorf("admin pipe %s: %w", name, err)
	}
	return ln, nil
}

func userSID() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, err
	}
	return tu.User.Sid, nil
}

func cleanup(net.Listener) {}

// dial connects to the admin pipe and proves it is this user's before any
// request goes over it.
func dial(ctx context.Context, dataDir string) (net.Conn, error) {
	sid, err := userSID()
	if err != nil {
		return nil, fmt.Errorf("admin pipe: finding the current user: %w", err)
	}
	name := pipeName(sid.String(), dataDir)
	c, err := winio.DialPipeContext(ctx, name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
			return nil, fmt.Errorf("%w: %w", ErrNotRunning, err)
		}
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			// Our own pipe admits us; one that refuses us is another user's.
			return nil, fmt.Errorf("%w: %s refuses this user: %w", ErrSquatted, name, err)
		}
		return nil, fmt.Errorf("admin pipe: %w", err)
	}
	if err := checkPipeOwner(c, sid); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// checkPipeOwner reads the owner of the pipe c is connected to.
func checkPipeOwner(c net.Conn, want *windows.SID) error {
	f, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return fmt.Errorf("admin pipe: cannot read its owner from a %T", c)
	}
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("admin pipe: reading its owner: %w", err)
	}
	return ownedBy(sd, want)
}

// ownedBy checks that a security descriptor's owner is want.
func ownedBy(sd *windows.SECURITY_DESCRIPTOR, want *windows.SID) error {
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("admin pipe: reading its owner: %w", err)
	}
	if owner == nil || !owner.Equals(want) {
		got := "nobody"
		if owner != nil {
			got = owner.String()
		}
		return fmt.Errorf("%w (owner %s, not %s)", ErrSquatted, got, want.String())
	}
	return nil
}
