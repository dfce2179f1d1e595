package browsers

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Stop ends the main process of a program (not its --type= helpers, which
// the browser itself tears down) and returns once it has exited. The
// program is a private copy of sleep, so nothing else on the machine that
// runs sleep is touched.
func TestStop(t *testing.T) {
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "fake-browser")
	in, _ := os.Open(src)
	out, _ := os.OpenFile(exe, os.O_CREATE|os.O_WRONLY, 0o755)
	io.Copy(out, in)
	in.Close()
	out.Close()

	main := exec.Command(exe, "60")
	helper := exec.Command(exe, "60", "--type=renderer")
	for _, c := range []*exec.Cmd{main, helper} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	mainDone := make(chan error, 1)
	go func() { mainDone <- main.Wait() }()

	pids, err := mainProcesses(exe)
	if err != nil || len(pids) != 1 || pids[0] != main.Process.Pid {
		t.Fatalf("main processes %v (%v), want [%d]", pids, err, main.Process.Pid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Stop returns when the kernel reports the exit; our own Wait (the
	// parent) reaps it, which is what makes the pidfd readable here.
	stopped := make(chan error, 1)
	go func() { stopped <- Stop(ctx, exe) }()
	select {
	case <-mainDone:
	case <-ctx.Done():
		t.Fatal("the main process did not get SIGTERM")
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := syscall.Kill(helper.Process.Pid, 0); err != nil {
		t.Errorf("Stop ended a helper process: %v", err)
	}
	if pids, _ := mainProcesses(exe); len(pids) != 0 {
		t.Errorf("still running: %v", pids)
	}
	// Nothing running is not an error.
	if err := Stop(ctx, exe); err != nil {
		t.Errorf("Stop with nothing running: %v", err)
	}
}
