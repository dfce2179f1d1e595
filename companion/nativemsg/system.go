package nativemsg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/atomicfile"
	"github.com/reinshq/reins/companion/linkauth"
)

// DefaultPort is where the companion listens unless --port says otherwise.
const DefaultPort = 47100

// PortFileName is the file in the data dir where a running app writes the
// port it listens on, as decimal text, so the native host finds it.
const PortFileName = "port"

// ReadPort returns the port recorded in dataDir, or DefaultPort when there
// is none or it is unreadable: the host then looks where a default install
// listens.
func ReadPort(dataDir string) int {
	if dataDir == "" {
		return DefaultPort
	}
	b, err := os.ReadFile(filepath.Join(dataDir, PortFileName))
	if err != nil {
		return DefaultPort
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || p <= 0 || p > 65535 {
		return DefaultPort
	}
	return p
}

// WritePort records port in dataDir for ReadPort, replacing the file whole
// so a host never reads half a number.
func WritePort(dataDir string, port int) error {
	if port <= 0 || port > 65535 {
		return fmt.Errorf("write port file: port %d out of range", port)
	}
	if err := atomicfile.Write(filepath.Join(dataDir, PortFileName), []byte(strconv.Itoa(port)+"\n"), 0o600); err != nil {
		return fmt.Errorf("write port file: %w", err)
	}
	return nil
}

// System is the real Handler: the data dir's admin channel for the running
// companion and its port, the data dir's port file for one that is not
// running, its link key, and the reins binary started detached.
type System struct {
	DataDir    string
	Binary     string // the reins binary; "" means this executable
	AppVersion string
}

func (s *System) Version() string { return s.AppVersion }

func (s *System) Port() int { return ReadPort(s.DataDir) }

// Running asks the companion over the admin channel; a process that merely
// listens on the port, or answers GET / with the health text, does not
// count.
func (s *System) Running(ctx context.Context) (int, bool) {
	c := admin.NewClient(s.DataDir)
	defer c.Close()
	st, err := c.Status(ctx)
	if err != nil {
		return 0, false
	}
	return st.Port, true
}

// LinkKey reads the data dir's link key, creating it when Reins never ran
// (the app then finds it). A key it cannot use is an error, not replaced:
// only the companion replaces a key, so a running one never holds another.
func (s *System) LinkKey() ([]byte, error) {
	k, err := linkauth.Load(s.DataDir)
	if errors.Is(err, fs.ErrNotExist) {
		k, _, err = linkauth.LoadOrCreate(s.DataDir)
	}
	if err != nil {
		return nil, err
	}
	return k.Bytes(), nil
}

// Launch starts the reins binary with no arguments (the tray app), detached
// from this host: its own session or process group, no stdio (stdout is the
// browser's pipe), and released so the host can exit.
func (s *System) Launch() error {
	bin := s.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find reins binary: %w", err)
		}
		bin = exe
	}
	// The browser starts hosts in odd working dirs; home is stable.
	dir, _ := os.UserHomeDir()
	p, err := startDetached(bin, dir)
	if err != nil {
		return fmt.Errorf("launch %s: %w", bin, err)
	}
	return p.Release()
}
