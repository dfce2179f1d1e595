package desktoptest

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

// figures is where the measured figures go when REINS_FIGURES names a file
// (the README quotes them); the test logs them either way.
func figures(t *testing.T, kv map[string]any) {
	t.Helper()
	for k, v := range kv {
		t.Logf("figure %s = %v", k, v)
	}
	path := os.Getenv("REINS_FIGURES")
	if path == "" {
		return
	}
	old := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		json.Unmarshal(data, &old)
	}
	for k, v := range kv {
		old[k] = v
	}
	data, _ := json.MarshalIndent(old, "", "  ")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The whole start-up path a person meets: `reins` starts the companion and
// puts its icon in the panel's tray, with no window; a second `reins` on the
// same data dir exits 0 and the first one shows its dashboard.
func TestTrayAppStartsOnceAndShowsItsDashboard(t *testing.T) {
	d := newDesktop(t)
	pnl := newPanel(t, d.bus)
	// An agent is already set up, so the first-run guide stays closed and
	// the idle figures are those of the tray alone (TestFirstRunGuide
	// covers the guide).
	p, dir, port := d.startSetUp(t)
	mcpReady := p.waitMCP()
	reg := pnl.waitItem(t)
	trayReady := reg.at.Sub(p.started)
	p.waitLog("tray app ready")
	if code, body := p.get("/"); code != 200 || body != wire.HealthText {
		t.Fatalf("GET / answered %d %q", code, body)
	}
	// The icon's menu is the person's way in; it must be there at start.
	menu := pnl.waitMenu(t, reg.sender, "Pause automation", func(m menuItem) bool {
		_, ok := m.find("Pause automation")
		return ok
	})
	for _, want := range []string{"Open dashboard", "Live view", "Connect an agent…", "Start at login", "Quit"} {
		if _, ok := menu.find(want); !ok {
			t.Errorf("the tray menu has no %q: %s", want, menu)
		}
	}
	// First run turned start at login on, and recorded that it did.
	if _, err := os.Stat(filepath.Join(d.home, ".config", "autostart", "reins.desktop")); err != nil {
		t.Errorf("first run did not turn on start at login: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "first-run")); err != nil {
		t.Errorf("first run was not recorded: %v", err)
	}
	if login, ok := menu.find("Start at login"); !ok || !login.Toggled {
		t.Errorf("Start at login is not checked in the menu: %s", login)
	}

	// Idle with the dashboard closed: no window is on screen.
	if ids := d.windows(t, "^Reins$"); len(ids) != 0 {
		t.Fatalf("a dashboard is on screen before anyone asked: %v", ids)
	}
	rss := p.rssKiB()
	for k, v := range p.memory() {
		t.Logf("resident %-12s %6d KiB", k, v)
	}
	figures(t, map[string]any{
		"launch_to_mcp_ms":    mcpReady.Milliseconds(),
		"launch_to_tray_ms":   trayReady.Milliseconds(),
		"idle_rss_mib":        float64(rss*10/1024) / 10,
		"idle_rss_kib":        rss,
		"measured_with_cores": runtimeCores(),
	})
	// No window has been shown, so no GL context exists and the graphics
	// driver is not loaded (under Xvfb, Mesa's DRI driver and libLLVM: 54
	// MiB when the tray's icon came with a hidden window of its own).
	if mem := p.memory(); mem["llvm"] > 0 || mem["dri"] > 0 {
		t.Errorf("the idle tray app has the GL driver loaded (llvm %d KiB, dri %d KiB)", mem["llvm"], mem["dri"])
	}
	if rss > 100*1024 {
		t.Errorf("idle RSS %d KiB is over the 100 MiB target", rss)
	}

	// A second launch hands over to the first and leaves.
	code, out, errOut := d.runReins(t, []string{"--data-dir", dir, "--port", strconv.Itoa(port), "--keyring", "file"})
	if code != 0 || !strings.Contains(out, "already running") {
		t.Fatalf("second reins: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	win := d.window(t, "^Reins$")
	d.screenshot(t, filepath.Join(t.TempDir(), "dashboard.png"), "")
	geo := d.x(t, "xdotool", "getwindowgeometry", win)
	if !strings.Contains(geo, "Geometry:") {
		t.Fatalf("dashboard geometry: %q", geo)
	}
	if got := p.rssKiB(); got < rss {
		t.Logf("RSS fell from %d to %d KiB after showing the dashboard", rss, got)
	}

	if code := p.stop(); code != 0 {
		t.Fatalf("reins exited %d on SIGTERM; log:\n%s", code, p.log())
	}
	if _, err := os.Stat(filepath.Join(dir, "port")); !os.IsNotExist(err) {
		t.Errorf("the port file outlived the companion: %v", err)
	}
}

// A later "off" for start at login sticks: only the first run turns it on.
func TestStartAtLoginOffSticks(t *testing.T) {
	d := newDesktop(t)
	newPanel(t, d.bus)
	dir := shortDir(t)
	entry := filepath.Join(d.home, ".config", "autostart", "reins.desktop")

	p := d.startReins(t, dir, freePort(t), []string{"--keyring", "file"})
	p.waitLog("tray app ready")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// The person turns it off (what the menu's checkbox does).
	if err := os.Remove(entry); err != nil {
		t.Fatal(err)
	}
	p = d.startReins(t, dir, freePort(t), []string{"--keyring", "file"})
	p.waitLog("tray app ready")
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Fatalf("the second run turned start at login back on: %v", err)
	}
	p.stop()
}

// Without a panel that shows tray icons the dashboard opens instead, and
// the log says why.
func TestNoTrayHostOpensTheDashboard(t *testing.T) {
	d := newDesktop(t)
	p := d.startReins(t, shortDir(t), freePort(t), []string{"--keyring", "file"})
	line := p.waitLog("no system tray")
	if !strings.Contains(line, "org.kde.StatusNotifierWatcher") {
		t.Errorf("the log does not say why: %s", line)
	}
	d.window(t, "^Reins$")
	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d; log:\n%s", code, p.log())
	}
}

// Without a session bus Fyne's systray would panic on quit; the tray is
// left alone, the dashboard opens, and quitting is clean.
func TestNoSessionBusOpensTheDashboardAndQuitsCleanly(t *testing.T) {
	d := newDesktop(t)
	p := d.startReins(t, shortDir(t), freePort(t), []string{"--keyring", "file"},
		"DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	line := p.waitLog("no system tray")
	if !strings.Contains(line, "no session D-Bus") {
		t.Errorf("the log does not say why: %s", line)
	}
	d.window(t, "^Reins$")
	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d; log:\n%s", code, p.log())
	}
	if strings.Contains(p.log(), "panic") {
		t.Fatalf("reins panicked on quit:\n%s", p.log())
	}
}

// With no display at all, `reins` says to use headless instead of letting
// GLFW panic.
func TestNoDisplaySaysUseHeadless(t *testing.T) {
	d := &desktop{display: "", bus: "unix:path=/nonexistent", home: t.TempDir()}
	code, _, errOut := d.runReins(t, []string{"--data-dir", shortDir(t), "--keyring", "file"}, "DISPLAY=")
	if code == 0 || !strings.Contains(errOut, "no display: use `reins headless`") || strings.Contains(errOut, "panic") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// A command under the C locale with a charset (LANG=C.UTF-8, the default of
// many containers and servers) prints what it has to say and nothing else:
// no toolkit errors about an unparsable language.
func TestCLocaleCommandsAreQuiet(t *testing.T) {
	d := &desktop{display: "", bus: "unix:path=/nonexistent", home: t.TempDir()}
	for _, lang := range []string{"C.UTF-8", "POSIX.UTF-8", "C", "en_US.UTF-8"} {
		code, out, errOut := d.runReins(t, []string{"version"}, "LANG="+lang, "LC_ALL=", "LC_MESSAGES=", "LANGUAGE=")
		if code != 0 || !strings.HasPrefix(out, "reins ") || errOut != "" {
			t.Errorf("LANG=%s reins version: exit %d, stdout %q, stderr %q", lang, code, out, errOut)
		}
	}
}

// A port held by another program opens a window that names the port and
// the flag; closing it ends reins with a failure.
func TestPortInUseShowsAWindow(t *testing.T) {
	d := newDesktop(t)
	newPanel(t, d.bus)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	p := d.startReins(t, shortDir(t), port, []string{"--keyring", "file"})
	win := d.window(t, "Port in use$")
	d.screenshot(t, filepath.Join(t.TempDir(), "port.png"), win)
	clickClose(t, d, win)
	if code := p.wait(); code == 0 {
		t.Fatal("reins exited 0 after failing to start")
	}
	if log := p.log(); !strings.Contains(log, strconv.Itoa(port)) || !strings.Contains(log, "--port") {
		t.Errorf("stderr does not name the port and the flag:\n%s", log)
	}
}

// With --keyring os and no keychain on the bus, a window says what to do;
// Reins never falls back to a file on its own.
func TestNoKeychainShowsAWindow(t *testing.T) {
	d := newDesktop(t)
	newPanel(t, d.bus)
	dir := shortDir(t)
	p := d.startReins(t, dir, freePort(t), []string{"--keyring", "os"})
	win := d.window(t, "No keychain reachable$")
	d.screenshot(t, filepath.Join(t.TempDir(), "keychain.png"), win)
	if code := p.stop(); code == 0 {
		t.Fatal("reins exited 0 without a keychain")
	}
	if log := p.log(); !strings.Contains(log, "--keyring file") {
		t.Errorf("stderr does not name --keyring file:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(dir, "secrets.json")); !os.IsNotExist(err) {
		t.Errorf("a plaintext secrets file appeared: %v", err)
	}
}

// clickClose presses the error window's Close button: the window lays it
// out at its bottom right, inside the theme's padding.
func clickClose(t *testing.T, d *desktop, win string) {
	t.Helper()
	w, h := geometry(t, d, win)
	d.x(t, "xdotool", "mousemove", "--window", win, strconv.Itoa(w-45), strconv.Itoa(h-28), "click", "1")
}

// geometry is a window's size.
func geometry(t *testing.T, d *desktop, win string) (w, h int) {
	t.Helper()
	for _, l := range strings.Split(d.x(t, "xdotool", "getwindowgeometry", "--shell", win), "\n") {
		if v, ok := strings.CutPrefix(l, "WIDTH="); ok {
			w, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "HEIGHT="); ok {
			h, _ = strconv.Atoi(v)
		}
	}
	if w == 0 || h == 0 {
		t.Fatalf("no geometry for window %s", win)
	}
	return w, h
}

func runtimeCores() int { return runtime.NumCPU() }
