package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// The page state and DevTools tools (storage, devtools, emulate,
// extensions, cdp) through real reins headless and a real MCP client: in
// Chromium through the extension, on the dev browser, and in Firefox, which
// answers unsupported where WebExtensions cannot.

const devConsoleHTML = `<!doctype html><title>Console levels</title><script>
function outer() { inner(); }
function inner() { console.warn('disk almost full', 93); console.error('save failed'); }
console.debug('debug detail');
console.info('starting up');
outer();
</script><p>console</p>`

const devAPIHTML = `<!doctype html><title>API</title><p id="out">…</p><script>
fetch('/dt/api?code=K-1234').then((r) => r.json()).then((j) => { document.getElementById('out').textContent = j.greeting; });
</script>`

// devPerfHTML blocks its main thread for 120 ms in a task of its own after
// the parse: Chromium measures only tasks that begin once a long-task
// observer exists, and the trace's observer starts with the document, in
// the task that may also parse the page.
const devPerfHTML = `<!doctype html><title>Perf</title><style>h1{font-size:64px}</style><h1>A large headline that paints</h1><p id="state">working</p><script>
setTimeout(() => {
  const t = performance.now(); while (performance.now() - t < 120) {}
  document.getElementById('state').textContent = 'busy done';
}, 0);
</script>`

func startDevtoolsPages(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			io.WriteString(w, body)
		}
	}
	mux.HandleFunc("GET /dt/console", page(devConsoleHTML))
	mux.HandleFunc("GET /dt/apipage", page(devAPIHTML))
	mux.HandleFunc("GET /dt/perf", page(devPerfHTML))
	mux.HandleFunc("GET /dt/plain", page(`<!doctype html><title>Plain</title><p>plain</p>`))
	mux.HandleFunc("GET /dt/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Served-By", "reins-test")
		fmt.Fprintf(w, `{"greeting":"hello","code":%q}`, r.URL.Query().Get("code"))
	})
	// /dt/cookies sets the site's cookie and frames ?frame as a third party.
	mux.HandleFunc("GET /dt/cookies", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc123", Path: "/"})
		page(`<!doctype html><title>Cookies</title><p>cookies</p><iframe src="`+r.URL.Query().Get("frame")+`"></iframe>`)(w, r)
	})
	mux.HandleFunc("GET /dt/setcookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: r.URL.Query().Get("name"), Value: r.URL.Query().Get("value"), Path: "/"})
		page(`<!doctype html><title>Set</title><p>set</p>`)(w, r)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// reinsSettings runs `reins settings ARGS` against r, as a person would on
// a headless machine.
func reinsSettings(t *testing.T, r *harness.Reins, args ...string) string {
	t.Helper()
	bin, err := harness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, append(append([]string{"settings"}, args...), "--data-dir", r.DataDir)...).CombinedOutput()
	if err != nil {
		t.Fatalf("reins settings %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func openTab(t *testing.T, cs *mcp.ClientSession, url string) int {
	t.Helper()
	out := mustTool(t, cs, "tabs_create_mcp", map[string]any{"url": url})
	m := createdRE.FindStringSubmatch(out.text)
	if m == nil {
		t.Fatalf("tabs_create_mcp answered %s", out.text)
	}
	return mustAtoi(t, m[1])
}

func wantErr(t *testing.T, out toolOut, code, text string) {
	t.Helper()
	if !out.isErr || !strings.HasPrefix(out.text, "["+code+"]") || !strings.Contains(out.text, text) {
		t.Fatalf("want [%s] … %q, got %+v", code, text, out)
	}
}

// devtoolsSuite runs the tools on the browser r sees first; transport is
// "chromium", "dev" or "firefox".
func devtoolsSuite(t *testing.T, r *harness.Reins, transport string) {
	srv := startDevtoolsPages(t)
	site := srv.URL
	thirdParty := strings.Replace(site, "127.0.0.1", "localhost", 1)
	cs := mcpSession(t, r, "builder-"+transport)
	firefox := transport == "firefox"

	// storage: a bank's session cookie, held for a third-party frame of the
	// page, stays out of reach; the tab's own cookie does not.
	bank := openTab(t, cs, thirdParty+"/dt/setcookie?name=bank&value=secret-session")
	tab := openTab(t, cs, site+"/dt/cookies?frame="+thirdParty+"/dt/plain")
	out := mustTool(t, cs, "storage", map[string]any{"tabId": tab, "action": "get", "area": "cookies"})
	if !strings.Contains(out.text, "sid=abc123") || strings.Contains(out.text, "secret-session") {
		t.Fatalf("storage on the framing page:\n%s", out.text)
	}
	mustTool(t, cs, "storage", map[string]any{"tabId": tab, "action": "clear", "area": "cookies"})
	mustTool(t, cs, "storage", map[string]any{"tabId": tab, "action": "set", "area": "local", "name": "theme", "value": "dark"})
	if out := mustTool(t, cs, "storage", map[string]any{"tabId": tab, "action": "get", "area": "local"}); !strings.Contains(out.text, "theme = dark") || !strings.Contains(out.text, "localStorage of "+site) {
		t.Fatalf("local storage:\n%s", out.text)
	}
	if out := mustTool(t, cs, "storage", map[string]any{"tabId": bank, "action": "get", "area": "cookies"}); !strings.Contains(out.text, "bank=secret-session") {
		t.Fatalf("clearing one site's cookies touched another's:\n%s", out.text)
	}

	// devtools console: levels and the stack of the call.
	tab = openTab(t, cs, site+"/dt/console")
	out = mustTool(t, cs, "devtools", map[string]any{"tabId": tab, "action": "console", "level": "warn"})
	for _, want := range []string{"[warn]", "disk almost full 93", "[error]", "save failed", "at inner (" + site + "/dt/console:3:", "at outer (" + site + "/dt/console:2:"} {
		if !strings.Contains(out.text, want) {
			t.Errorf("console at warn lacks %q:\n%s", want, out.text)
		}
	}
	if strings.Contains(out.text, "starting up") {
		t.Errorf("console at warn shows info:\n%s", out.text)
	}

	// devtools request: headers, and the body where the browser gives it.
	tab = openTab(t, cs, site+"/dt/apipage")
	out = mustTool(t, cs, "devtools", map[string]any{"tabId": tab, "action": "wait_response", "pattern": "/dt/api?"})
	if !strings.Contains(out.text, "/dt/api?code=K-1234 → 200") || !strings.Contains(strings.ToLower(out.text), "x-served-by: reins-test") {
		t.Fatalf("wait_response:\n%s", out.text)
	}
	if firefox {
		if !strings.Contains(out.text, "[unsupported] not available in Firefox") {
			t.Fatalf("Firefox's body line:\n%s", out.text)
		}
	} else if !strings.Contains(out.text, `{"greeting":"hello","code":"K-1234"}`) {
		t.Fatalf("no body:\n%s", out.text)
	}

	// devtools trace, emulate and cdp need Chromium.
	tab = openTab(t, cs, site+"/dt/plain")
	if firefox {
		wantErr(t, callTool(t, cs, "devtools", map[string]any{"tabId": tab, "action": "trace_start"}), "unsupported", "Chromium")
		wantErr(t, callTool(t, cs, "emulate", map[string]any{"tabId": tab, "colorScheme": "dark"}), "unsupported", "Chromium")
	} else {
		mustTool(t, cs, "devtools", map[string]any{"tabId": tab, "action": "trace_start"})
		mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": site + "/dt/perf"})
		mustTool(t, cs, "wait_for", map[string]any{"tabId": tab, "text": "busy done"})
		out = mustTool(t, cs, "devtools", map[string]any{"tabId": tab, "action": "trace_stop"})
		if !regexp.MustCompile(`LCP: \d+ ms \(h1`).MatchString(out.text) || !regexp.MustCompile(`Long tasks: [1-9]`).MatchString(out.text) {
			t.Fatalf("trace:\n%s", out.text)
		}
	}

	// cdp: only once the person marks the agent a developer agent.
	wantErr(t, callTool(t, cs, "cdp", map[string]any{"tabId": tab, "method": "DOM.getDocument"}), "not_allowed", "developer agent")
	reinsSettings(t, r, "developer", "builder-"+transport, "on")
	if firefox {
		wantErr(t, callTool(t, cs, "cdp", map[string]any{"tabId": tab, "method": "DOM.getDocument"}), "unsupported", "Chromium")
	} else {
		out = mustTool(t, cs, "cdp", map[string]any{"tabId": tab, "method": "Runtime.evaluate", "params": map[string]any{"expression": "document.title", "returnByValue": true}})
		if !strings.Contains(out.text, `"value": "Perf"`) {
			t.Fatalf("cdp Runtime.evaluate:\n%s", out.text)
		}
		wantErr(t, callTool(t, cs, "cdp", map[string]any{"tabId": tab, "method": "Target.createTarget", "params": map[string]any{"url": "https://example.com/"}}), "not_allowed", "Target domain is refused")
		wantErr(t, callTool(t, cs, "cdp", map[string]any{"tabId": tab, "method": "Network.getCookies", "params": map[string]any{"urls": []string{thirdParty + "/"}}}), "not_allowed", "only the tab's own site")
	}

	// extensions: refused until the person allows it; then the browser
	// decides (its management permission, or no extension API at all).
	wantErr(t, callTool(t, cs, "extensions", map[string]any{"action": "list"}), "not_allowed", "Reins' settings")
	reinsSettings(t, r, "extensions", "on")
	switch transport {
	case "dev":
		wantErr(t, callTool(t, cs, "extensions", map[string]any{"action": "list"}), "unsupported", "dev browser")
	default:
		wantErr(t, callTool(t, cs, "extensions", map[string]any{"action": "list"}), "unauthorized", "Allow managing extensions")
	}
}

func TestDevtoolsToolsWithChromium(t *testing.T) {
	s := newStack(t)
	devtoolsSuite(t, s.Reins, "chromium")
}

func TestDevtoolsToolsWithTheDevBrowser(t *testing.T) {
	devtoolsSuite(t, startDevReins(t), "dev")
}

func TestDevtoolsToolsWithFirefox(t *testing.T) {
	s := newFirefoxStack(t)
	devtoolsSuite(t, s.Reins, "firefox")
}

// With the person's grant in the browser and the switch in Reins, an agent
// lists the browser's extensions, disables one and enables it again; the
// browser's own list confirms each step.
func TestExtensionsToolWithChromium(t *testing.T) {
	s := newStack(t, harness.WithManagementGranted())
	cs := mcpSession(t, s.Reins, "tidy")
	wantErr(t, callTool(t, cs, "extensions", map[string]any{"action": "list"}), "not_allowed", "Reins' settings")
	reinsSettings(t, s.Reins, "extensions", "on")
	out := mustTool(t, cs, "extensions", map[string]any{"action": "list"})
	m := regexp.MustCompile(`(\w{32})  ` + harness.OtherExtensionName + ` 1\.0 \(enabled`).FindStringSubmatch(out.text)
	if m == nil || strings.Contains(out.text, "Reins ") && strings.Contains(out.text, harness.ExtensionID) {
		t.Fatalf("extensions list:\n%s", out.text)
	}
	id := m[1]
	out = mustTool(t, cs, "extensions", map[string]any{"action": "disable", "id": id})
	if !strings.Contains(out.text, "Disabled "+id) || !strings.Contains(out.text, "(disabled") {
		t.Fatalf("disable:\n%s", out.text)
	}
	if out := mustTool(t, cs, "extensions", map[string]any{"action": "list"}); !strings.Contains(out.text, id+"  "+harness.OtherExtensionName+" 1.0 (disabled") {
		t.Fatalf("after disabling:\n%s", out.text)
	}
	mustTool(t, cs, "extensions", map[string]any{"action": "enable", "id": id})
	if out := mustTool(t, cs, "extensions", map[string]any{"action": "list"}); !strings.Contains(out.text, id+"  "+harness.OtherExtensionName+" 1.0 (enabled") {
		t.Fatalf("after enabling:\n%s", out.text)
	}
	// Reins never disables itself.
	wantErr(t, callTool(t, cs, "extensions", map[string]any{"action": "disable", "id": harness.ExtensionID}), "bad_params", "itself")
	reinsSettings(t, s.Reins, "extensions", "off")
	wantErr(t, callTool(t, cs, "extensions", map[string]any{"action": "list"}), "not_allowed", "Reins' settings")
}
