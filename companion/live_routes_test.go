package companion

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

// The Live view routes are in the one route table, behind the edge checks.
func TestLiveViewRoutes(t *testing.T) {
	c, err := New(Config{Port: 47999, DataDir: t.TempDir(), NoAdmin: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown(t.Context())
	do := func(target string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Host = "127.0.0.1:47999"
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, r)
		return w
	}
	if w := do("/live/3", nil); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "This link has expired") {
		t.Fatalf("page without a session: %d %q", w.Code, w.Body.String())
	}
	if w := do("/live/3?ticket=nope", nil); w.Code != http.StatusForbidden {
		t.Fatalf("page with a wrong ticket: %d", w.Code)
	}
	const sock = "/live/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/ws"
	if w := do(sock, map[string]string{"Origin": "https://evil.example"}); w.Code != http.StatusForbidden {
		t.Fatalf("socket with a web origin: %d", w.Code)
	}
	if w := do(sock, nil); w.Code != http.StatusForbidden {
		t.Fatalf("socket without an origin: %d", w.Code)
	}
	if w := do(sock, map[string]string{"Origin": "http://127.0.0.1:47999"}); w.Code != http.StatusForbidden {
		t.Fatalf("socket without a session: %d", w.Code)
	}
	if w := do("/live/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/3", nil); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "This link has expired") {
		t.Fatalf("a session page without a session: %d", w.Code)
	}
	// The old socket address, which carried the cookie of every session,
	// is gone.
	if w := do("/live-ws?tab=3", map[string]string{"Origin": "http://127.0.0.1:47999"}); w.Code != http.StatusNotFound {
		t.Fatalf("/live-ws: %d, want 404", w.Code)
	}
	if _, err := c.LiveViewURL(3); wire.CodeOf(err) != wire.CodeNoSuchTab {
		t.Fatalf("LiveViewURL of an unknown tab: %v", err)
	}
	if _, err := c.LiveViewOpenURL(3); wire.CodeOf(err) != wire.CodeNoSuchTab {
		t.Fatalf("LiveViewOpenURL of an unknown tab: %v", err)
	}
	if got := c.TakenOver(3); got != "" {
		t.Fatalf("TakenOver with no viewer = %q", got)
	}
}
