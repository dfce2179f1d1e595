package e2e

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/wire"
)

// offTheWeb are the places an agent tried to send the person's browser: the
// data dir's secrets.json (every token, with --keyring file), a Windows
// share (an NTLM leak) and an app scheme.
func offTheWeb(r *harness.Reins) []string {
	return []string{
		"file://" + filepath.ToSlash(filepath.Join(r.DataDir, "secrets.json")),
		"vscode://x",
		"file://fileserver/share/x.html",
	}
}

// agentStaysOnTheWeb plays the agent: on its own tab it asks navigate,
// tabs_create_mcp and a browser_batch step to open each place off the web,
// and each answer is restricted_url. It returns the agent's tab.
func agentStaysOnTheWeb(t *testing.T, r *harness.Reins, cs *mcp.ClientSession, start string) int {
	t.Helper()
	tab := openTab(t, cs, start)
	for _, u := range offTheWeb(r) {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"navigate", map[string]any{"tabId": tab, "url": u}},
			{"tabs_create_mcp", map[string]any{"url": u}},
			{"browser_batch", map[string]any{"steps": []map[string]any{{"tool": "navigate", "args": map[string]any{"tabId": tab, "url": u}}}}},
		} {
			out := callTool(t, cs, call.tool, call.args)
			if !out.isErr || !strings.Contains(out.text, "restricted_url") {
				t.Errorf("%s to %s: %+v, want restricted_url", call.tool, u, out)
			}
			if text := callTool(t, cs, "get_page_text", map[string]any{"tabId": tab}).text; strings.Contains(text, `"secrets"`) {
				t.Fatalf("after %s to %s the agent read the data dir's secrets.json: %s", call.tool, u, text)
			}
		}
	}
	return tab
}

// nativeID is the browser's own id of a public tab id.
func nativeID(t *testing.T, r *harness.Reins, tab int) int {
	t.Helper()
	tabs, err := r.Client.Tabs(within(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tabs {
		if tb.ID == tab {
			return tb.Native
		}
	}
	t.Fatalf("tab %d not among %+v", tab, tabs)
	return 0
}

// noTabOffTheWeb fails if any tab of the companion shows a place off the
// web, or the agent's page does not show where it started.
func noTabOffTheWeb(t *testing.T, r *harness.Reins, cs *mcp.ClientSession, tab int) {
	t.Helper()
	tabs, err := r.Client.Tabs(within(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tabs {
		if strings.HasPrefix(tb.URL, "file:") || strings.HasPrefix(tb.URL, "vscode:") {
			t.Errorf("tab %d reached %s", tb.ID, tb.URL)
		}
	}
	if text := mustTool(t, cs, "get_page_text", map[string]any{"tabId": tab}).text; !strings.Contains(text, "Tools page") {
		t.Errorf("the agent's tab left its page: %s", text)
	}
}

// TestAgentsStayOnTheWebWithChromium: through the real extension, an agent
// cannot open the data dir's secrets.json, a share or an app scheme, and the
// extension refuses the same when asked directly, past the companion.
func TestAgentsStayOnTheWebWithChromium(t *testing.T) {
	s := newStack(t)
	pages := startToolsServer()
	t.Cleanup(pages.srv.Close)
	cs := mcpSession(t, s.Reins, "wanderer")
	tab := agentStaysOnTheWeb(t, s.Reins, cs, pages.srv.URL+"/tools")

	ctx := within(t, 30*time.Second)
	native := nativeID(t, s.Reins, tab)
	for _, u := range offTheWeb(s.Reins) {
		// Straight to the extension: the companion's checks never see these.
		if _, err := s.Reins.Client.Request(ctx, s.Browser.ID, wire.MethodTabsCreate, map[string]any{"url": u}); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("extension tabs.create %s: %v, want restricted_url", u, err)
		}
		_, err := s.Reins.Client.Request(ctx, s.Browser.ID, wire.MethodCDP, wire.CDPParams{
			TabID: native, Method: "Page.navigate", Params: json.RawMessage(`{"url":` + strconv.Quote(u) + `}`),
		})
		if !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("extension cdp Page.navigate %s: %v, want restricted_url", u, err)
		}
		// And through the companion's own cdp path.
		if _, err := s.Reins.Client.CDP(ctx, tab, "Page.navigate", map[string]any{"url": u}); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("companion cdp Page.navigate %s: %v, want restricted_url", u, err)
		}
	}
	noTabOffTheWeb(t, s.Reins, cs, tab)
}

// TestAgentsStayOnTheWebWithTheDevBrowser: with --dev-browser the companion
// drives Chromium over raw CDP, where nothing but the companion stands
// between an agent and file:. The same places are refused, also to raw
// requests that skip the hub.
func TestAgentsStayOnTheWebWithTheDevBrowser(t *testing.T) {
	r := startDevReins(t)
	pages := startToolsServer()
	t.Cleanup(pages.srv.Close)
	cs := mcpSession(t, r, "wanderer")
	tab := agentStaysOnTheWeb(t, r, cs, pages.srv.URL+"/tools")

	ctx := within(t, 30*time.Second)
	browsers, err := r.Client.Browsers(ctx)
	if err != nil || len(browsers) == 0 {
		t.Fatalf("browsers %+v, %v", browsers, err)
	}
	native := nativeID(t, r, tab)
	for _, u := range offTheWeb(r) {
		if _, err := r.Client.Request(ctx, browsers[0].ID, wire.MethodTabsCreate, map[string]any{"url": u}); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("dev transport tabs.create %s: %v, want restricted_url", u, err)
		}
		_, err := r.Client.Request(ctx, browsers[0].ID, wire.MethodCDP, wire.CDPParams{
			TabID: native, Method: "Page.navigate", Params: json.RawMessage(`{"url":` + strconv.Quote(u) + `}`),
		})
		if !errors.Is(err, wire.ErrRestrictedURL) {
			t.Errorf("dev transport cdp Page.navigate %s: %v, want restricted_url", u, err)
		}
	}
	noTabOffTheWeb(t, r, cs, tab)
}
