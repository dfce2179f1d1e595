package companion

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// TestNoGUIImports keeps the daemon free of the GUI: companion/... must
// never depend on ui/, app/ or fyne, so it builds without cgo and can run
// headless on servers.
func TestNoGUIImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/reinshq/reins/companion/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list returned only %d packages; the check would prove nothing", len(deps))
	}
	const module = "github.com/reinshq/reins"
	forbidden := []string{
		path.Join("fyne.io") + "/",
		path.Join(module, "ui"),
		path.Join(module, "app"),
		path.Join(module, "cmd"),
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("companion depends on %s", d)
			}
		}
	}
}
