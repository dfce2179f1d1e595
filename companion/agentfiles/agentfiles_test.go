package agentfiles

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSafeNameStaysOneHarmlessElement(t *testing.T) {
	seen := map[string]string{}
	for _, p := range []string{
		"agent:abc123", "backend:xyz", "agent:../../etc", "agent:..", "..", ".", "", "agent:a/b", `agent:a\b`,
		"agent:a b", "agent:a_b", strings.Repeat("x", 500), "agent:ümlaut", ".hidden", "agent:.",
	} {
		n := SafeName(p)
		if n == "" || n == "." || n == ".." || strings.HasPrefix(n, ".") || strings.ContainsAny(n, `/\: `) || len(n) > MaxName {
			t.Errorf("SafeName(%q) = %q", p, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%q and %q share the folder %q", p, other, n)
		}
		seen[n] = p
	}
	if got := SafeName("agent:abc123"); got != "agent-abc123" {
		t.Errorf("SafeName(agent:abc123) = %q, want agent-abc123", got)
	}
}

func TestFoldersArePrivateAndPerPrincipal(t *testing.T) {
	r := New(t.TempDir())
	a, err := r.Folder("agent:a", Uploads)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Folder("agent:b", Uploads)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Dir(filepath.Dir(a)) != r.Path() {
		t.Fatalf("folders %s and %s under %s", a, b, r.Path())
	}
	if runtime.GOOS != "windows" {
		for _, d := range []string{a, filepath.Dir(a)} {
			fi, err := os.Stat(d)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("%s has mode %v, want 0700", d, fi.Mode().Perm())
			}
		}
	}
	if _, err := r.Folder("agent:a", "secrets"); err == nil {
		t.Error("an unknown folder kind was accepted")
	}
	if _, err := r.Folder("", Uploads); err == nil {
		t.Error("a folder without a principal was made")
	}
}

// The attack: an agent names a file outside its upload folder, by climbing
// out, by an absolute path, through a symlink in its folder, or through
// another agent's folder.
func TestResolveRefusesEveryWayOut(t *testing.T) {
	data := t.TempDir()
	r := New(data)
	up, err := r.Folder("agent:a", Uploads)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(data, "linkauth.key")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := r.Folder("agent:b", Uploads)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "b.txt"), []byte("b's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(up, "ok.txt"), []byte("fine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(up, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(up, "sub", "deep.txt"), []byte("deep"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlinks := runtime.GOOS != "windows"
	if symlinks {
		must(t, os.Symlink(secret, filepath.Join(up, "key-link")))
		must(t, os.Symlink(data, filepath.Join(up, "dir-link")))
		must(t, os.Symlink("../../../linkauth.key", filepath.Join(up, "relative-link")))
		must(t, os.Symlink(filepath.Join(up, "ok.txt"), filepath.Join(up, "inner-link")))
	}

	for _, rel := range []string{
		"../../../linkauth.key", "..", "../uploads/ok.txt/../../../linkauth.key", "sub/../../downloads/../../../linkauth.key",
		secret, "/etc/passwd", "../../agent-b/uploads/b.txt", `..\..\..\linkauth.key`,
	} {
		if _, _, err := r.Resolve("agent:a", Uploads, rel); err == nil {
			t.Errorf("Resolve(%q) succeeded", rel)
		}
	}
	if symlinks {
		for _, rel := range []string{"key-link", "dir-link/linkauth.key", "relative-link"} {
			_, _, err := r.Resolve("agent:a", Uploads, rel)
			if !errors.Is(err, ErrOutside) {
				t.Errorf("Resolve(%q) = %v, want ErrOutside", rel, err)
			}
		}
		if p, _, err := r.Resolve("agent:a", Uploads, "inner-link"); err != nil || filepath.Base(p) != "ok.txt" {
			t.Errorf("a symlink inside the folder: %s, %v", p, err)
		}
	}
	for rel, want := range map[string]string{"ok.txt": "fine", "sub/deep.txt": "deep", "./sub/../ok.txt": "fine"} {
		p, fi, err := r.Resolve("agent:a", Uploads, rel)
		if err != nil {
			t.Errorf("Resolve(%q): %v", rel, err)
			continue
		}
		got, _ := os.ReadFile(p)
		if string(got) != want || fi.Size() != int64(len(want)) {
			t.Errorf("Resolve(%q) read %q", rel, got)
		}
	}
	if _, _, err := r.Resolve("agent:a", Uploads, "sub"); err == nil {
		t.Error("a folder resolved as a file")
	}
	if _, _, err := r.Resolve("agent:a", Uploads, "missing.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestCleanFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf": "report.pdf", "../../etc/passwd": "passwd", `..\..\x.txt`: "x.txt", "": "file", "..": "file",
		".bashrc": "bashrc", "a\x00b": "a_b", "a:b?.txt": "a_b_.txt", "dir/": "file",
	} {
		if got := CleanFileName(in); got != want {
			t.Errorf("CleanFileName(%q) = %q, want %q", in, got, want)
		}
	}
	long := CleanFileName(strings.Repeat("é", 200) + ".csv")
	if len(long) > MaxName || !strings.HasSuffix(long, ".csv") {
		t.Errorf("long name %q (%d bytes)", long, len(long))
	}
}

func TestSaveAndMoveNeverReplace(t *testing.T) {
	dir := t.TempDir()
	p1, err := Save(dir, "page.pdf", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Save(dir, "page.pdf", []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p1) != "page.pdf" || filepath.Base(p2) != "page (2).pdf" {
		t.Fatalf("saved %s and %s", p1, p2)
	}
	src := filepath.Join(t.TempDir(), "guid-1234")
	must(t, os.WriteFile(src, []byte("three"), 0o600))
	p3, err := Move(src, dir, "page.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p3) != "page (3).pdf" {
		t.Fatalf("moved to %s", p3)
	}
	if _, err := os.Stat(src); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the source is still there: %v", err)
	}
	if got, _ := os.ReadFile(p1); string(got) != "one" {
		t.Errorf("page.pdf now %q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestKeepNamesByContentAndIsBounded(t *testing.T) {
	up := t.TempDir()
	must(t, os.WriteFile(filepath.Join(up, "a.txt"), []byte("the person's"), 0o600))
	p1, err := Keep(up, "a.txt", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := Keep(up, "a.txt", []byte("one"))
	p3, _ := Keep(up, "a.txt", []byte("two"))
	if p1 != p2 || p1 == p3 || filepath.Base(p1) != "a.txt" || filepath.Base(p3) != "a.txt" {
		t.Fatalf("kept as %s, %s, %s", p1, p2, p3)
	}
	if b, _ := os.ReadFile(filepath.Join(up, "a.txt")); string(b) != "the person's" {
		t.Fatalf("the person's file now holds %q", b)
	}
	for i := range MaxSent + 5 {
		p, err := Keep(up, "f.txt", []byte{byte(i), byte(i >> 8)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the file just kept is gone: %v", err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(up, Sent))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != MaxSent {
		t.Fatalf("%d uploads kept, want %d", len(entries), MaxSent)
	}
}
