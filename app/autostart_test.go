package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// go-autostart fixes its directory from HOME/XDG_CONFIG_HOME when the
// package initializes, so the test runs itself again in a child process with
// a temporary home, never touching the real one.
func TestAutostartWritesAndRemovesTheLoginEntry(t *testing.T) {
	if os.Getenv("REINS_AUTOSTART_CHILD") == "1" {
		autostartChild(t)
		return
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAutostartWritesAndRemovesTheLoginEntry$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "REINS_AUTOSTART_CHILD=1", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "autostart")); err != nil {
		t.Fatalf("the child did not use the temporary home: %v", err)
	}
}

func autostartChild(t *testing.T) {
	home := os.Getenv("HOME")
	a, err := NewAutostart()
	if err != nil {
		t.Fatal(err)
	}
	if a.Enabled() {
		t.Fatal("enabled before anything was written")
	}
	if err := a.SetEnabled(true); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(home, ".config", "autostart", "reins.desktop")
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatalf("no autostart entry: %v", err)
	}
	exe, _ := os.Executable()
	if !strings.Contains(string(data), "Name=Reins") || !strings.Contains(string(data), filepath.Base(exe)) {
		t.Fatalf("entry does not start reins:\n%s", data)
	}
	if !a.Enabled() {
		t.Fatal("not enabled after enabling")
	}
	if err := a.SetEnabled(false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Fatalf("entry still there after disabling: %v", err)
	}
}
