//go:build nogui

package app

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestServerBuildLinksNoGUI keeps the server build free of the tray: no
// toolkit, no ui/ or assets/, nothing that needs cgo.
func TestServerBuildLinksNoGUI(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-tags", "nogui", "github.com/reinshq/reins/cmd/reins")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list returned only %d packages; the check would prove nothing", len(deps))
	}
	for _, d := range deps {
		for _, f := range []string{"fyne.io/", "github.com/go-gl/", "github.com/reinshq/reins/ui", "github.com/reinshq/reins/assets", "runtime/cgo"} {
			if strings.HasPrefix(d, f) {
				t.Errorf("the server build links %s", d)
			}
		}
	}
}

// The server build answers a start with no command (what a desktop entry or
// a double-click would do) with where to go instead, and says which build it
// is.
func TestServerBuildHasNoTray(t *testing.T) {
	var out, errOut bytes.Buffer
	env := Env{Args: []string{"reins"}, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	if code := Main(env); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "`reins headless`") {
		t.Errorf("stderr %q does not name reins headless", errOut.String())
	}
	out.Reset()
	env.Args = []string{"reins", "version"}
	if code := Main(env); code != 0 || out.String() != "reins "+Version+" (server build)\n" {
		t.Errorf("version: exit %d, %q", code, out.String())
	}
}
