package devbrowser

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startProcess starts Chromium in a process group of its own and with
// Pdeathsig: the kernel kills Chromium when the companion dies, however it
// dies. Pdeathsig fires when the thread that started the child exits, not
// the process, and Go retires threads: the goroutine that starts Chromium
// keeps its thread locked until Chromium has exited.
func startProcess(cmd *exec.Cmd) (*process, error) {
	ownGroup(cmd)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	p := &process{exited: make(chan struct{}), release: func() {}}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	p.pid = cmd.Process.Pid
	p.kill = killGroup(cmd)
	return p, nil
}
