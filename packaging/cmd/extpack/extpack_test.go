package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sampleManifest = `{
  "manifest_version": 3,
  "name": "Reins",
  "version": "1.2.3",
  "key": "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
  "minimum_chrome_version": "120",
  "permissions": ["debugger", "tabs", "storage", "nativeMessaging"],
  "background": {"service_worker": "background.js", "type": "module"},
  "content_security_policy": {"extension_pages": "script-src 'self'; object-src 'self'"},
  "icons": {"128": "icons/icon128.png"},
  "content_scripts": [{"matches": ["<all_urls>"], "js": ["content.js"]}]
}`

func mustParse(t *testing.T, s string) *object {
	t.Helper()
	m, err := parseManifest([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decode(t *testing.T, o *object) map[string]any {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestObjectKeepsKeyOrder(t *testing.T) {
	m := mustParse(t, `{"z":1,"a":{"y":2,"b":3},"m":[1,2]}`)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"z":1,"a":{"y":2,"b":3},"m":[1,2]}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestObjectRefusesDuplicateKeys(t *testing.T) {
	if _, err := parseManifest([]byte(`{"version":"1","version":"2"}`)); err == nil {
		t.Fatal("duplicate key accepted")
	}
}

func TestChromeManifestDropsOnlyKey(t *testing.T) {
	m := mustParse(t, sampleManifest)
	c := decode(t, chromeManifest(m))
	if _, ok := c["key"]; ok {
		t.Error("key kept")
	}
	if len(c) != len(decode(t, m))-1 {
		t.Errorf("chrome manifest has %d keys, want one fewer than %d", len(c), len(decode(t, m)))
	}
	if !m.has("key") {
		t.Error("the original manifest was modified")
	}
}

func TestFirefoxManifest(t *testing.T) {
	m := mustParse(t, sampleManifest)
	ff, err := firefoxManifest(m, firefoxOptions{DataCollection: []string{"websiteContent"}})
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, ff)
	for _, k := range []string{"key", "minimum_chrome_version"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s kept", k)
		}
	}
	bg := got["background"].(map[string]any)
	if _, ok := bg["service_worker"]; ok {
		t.Error("service_worker kept")
	}
	if s, _ := json.Marshal(bg["scripts"]); string(s) != `["background-firefox.js"]` {
		t.Errorf("background.scripts = %s", s)
	}
	if bg["type"] != "module" {
		t.Errorf("background.type = %v", bg["type"])
	}
	perms, _ := json.Marshal(got["permissions"])
	if string(perms) != `["tabs","storage","nativeMessaging","scripting","webRequest","cookies"]` {
		t.Errorf("permissions = %s", perms)
	}
	if hosts, _ := marshal(got["host_permissions"]); string(hosts) != `["<all_urls>"]` {
		t.Errorf("host_permissions = %s", hosts)
	}
	if csp := got["content_security_policy"].(map[string]any)["extension_pages"]; csp != "script-src 'self'" {
		t.Errorf("csp = %v", csp)
	}
	gecko := got["browser_specific_settings"].(map[string]any)["gecko"].(map[string]any)
	if gecko["id"] != FirefoxID {
		t.Errorf("gecko.id = %v", gecko["id"])
	}
	dc, _ := json.Marshal(gecko["data_collection_permissions"])
	if string(dc) != `{"required":["websiteContent"]}` {
		t.Errorf("data_collection_permissions = %s", dc)
	}
	if got["version"] != "1.2.3" {
		t.Errorf("version = %v", got["version"])
	}
	// Key order is the Chromium manifest's, new keys last.
	if i, j := slices.Index(ff.keys, "manifest_version"), slices.Index(ff.keys, "browser_specific_settings"); i != 0 || j != len(ff.keys)-1 {
		t.Errorf("key order %v", ff.keys)
	}
	if _, err := firefoxManifest(m, firefoxOptions{}); err == nil {
		t.Error("empty data collection list accepted")
	}
}

func TestFirefoxManifestKeepsExistingGeckoSettings(t *testing.T) {
	m := mustParse(t, `{"version":"1","browser_specific_settings":{"gecko":{"id":"old@x","update_url":"https://u"}}}`)
	ff, err := firefoxManifest(m, firefoxOptions{DataCollection: []string{"none"}})
	if err != nil {
		t.Fatal(err)
	}
	gecko := decode(t, ff)["browser_specific_settings"].(map[string]any)["gecko"].(map[string]any)
	if gecko["id"] != FirefoxID || gecko["update_url"] != "https://u" {
		t.Errorf("gecko = %v", gecko)
	}
}

func TestFirefoxCSP(t *testing.T) {
	// Exactly script-src 'self' whatever Chromium states: anything more
	// (connect-src) would stop the background reading its own files.
	for _, in := range []string{"", "script-src 'self' 'wasm-unsafe-eval'; object-src 'self'; connect-src ws://127.0.0.1:*", "upgrade-insecure-requests; script-src 'self';"} {
		if got := firefoxCSP(in); got != "script-src 'self'" {
			t.Errorf("firefoxCSP(%q) = %q", in, got)
		}
	}
}

func TestFirefoxDirIsLoadable(t *testing.T) {
	root := sampleRoot(t, map[string]string{
		"extension/background.js":         "// worker",
		"extension/background-firefox.js": "// firefox",
		"extension/lib/core.js":           "export {}",
		"extension/test/core.test.js":     "test",
		"companion/tools/page.js":         "(() => {})();",
	})
	var stdout, stderr bytes.Buffer
	env := func(string) string { return "" }
	dir := filepath.Join(root, "build", "firefox")
	if code := run([]string{"firefox-dir", "-root", root, "-o", dir, "-data-collection", "none"}, &stdout, &stderr, env); code != 0 {
		t.Fatalf("firefox-dir: %d %s", code, stderr.String())
	}
	for name, want := range map[string]string{"background.js": "// worker", "background-firefox.js": "// firefox", "lib/core.js": "export {}", "lib/tools-page.js": "(() => {})();"} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "test")); err == nil {
		t.Error("tests were copied")
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"scripts"`, FirefoxID, `"none"`, `"<all_urls>"`, `"webRequest"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("manifest lacks %s:\n%s", s, b)
		}
	}
	// A second build into the same folder is refused rather than mixed.
	if code := run([]string{"firefox-dir", "-root", root, "-o", dir}, &stdout, &stderr, env); code == 0 {
		t.Error("firefox-dir wrote over an existing folder")
	}
}

// A folder without the Firefox entry would load in Firefox with no
// background at all; the build refuses it instead.
func TestFirefoxBuildNeedsItsBackground(t *testing.T) {
	root := sampleRoot(t, map[string]string{
		"extension/background.js": "// worker",
		"companion/tools/page.js": "(() => {})();",
	})
	env := func(string) string { return "" }
	for _, args := range [][]string{
		{"firefox-dir", "-root", root, "-o", filepath.Join(root, "build", "firefox")},
		{"firefox", "-root", root, "-o", filepath.Join(root, "dist", "reins.xpi")},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr, env); code == 0 || !strings.Contains(stderr.String(), firefoxBackground) {
			t.Errorf("%s without %s: exit %d, %q", args[0], firefoxBackground, code, stderr.String())
		}
	}
}

// The real extension folder has every background script the Firefox
// manifest names.
func TestFirefoxBackgroundOfTheRealExtension(t *testing.T) {
	ext := filepath.Join("..", "..", "..", "extension")
	m, err := readManifest(ext)
	if err != nil {
		t.Fatal(err)
	}
	ff, err := firefoxManifest(m, firefoxOptions{DataCollection: []string{"none"}})
	if err != nil {
		t.Fatal(err)
	}
	bg := decode(t, ff)["background"].(map[string]any)
	scripts, _ := bg["scripts"].([]any)
	if len(scripts) == 0 {
		t.Fatalf("no background scripts: %v", bg)
	}
	for _, s := range scripts {
		if _, err := os.Stat(filepath.Join(ext, s.(string))); err != nil {
			t.Error(err)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[string]bool{
		"0.1.0": true, "1": true, "1.2.3.4": true, "65535.0": true,
		"": false, "1.2.3.4.5": false, "01.2": false, "1.2-beta": false, "v1.2": false, "655350": false,
	} {
		if err := checkVersion(v); (err == nil) != ok {
			t.Errorf("checkVersion(%q) = %v, want ok=%v", v, err, ok)
		}
	}
}

func TestExcluded(t *testing.T) {
	for rel, want := range map[string]bool{
		"manifest.json":            false,
		"background.js":            false,
		"lib/core.js":              false,
		"icons/icon128.png":        false,
		"test/core.test.js":        true,
		"lib/test/helper.js":       true,
		"lib/core.test.js":         true,
		"lib/core.spec.mjs":        true,
		"node_modules/x/index.js":  true,
		".eslintrc.json":           true,
		"lib/.DS_Store":            true,
		"package.json":             true,
		"README.md":                true,
		"manifest.firefox.json":    true,
		"lib/manifest.helper.json": false,
		"testing/page.html":        false,
	} {
		if got := excluded(rel); got != want {
			t.Errorf("excluded(%q) = %v, want %v", rel, got, want)
		}
	}
}

// The id scheme is Chromium's: sha256, first 16 bytes, hex digits 0-f as
// letters a-p. "test" is the vector from Chromium's own id_util tests.
func TestIDFromHash(t *testing.T) {
	if got, want := idFromHash(sha256.Sum256([]byte("test"))), "jpignaibiiemhngfjkcpokkamffknabf"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestUnpackedIDResolvesSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	a, err := unpackedID(real)
	if err != nil {
		t.Fatal(err)
	}
	b, err := unpackedID(link)
	if err != nil {
		t.Fatal(err)
	}
	resolved, _ := filepath.EvalSymlinks(real)
	if a != b || a != idFromHash(sha256.Sum256([]byte(resolved))) {
		t.Fatalf("ids %s %s", a, b)
	}
}

// sampleRoot is a repository of version 1.2.3 whose extension has
// sampleManifest, plus files.
func sampleRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	all := map[string]string{
		"FyneApp.toml":            "[Details]\n  Version = \"1.2.3\"\n",
		"extension/manifest.json": sampleManifest,
	}
	for k, v := range files {
		all[k] = v
	}
	return writeTree(t, all)
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func zipNames(t *testing.T, path string) map[string]string {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]string{}
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		out[f.Name] = b.String()
	}
	return out
}

func TestPackagesEndToEnd(t *testing.T) {
	root := sampleRoot(t, map[string]string{
		"extension/background.js":          "// worker",
		"extension/background-firefox.js":  "// firefox",
		"extension/lib/core.js":            "export {}",
		"extension/test/core.test.js":      "test",
		"extension/package.json":           "{}",
		"extension/icons/icon128.png":      "png",
		"extension/.eslintrc.json":         "{}",
		"extension/lib/sharing.test.js":    "test",
		"extension/manifest.firefox.json":  "{}",
		"extension/pages/options.html":     "<html>",
		"extension/node_modules/x/x.js":    "x",
		"extension/lib/deep/more/thing.js": "x",
		"companion/tools/page.js":          "(() => {})();",
	})
	var stdout, stderr bytes.Buffer
	env := func(string) string { return "" }
	zipPath := filepath.Join(root, "dist", "reins-chrome.zip")
	if code := run([]string{"chrome", "-root", root, "-o", zipPath}, &stdout, &stderr, env); code != 0 {
		t.Fatalf("chrome: %d %s", code, stderr.String())
	}
	got := zipNames(t, zipPath)
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"background-firefox.js", "background.js", "icons/icon128.png", "lib/core.js", "lib/deep/more/thing.js", "manifest.json", "pages/options.html"}
	if !slices.Equal(names, want) {
		t.Fatalf("zip holds %v, want %v", names, want)
	}
	if strings.Contains(got["manifest.json"], `"key"`) {
		t.Error("chrome manifest kept key")
	}

	// Same tree, same bytes: store uploads and checksums stay stable.
	first, _ := os.ReadFile(zipPath)
	if code := run([]string{"chrome", "-root", root, "-o", zipPath}, &stdout, &stderr, env); code != 0 {
		t.Fatal(stderr.String())
	}
	second, _ := os.ReadFile(zipPath)
	if !bytes.Equal(first, second) {
		t.Error("two builds of the same tree differ")
	}

	xpi := filepath.Join(root, "dist", "reins-firefox.xpi")
	if code := run([]string{"firefox", "-root", root, "-o", xpi}, &stdout, &stderr, env); code != 0 {
		t.Fatalf("firefox: %d %s", code, stderr.String())
	}
	xpiFiles := zipNames(t, xpi)
	if xpiFiles["lib/tools-page.js"] != "(() => {})();" {
		t.Error("firefox package lacks the tool engine's page helper")
	}
	if _, ok := got["lib/tools-page.js"]; ok {
		t.Error("chrome package holds the Firefox-only page helper")
	}
	ff := xpiFiles["manifest.json"]
	for _, s := range []string{`"scripts"`, FirefoxID, `"websiteContent"`, `"<all_urls>"`} {
		if !strings.Contains(ff, s) {
			t.Errorf("firefox manifest lacks %s:\n%s", s, ff)
		}
	}
	if strings.Contains(ff, `"debugger"`) {
		t.Error("firefox manifest kept debugger")
	}

	stdout.Reset()
	if code := run([]string{"version", "-root", root}, &stdout, &stderr, env); code != 0 || stdout.String() != "1.2.3\n" {
		t.Errorf("version: %d %q", code, stdout.String())
	}
}

func TestVersionMismatchFails(t *testing.T) {
	root := writeTree(t, map[string]string{
		"FyneApp.toml":            "[Details]\n  Version = \"2.0.0\"\n",
		"extension/manifest.json": sampleManifest,
	})
	for _, args := range [][]string{
		{"check", "-root", root},
		{"chrome", "-root", root, "-o", filepath.Join(root, "x.zip")},
		{"firefox", "-root", root, "-o", filepath.Join(root, "x.xpi")},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr, func(string) string { return "" }); code != 1 {
			t.Errorf("%v: exit %d, want 1", args, code)
		}
		if !strings.Contains(stderr.String(), `"1.2.3"`) || !strings.Contains(stderr.String(), `"2.0.0"`) {
			t.Errorf("%v: message does not name both versions: %s", args, stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(root, "x.zip")); err == nil {
		t.Error("a package was written despite the mismatch")
	}
}

func TestSourceDateEpoch(t *testing.T) {
	tm, err := buildTime(func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return "1700000000"
		}
		return ""
	})
	if err != nil || tm.Unix() != 1700000000 {
		t.Fatalf("%v %v", tm, err)
	}
	if _, err := buildTime(func(string) string { return "x" }); err == nil {
		t.Error("junk SOURCE_DATE_EPOCH accepted")
	}
}

func TestCopyKeepsManifest(t *testing.T) {
	root := sampleRoot(t, map[string]string{
		"extension/lib/core.js":       "export {}",
		"extension/test/core.test.js": "test",
	})
	dst := filepath.Join(t.TempDir(), "ext")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"copy", "-root", root, "-o", dst}, &stdout, &stderr, func(string) string { return "" }); code != 0 {
		t.Fatal(stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dst, "manifest.json"))
	if err != nil || string(b) != sampleManifest {
		t.Fatalf("manifest changed or missing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "test")); err == nil {
		t.Error("tests copied")
	}
}
