package browsers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Stop asks the running browser whose program is exe to quit, the way the
// desktop does at logout (SIGTERM: the browser saves its session and
// closes), and waits until it has exited. A browser that is not running
// is not an error.
func Stop(ctx context.Context, exe string) error {
	pids, err := mainProcesses(exe)
	if err != nil {
		return err
	}
	var errs []error
	for _, pid := range pids {
		if err := terminate(ctx, pid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mainProcesses are the processes running exe that are not one of its
// helpers (renderers and the rest carry --type=).
func mainProcesses(exe string) ([]int, error) {
	want, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		got, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || strings.TrimSuffix(got, " (deleted)") != want {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || strings.Contains(string(cmdline), "\x00--type=") {
			continue
		}
		out = append(out, pid)
	}
	return out, nil
}

// terminate sends SIGTERM and waits for the exit through a pidfd, which
// the kernel marks readable when the process ends: no polling loop.
func terminate(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, unix.SIGTERM, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return err
	}
	timeout := -1
	if dl, ok := ctx.Deadline(); ok {
		timeout = int(time.Until(dl).Milliseconds())
		if timeout < 0 {
			timeout = 0
		}
	}
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, timeout)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("process %d did not exit in time", pid)
		}
		return nil
	}
}
