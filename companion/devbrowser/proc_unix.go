//go:build unix

package devbrowser

import (
	"os"
	"os/exec"
	"syscall"
)

// passPipes hands Chromium its ends of the CDP pipe as fds 3 and 4.
func passPipes(cmd *exec.Cmd, childIn, childOut *os.File) []string {
	cmd.ExtraFiles = []*os.File{childIn, childOut}
	return []string{"--remote-debugging-pipe"}
}

// ownGroup puts Chromium in a process group of its own, with its zygote,
// GPU and renderer helpers, so that killGroup ends all of them and
// nothing else.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func killGroup(cmd *exec.Cmd) func() {
	return func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}
