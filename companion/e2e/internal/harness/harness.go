// Package harness starts and stops the real processes of the end-to-end
// tests: `reins headless --inspect`, a headless Chromium
// loading the unpacked extension/, and local test pages. Every process it
// starts is killed and every temporary directory removed by the Close
// methods; the tests register those with t.Cleanup.
//
// It returns errors instead of taking a testing.TB so that benchmarks can
// keep one set of processes for all their runs.
package harness

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// RepoRoot finds the module root of github.com/reinshq/reins from the
// working directory (go test runs in the package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module github.com/reinshq/reins")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the github.com/reinshq/reins module")
		}
		dir = parent
	}
}

var (
	buildOnce sync.Once
	buildPath string
	buildDir  string
	buildErr  error
)

// Binary is the reins binary under test: $REINS_BIN when set (make builds
// it with the release flags), else one built from this checkout, once per
// test process.
func Binary() (string, error) {
	if p := os.Getenv("REINS_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("REINS_BIN: %w", err)
		}
		return p, nil
	}
	buildOnce.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildDir, err = os.MkdirTemp("", "reins-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(buildDir, "reins")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/reins")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/reins: %w\n%s", err, out)
		}
	})
	return buildPath, buildErr
}

// Cleanup removes what the package made for the whole test process (the
// binary built by Binary). TestMain calls it after the tests.
func Cleanup() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// FreePort asks the kernel for a free port on 127.0.0.1. Another process
// may take it before ours binds it; StartReins retries on that.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Backoff returns successive waits for polling a process that is starting:
// short at first so a fast start is seen at once, growing to 250 ms.
func Backoff() func() time.Duration {
	d := 2 * time.Millisecond
	return func() time.Duration {
		cur := d
		d = min(d*2, 250*time.Millisecond)
		return cur
	}
}

// syncBuffer collects a process's output for failure reports.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Keep memory bounded when a process is chatty.
	if b.buf.Len() > 4<<20 {
		tail := append([]byte(nil), b.buf.Bytes()[b.buf.Len()-(1<<20):]...)
		b.buf.Reset()
		b.buf.WriteString("…(truncated)\n")
		b.buf.Write(tail)
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
