package e2e

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/admin"
)

// agentTabs is what tabs_context_mcp lists to an agent: tab id → entry.
func agentTabs(t *testing.T, cs *mcp.ClientSession) map[int]struct{ URL, SharedBy string } {
	t.Helper()
	out := mustTool(t, cs, "tabs_context_mcp", nil).text
	var tc struct {
		Tabs []struct {
			TabID    int    `json:"tabId"`
			URL      string `json:"url"`
			SharedBy string `json:"sharedBy"`
		} `json:"tabs"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &tc); err != nil {
		t.Fatalf("tabs_context_mcp: %v\n%s", err, out)
	}
	seen := map[int]struct{ URL, SharedBy string }{}
	for _, e := range tc.Tabs {
		seen[e.TabID] = struct{ URL, SharedBy string }{e.URL, e.SharedBy}
	}
	return seen
}

// H-3 with the real extension in real Chromium: agent A's tab stays A's
// when the extension's connection drops and comes back, and when the
// companion restarts on the same data dir and port. B, another agent,
// never sees or drives it; A still can.
func TestAgentTabsStayTheirsAcrossReconnectAndRestart(t *testing.T) {
	s := newStack(t)
	pages := startToolsServer()
	t.Cleanup(pages.srv.Close)
	aliceTok, bobTok := issueToken(t, s.Reins, "alice"), issueToken(t, s.Reins, "bob")
	alice, bob := mcpConnect(t, s.Reins, "alice", aliceTok), mcpConnect(t, s.Reins, "bob", bobTok)

	created := mustTool(t, alice, "tabs_create_mcp", map[string]any{"url": pages.srv.URL + "/tools"})
	m := regexp.MustCompile(`Created tab (\d+)`).FindStringSubmatch(created.text)
	if m == nil {
		t.Fatalf("tabs_create_mcp: %s", created.text)
	}
	tab, _ := strconv.Atoi(m[1])

	// check plays B against the tab, then makes sure A still has it.
	check := func(t *testing.T, alice, bob *mcp.ClientSession, tab int) {
		t.Helper()
		if e, ok := agentTabs(t, bob)[tab]; ok {
			t.Fatalf("bob sees alice's tab %d as %q", tab, e.SharedBy)
		}
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"javascript_tool", map[string]any{"tabId": tab, "text": "document.title"}},
			{"navigate", map[string]any{"tabId": tab, "url": pages.srv.URL + "/other"}},
			{"computer", map[string]any{"action": "screenshot", "tabId": tab}},
		} {
			if out := callTool(t, bob, call.tool, call.args); !out.isErr || !strings.Contains(out.text, "tab_not_in_session") {
				t.Fatalf("bob's %s on alice's tab %d: %+v", call.tool, tab, out)
			}
		}
		if e := agentTabs(t, alice)[tab]; e.SharedBy != "you" || !strings.HasSuffix(e.URL, "/tools") {
			t.Fatalf("alice's tab %d is listed to her as %+v", tab, e)
		}
		if title := mustTool(t, alice, "javascript_tool", map[string]any{"tabId": tab, "text": "document.title"}).text; !strings.Contains(title, "Tools page") {
			t.Fatalf("alice on her own tab: %s", title)
		}
	}
	check(t, alice, bob, tab)

	t.Run("the extension reconnects", func(t *testing.T) {
		ctx := within(t, setupTimeout)
		first := s.Browser
		// The options page's Save: the extension closes its socket and
		// opens a new one, with the same instance and session ids.
		if err := s.Chrome.UseCompanionPort(ctx, s.Reins.Port); err != nil {
			t.Fatal(err)
		}
		snap, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool {
			return len(snap.Browsers) == 1 && snap.Browsers[0].Since.After(first.Since)
		})
		if err != nil {
			t.Fatalf("the extension never came back: %v", err)
		}
		if b := snap.Browsers[0]; b.ID != first.ID || b.Hello.InstanceID != first.Hello.InstanceID || b.Hello.BrowserSessionID != first.Hello.BrowserSessionID {
			t.Fatalf("came back as %+v, was %+v", b, first)
		}
		check(t, alice, bob, tab)
	})

	t.Run("the companion restarts", func(t *testing.T) {
		ctx := within(t, setupTimeout)
		if err := s.Reins.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := s.Reins.Client.Watch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		// The extension retries on its own; its tabs come back with their
		// owners, under new public ids.
		var id int
		_, err = w.Until(ctx, func(snap admin.Snapshot) bool {
			for _, tb := range snap.Tabs {
				if strings.HasSuffix(tb.URL, "/tools") && tb.Shared {
					id = tb.ID
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatalf("the extension and alice's tab never came back: %v", err)
		}
		alice, bob := mcpConnect(t, s.Reins, "alice", aliceTok), mcpConnect(t, s.Reins, "bob", bobTok)
		check(t, alice, bob, id)
	})
}
