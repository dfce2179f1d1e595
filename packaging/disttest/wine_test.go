//go:build disttest

package disttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/nativemsg"
)

// wine runs Windows programs in a throwaway prefix. Nothing here touches
// the machine outside that prefix, and its wineserver is ended with the test.
type wine struct {
	bin, prefix string
	env         []string
}

func newWine(t *testing.T) *wine {
	t.Helper()
	bin := os.Getenv("REINS_WINE")
	if bin == "" {
		bin = "/usr/lib/wine/wine64" // Debian's wine64 package; /usr/bin/wine comes only with "wine"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("wine64 not found at %s (make deps-dist installs it; REINS_WINE names another): %v", bin, err)
	}
	prefix := filepath.Join(t.TempDir(), "prefix")
	w := &wine{bin: bin, prefix: prefix, env: []string{
		"WINEPREFIX=" + prefix,
		"WINEDEBUG=-all",
		"WINEDLLOVERRIDES=mscoree,mshtml=", // no Mono or Gecko install prompts
		"DISPLAY=",                         // nothing here needs a window
	}}
	server := func(arg string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(filepath.Dir(bin), "wineserver"), arg)
		cmd.Env = append(os.Environ(), w.env...)
		return cmd
	}
	t.Cleanup(func() {
		_ = server("-k").Run() // fails when no wineserver runs, which is fine
	})
	began := time.Now()
	if _, err := w.run(t, nil, "wineboot", "--init"); err != nil {
		t.Fatal(err)
	}
	if err := server("-w").Run(); err != nil { // the prefix is written when the server exits
		t.Fatal(err)
	}
	t.Logf("wine prefix ready after %s", time.Since(began).Round(time.Millisecond))
	// From here a wineserver stays up between programs: otherwise each wine
	// call starts a new one and reloads the prefix, seconds each time.
	persistent := server("-p")
	if err := persistent.Start(); err != nil {
		t.Fatalf("starting wineserver: %v", err)
	}
	t.Cleanup(func() {
		_ = server("-k").Run()
		_ = persistent.Wait()
	})

	// Go's runtime needs bcryptprimitives!ProcessPrng, which Wine 8 lacks;
	// the runtime loads it from system32 only, so the stand-in goes there.
	dll := filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	if !exists(dll) {
		run(t, "x86_64-w64-mingw32-gcc", "-shared", "-O2", "-s", "-o", dll,
			filepath.Join(root, "packaging", "windows", "winestub", "bcryptprimitives.c"), "-ladvapi32")
	}
	return w
}

// run runs a Windows program to completion, with a deadline.
func (w *wine) run(t *testing.T, stdin []byte, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(w.bin, args...)
	cmd.Env = append(os.Environ(), w.env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// Wine's own background processes (services.exe, explorer.exe) start
	// with the first program and inherit its output pipes; they outlive it
	// while the wineserver is up, so Wait must not wait for the pipes.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil // the program exited; only a Wine helper kept the pipe
		}
		if err != nil {
			return out.String(), fmt.Errorf("wine %s: %w\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), nil
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("wine %s did not finish within 3 minutes", strings.Join(args, " "))
		return "", nil
	}
}

func (w *wine) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := w.run(t, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// regValue is the value of name ("" for the default) under HKCU\key, and
// whether the key and value exist.
func (w *wine) regValue(t *testing.T, key, name string) (string, bool) {
	t.Helper()
	args := []string{"reg", "query", `HKCU\` + key}
	if name == "" {
		args = append(args, "/ve")
	} else {
		args = append(args, "/v", name)
	}
	out, err := w.run(t, nil, args...)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(out, "\n") {
		if _, v, ok := strings.Cut(line, "REG_SZ"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// unix maps a C:\ path in the prefix to the file system. Windows paths
// ignore case and Wine's own folders do not always match the case Windows
// code spells (Wine names it "StartUp"), so each existing component is
// matched without regard to case.
func (w *wine) unix(p string) string {
	rest, _ := strings.CutPrefix(p, `C:\`)
	dir := filepath.Join(w.prefix, "drive_c")
	for _, part := range strings.Split(rest, `\`) {
		next := filepath.Join(dir, part)
		if entries, err := os.ReadDir(dir); err == nil && !exists(next) {
			for _, e := range entries {
				if strings.EqualFold(e.Name(), part) {
					next = filepath.Join(dir, e.Name())
					break
				}
			}
		}
		dir = next
	}
	return dir
}

// TestWindowsInstallerUnderWine runs the real installer, the installed
// reins.exe, its native host launcher and the uninstaller under Wine: the
// registry and file work that a listing cannot show.
func TestWindowsInstallerUnderWine(t *testing.T) {
	setup := findOne(t, "Reins-*-windows-amd64-setup.exe")
	w := newWine(t)
	const (
		dir    = `C:\users\root\AppData\Local\Programs\Reins`
		exe    = dir + `\reins.exe`
		uninst = dir + `\Uninstall Reins.exe`
	)
	if os.Geteuid() != 0 {
		t.Fatal("the Wine paths assume the user root, as in CI")
	}
	startMenu := `C:\users\root\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Reins.lnk`
	// Where go-autostart (the tray's toggle) keeps its login item.
	startup := `C:\users\root\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\reins.lnk`
	runKey := `Software\Microsoft\Windows\CurrentVersion\Run`
	uninstKey := `Software\Microsoft\Windows\CurrentVersion\Uninstall\Reins`

	began := time.Now()
	w.mustRun(t, setup, "/S")
	t.Logf("silent install took %s", time.Since(began).Round(time.Millisecond))

	t.Run("installed", func(t *testing.T) {
		for _, f := range []string{exe, uninst, dir + `\reins.ico`, dir + `\reins-native-host.cmd`, dir + `\extension\manifest.json`, startMenu, startup} {
			if !exists(w.unix(f)) {
				t.Errorf("%s missing after install", f)
			}
		}
		verify := run(t, "osslsigncode", "verify", "-CAfile", os.Getenv("REINS_SIGN_CA"), "-in", w.unix(uninst))
		if !strings.Contains(verify, "Signature verification: ok") {
			t.Errorf("the uninstaller is not signed:\n%s", verify)
		}
		if v, ok := w.regValue(t, runKey, "Reins"); ok {
			t.Errorf("a Run value %q duplicates the Startup shortcut", v)
		}
		if v, ok := w.regValue(t, uninstKey, "DisplayVersion"); !ok || v != version {
			t.Errorf("Apps & features version %q (%v), want %s", v, ok, version)
		}
		for _, b := range nativemsg.Browsers {
			want := dir + `\com.reins.companion.json`
			if b.Firefox {
				want = dir + `\com.reins.companion.firefox.json`
			}
			if v, ok := w.regValue(t, b.RegistryKey+`\`+nativemsg.HostName, ""); !ok || v != want {
				t.Errorf("%s: HKCU\\%s\\%s = %q (%v), want %q", b.Name, b.RegistryKey, nativemsg.HostName, v, ok, want)
			}
		}
	})

	t.Run("reins.exe version", func(t *testing.T) {
		if out := strings.TrimSpace(w.mustRun(t, w.unix(exe), "version")); out != "reins "+version {
			t.Errorf("reins.exe version printed %q, want reins %s", out, version)
		}
	})

	// As Chromium starts the host on Windows: cmd.exe /c the launcher the
	// manifest names, with the origin and --parent-window.
	t.Run("native host launcher", func(t *testing.T) {
		var in bytes.Buffer
		if err := nativemsg.WriteMessage(&in, map[string]any{"type": "hello", "id": 1}); err != nil {
			t.Fatal(err)
		}
		out, err := w.run(t, in.Bytes(), "cmd", "/d", "/c", dir+`\reins-native-host.cmd`, nativemsg.ChromeOrigin, "--parent-window=0")
		if err != nil {
			t.Fatal(err)
		}
		body, err := nativemsg.ReadMessage(strings.NewReader(out), 0)
		if err != nil {
			t.Fatalf("launcher stdout %q: %v", out, err)
		}
		var reply nativemsg.HelloReply
		if err := json.Unmarshal(body, &reply); err != nil {
			t.Fatal(err)
		}
		if reply.Type != "hello" || reply.Version != version {
			t.Errorf("hello reply %+v", reply)
		}
		if len(out) != 4+len(body) {
			t.Errorf("the launcher wrote more than the reply (cmd echo?): %q", out)
		}
	})

	// An upgrade and the uninstaller must both stop a running Reins, or
	// Windows refuses to replace or delete reins.exe.
	companion := func(t *testing.T) (*proc, int) {
		port := freePort(t)
		c := start(t, w.env, w.bin, w.unix(exe), "headless", "--keyring", "file", "--port", fmt.Sprint(port), "--data-dir", `C:\reins-data`)
		waitHealthy(t, c, port, time.Minute)
		return c, port
	}
	waitExit := func(t *testing.T, c *proc, why string) {
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			t.Errorf("the running reins.exe was not stopped by %s", why)
		}
	}

	t.Run("headless, then upgrade over it", func(t *testing.T) {
		c, port := companion(t)
		t.Logf("reins.exe headless answered on port %d under Wine", port)
		w.mustRun(t, setup, "/S")
		waitExit(t, c, "the installer")
		if !exists(w.unix(exe)) {
			t.Error("reins.exe missing after the upgrade")
		}
	})

	t.Run("uninstall", func(t *testing.T) {
		c, _ := companion(t)
		// _?= runs the uninstaller in place and waits; without it, it
		// copies itself to %TEMP% and returns at once. In place, it cannot
		// delete itself, which is the one file left.
		w.mustRun(t, w.unix(uninst), "/S", "_?="+dir)
		waitExit(t, c, "the uninstaller")
		left, _ := filepath.Glob(filepath.Join(w.unix(dir), "*"))
		if len(left) != 1 || filepath.Base(left[0]) != "Uninstall Reins.exe" {
			t.Errorf("left in the install dir: %v", left)
		}
		for _, lnk := range []string{startMenu, startup} {
			if exists(w.unix(lnk)) {
				t.Errorf("%s left", lnk)
			}
		}
		if v, ok := w.regValue(t, runKey, "Reins"); ok {
			t.Errorf("Run value left: %q", v)
		}
		if _, ok := w.regValue(t, uninstKey, "DisplayName"); ok {
			t.Error("Apps & features entry left")
		}
		for _, b := range nativemsg.Browsers {
			if v, ok := w.regValue(t, b.RegistryKey+`\`+nativemsg.HostName, ""); ok {
				t.Errorf("%s native host key left: %q", b.Name, v)
			}
		}
	})
}
