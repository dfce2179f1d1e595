package app

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/nativemsg"
)

// freePort is a loopback port nothing listens on once the call returns.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func runMain(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(Env{
		Args: append([]string{"reins"}, args...), Stdin: bytes.NewReader(stdin),
		Stdout: &stdout, Stderr: &stderr, Getenv: os.Getenv,
	})
	return code, stdout.String(), stderr.String()
}

// Each browser starts the host with its own arguments; every form must get
// a hello answered on stdout and nothing else there.
func TestNativeHostAcceptsBrowserArguments(t *testing.T) {
	dataDir := t.TempDir()
	port := freePort(t)
	if err := nativemsg.WritePort(dataDir, port); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	if err := nativemsg.WriteMessage(&in, map[string]any{"type": "hello", "id": 7}); err != nil {
		t.Fatal(err)
	}
	for name, browserArgs := range map[string][]string{
		"chromium": {nativemsg.ChromeOrigin},
		"windows":  {nativemsg.ChromeOrigin, "--parent-window=0"},
		"firefox":  {"/home/u/.mozilla/native-messaging-hosts/com.reins.companion.json", nativemsg.FirefoxExtensionID},
		"none":     nil,
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"native-host", "--data-dir", dataDir}, browserArgs...)
			code, stdout, stderr := runMain(t, in.Bytes(), args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			body, err := nativemsg.ReadMessage(strings.NewReader(stdout), 0)
			if err != nil {
				t.Fatalf("stdout is not one frame: %v (%q)", err, stdout)
			}
			var reply nativemsg.HelloReply
			if err := json.Unmarshal(body, &reply); err != nil {
				t.Fatal(err)
			}
			if reply.Type != "hello" || reply.Port != port || reply.Running || reply.Version != Version || string(reply.ID) != "7" {
				t.Fatalf("reply %+v", reply)
			}
			if len(stdout) != 4+len(body) {
				t.Fatalf("stdout holds more than the reply: %q", stdout)
			}
		})
	}
}

func TestInstallAndUninstallNativeHost(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("LOCALAPPDATA", filepath.Join(home, "AppData", "Local"))
	host := filepath.Join(home, "bin", "reins-native-host")

	code, stdout, stderr := runMain(t, nil, "install-native-host", "--host-path", host)
	if code != 0 {
		t.Fatalf("install: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "wrote "); n != len(nativemsg.Browsers) {
		t.Errorf("install reported %d manifests, want %d:\n%s", n, len(nativemsg.Browsers), stdout)
	}
	if !strings.Contains(stdout, host) {
		t.Errorf("install does not say what browsers will start:\n%s", stdout)
	}
	// Every manifest it reports names the host path.
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		p, ok := strings.CutPrefix(line, "wrote ")
		if !ok || strings.HasPrefix(p, `HKCU\`) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Path string }
		if err := json.Unmarshal(b, &m); err != nil || m.Path != host {
			t.Errorf("%s names %q (%v), want %q", p, m.Path, err, host)
		}
	}

	code, stdout, stderr = runMain(t, nil, "uninstall-native-host")
	if code != 0 {
		t.Fatalf("uninstall: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "removed "); n != len(nativemsg.Browsers) {
		t.Errorf("uninstall reported %d removals, want %d:\n%s", n, len(nativemsg.Browsers), stdout)
	}
	code, stdout, _ = runMain(t, nil, "uninstall-native-host")
	if code != 0 || !strings.Contains(stdout, "no per-user native host manifests") {
		t.Errorf("second uninstall: exit %d, %q", code, stdout)
	}
}

func TestDefaultHostPath(t *testing.T) {
	have := func(paths ...string) func(string) bool {
		return func(p string) bool {
			for _, q := range paths {
				if filepath.Clean(q) == filepath.Clean(p) {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		exe, goos string
		exists    func(string) bool
		want      string
	}{
		{"/usr/bin/reins", "linux", have("/usr/lib/reins/reins-native-host"), "/usr/lib/reins/reins-native-host"},
		{"/opt/reins/reins", "linux", have("/opt/reins/reins-native-host"), "/opt/reins/reins-native-host"},
		{"/home/u/src/reins/bin/reins", "linux", have(), "/home/u/src/reins/bin/reins"},
		{"/Apps/Reins/reins.exe", "windows", have("/Apps/Reins/reins-native-host.cmd"), filepath.Clean("/Apps/Reins/reins-native-host.cmd")},
	} {
		if got := defaultHostPath(tc.exe, tc.goos, tc.exists); got != tc.want {
			t.Errorf("defaultHostPath(%s, %s) = %s, want %s", tc.exe, tc.goos, got, tc.want)
		}
	}
}
