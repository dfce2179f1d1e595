package devbrowser

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// passPipes hands Chromium its ends of the CDP pipe as fds 3 and 4.
func passPipes(cmd *exec.Cmd, childIn, childOut *os.File) []string {
	cmd.ExtraFiles = []*os.File{childIn, childOut}
	return []string{"--remote-debugging-pipe"}
}

// startProcess starts Chromium in a process group of its own (its zygote,
// GPU and renderer helpers with it), which kill ends as one, and with
// Pdeathsig: the kernel kills Chromium when the companion dies, however it
// dies. Pdeathsig fires when the thread that started the child exits, not
// the process, and Go retires threads: the goroutine that starts Chromium
// keeps its thread locked until Chromium has exited.
func startProcess(cmd *exec.Cmd) (*process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
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
	p.kill = func() {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
	return p, nil
}
