package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func ok(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }

func TestEdge(t *testing.T) {
	h := New(Config{Port: 47100, ExtensionIDs: func() []string { return []string{"cahakjcjmollcmebjjnhhlhcdhipahla"} }}, map[string]Route{
		"/":            {Origins: ExtensionOrigin, Handler: http.HandlerFunc(ok)},
		"/mcp":         {Origins: NoWebOrigin, Handler: http.HandlerFunc(ok)},
		"GET /live-ws": {Origins: SelfOrigin, Handler: http.HandlerFunc(ok)},
	})
	for _, tc := range []struct {
		name, path, host, origin string
		want                     int
	}{
		{"plain", "/", "127.0.0.1:47100", "", 200},
		{"localhost", "/", "localhost:47100", "", 200},
		{"ipv6", "/", "[::1]:47100", "", 200},
		{"wrong port", "/", "127.0.0.1:80", "", 403},
		{"rebound name", "/", "evil.example:47100", "", 403},
		{"no port", "/", "127.0.0.1", "", 403},
		{"web origin on socket", "/", "127.0.0.1:47100", "https://evil.example", 403},
		{"our extension", "/", "127.0.0.1:47100", "chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla", 200},
		{"other extension", "/", "127.0.0.1:47100", "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 403},
		{"firefox extension", "/", "127.0.0.1:47100", "moz-extension://1b2c3d4e-aaaa-bbbb-cccc-0123456789ab", 200},
		{"malformed firefox origin", "/", "127.0.0.1:47100", "moz-extension://x@evil.example", 403},
		{"null origin", "/", "127.0.0.1:47100", "null", 403},
		{"web origin on mcp", "/mcp", "127.0.0.1:47100", "https://evil.example", 403},
		{"extension origin on mcp", "/mcp", "127.0.0.1:47100", "chrome-extension://cahakjcjmollcmebjjnhhlhcdhipahla", 403},
		{"self origin on live", "/live-ws", "127.0.0.1:47100", "http://127.0.0.1:47100", 200},
		{"other port origin on live", "/live-ws", "127.0.0.1:47100", "http://127.0.0.1:8080", 403},
		{"web origin on live", "/live-ws", "127.0.0.1:47100", "https://evil.example", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tc.path, nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
		})
	}
}

func TestPatternsSorted(t *testing.T) {
	got := Patterns(map[string]Route{"/b": {}, "/a": {}, "GET /c": {}})
	want := []string{"/a", "/b", "GET /c"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v", got)
		}
	}
}
