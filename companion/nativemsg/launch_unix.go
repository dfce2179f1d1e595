//go:build unix

package nativemsg

import (
	"os"
	"os/exec"
	"syscall"
)

// startDetached starts bin with no stdio in its own session, so the browser
// tearing down the host's process group does not take the app with it.
func startDetached(bin, dir string) (*os.Process, error) {
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd.Process, nil
}
