package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// leftovers lists what is in dir besides the names given.
func leftovers(t *testing.T, dir string, names ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	var out []string
	for _, e := range entries {
		if !keep[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteReplacesWithMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	for _, tc := range []struct {
		data string
		mode fs.FileMode
	}{{"one\n", 0o600}, {"two, longer\n", 0o644}, {"3", 0o600}} {
		if err := Write(path, []byte(tc.data), tc.mode); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != tc.data {
			t.Fatalf("read %q, %v; want %q", got, err, tc.data)
		}
		if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != tc.mode {
			t.Fatalf("mode %v, want %v", st.Mode().Perm(), tc.mode)
		}
	}
	if extra := leftovers(t, dir, "settings.json"); len(extra) != 0 {
		t.Fatalf("temporary files left: %v", extra)
	}
}

// A write that cannot land leaves the old file and no temporary file.
func TestFailedWriteLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	// A folder in the file's place: the rename fails after the temporary
	// file was written.
	path := filepath.Join(dir, "taken")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err == nil {
		t.Fatal("replacing a folder with a file succeeded")
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		t.Fatalf("the folder is gone: %v", err)
	}
	if extra := leftovers(t, dir, "taken"); len(extra) != 0 {
		t.Fatalf("temporary files left: %v", extra)
	}
	if err := Write(filepath.Join(dir, "no", "such", "dir"), []byte("x"), 0o600); err == nil {
		t.Fatal("a write into a missing folder succeeded")
	}
}

// Create never replaces: of two creators the second gets fs.ErrExist and
// the first one's content stays.
func TestCreateNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "link-key")
	if err := Create(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Create(path, []byte("second"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("creating over an existing file: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "first" {
		t.Fatalf("the file holds %q", got)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	if extra := leftovers(t, dir, "link-key"); len(extra) != 0 {
		t.Fatalf("temporary files left: %v", extra)
	}
}
