//go:build !windows

package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// SocketName is the admin socket's file name in the data dir.
const SocketName = "admin.sock"

// maxSocketPath is the shortest sun_path limit of the platforms we run on
// (macOS: 104 bytes including the NUL).
const maxSocketPath = 103

// Address is where the admin channel of dataDir listens.
func Address(dataDir string) string { return filepath.Join(dataDir, SocketName) }

// Listen opens the admin channel of dataDir: a Unix socket, mode 0600, in the
// data dir, which is made 0700 so no other user can even reach the socket. A
// stale socket left by a crashed companion is replaced; a live one means
// another companion serves this data dir, and Listen returns
// ErrAlreadyRunning.
func Listen(dataDir string) (net.Listener, error) {
	if err := privateDir(dataDir); err != nil {
		return nil, err
	}
	path := Address(dataDir)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("admin socket path %s is longer than %d bytes; use a shorter --data-dir", path, maxSocketPath)
	}
	if _, err := os.Lstat(path); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := dial(ctx, dataDir)
		cancel()
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%w (%s)", ErrAlreadyRunning, dataDir)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale admin socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	// Close must not unlink: Close removes the file itself, after the
	// server stopped, and only if it is still ours.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, fmt.Errorf("admin socket permissions: %w", err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	return &unixListener{Listener: ln, path: path, info: info}, nil
}

// privateDir creates dir 0700, or tightens an existing one: the socket's
// only protection is that nobody else can traverse its directory.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("making data dir private: %w", err)
		}
	}
	return nil
}

type unixListener struct {
	net.Listener
	path string
	info os.FileInfo
}

func cleanup(ln net.Listener) {
	u, ok := ln.(*unixListener)
	if !ok {
		return
	}
	// A companion started after this one stopped answering may have
	// replaced the socket; its file is not ours to remove.
	if now, err := os.Lstat(u.path); err == nil && os.SameFile(now, u.info) {
		os.Remove(u.path)
	}
}

func dial(ctx context.Context, dataDir string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", Address(dataDir))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("%w: %w", ErrNotRunning, err)
		}
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	return c, nil
}
