package nativemsg

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return m
}

func checkManifest(t *testing.T, p, bin string, firefox bool) {
	t.Helper()
	m := readJSON(t, p)
	if m["name"] != HostName || m["path"] != bin || m["type"] != "stdio" || m["description"] == "" {
		t.Errorf("%s: %v", p, m)
	}
	if firefox {
		if ext, _ := json.Marshal(m["allowed_extensions"]); string(ext) != `["reins@reins.dev"]` || m["allowed_origins"] != nil {
			t.Errorf("%s: firefox manifest %v", p, m)
		}
	} else {
		if o, _ := json.Marshal(m["allowed_origins"]); string(o) != `["chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/"]` || m["allowed_extensions"] != nil {
			t.Errorf("%s: chromium manifest %v", p, m)
		}
	}
}

func TestInstallLinux(t *testing.T) {
	home := t.TempDir()
	bin := "/opt/reins/bin/reins"
	in := &Installer{Home: home, GOOS: "linux"}
	written, err := in.Install(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		".config/google-chrome/NativeMessagingHosts/com.reins.companion.json":               false,
		".config/chromium/NativeMessagingHosts/com.reins.companion.json":                    false,
		".config/BraveSoftware/Brave-Browser/NativeMessagingHosts/com.reins.companion.json": false,
		".config/microsoft-edge/NativeMessagingHosts/com.reins.companion.json":              false,
		".config/vivaldi/NativeMessagingHosts/com.reins.companion.json":                     false,
		".mozilla/native-messaging-hosts/com.reins.companion.json":                          true,
	}
	if len(written) != len(want) {
		t.Fatalf("wrote %d files: %v", len(written), written)
	}
	for rel, firefox := range want {
		p := filepath.Join(home, rel)
		if !slices.Contains(written, p) {
			t.Errorf("%s not reported as written", rel)
		}
		checkManifest(t, p, bin, firefox)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %04o, want 0644", rel, st.Mode().Perm())
		}
	}
	// Installing again (an upgrade moved the binary) rewrites in place.
	if _, err := in.Install("/usr/bin/reins"); err != nil {
		t.Fatal(err)
	}
	checkManifest(t, filepath.Join(home, ".config/chromium/NativeMessagingHosts/com.reins.companion.json"), "/usr/bin/reins", false)

	removed, err := in.Uninstall()
	if err != nil || len(removed) != len(want) {
		t.Fatalf("Uninstall = %v, %v", removed, err)
	}
	for rel := range want {
		if _, err := os.Stat(filepath.Join(home, rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there", rel)
		}
	}
	if removed, err := in.Uninstall(); err != nil || len(removed) != 0 {
		t.Fatalf("second Uninstall = %v, %v", removed, err)
	}
	// No temp files left in the browsers' dirs.
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("leftover %s", p)
		}
		return nil
	})
}

func TestInstallDarwin(t *testing.T) {
	home := t.TempDir()
	written, err := (&Installer{Home: home, GOOS: "darwin"}).Install("/Applications/Reins.app/Contents/MacOS/reins")
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{
		"Library/Application Support/Google/Chrome/NativeMessagingHosts/com.reins.companion.json",
		"Library/Application Support/Chromium/NativeMessagingHosts/com.reins.companion.json",
		"Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts/com.reins.companion.json",
		"Library/Application Support/Microsoft Edge/NativeMessagingHosts/com.reins.companion.json",
		"Library/Application Support/Vivaldi/NativeMessagingHosts/com.reins.companion.json",
		"Library/Application Support/Mozilla/NativeMessagingHosts/com.reins.companion.json",
	} {
		if !slices.Contains(written, filepath.Join(home, rel)) {
			t.Errorf("%s not written", rel)
		}
	}
}

type fakeRegistry map[string]string

func (r fakeRegistry) SetDefault(key, value string) error { r[key] = value; return nil }
func (r fakeRegistry) DeleteKey(key string) error         { delete(r, key); return nil }

func TestInstallWindowsLayout(t *testing.T) {
	reg := fakeRegistry{}
	dir := t.TempDir()
	in := &Installer{Home: `C:\Users\p`, GOOS: "windows", WindowsDir: dir, Registry: reg}
	bin := `C:\Program Files\Reins\reins.exe`
	written, err := in.Install(bin)
	if err != nil {
		t.Fatal(err)
	}
	chromium := filepath.Join(dir, "chromium", ManifestFile)
	firefox := filepath.Join(dir, "firefox", ManifestFile)
	checkManifest(t, chromium, bin, false)
	checkManifest(t, firefox, bin, true)
	wantKeys := map[string]string{
		`Software\Google\Chrome\NativeMessagingHosts\com.reins.companion`:               chromium,
		`Software\Chromium\NativeMessagingHosts\com.reins.companion`:                    chromium,
		`Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\com.reins.companion`: chromium,
		`Software\Microsoft\Edge\NativeMessagingHosts\com.reins.companion`:              chromium,
		`Software\Vivaldi\NativeMessagingHosts\com.reins.companion`:                     chromium,
		`Software\Mozilla\NativeMessagingHosts\com.reins.companion`:                     firefox,
	}
	if len(reg) != len(wantKeys) {
		t.Fatalf("registry = %v", reg)
	}
	for k, v := range wantKeys {
		if reg[k] != v {
			t.Errorf("HKCU\\%s = %q, want %q", k, reg[k], v)
		}
		if !slices.Contains(written, `HKCU\`+k) {
			t.Errorf("HKCU\\%s not reported", k)
		}
	}
	if _, err := in.Uninstall(); err != nil {
		t.Fatal(err)
	}
	if len(reg) != 0 {
		t.Errorf("keys left: %v", reg)
	}
	for _, p := range []string{chromium, firefox} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there", p)
		}
	}
}

func TestInstallRefusesRelativePath(t *testing.T) {
	for _, c := range []struct{ goos, bin string }{
		{"linux", "reins"}, {"linux", "./bin/reins"}, {"linux", ""},
		{"windows", `reins.exe`}, {"windows", `\reins.exe`}, {"windows", `C:reins.exe`},
	} {
		if _, err := (&Installer{Home: t.TempDir(), GOOS: c.goos, Registry: fakeRegistry{}}).Install(c.bin); err == nil || !strings.Contains(err.Error(), "not absolute") {
			t.Errorf("%s Install(%q) = %v", c.goos, c.bin, err)
		}
	}
}

func TestSystemManifests(t *testing.T) {
	files, err := SystemManifests("linux", "/usr/bin/reins")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string][]byte{}
	for _, f := range files {
		paths[f.Path] = f.Data
	}
	for _, p := range []string{
		"/etc/opt/chrome/native-messaging-hosts/com.reins.companion.json",
		"/etc/chromium/native-messaging-hosts/com.reins.companion.json",
		"/etc/opt/brave.com/brave/native-messaging-hosts/com.reins.companion.json",
		"/etc/opt/edge/native-messaging-hosts/com.reins.companion.json",
		"/etc/vivaldi/native-messaging-hosts/com.reins.companion.json",
		"/usr/lib/mozilla/native-messaging-hosts/com.reins.companion.json",
	} {
		data, ok := paths[p]
		if !ok {
			t.Errorf("no %s", p)
			continue
		}
		tmp := filepath.Join(t.TempDir(), "m.json")
		os.WriteFile(tmp, data, 0o644)
		checkManifest(t, tmp, "/usr/bin/reins", strings.Contains(p, "mozilla"))
	}
	if files, err := SystemManifests("darwin", "/Applications/Reins.app/Contents/MacOS/reins"); err != nil || len(files) != len(Browsers) || files[0].Path != "/Library/Google/Chrome/NativeMessagingHosts/com.reins.companion.json" {
		t.Errorf("darwin = %v, %v", files, err)
	}
	if _, err := SystemManifests("windows", `C:\reins.exe`); err == nil {
		t.Error("windows system manifests should point at the registry")
	}
}

func TestLaunchedByBrowser(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/"}, true},
		{[]string{"chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/", "--parent-window=1234"}, true},
		{[]string{"/home/p/.mozilla/native-messaging-hosts/com.reins.companion.json", "reins@reins.dev"}, true},
		{nil, false},
		{[]string{"headless"}, false},
		{[]string{"token", "issue", "claude"}, false},
		{[]string{"token", "issue", "reins@reins.dev"}, false},
		{[]string{"token", "issue", "chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/"}, false},
		{[]string{"version"}, false},
	} {
		if got := LaunchedByBrowser(c.args); got != c.want {
			t.Errorf("LaunchedByBrowser(%q) = %v", c.args, got)
		}
	}
}

// A build packed with another key has another id: the manifests allow it
// beside the Reins extension, only in Chromium manifests, and refuse
// anything that is not an extension id (it would end up in an origin).
func TestManifestExtraIDs(t *testing.T) {
	const other = "nljkokplaafmcokolakdfdjgkfhffdei"
	in := &Installer{Home: t.TempDir(), GOOS: "linux", ExtensionIDs: []string{other, "cahakjcjmollcmebjjnhhlhcdhipahla"}}
	written, err := in.Install("/usr/bin/reins")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range written {
		m := readJSON(t, p)
		o, _ := json.Marshal(m["allowed_origins"])
		if strings.Contains(p, ".mozilla") {
			if m["allowed_origins"] != nil {
				t.Errorf("%s: %s", p, o)
			}
			continue
		}
		if string(o) != `["chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla/","chrome-extension://`+other+`/"]` {
			t.Errorf("%s: allowed_origins %s", p, o)
		}
	}
	for _, bad := range []string{"short", "chrome-extension://x/", strings.Repeat("z", 32), strings.Repeat("a", 31) + "/"} {
		if _, err := Manifest(Browsers[0], "/usr/bin/reins", bad); err == nil {
			t.Errorf("Manifest accepted id %q", bad)
		}
	}
	files, err := SystemManifests("linux", "/usr/lib/reins/reins-native-host", other)
	if err != nil || !strings.Contains(string(files[0].Data), other) {
		t.Errorf("SystemManifests with an extra id: %v %s", err, files[0].Data)
	}
}
