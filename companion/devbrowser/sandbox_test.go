package devbrowser

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNoSandboxReason(t *testing.T) {
	files := func(m map[string]string) func(string) string { return func(p string) string { return m[p] } }
	helper := func(want string) func(string) bool { return func(p string) bool { return p == want } }
	const chromium = "/opt/chromium/chrome"
	for _, c := range []struct {
		name  string
		probe sandboxProbe
		want  string // a word of the reason; "" for the sandbox
	}{
		{"macOS", sandboxProbe{goos: "darwin", euid: 501}, ""},
		{"Windows", sandboxProbe{goos: "windows", euid: -1}, ""},
		{"root on Linux", sandboxProbe{goos: "linux", euid: 0, readFile: files(nil), setuidRoot: helper(""), chromium: chromium}, "root"},
		{"a user with user namespaces", sandboxProbe{goos: "linux", euid: 1000, readFile: files(map[string]string{"/proc/sys/user/max_user_namespaces": "63000"}), setuidRoot: helper(""), chromium: chromium}, ""},
		{"a user on a kernel that says nothing", sandboxProbe{goos: "linux", euid: 1000, readFile: files(nil), setuidRoot: helper(""), chromium: chromium}, ""},
		{"unprivileged user namespaces off", sandboxProbe{goos: "linux", euid: 1000, readFile: files(map[string]string{"/proc/sys/kernel/unprivileged_userns_clone": "0"}), setuidRoot: helper(""), chromium: chromium}, "unprivileged_userns_clone=0"},
		{"user namespaces off", sandboxProbe{goos: "linux", euid: 1000, readFile: files(map[string]string{"/proc/sys/user/max_user_namespaces": "0"}), setuidRoot: helper(""), chromium: chromium}, "max_user_namespaces=0"},
		{"namespaces off but the setuid helper", sandboxProbe{goos: "linux", euid: 1000, readFile: files(map[string]string{"/proc/sys/kernel/unprivileged_userns_clone": "0"}), setuidRoot: helper("/opt/chromium/chrome-sandbox"), chromium: chromium}, ""},
	} {
		got := noSandboxReason(c.probe)
		if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The launches below run a fake Chromium: this test binary, started with
// FakeChromiumEnv set, which speaks just enough CDP over the pipe.
const (
	FakeChromiumEnv = "REINS_FAKE_CHROMIUM"
	fakeSandboxEnv  = "REINS_FAKE_CHROMIUM_SANDBOX" // "broken": no sandbox can start here
	fakeArgsEnv     = "REINS_FAKE_CHROMIUM_ARGS"    // file each launch appends its arguments to
)

// FakeChromium is the fake browser's main; TestMain runs it instead of the
// tests when FakeChromiumEnv is set.
func FakeChromium() int {
	args := strings.Join(os.Args[1:], " ")
	if f, err := os.OpenFile(os.Getenv(fakeArgsEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		f.WriteString(args + "\n")
		f.Close()
	}
	if os.Getenv(fakeSandboxEnv) == "broken" && !strings.Contains(args, "--no-sandbox") {
		os.Stderr.WriteString("[1:1:FATAL:zygote_host_impl_linux.cc(127)] No usable sandbox! Update your kernel or see the sandbox docs.\n")
		return 1
	}
	in := bufio.NewReader(os.NewFile(3, "cdp-in"))
	out := os.NewFile(4, "cdp-out")
	for {
		msg, err := in.ReadBytes(0)
		if err != nil {
			return 0 // the pipe closed: quit, as Chromium does
		}
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		json.Unmarshal(msg[:len(msg)-1], &req)
		res := map[string]any{"id": req.ID, "result": map[string]any{}}
		switch req.Method {
		case "Target.setDiscoverTargets", "Browser.close":
		case "Target.getTargets":
			res["result"] = map[string]any{"targetInfos": []any{map[string]any{"targetId": "T1", "type": "page", "url": "about:blank"}}}
		default:
			res = map[string]any{"id": req.ID, "error": map[string]any{"code": -32601, "message": "'" + req.Method + "' wasn't found"}}
		}
		data, _ := json.Marshal(res)
		out.Write(append(data, 0))
		if req.Method == "Browser.close" {
			return 0
		}
	}
}

func launchFake(t *testing.T, sandbox string, probe sandboxProbe) (*Browser, []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(t.TempDir(), "args")
	t.Setenv(FakeChromiumEnv, "1")
	t.Setenv(fakeSandboxEnv, sandbox)
	t.Setenv(fakeArgsEnv, argsFile)
	old := probeHost
	probeHost = func(string) sandboxProbe { return probe }
	defer func() { probeHost = old }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Launch(ctx, Options{Path: self, Headless: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	data, _ := os.ReadFile(argsFile)
	return b, strings.Split(strings.TrimSpace(string(data)), "\n")
}

var userWithNamespaces = sandboxProbe{goos: "linux", euid: 1000, readFile: func(string) string { return "" }, setuidRoot: func(string) bool { return false }}

func TestLaunchKeepsTheSandboxWhereItWorks(t *testing.T) {
	b, launches := launchFake(t, "works", userWithNamespaces)
	if len(launches) != 1 || strings.Contains(launches[0], "--no-sandbox") || !b.Sandboxed() {
		t.Fatalf("launches %q, sandboxed %v: want one launch with the sandbox", launches, b.Sandboxed())
	}
	if !strings.Contains(launches[0], "--remote-debugging-pipe") || strings.Contains(launches[0], "--remote-debugging-port") {
		t.Fatalf("launched with %q", launches[0])
	}
}

func TestLaunchDropsTheSandboxWhereItCannotWork(t *testing.T) {
	root := userWithNamespaces
	root.euid = 0
	b, launches := launchFake(t, "works", root)
	if len(launches) != 1 || !strings.Contains(launches[0], "--no-sandbox") || b.Sandboxed() {
		t.Fatalf("as root: launches %q, sandboxed %v: want one launch without the sandbox", launches, b.Sandboxed())
	}
}

func TestLaunchTriesAgainWithoutTheSandboxWhenChromiumCannotStartIt(t *testing.T) {
	b, launches := launchFake(t, "broken", userWithNamespaces)
	if len(launches) != 2 || strings.Contains(launches[0], "--no-sandbox") || !strings.Contains(launches[1], "--no-sandbox") || b.Sandboxed() {
		t.Fatalf("launches %q, sandboxed %v: want the sandbox first, then none", launches, b.Sandboxed())
	}
}
