package devbrowser

import (
	"os"
	"runtime"
	"strings"
)

// sandboxProbe is what deciding on Chromium's sandbox needs to know about
// the host; tests supply their own.
type sandboxProbe struct {
	goos string
	euid int
	// readFile reads a /proc file ("" when it does not exist).
	readFile func(path string) string
	// setuidRoot reports whether path is a setuid-root executable.
	setuidRoot func(path string) bool
	chromium   string
}

// probeHost looks at this host; tests replace it.
var probeHost = hostProbe

func hostProbe(chromium string) sandboxProbe {
	return sandboxProbe{
		goos: runtime.GOOS,
		euid: os.Geteuid(),
		readFile: func(path string) string {
			b, err := os.ReadFile(path)
			if err != nil {
				return ""
			}
			return strings.TrimSpace(string(b))
		},
		setuidRoot: setuidRoot,
		chromium:   chromium,
	}
}

// noSandboxReason says why Chromium's sandbox cannot work on this host, or
// "" when it can. Only Linux can lack what it needs: macOS and Windows
// sandbox any process. On Linux the sandbox needs either unprivileged user
// namespaces or the setuid chrome-sandbox helper beside the executable, and
// Chromium refuses it outright as root. Whatever this misses (a container
// whose seccomp policy refuses user namespaces), Chromium says when it
// starts, and Launch tries again without.
func noSandboxReason(p sandboxProbe) string {
	if p.goos != "linux" {
		return ""
	}
	if p.euid == 0 {
		return "running as root, where Chromium refuses its sandbox"
	}
	dir := p.chromium[:strings.LastIndexByte(p.chromium, '/')+1]
	if p.setuidRoot(dir + "chrome-sandbox") {
		return ""
	}
	if p.readFile("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		return "unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0) and there is no setuid chrome-sandbox"
	}
	if p.readFile("/proc/sys/user/max_user_namespaces") == "0" {
		return "user namespaces are off (user.max_user_namespaces=0) and there is no setuid chrome-sandbox"
	}
	return ""
}
