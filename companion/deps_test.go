package companion

import (
	"os/exec"
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
	for _, d := range deps {
		if strings.HasPrefix(d, "fyne.io/") ||
			strings.HasPrefix(d, "github.com/reinshq/reins/ui") ||
			strings.HasPrefix(d, "github.com/reinshq/reins/app") ||
			strings.HasPrefix(d, "github.com/reinshq/reins/cmd") {
			t.Errorf("companion depends on %s", d)
		}
	}
}
