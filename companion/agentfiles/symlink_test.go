//go:build !windows

// Planting a symlink needs privileges on Windows; everywhere else any local
// program can, so the attack is played here.

package agentfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// The attack: a symlink planted under the name an agent writes must not
// carry the write outside the folder.
func TestWriteReplacesAPlantedSymlinkInsteadOfFollowingIt(t *testing.T) {
	data := t.TempDir()
	r := New(data)
	up, err := r.Folder("agent:a", Uploads)
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(data, "victim")
	must(t, os.WriteFile(victim, []byte("untouched"), 0o600))
	must(t, os.Symlink(victim, filepath.Join(up, "photo.png")))
	p, err := Write(up, "photo.png", []byte("agent bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "untouched" {
		t.Fatalf("the write went through the symlink: victim now %q", got)
	}
	if got, _ := os.ReadFile(p); string(got) != "agent bytes" || filepath.Dir(p) != up {
		t.Fatalf("wrote %q to %s", got, p)
	}
}
