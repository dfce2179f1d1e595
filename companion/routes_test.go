package companion

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/edge"
)

func newTestCompanion(t *testing.T) *Companion {
	t.Helper()
	c, err := New(Config{Port: 47999, DataDir: t.TempDir(), NoAdmin: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Shutdown(t.Context()) })
	return c
}

// /pair serves the Browser Operator pairing example that the README and
// the protocol promise. A person navigates to it, which sends no Origin;
// a page that fetches it (any Origin, the companion's own included) is
// refused.
func TestPairPage(t *testing.T) {
	c := newTestCompanion(t)
	get := func(origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/pair", nil)
		r.Host = "127.0.0.1:47999"
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, r)
		return w
	}
	w := get("")
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /pair: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if !strings.Contains(w.Body.String(), `__browserOperator: "pair-offer"`) {
		t.Fatal("GET /pair is not the pairing example")
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("the page may be framed: %q", csp)
	}
	for _, origin := range []string{"https://evil.example", "http://127.0.0.1:47999", "null"} {
		if w := get(origin); w.Code != http.StatusForbidden {
			t.Errorf("GET /pair from %s: %d, want 403", origin, w.Code)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/pair", nil)
	r.Host = "127.0.0.1:47999"
	w = httptest.NewRecorder()
	c.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /pair: %d, want 405", w.Code)
	}
}

var (
	// A URL of the companion: http://127.0.0.1:47100/mcp, ws://127.0.0.1:PORT/.
	readmeURL = regexp.MustCompile("(?:http|ws)://(?:127\\.0\\.0\\.1|localhost):(?:[0-9]+|PORT)(/[^\\s`\"')<>]*)")
	// A request line: GET /, POST /mcp.
	readmeRequest = regexp.MustCompile("\\b(?:GET|POST|PUT|DELETE|HEAD) (/[^\\s`\"')]*)")
	// A path in the architecture diagram's companion box.
	readmeBoxPath = regexp.MustCompile(`(?:^|[\s,│])(/[a-z][^\s,]*)`)
	// A placeholder segment: :tab, TABID, SESSION, ….
	readmePlaceholder = regexp.MustCompile(`^(?::[a-z]+|[A-Z]+|…)$`)
)

// readmeRoutes returns every companion path README.md names: in the
// companion's URLs, in request lines, and in the architecture diagram's
// companion box.
func readmeRoutes(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	inBox := false
	for _, line := range strings.Split(string(data), "\n") {
		for _, m := range readmeURL.FindAllStringSubmatch(line, -1) {
			paths[strings.TrimRight(m[1], ".,;:")] = true
		}
		for _, m := range readmeRequest.FindAllStringSubmatch(line, -1) {
			paths[m[1]] = true
		}
		switch {
		case strings.Contains(line, "┌") && strings.Contains(line, "companion (127.0.0.1"):
			inBox = true
		case strings.Contains(line, "└"):
			inBox = false
		case inBox:
			for _, m := range readmeBoxPath.FindAllStringSubmatch(line, -1) {
				paths[m[1]] = true
			}
		}
	}
	if len(paths) < 4 {
		t.Fatalf("found only %v in README.md: has its layout changed?", paths)
	}
	return paths
}

// concrete fills a README path's placeholders.
func concrete(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if readmePlaceholder.MatchString(s) {
			segs[i] = "1"
		}
	}
	return strings.Join(segs, "/")
}

// subtree reports the prefix of a README path that names what lies under
// it: /live/s/… or /live/s/.
func subtree(p string) (string, bool) {
	if prefix, ok := strings.CutSuffix(p, "…"); ok && strings.HasSuffix(prefix, "/") {
		return prefix, true
	}
	return p, p != "/" && strings.HasSuffix(p, "/")
}

// patternPath is a route pattern's path: GET /live/{tab} → /live/{tab}.
func patternPath(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		pattern = path
	}
	return strings.TrimSuffix(pattern, "{$}")
}

// Every route README.md names is in the companion's route table, and every
// route of the table is named in README.md.
func TestREADMERoutesExist(t *testing.T) {
	c := newTestCompanion(t)
	routes := c.routes()
	mux := http.NewServeMux()
	for _, p := range edge.Patterns(routes) {
		mux.Handle(p, http.NotFoundHandler())
	}
	documented := map[string]bool{}
	for p := range readmeRoutes(t) {
		if prefix, ok := subtree(p); ok {
			found := false
			for pattern := range routes {
				if strings.HasPrefix(patternPath(pattern), prefix) {
					documented[pattern], found = true, true
				}
			}
			if !found {
				t.Errorf("README.md names %s, under which no route serves", p)
			}
			continue
		}
		_, pattern := mux.Handler(httptest.NewRequest(http.MethodGet, concrete(p), nil))
		if pattern == "" {
			t.Errorf("README.md names %s, which no route serves", p)
			continue
		}
		documented[pattern] = true
	}
	for p := range routes {
		if !documented[p] {
			t.Errorf("the route %q is not in README.md", p)
		}
	}
}
