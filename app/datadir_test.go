//go:build unix

package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attack: another user who may write in the data dir (or owns it)
// plants files there, such as an admin socket that every CLI command
// trusts. Reins must refuse such a dir, name it, and say how to fix it.
func TestDataDirMustBeTheUsersAndNotWritableByOthers(t *testing.T) {
	list := func(dir string) (int, string) {
		code, _, errOut := run(t, nil, "token", "list", "--keyring", "file", "--data-dir", dir)
		return code, errOut
	}
	mk := func(mode os.FileMode) string {
		dir := dataDir(t)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		// Chmod, not Mkdir's mode: the umask would mask the bits under test.
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, mode := range []os.FileMode{0o777, 0o770, 0o720, 0o702, 0o1777} {
		dir := mk(mode)
		code, errOut := list(dir)
		if code != 1 || !strings.Contains(errOut, dir) || !strings.Contains(errOut, "chmod 700 "+dir) || !strings.Contains(errOut, "writable") {
			t.Errorf("mode %04o: exit %d, stderr %q", mode, code, errOut)
		}
	}
	for _, mode := range []os.FileMode{0o700, 0o750, 0o755} {
		if code, errOut := list(mk(mode)); code != 0 {
			t.Errorf("mode %04o refused: %q", mode, errOut)
		}
	}
	// A dir that does not exist yet is created 0700.
	fresh := dataDir(t)
	if code, errOut := list(fresh); code != 0 {
		t.Fatalf("a new data dir refused: %q", errOut)
	}

	// Someone else's dir.
	theirs := mk(0o700)
	if os.Geteuid() == 0 {
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else {
		theirs = "/" // root's, and not ours
	}
	code, errOut := list(theirs)
	if code != 1 || !strings.Contains(errOut, "belongs to user id") || !strings.Contains(errOut, "--data-dir") {
		t.Fatalf("someone else's data dir: exit %d, stderr %q", code, errOut)
	}

	// A file is not a data dir.
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if code, errOut := list(file); code != 1 || !strings.Contains(errOut, "not a directory") {
		t.Fatalf("a file as the data dir: exit %d, stderr %q", code, errOut)
	}
}

func TestDataDirProblem(t *testing.T) {
	for _, c := range []struct {
		owner int
		mode  os.FileMode
		want  string
	}{
		{1000, 0o700, ""},
		{1000, 0o755, ""},
		{1000, os.ModeDir | 0o700, ""},
		{1001, 0o700, "belongs to user id 1001, not to you (user id 1000)"},
		{1000, 0o770, "mode 0770"},
		{1000, 0o702, "mode 0702"},
		{0, 0o777, "belongs to user id 0"},
	} {
		err := dataDirProblem("/d", c.owner, 1000, c.mode)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("owner %d mode %v: %v, want %q", c.owner, c.mode, err, c.want)
		}
	}
}
