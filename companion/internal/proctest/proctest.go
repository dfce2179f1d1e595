//go:build linux

// Package proctest lets tests watch processes they did not start: the
// members of a process group, and their exit.
package proctest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// GroupPIDs lists the live (not zombie) processes of process group pgid.
func GroupPIDs(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pg, state, ok := stat(pid); ok && pg == pgid && state != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// stat reads a process's group and state from /proc.
func stat(pid int) (pgid int, state string, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, "", false
	}
	pg, err := strconv.Atoi(f[2])
	return pg, f[0], err == nil
}

// WaitGone waits until every process in pids has exited, woken by each
// one's pidfd (never by polling), and returns those still running at the
// deadline.
func WaitGone(pids []int, d time.Duration) ([]int, error) {
	deadline := time.Now().Add(d)
	var alive []int
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // already gone
		}
		if err != nil {
			return nil, err
		}
		exited := pollPidfd(fd, time.Until(deadline))
		unix.Close(fd)
		if !exited {
			alive = append(alive, pid)
		}
	}
	return alive, nil
}

// pollPidfd waits for the pidfd to turn readable (its process exited).
func pollPidfd(fd int, d time.Duration) bool {
	for {
		start := time.Now()
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, max(int(d.Milliseconds()), 0))
		if errors.Is(err, unix.EINTR) {
			d -= time.Since(start)
			continue
		}
		return err == nil && n > 0
	}
}
