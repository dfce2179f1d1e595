package devbrowser

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// passPipes hands Chromium its ends of the CDP pipe as inherited handles,
// named on its command line: Windows has no fds 3 and 4 to pass.
func passPipes(cmd *exec.Cmd, childIn, childOut *os.File) []string {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.AdditionalInheritedHandles = append(cmd.SysProcAttr.AdditionalInheritedHandles,
		syscall.Handle(childIn.Fd()), syscall.Handle(childOut.Fd()))
	return []string{"--remote-debugging-pipe", fmt.Sprintf("--remote-debugging-io-pipes=%d,%d", childIn.Fd(), childOut.Fd())}
}

// startProcess starts Chromium in a job object that kills every process in
// it when its last handle closes. The companion holds that handle, so
// Chromium and its helpers go with the companion however it ends. (Helpers
// Chromium starts in the moment before it joins the job would escape it;
// it starts none that early.)
func startProcess(cmd *exec.Cmd) (*process, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating a job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("setting up the job object: %w", err)
	}
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		windows.CloseHandle(job)
		return nil, fmt.Errorf("putting chromium in its job object: %w", err)
	}
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	p.kill = func() {
		_ = windows.TerminateJobObject(job, 1)
		_ = cmd.Process.Kill()
	}
	p.release = func() { windows.CloseHandle(job) }
	return p, nil
}
