//go:build unix && !linux

package devbrowser

import "os/exec"

// startProcess starts Chromium in a process group of its own. These
// systems have no Pdeathsig; the pipe is the watchdog: when the companion
// dies its ends close, and Chromium quits once its CDP pipe closes.
func startProcess(cmd *exec.Cmd) (*process, error) {
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{}), release: func() {}, kill: killGroup(cmd)}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}
