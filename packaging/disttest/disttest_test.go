//go:build disttest

package disttest

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/app/browsers"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/nativemsg"
)

var (
	root    string // the repository
	distDir string // what `make test-dist` built
	version string // FyneApp.toml's
	extpack string // packaging/cmd/extpack, built once
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		fail := func(format string, a ...any) int {
			fmt.Fprintf(os.Stderr, "disttest: "+format+"\n", a...)
			return 1
		}
		var err error
		if root, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
			return fail("%v", err)
		}
		if distDir = os.Getenv("REINS_DIST_DIR"); distDir == "" {
			return fail("REINS_DIST_DIR is not set: run `make test-dist`, which builds the packages first")
		}
		tmp, err := os.MkdirTemp("", "reins-disttest-")
		if err != nil {
			return fail("%v", err)
		}
		defer os.RemoveAll(tmp)
		extpack = filepath.Join(tmp, "extpack")
		build := exec.Command("go", "build", "-o", extpack, "./packaging/cmd/extpack")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return fail("building extpack: %v\n%s", err, out)
		}
		v := exec.Command(extpack, "version")
		v.Dir = root
		out, err := v.Output()
		if err != nil {
			return fail("extpack version: %v", err)
		}
		version = strings.TrimSpace(string(out))
		return m.Run()
	}())
}

// findOne is the one package in distDir that matches pattern.
func findOne(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(distDir, pattern))
	if err != nil || len(m) != 1 {
		t.Fatalf("want exactly one %s in %s, found %v (%v)", pattern, distDir, m, err)
	}
	st, _ := os.Stat(m[0])
	t.Logf("%s: %d bytes (%.1f MiB)", filepath.Base(m[0]), st.Size(), float64(st.Size())/(1<<20))
	return m[0]
}

// sudo prefixes a command with sudo when not root: dpkg needs root.
func sudo(args ...string) []string {
	if os.Geteuid() == 0 {
		return args
	}
	return append([]string{"sudo", "-n"}, args...)
}

func runRoot(t *testing.T, args ...string) string {
	t.Helper()
	a := sudo(args...)
	return run(t, a[0], a[1:]...)
}

// debStatus is dpkg's abbreviated status of reins ("ii ", "rc "), or "" when
// dpkg has never heard of it.
func debStatus() string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${db:Status-Abbrev}", "reins").Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// The files the .deb installs outside /etc, and the native messaging
// manifests it installs under /etc (conffiles: purge removes them).
var (
	debFiles = []string{
		"/usr/bin/reins",
		"/usr/lib/reins/reins-native-host",
		"/usr/share/applications/reins.desktop",
		"/usr/share/icons/hicolor/256x256/apps/reins.png",
		"/usr/share/icons/hicolor/64x64/apps/reins.png",
		"/usr/share/reins/extension/manifest.json",
		"/usr/share/reins/extension/background.js",
		firefoxManifest,
	}
	// Only files under /etc are conffiles.
	etcManifests = []string{
		"/etc/opt/chrome/native-messaging-hosts/com.reins.companion.json",
		"/etc/chromium/native-messaging-hosts/com.reins.companion.json",
		"/etc/opt/edge/native-messaging-hosts/com.reins.companion.json",
	}
	debManifests = append(slices.Clone(etcManifests), firefoxManifest)
)

const firefoxManifest = "/usr/lib/mozilla/native-messaging-hosts/com.reins.companion.json"

func TestDeb(t *testing.T) {
	deb := findOne(t, "reins_*.deb")
	if s := debStatus(); s != "" && !strings.HasPrefix(s, "un") {
		t.Fatalf("reins is already known to dpkg (status %q); this test installs and purges it, so it will not touch an existing install", s)
	}

	t.Run("metadata", func(t *testing.T) {
		f := map[string]string{}
		for _, line := range strings.Split(run(t, "dpkg-deb", "-f", deb, "Package", "Version", "Architecture", "Depends"), "\n") {
			if k, v, ok := strings.Cut(line, ": "); ok {
				f[k] = v
			}
		}
		if f["Package"] != "reins" || f["Version"] != version || f["Architecture"] != "amd64" {
			t.Errorf("control fields %v, want reins %s amd64", f, version)
		}
		t.Logf("Depends: %s", f["Depends"])
		depends := map[string]bool{}
		for _, d := range strings.Split(f["Depends"], ",") {
			for _, alt := range strings.Split(d, "|") {
				if fs := strings.Fields(alt); len(fs) > 0 {
					depends[fs[0]] = true
				}
			}
		}
		// Every library the binary links must come from a package the .deb
		// depends on: otherwise the app fails to start on a machine without
		// it, which no test on this (fully equipped) machine would notice.
		x := t.TempDir()
		run(t, "dpkg-deb", "-x", deb, x)
		needed := regexp.MustCompile(`(?m)^\s*NEEDED\s+(\S+)`).FindAllStringSubmatch(run(t, "objdump", "-p", filepath.Join(x, "usr/bin/reins")), -1)
		if len(needed) == 0 {
			t.Fatal("objdump found no NEEDED entries in /usr/bin/reins")
		}
		for _, n := range needed {
			pkg := libPackage(t, n[1])
			t.Logf("NEEDED %s: %s", n[1], pkg)
			if !depends[pkg] {
				t.Errorf("/usr/bin/reins links %s from %s, which Depends lacks", n[1], pkg)
			}
		}
		if !depends["libc6"] {
			t.Error("Depends lacks libc6")
		}
		// GLFW dlopens these instead of linking them: objdump cannot see
		// them, the binary's strings can.
		bin, err := os.ReadFile(filepath.Join(x, "usr/bin/reins"))
		if err != nil {
			t.Fatal(err)
		}
		for _, so := range []string{"libXcursor.so.1", "libXrandr.so.2", "libXinerama.so.1", "libXi.so.6", "libXxf86vm.so.1"} {
			if !bytes.Contains(bin, []byte(so)) {
				continue
			}
			if pkg := libPackage(t, so); !depends[pkg] {
				t.Errorf("/usr/bin/reins may dlopen %s from %s, which Depends lacks", so, pkg)
			}
		}
	})

	t.Run("contents", func(t *testing.T) {
		listing := run(t, "dpkg-deb", "-c", deb)
		paths := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
			fs := strings.Fields(line)
			p := strings.TrimPrefix(fs[len(fs)-1], ".")
			paths[strings.TrimSuffix(p, "/")] = fs[0] + " " + fs[1]
		}
		for _, p := range append(slices.Clone(debFiles), etcManifests...) {
			if _, ok := paths[p]; !ok {
				t.Errorf("the .deb lacks %s", p)
			}
		}
		for _, p := range []string{"/usr/bin/reins", "/usr/lib/reins/reins-native-host"} {
			if paths[p] != "-rwxr-xr-x root/root" {
				t.Errorf("%s is %q, want -rwxr-xr-x root/root", p, paths[p])
			}
		}
		for p := range paths {
			if strings.HasPrefix(p, "/usr/share/reins/extension/test") {
				t.Errorf("extension tests shipped: %s", p)
			}
		}
		// The packed extension and, for each Chromium-family browser, the
		// external-extensions file that names it: ID.json, where ID is
		// the .crx's own id.
		if _, ok := paths["/usr/share/reins/reins.crx"]; !ok {
			t.Error("the .deb lacks /usr/share/reins/reins.crx (make test-dist signs it with a throwaway key)")
		}
		crxIDs := map[string]bool{}
		x := t.TempDir()
		run(t, "dpkg-deb", "-x", deb, x)
		for _, b := range browsers.Known {
			if b.ExternalDir == "" {
				continue
			}
			var found []string
			for p := range paths {
				if filepath.Dir(p) == b.ExternalDir && strings.HasSuffix(p, ".json") {
					found = append(found, p)
				}
			}
			if len(found) != 1 {
				t.Errorf("%s: external-extensions files %v, want one", b.ExternalDir, found)
				continue
			}
			crxIDs[strings.TrimSuffix(filepath.Base(found[0]), ".json")] = true
			var prefs struct {
				CRX     string `json:"external_crx"`
				Version string `json:"external_version"`
			}
			data, err := os.ReadFile(filepath.Join(x, found[0]))
			if err != nil || json.Unmarshal(data, &prefs) != nil || prefs.CRX != "/usr/share/reins/reins.crx" || prefs.Version != version {
				t.Errorf("%s: %s (%v)", found[0], data, err)
			}
		}
		if len(crxIDs) != 1 {
			t.Errorf("the external-extensions files name %d extension ids, want one: %v", len(crxIDs), crxIDs)
		}
		conffiles := strings.Fields(run(t, "dpkg-deb", "-I", deb, "conffiles"))
		for _, p := range etcManifests {
			if !slices.Contains(conffiles, p) {
				t.Errorf("%s is not a conffile (conffiles: %v)", p, conffiles)
			}
		}
	})

	if !t.Run("install", func(t *testing.T) {
		began := time.Now()
		runRoot(t, "dpkg", "-i", deb)
		t.Logf("dpkg -i took %s", time.Since(began).Round(time.Millisecond))
	}) {
		t.FailNow()
	}
	// Whatever fails below, the machine ends without the package.
	t.Cleanup(func() {
		if s := debStatus(); s != "" && !strings.HasPrefix(s, "un") {
			purge := sudo("dpkg", "--purge", "reins")
			if out, err := exec.Command(purge[0], purge[1:]...).CombinedOutput(); err != nil {
				t.Errorf("cleanup: dpkg --purge reins: %v\n%s", err, out)
			}
		}
	})

	t.Run("installed files", func(t *testing.T) {
		for _, p := range append(slices.Clone(debFiles), etcManifests...) {
			if !exists(p) {
				t.Errorf("%s missing after dpkg -i", p)
			}
		}
		for _, p := range debManifests {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Name, Path, Type string
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if m.Name != nativemsg.HostName || m.Path != "/usr/lib/reins/reins-native-host" || m.Type != "stdio" {
				t.Errorf("%s: %+v", p, m)
			}
		}
		if _, err := exec.LookPath("desktop-file-validate"); err == nil {
			run(t, "desktop-file-validate", "/usr/share/applications/reins.desktop")
		} else {
			t.Error("desktop-file-validate is missing (make deps-dist installs desktop-file-utils)")
		}
	})

	t.Run("version", func(t *testing.T) {
		out := strings.TrimSpace(stdout(t, "/usr/bin/reins", "version"))
		if out != "reins "+version {
			t.Errorf("/usr/bin/reins version printed %q, want %q", out, "reins "+version)
		}
	})

	// The browser's view of the host: start the program the manifest names,
	// with the arguments Chromium passes, and speak native messaging to it.
	t.Run("native host", func(t *testing.T) {
		home := t.TempDir()
		dataDir := filepath.Join(home, ".config", "reins")
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			t.Fatal(err)
		}
		port := freePort(t)
		if err := nativemsg.WritePort(dataDir, port); err != nil {
			t.Fatal(err)
		}
		var in bytes.Buffer
		if err := nativemsg.WriteMessage(&in, map[string]any{"type": "hello", "id": 1}); err != nil {
			t.Fatal(err)
		}
		out, _ := runEnv(t, []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}, in.Bytes(),
			"/usr/lib/reins/reins-native-host", nativemsg.ChromeOrigin)
		body, err := nativemsg.ReadMessage(bytes.NewReader(out), 0)
		if err != nil {
			t.Fatalf("host stdout %q: %v", out, err)
		}
		var reply nativemsg.HelloReply
		if err := json.Unmarshal(body, &reply); err != nil {
			t.Fatal(err)
		}
		if reply.Type != "hello" || reply.Version != version || reply.Port != port || reply.Running {
			t.Errorf("hello reply %+v, want version %s port %d not running", reply, version, port)
		}
	})

	t.Run("headless", func(t *testing.T) {
		port := freePort(t)
		began := time.Now()
		c := start(t, nil, "/usr/bin/reins", "headless", "--keyring", "file", "--port", fmt.Sprint(port), "--data-dir", t.TempDir())
		waitHealthy(t, c, port, 30*time.Second)
		t.Logf("installed companion answered on port %d after %s", port, time.Since(began).Round(time.Millisecond))
		c.stop(t)
		if c.err != nil {
			t.Errorf("reins headless exited with %v after SIGTERM:\n%s", c.err, tail(c.output(), 20))
		}
	})

	// The installed extension (keyed, so its id is the one the manifests
	// allow) in real Chromium finds a companion on a port that is not the
	// default only by asking the installed native host: this is the whole
	// discovery path a person's browser takes.
	t.Run("chromium finds the companion through the native host", func(t *testing.T) {
		chromium := chromiumPath(t)
		dir := t.TempDir()
		home := filepath.Join(dir, "home")
		dataDir := filepath.Join(home, ".config", "reins")
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			t.Fatal(err)
		}
		port := freePort(t)
		for port == 47100 {
			port = freePort(t)
		}
		c := start(t, nil, "/usr/bin/reins", "headless", "--keyring", "file", "--port", fmt.Sprint(port), "--data-dir", dataDir)
		waitHealthy(t, c, port, 30*time.Second)
		// The tray app records its port here for the host; headless may
		// not, and this test is about the host, so it writes the record
		// the app would.
		if !exists(filepath.Join(dataDir, nativemsg.PortFileName)) {
			if err := nativemsg.WritePort(dataDir, port); err != nil {
				t.Fatal(err)
			}
		}
		began := time.Now()
		startChromium(t, chromium, dir, "/usr/share/reins/extension")
		c.waitOutput(t, `msg="browser connected"`, 90*time.Second)
		t.Logf("extension connected to port %d via the native host after %s", port, time.Since(began).Round(time.Millisecond))
	})

	t.Run("remove and purge", func(t *testing.T) {
		runRoot(t, "dpkg", "-r", "reins")
		for _, p := range append(slices.Clone(debFiles), "/usr/lib/reins", "/usr/share/reins") {
			if exists(p) {
				t.Errorf("%s still there after dpkg -r", p)
			}
		}
		if s := debStatus(); s != "rc " {
			t.Errorf("status after dpkg -r is %q, want \"rc \" (conffiles kept)", s)
		}
		for _, p := range etcManifests {
			if !exists(p) {
				t.Errorf("%s removed by dpkg -r; conffiles go on purge only", p)
			}
		}
		runRoot(t, "dpkg", "--purge", "reins")
		for _, p := range etcManifests {
			if exists(p) {
				t.Errorf("%s still there after purge", p)
			}
		}
		if s := debStatus(); s != "" && !strings.HasPrefix(s, "un") {
			t.Errorf("dpkg still knows reins after purge: %q", s)
		}
	})
}

// libPackage is the Debian package that ships the library soname, as the
// dynamic linker on this machine would find it.
func libPackage(t *testing.T, soname string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(soname) + ` \(libc6,x86-64[^)]*\) => (\S+)$`)
	m := re.FindStringSubmatch(run(t, "ldconfig", "-p"))
	if m == nil {
		t.Fatalf("ldconfig does not know %s", soname)
	}
	// dpkg records a path as the package shipped it, /lib or /usr/lib
	// (merged /usr makes both resolve), so try both spellings.
	candidates := []string{m[1]}
	if rest, ok := strings.CutPrefix(m[1], "/usr"); ok {
		candidates = append(candidates, rest)
	} else {
		candidates = append(candidates, "/usr"+m[1])
	}
	if real, err := filepath.EvalSymlinks(m[1]); err == nil {
		candidates = append(candidates, real)
	}
	for _, p := range candidates {
		out, err := exec.Command("dpkg", "-S", p).Output()
		if err == nil {
			pkg, _, _ := strings.Cut(strings.TrimSpace(string(out)), ":")
			return pkg
		}
	}
	t.Fatalf("dpkg -S finds no package for %s (%v)", soname, candidates)
	return ""
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("REINS_CHROMIUM")
	if p == "" {
		p = "/usr/lib/chromium/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Chromium not found at %s (set REINS_CHROMIUM; make deps-test installs it): %v", p, err)
	}
	return p
}

// startChromium runs headless Chromium with only ext loaded, its profile,
// caches and HOME inside dir, and every host name but the loopback ones
// unresolvable, so nothing leaves the machine.
func startChromium(t *testing.T, chromium, dir, ext string) *proc {
	t.Helper()
	args := []string{
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-domain-reliability", "--metrics-recording-only",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		"--load-extension=" + ext,
		"--disable-extensions-except=" + ext,
		"about:blank",
	}
	env := []string{
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "home", ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
	}
	return start(t, env, chromium, args...)
}

func TestTarXz(t *testing.T) {
	tarball := findOne(t, "reins-[0-9]*-linux-amd64.tar.xz")
	listing := strings.Fields(run(t, "tar", "-tJf", tarball))
	for _, want := range []string{"reins/Makefile", "reins/usr/local/bin/reins"} {
		if !slices.Contains(listing, want) {
			t.Errorf("%s lacks %s: %v", tarball, want, listing)
		}
	}
	hasDesktop := slices.ContainsFunc(listing, func(p string) bool { return strings.HasSuffix(p, ".desktop") })
	hasIcon := slices.ContainsFunc(listing, func(p string) bool { return strings.HasSuffix(p, ".png") })
	if !hasDesktop || !hasIcon {
		t.Errorf("%s lacks a desktop entry or icon: %v", tarball, listing)
	}
	x := t.TempDir()
	run(t, "tar", "-xJf", tarball, "-C", x)
	if out := strings.TrimSpace(stdout(t, filepath.Join(x, "reins/usr/local/bin/reins"), "version")); out != "reins "+version {
		t.Errorf("tarball binary says %q, want reins %s", out, version)
	}
}

// TestServerArchive runs the server build as a server would: one static
// binary with no display libraries, which says what it is, refuses to start
// a tray, and drives a browser it launched for an agent with a token.
func TestServerArchive(t *testing.T) {
	tarball := findOne(t, "reins-server-*-linux-amd64.tar.xz")
	if listing := strings.Fields(run(t, "tar", "-tJf", tarball)); !slices.Equal(listing, []string{"reins-server/", "reins-server/reins"}) {
		t.Fatalf("%s holds %v, want reins-server/reins alone", tarball, listing)
	}
	x := t.TempDir()
	run(t, "tar", "-xJf", tarball, "-C", x)
	bin := filepath.Join(x, "reins-server", "reins")

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) || len(libs) > 0 {
		t.Errorf("the server build is linked dynamically (libraries %v)", libs)
	}
	if out := strings.TrimSpace(stdout(t, bin, "version")); out != "reins "+version+" (server build)" {
		t.Errorf("the server build says %q", out)
	}
	noTray := exec.Command(bin)
	noTray.Env = append(os.Environ(), "DISPLAY=:0")
	if out, err := noTray.CombinedOutput(); err == nil || !strings.Contains(string(out), "reins headless") {
		t.Errorf("reins with no command in the server build: %v, %q; want a failure naming reins headless", err, out)
	}

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>Served to a server build</title><p>hello")
	}))
	t.Cleanup(page.Close)
	data := t.TempDir()
	port := freePort(t)
	c := start(t, []string{"XDG_CACHE_HOME=" + t.TempDir()}, bin, "headless", "--keyring", "file", "--port", fmt.Sprint(port),
		"--data-dir", data, "--dev-browser", chromiumPath(t))
	waitHealthy(t, c, port, 30*time.Second)
	c.waitOutput(t, `msg="browser connected"`, 60*time.Second)
	token := strings.TrimSpace(stdout(t, bin, "token", "issue", "server-agent", "--keyring", "file", "--data-dir", data, "--port", fmt.Sprint(port)))
	cs, err := companiontest.Connect(t, port, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "tabs_create_mcp", Arguments: map[string]any{"url": page.URL + "/"}})
	if err != nil || res.IsError {
		t.Fatalf("tabs_create_mcp: %v %s", err, toolText(res))
	}
	t.Logf("tabs_create_mcp: %s", toolText(res))
	if !strings.Contains(toolText(res), "Served to a server build") {
		t.Errorf("tabs_create_mcp answered %s; want the page's title", toolText(res))
	}
	c.stop(t)
	if c.err != nil {
		t.Errorf("the server build exited with %v after SIGTERM:\n%s", c.err, tail(c.output(), 20))
	}
}

// toolText is the text of a tool result.
func toolText(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestWindowsInstaller(t *testing.T) {
	setup := findOne(t, "Reins-*-windows-amd64-setup.exe")
	if !strings.Contains(filepath.Base(setup), version) {
		t.Errorf("installer name %s lacks the version %s", setup, version)
	}
	ca := os.Getenv("REINS_SIGN_CA")
	if ca == "" {
		t.Fatal("REINS_SIGN_CA is not set: make test-dist signs with a throwaway certificate and passes it here")
	}
	verify := func(t *testing.T, f string) {
		t.Helper()
		out := run(t, "osslsigncode", "verify", "-CAfile", ca, "-in", f)
		if !strings.Contains(out, "Signature verification: ok") {
			t.Errorf("osslsigncode verify %s:\n%s", filepath.Base(f), out)
		}
	}
	verify(t, setup)

	listing := run(t, "7z", "l", "-slt", setup)
	var names []string
	for _, line := range strings.Split(listing, "\n") {
		if p, ok := strings.CutPrefix(line, "Path = "); ok {
			names = append(names, strings.ReplaceAll(p, `\`, "/"))
		}
	}
	for _, want := range []string{
		"reins.exe", "reins.ico", "reins-native-host.cmd", "Uninstall Reins.exe",
		"com.reins.companion.json", "com.reins.companion.firefox.json", "extension/manifest.json",
	} {
		if !slices.ContainsFunc(names, func(n string) bool { return n == want || strings.HasSuffix(n, "/"+want) }) {
			t.Errorf("installer lacks %s; it holds:\n%s", want, strings.Join(names, "\n"))
		}
	}
	for _, n := range names {
		if strings.Contains(n, "extension/test/") {
			t.Errorf("installer ships extension tests: %s", n)
		}
	}

	x := t.TempDir()
	run(t, "7z", "x", "-y", "-o"+x, setup)
	find := func(name string) string {
		var found string
		filepath.WalkDir(x, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == name && found == "" {
				found = p
			}
			return nil
		})
		if found == "" {
			t.Fatalf("%s not extracted", name)
		}
		return found
	}
	exe := find("reins.exe")
	verify(t, exe)
	verify(t, find("Uninstall Reins.exe")) // signed by !uninstfinalize as makensis wrote it
	st, _ := os.Stat(exe)
	t.Logf("reins.exe: %d bytes (%.1f MiB)", st.Size(), float64(st.Size())/(1<<20))

	// The manifests name the launcher beside them and allow only Reins.
	for file, firefox := range map[string]bool{"com.reins.companion.json": false, "com.reins.companion.firefox.json": true} {
		b, err := os.ReadFile(find(file))
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Name, Path string }
		var raw map[string]any
		if err := json.Unmarshal(b, &m); err != nil || json.Unmarshal(b, &raw) != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if m.Name != nativemsg.HostName || m.Path != "reins-native-host.cmd" {
			t.Errorf("%s: name %q path %q", file, m.Name, m.Path)
		}
		key, want := "allowed_origins", nativemsg.ChromeOrigin
		if firefox {
			key, want = "allowed_extensions", nativemsg.FirefoxExtensionID
		}
		if got := fmt.Sprint(raw[key]); got != "["+want+"]" {
			t.Errorf("%s: %s = %s, want [%s]", file, key, got, want)
		}
	}
	cmd, err := os.ReadFile(find("reins-native-host.cmd"))
	if err != nil || !bytes.Contains(cmd, []byte(`"%~dp0reins.exe" native-host %*`)) || !bytes.HasPrefix(cmd, []byte("@echo off")) {
		t.Errorf("reins-native-host.cmd does not run reins.exe native-host quietly:\n%s", cmd)
	}

	// One version: the PE version resources of the installer and the app.
	for _, f := range []string{setup, exe} {
		if s := utf16Strings(t, f); !strings.Contains(s, version) {
			t.Errorf("%s's version resource lacks %s", filepath.Base(f), version)
		}
	}
}

// utf16Strings is the UTF-16LE text in f, where PE version resources live.
func utf16Strings(t *testing.T, f string) string {
	t.Helper()
	return run(t, "strings", "-el", f)
}

func readZip(t *testing.T, path string) map[string][]byte {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string][]byte{}
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	return out
}

func unzipTo(t *testing.T, files map[string][]byte, dir string) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("zip entry %q escapes the folder", name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestChromeStoreZipConnects(t *testing.T) {
	files := readZip(t, findOne(t, "reins-extension-chrome-*.zip"))
	var m map[string]any
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["key"]; ok {
		t.Error("the store zip keeps the manifest key")
	}
	if m["version"] != version {
		t.Errorf("manifest version %v, want %s", m["version"], version)
	}
	for name := range files {
		if strings.HasPrefix(name, "test/") || strings.Contains(name, ".test.") {
			t.Errorf("store zip ships %s", name)
		}
	}

	dir := t.TempDir()
	ext := filepath.Join(dir, "extension")
	unzipTo(t, files, ext)
	out, err := exec.Command(extpack, "id", ext).Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(out))
	t.Logf("unpacked without key at %s: id %s", ext, id)

	// A store install gets the link key, and the companion's port, from the
	// native host the app's package registers. Here the host is registered
	// for this profile alone (Chromium reads <user-data-dir>/
	// NativeMessagingHosts) and allows this unpacked build's id, as the
	// package's manifest allows a store listing's id.
	bin := os.Getenv("REINS_BIN")
	if bin == "" {
		bin = filepath.Join(root, "bin", "reins")
	}
	data := filepath.Join(dir, "data")
	host := filepath.Join(dir, "reins-native-host")
	script := fmt.Sprintf("#!/bin/sh\nexec '%s' native-host --data-dir '%s' \"$@\"\n", bin, data)
	if err := os.WriteFile(host, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	manifest, err := nativemsg.Manifest(nativemsg.Browser{ID: "chromium", Name: "Chromium"}, host, id)
	if err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(dir, "profile", "NativeMessagingHosts")
	if err := os.MkdirAll(hosts, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hosts, nativemsg.ManifestFile), manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	c := start(t, nil, bin, "headless", "--keyring", "file", "--port", fmt.Sprint(port), "--data-dir", data, "--allow-extension", id)
	waitHealthy(t, c, port, 30*time.Second)
	began := time.Now()
	startChromium(t, chromiumPath(t), dir, ext)
	c.waitOutput(t, `msg="browser connected"`, 90*time.Second)
	t.Logf("store build connected after %s", time.Since(began).Round(time.Millisecond))
}

func TestFirefoxXpi(t *testing.T) {
	xpi := readZip(t, findOne(t, "reins-extension-firefox-*.xpi"))
	chrome := readZip(t, findOne(t, "reins-extension-chrome-*.zip"))
	// The xpi is the same extension plus what the Firefox build adds (the
	// tool engine's page helper, which Firefox cannot eval).
	for name := range chrome {
		if _, ok := xpi[name]; !ok {
			t.Errorf("%s is in the Chrome zip but not in the xpi", name)
		}
	}
	for name := range xpi {
		if _, ok := chrome[name]; !ok {
			t.Logf("Firefox-only file: %s", name)
		}
	}
	var m struct {
		Version     string
		Key         *string
		Permissions []string
		Background  struct {
			ServiceWorker *string  `json:"service_worker"`
			Scripts       []string `json:"scripts"`
		}
		CSP struct {
			ExtensionPages string `json:"extension_pages"`
		} `json:"content_security_policy"`
		BSS struct {
			Gecko struct {
				ID             string
				DataCollection struct {
					Required []string
				} `json:"data_collection_permissions"`
			}
		} `json:"browser_specific_settings"`
	}
	if err := json.Unmarshal(xpi["manifest.json"], &m); err != nil {
		t.Fatal(err)
	}
	if m.Version != version || m.Key != nil || m.Background.ServiceWorker != nil || len(m.Background.Scripts) == 0 {
		t.Errorf("firefox manifest: version %q key %v service_worker %v scripts %v", m.Version, m.Key, m.Background.ServiceWorker, m.Background.Scripts)
	}
	if slices.Contains(m.Permissions, "debugger") {
		t.Error("firefox manifest asks for debugger")
	}
	if !strings.HasPrefix(m.CSP.ExtensionPages, "script-src 'self'") {
		t.Errorf("extension_pages CSP %q", m.CSP.ExtensionPages)
	}
	if m.BSS.Gecko.ID != nativemsg.FirefoxExtensionID || len(m.BSS.Gecko.DataCollection.Required) == 0 {
		t.Errorf("gecko settings %+v", m.BSS.Gecko)
	}
	for _, s := range m.Background.Scripts {
		if _, ok := xpi[s]; !ok {
			t.Errorf("background script %s is not in the xpi", s)
		}
	}
}
