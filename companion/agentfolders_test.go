package companion_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/reinshq/reins/companion/agentfiles"
)

func TestAgentFolderIsTheAgentsOwn(t *testing.T) {
	c, _, dir := startPairingCompanion(t)
	if _, err := c.Tokens().Issue("cursor"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tokens().Issue("claude"); err != nil {
		t.Fatal(err)
	}
	a, err := c.AgentFolder("cursor")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.AgentFolder("claude")
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Dir(a) != filepath.Join(dir, agentfiles.Dir) {
		t.Fatalf("folders %s and %s", a, b)
	}
	for _, sub := range []string{agentfiles.Uploads, agentfiles.Downloads} {
		fi, err := os.Stat(filepath.Join(a, sub))
		if err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", sub, err)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v", sub, fi.Mode().Perm())
		}
	}
	if _, err := c.AgentFolder("nobody"); err == nil {
		t.Fatal("a folder for an agent without a token")
	}
}
