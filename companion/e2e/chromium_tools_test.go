package e2e

import (
	"context"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// TestChromiumToolSuite runs the tool suite through the real MCP endpoint of
// real reins headless against Chromium with the real extension: the same
// suite as Firefox, on the extension relay transport.
func TestChromiumToolSuite(t *testing.T) {
	s := newStack(t)
	toolSuite(t, s.Reins, "chromium-agent")
}

var createdRE = regexp.MustCompile(`Created tab (\d+)`)

// TestAgentsOverMCPWithChromium checks the session and safety rules through
// the extension: two agents work at once in their own groups, a tab of one
// is refused to the other, browser pages are refused, and /mcp refuses
// requests without a valid token.
func TestAgentsOverMCPWithChromium(t *testing.T) {
	s := newStack(t)
	pages := startToolsServer()
	t.Cleanup(pages.srv.Close)
	alice := mcpSession(t, s.Reins, "alice")
	bob := mcpSession(t, s.Reins, "bob")

	tabs := make([]int, 2)
	var wg sync.WaitGroup
	for i, cs := range []*struct{ name string }{{"alice"}, {"bob"}} {
		session := alice
		if i == 1 {
			session = bob
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := callTool(t, session, "tabs_create_mcp", map[string]any{"url": pages.srv.URL + "/tools"})
			if m := createdRE.FindStringSubmatch(out.text); m != nil && !out.isErr {
				tabs[i], _ = strconv.Atoi(m[1])
			} else {
				t.Errorf("%s: tabs_create_mcp answered %+v", cs.name, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if tabs[0] == tabs[1] {
		t.Fatalf("both agents got tab %d", tabs[0])
	}

	out := callTool(t, bob, "javascript_tool", map[string]any{"tabId": tabs[0], "text": "document.title"})
	if !out.isErr || !strings.Contains(out.text, "tab_not_in_session") {
		t.Fatalf("bob on alice's tab: %+v", out)
	}
	out = mustTool(t, alice, "javascript_tool", map[string]any{"tabId": tabs[0], "text": "document.title"})
	if !strings.Contains(out.text, "Tools page") {
		t.Fatalf("alice on her own tab: %+v", out)
	}
	ctx := mustTool(t, alice, "tabs_context_mcp", nil)
	if !strings.Contains(ctx.text, strconv.Itoa(tabs[0])) || strings.Contains(ctx.text, `"tabId": `+strconv.Itoa(tabs[1])+",") {
		t.Fatalf("alice's context: %s", ctx.text)
	}

	out = callTool(t, alice, "navigate", map[string]any{"tabId": tabs[0], "url": "chrome://settings"})
	if !out.isErr || !strings.Contains(out.text, "restricted_url") {
		t.Fatalf("navigate to chrome://settings: %+v", out)
	}

	batch := callTool(t, alice, "browser_batch", map[string]any{"steps": []map[string]any{
		{"tool": "javascript_tool", "args": map[string]any{"tabId": tabs[0], "text": "1 + 1"}},
		{"tool": "javascript_tool", "args": map[string]any{"tabId": tabs[1], "text": "2 + 2"}},
		{"tool": "javascript_tool", "args": map[string]any{"tabId": tabs[0], "text": "3 + 3"}},
	}})
	if !batch.isErr || !strings.Contains(batch.text, "tab_not_in_session") || strings.Contains(batch.text, "\n6\n") {
		t.Fatalf("batch should stop at its second step: %+v", batch)
	}

	for _, tc := range []struct {
		name, auth string
	}{{"no token", ""}, {"wrong token", "Bearer reins_not-a-token"}} {
		req, _ := http.NewRequest(http.MethodPost, s.Reins.BaseURL()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: HTTP %d, WWW-Authenticate %q", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

// startDevReins runs reins headless with --dev-browser: a Chromium the
// companion drives over raw CDP, shown with mode dev.
func startDevReins(t testing.TB) *harness.Reins {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	path := harness.ChromiumPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no Chromium at %s (set REINS_CHROMIUM): %v", path, err)
	}
	r := startReins(ctx, t, "--dev-browser", path)
	w, err := r.Client.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	snap, err := w.Until(ctx, func(s admin.Snapshot) bool { return len(s.Browsers) > 0 })
	if err != nil {
		t.Fatalf("the dev browser never attached: %v\n%s", err, harness.Tail(r.Output(), 40))
	}
	if snap.Browsers[0].Mode != "dev" {
		t.Fatalf("browser %+v, want mode dev", snap.Browsers[0])
	}
	return r
}

// TestDevBrowserToolSuite runs the same tool suite through MCP against the
// dev transport.
func TestDevBrowserToolSuite(t *testing.T) {
	r := startDevReins(t)
	toolSuite(t, r, "dev-agent")
}
