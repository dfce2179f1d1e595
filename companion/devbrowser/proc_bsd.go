//go:build unix && !linux

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

// startProcess starts Chromium in a process group of its own, which kill
// ends as one. These systems have no Pdeathsig; the pipe is the watchdog:
// when the companion dies its ends close, and Chromium quits once its CDP
// pipe closes.
func startProcess(cmd *exec.Cmd) (*process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{}), release: func() {}}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	p.kill = func() {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
	return p, nil
}
