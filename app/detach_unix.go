//go:build unix

package app

import (
	"os/exec"
	"syscall"
)

// detach puts cmd in its own session, so quitting Reins leaves a browser
// it started running.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
