package wire

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cdpEntry is one method or event of testdata/cdp_methods.json. The node
// tests (extension/test/cdp-methods.test.js) read the same file: the
// Firefox adapter must answer every entry marked firefox and refuse every
// other one with unknown_method, and the Chromium relay must pass them all.
type cdpEntry struct {
	Name    string   `json:"name"`
	UsedBy  []string `json:"usedBy"`
	Firefox bool     `json:"firefox"`
	Reason  string   `json:"reason,omitempty"`
}

type cdpFixture struct {
	Methods []cdpEntry `json:"methods"`
	Events  []cdpEntry `json:"events"`
}

// cdpDomains are the DevTools Protocol's domains: a string literal
// "Domain.name" with one of them is taken for a method or event name.
var cdpDomains = []string{
	"Accessibility", "Animation", "Audits", "Autofill", "BackgroundService", "BluetoothEmulation", "Browser",
	"CSS", "CacheStorage", "Cast", "Console", "DOM", "DOMDebugger", "DOMSnapshot", "DOMStorage", "Database",
	"Debugger", "DeviceAccess", "DeviceOrientation", "Emulation", "EventBreakpoints", "Extensions", "FedCm",
	"Fetch", "FileSystem", "HeadlessExperimental", "HeapProfiler", "IO", "IndexedDB", "Input", "Inspector",
	"LayerTree", "Log", "Media", "Memory", "Network", "Overlay", "PWA", "Page", "Performance",
	"PerformanceTimeline", "Preload", "Profiler", "Runtime", "Schema", "Security", "ServiceWorker", "Storage",
	"SystemInfo", "Target", "Tethering", "Tracing", "WebAudio", "WebAuthn",
}

var cdpName = regexp.MustCompile(`^([A-Z][A-Za-z]*)\.([a-z][A-Za-z]*)?$`)

// scanCDPNames finds every CDP method and event name written in the Go
// sources under root, by the slash-separated directories that use it, and
// the literals that look like a name cut short ("Page." + x), which would
// hide a name from the scan. Tests are left out, and so is companion/e2e:
// its harness drives the browsers' own debugging ports to set tests up, not
// the extension.
func scanCDPNames(root string) (found map[string][]string, partial []string, err error) {
	found = map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || slices.Contains([]string{"build", "dist", "bin", "node_modules", "testdata", "vendor"}, base) || rel == "companion/e2e") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if bin, ok := n.(*ast.BinaryExpr); ok && bin.Op == token.ADD {
				// A domain prefix is fine in strings.HasPrefix, not as the
				// start of a name.
				if lit, ok := bin.X.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if m := cdpName.FindStringSubmatch(unquote(lit.Value)); m != nil && m[2] == "" && slices.Contains(cdpDomains, m[1]) {
						partial = append(partial, fmt.Sprintf("%s: %s + …", fset.Position(lit.Pos()), lit.Value))
					}
				}
				return true
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s := unquote(lit.Value)
			m := cdpName.FindStringSubmatch(s)
			if m == nil || m[2] == "" || !slices.Contains(cdpDomains, m[1]) {
				return true
			}
			dir := path.Dir(rel)
			if !slices.Contains(found[s], dir) {
				found[s] = append(found[s], dir)
			}
			return true
		})
		return nil
	})
	for _, dirs := range found {
		slices.Sort(dirs)
	}
	return found, partial, err
}

func unquote(lit string) string {
	s, err := strconv.Unquote(lit)
	if err != nil {
		return ""
	}
	return s
}

func readCDPFixture(t *testing.T) cdpFixture {
	t.Helper()
	var fx cdpFixture
	readFixture(t, "cdp_methods.json", &fx)
	return fx
}

// TestCDPMethodsFixture keeps testdata/cdp_methods.json equal to what the Go
// side sends and listens to: a new CDP call fails here until the fixture
// lists it (and says whether Firefox answers it), and a call removed must
// leave the fixture too.
func TestCDPMethodsFixture(t *testing.T) {
	fx := readCDPFixture(t)
	found, partial, err := scanCDPNames(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range partial {
		t.Errorf("%s: write CDP method and event names whole, so this test sees them", p)
	}
	if len(found) < 40 {
		t.Fatalf("the scan found only %d CDP names; is it reading the sources?", len(found))
	}
	listed := map[string]bool{}
	for _, list := range []struct {
		kind    string
		entries []cdpEntry
	}{{"method", fx.Methods}, {"event", fx.Events}} {
		if !slices.IsSortedFunc(list.entries, func(a, b cdpEntry) int { return strings.Compare(a.Name, b.Name) }) {
			t.Errorf("the %ss are not sorted by name", list.kind)
		}
		for _, e := range list.entries {
			if listed[e.Name] {
				t.Errorf("%s is listed twice", e.Name)
			}
			listed[e.Name] = true
			switch {
			case !e.Firefox && strings.TrimSpace(e.Reason) == "":
				t.Errorf("%s %s: Firefox does not support it, and the fixture does not say why", list.kind, e.Name)
			case e.Firefox && e.Reason != "":
				t.Errorf("%s %s: supported in Firefox, yet has a reason %q", list.kind, e.Name, e.Reason)
			}
			dirs, ok := found[e.Name]
			if !ok {
				t.Errorf("%s %s is listed but no Go source uses it any more: remove it", list.kind, e.Name)
				continue
			}
			if !slices.Equal(dirs, e.UsedBy) {
				t.Errorf("%s %s: usedBy %v, but the sources that use it are in %v", list.kind, e.Name, e.UsedBy, dirs)
			}
		}
	}
	var missing []string
	for name, dirs := range found {
		if !listed[name] {
			missing = append(missing, name+" (used in "+strings.Join(dirs, ", ")+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("CDP name %s is missing from testdata/cdp_methods.json: add it, with whether the Firefox adapter answers it", m)
	}
}

// The scan itself: names are found whole, in any literal, and a name built
// by concatenation is reported rather than missed.
func TestScanCDPNames(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\n\nconst m = `Page.navigate`\n\nvar x = map[string]any{\"Runtime.evaluate\": 1, \"FyneApp.toml\": 2, \"Page.Navigate\": 3}\n")
	write("b/b.go", "package b\n\nfunc f(c func(string)) { c(\"Page.navigate\"); c(\"Log.entryAdded\") }\n")
	write("b/b_test.go", "package b\n\nvar _ = \"DOM.getDocument\"\n")
	write("companion/e2e/h.go", "package e2e\n\nvar _ = \"Target.createTarget\"\n")
	write("c/testdata/x.go", "package x\n\nvar _ = \"Tracing.start\"\n")
	// A domain prefix in a prefix test is no partial name.
	write("e/e.go", "package e\n\nimport \"strings\"\n\nvar _ = strings.HasPrefix(\"Input.insertText\", \"Input.\")\n")
	got, partial, err := scanCDPNames(root)
	if err != nil || len(partial) != 0 {
		t.Fatalf("scan: %v, partial names %v", err, partial)
	}
	want := map[string][]string{
		"Page.navigate":    {"a", "b"},
		"Runtime.evaluate": {"a"},
		"Log.entryAdded":   {"b"},
		"Input.insertText": {"e"},
	}
	if len(got) != len(want) {
		t.Fatalf("scan found %v, want %v", got, want)
	}
	for name, dirs := range want {
		if !slices.Equal(got[name], dirs) {
			t.Errorf("%s: found in %v, want %v", name, got[name], dirs)
		}
	}

	write("d/d.go", "package d\n\nvar _ = \"Page.\" + \"navigate\"\n")
	if _, partial, err := scanCDPNames(root); err != nil || len(partial) != 1 || !strings.Contains(partial[0], "d.go") {
		t.Errorf("a CDP name built by concatenation: partial %v, %v", partial, err)
	}
}
