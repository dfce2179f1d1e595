package app

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in its own process group, so quitting Reins leaves a
// browser it started running.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
