//go:build unix

package devbrowser

import (
	"os/exec"
	"syscall"
)

// Chromium forks zygote, GPU and renderer helpers; its own process group lets
// Close end all of them without touching anything else.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(cmd *exec.Cmd) {
	pid := cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
