//go:build windows

package nativemsg

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// startDetached starts bin with no stdio, outside the host's console and,
// where the browser's job object allows it, outside the job, which browsers
// may close (killing every process in it) when the host exits. A job that
// forbids breakaway refuses the flag, so the start is retried without it.
func startDetached(bin, dir string) (*os.Process, error) {
	base := uint32(windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS)
	var err error
	for _, flags := range []uint32{base | windows.CREATE_BREAKAWAY_FROM_JOB, base} {
		cmd := exec.Command(bin)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
		if err = cmd.Start(); err == nil {
			return cmd.Process, nil
		}
	}
	return nil, err
}
