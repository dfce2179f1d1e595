package devbrowser_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/internal/proctest"
)

// The attack: the dev browser's DevTools port on 127.0.0.1 answered every
// local user, who could drive the browser (its pages, cookies, files)
// from another account. With the pipe transport none of the dev
// Chromium's processes listens on TCP at all.
func TestDevBrowserListensOnNoTCPPort(t *testing.T) {
	e := launch(t)
	pid := e.dev.PID()
	group := proctest.GroupPIDs(pid)
	if len(group) < 2 {
		t.Fatalf("the dev Chromium's process group holds %v; want it and its helpers", group)
	}
	if ports := listeningPorts(t, pid, group); len(ports) > 0 {
		t.Fatalf("the dev Chromium listens on TCP ports %v", ports)
	}
	args, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if cmd := strings.ReplaceAll(string(args), "\x00", " "); !strings.Contains(cmd, "--remote-debugging-pipe") || strings.Contains(cmd, "--remote-debugging-port") {
		t.Fatalf("the dev Chromium runs as %q", cmd)
	}
	if _, err := os.Stat(filepath.Join(e.dev.ProfileDir(), "DevToolsActivePort")); !os.IsNotExist(err) {
		t.Fatalf("the profile names a DevTools port: %v", err)
	}
}

// listeningPorts lists the TCP ports on which any of pids listens.
func listeningPorts(t *testing.T, netPID int, pids []int) []int {
	t.Helper()
	inodes := map[string]bool{}
	for _, pid := range pids {
		dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
			}
		}
	}
	if len(inodes) == 0 {
		t.Fatal("found no sockets at all: cannot tell listening ones (is /proc readable?)")
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(netPID), "net", table))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			p, _ := strconv.ParseInt(hexPort, 16, 32)
			ports = append(ports, int(p))
		}
		f.Close()
	}
	return ports
}
