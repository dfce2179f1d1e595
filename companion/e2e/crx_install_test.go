package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// TestPackedExtensionInstallsAndConnects is the Linux package's promise:
// Chromium started with an external-extensions file naming the packed
// extension installs Reins from the .crx by itself (no store, no developer
// mode, no --load-extension), and the extension finds and joins the
// companion through the native messaging host.
//
// The .crx is signed with a throwaway key made here, as for any build that
// is not a release; the companion accepts its id (--allow-extension) and
// the host manifest allows it, registered for this HOME the way
// `reins install-native-host` does. Debian's Chromium reads such files in
// /usr/share/chromium/extensions and in the extensions folder beside its
// binary; the test uses the second in a private copy of Chromium's
// folder (the binary hard-linked, its resources linked), so no system
// path changes and no other Chromium on the machine sees the file.
func TestPackedExtensionInstallsAndConnects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := harness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	chromium := harness.ChromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("no Chromium at %s (set REINS_CHROMIUM): %v", chromium, err)
	}
	dir := t.TempDir()

	// The package build: a throwaway key, the .crx, its preferences file.
	extpack := filepath.Join(dir, "extpack")
	goCmd(t, root, "build", "-o", extpack, "./packaging/cmd/extpack")
	id := strings.TrimSpace(runOut(t, root, extpack, "newkey", "-o", filepath.Join(dir, "key.pem")))
	crx := filepath.Join(dir, "reins.crx")
	if got := strings.TrimSpace(runOut(t, root, extpack, "crx", "-root", root, "-key", filepath.Join(dir, "key.pem"), "-o", crx)); got != id {
		t.Fatalf("crx id %s, key id %s", got, id)
	}
	prefs := runOut(t, root, extpack, "external-prefs", "-root", root, "-crx", crx)

	// A private Chromium folder with the file in its extensions dir.
	prefix := filepath.Join(dir, "chromium")
	if err := os.MkdirAll(filepath.Join(prefix, "extensions"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(chromium)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Dir(real))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		src, dst := filepath.Join(filepath.Dir(real), e.Name()), filepath.Join(prefix, e.Name())
		switch {
		case src == real:
			// Chromium finds its extensions dir from /proc/self/exe,
			// which names the link it was started through.
			if err := os.Link(src, dst); err != nil {
				if errors.Is(err, syscall.EXDEV) {
					t.Fatalf("the test's temp dir must be on the same file system as %s to hard-link it (set TMPDIR): %v", real, err)
				}
				t.Fatal(err)
			}
		case e.Name() == "extensions":
		default:
			if err := os.Symlink(src, dst); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(prefix, "extensions", id+".json"), []byte(prefs), 0o644); err != nil {
		t.Fatal(err)
	}

	// The person's HOME: Chromium's default profile folder, where the
	// native host is registered per user, and Reins' data dir, where the
	// host finds the companion's port.
	home := filepath.Join(dir, "home")
	config := filepath.Join(home, ".config")
	profile := filepath.Join(config, "chromium")
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+config, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	install := exec.CommandContext(ctx, bin, "install-native-host", "--allow-extension", id)
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install-native-host: %v\n%s", err, out)
	}
	var manifest struct {
		Origins []string `json:"allowed_origins"`
	}
	data, err := os.ReadFile(filepath.Join(profile, "NativeMessagingHosts", "com.reins.companion.json"))
	if err != nil || json.Unmarshal(data, &manifest) != nil || !strings.Contains(strings.Join(manifest.Origins, " "), id) {
		t.Fatalf("host manifest does not allow %s: %v %s", id, err, data)
	}

	r, err := harness.StartReins(ctx, "--data-dir", filepath.Join(config, "reins"), "--allow-extension", id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	began := time.Now()
	cmd := exec.Command(filepath.Join(prefix, filepath.Base(real)),
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-domain-reliability", "--metrics-recording-only",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
		"--user-data-dir="+profile, "about:blank")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out syncBuilder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()

	// The companion's state stream shows the extension joining.
	w, err := r.Client.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	snap, err := w.Until(ctx, func(s admin.Snapshot) bool { return len(s.Browsers) > 0 })
	if err != nil {
		t.Fatalf("the packed extension never connected: %v\nchromium:\n%s\nreins:\n%s", err, harness.Tail(out.String(), 30), harness.Tail(r.Output(), 30))
	}
	if o := snap.Browsers[0].Hello.ExtensionVersion; o == "" {
		t.Errorf("hello without an extension version: %+v", snap.Browsers[0].Hello)
	}
	t.Logf("Chromium start → the packed extension connected: %s", time.Since(began).Round(time.Millisecond))

	// It was installed from the .crx as an external extension (not loaded
	// unpacked), and Chromium left it enabled: on Linux it asks nothing.
	// Chromium writes its Preferences on the way out.
	if _, err := os.Stat(filepath.Join(profile, "Default", "Extensions", id)); err != nil {
		t.Errorf("the .crx was not unpacked into the profile: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-ctx.Done():
		t.Fatal("Chromium did not exit on SIGTERM")
	}
	var prefsDoc struct {
		Extensions struct {
			Settings map[string]struct {
				Location       int   `json:"location"`
				DisableReasons []int `json:"disable_reasons"`
				Path           string
			} `json:"settings"`
		} `json:"extensions"`
	}
	data, err = os.ReadFile(filepath.Join(profile, "Default", "Preferences"))
	if err != nil || json.Unmarshal(data, &prefsDoc) != nil {
		t.Fatalf("reading Chromium's Preferences: %v", err)
	}
	got, found := prefsDoc.Extensions.Settings[id]
	const externalPref = 2 // ManifestLocation::kExternalPref
	if !found || got.Location != externalPref || len(got.DisableReasons) != 0 || !strings.HasPrefix(got.Path, id+"/") {
		t.Errorf("extension %s in Preferences: %+v (found %v), want location %d, enabled, copied from the .crx", id, got, found, externalPref)
	}
}

func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
}

func runOut(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr)
	}
	return string(out)
}

// syncBuilder collects a child's output written from its copying goroutines.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
