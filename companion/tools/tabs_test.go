package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

type tabsContext struct {
	Tabs []struct {
		TabID     int    `json:"tabId"`
		Title     string `json:"title"`
		URL       string `json:"url"`
		Browser   string `json:"browser"`
		BrowserID string `json:"browserId"`
		SharedBy  string `json:"sharedBy"`
	} `json:"tabs"`
	Group string `json:"group"`
}

func listTabs(t *testing.T, r *rig, s *tools.Session, out string) tabsContext {
	t.Helper()
	var tc tabsContext
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &tc); err != nil {
		t.Fatalf("tabs_context_mcp output is not JSON + hint: %v\n%s", err, out)
	}
	return tc
}

func TestTabsContextAndCreate(t *testing.T) {
	r := newRig(t)
	alice, bob := r.e.NewSession("agent:alice", "alice"), r.e.NewSession("agent:bob", "bob")
	if alice.GroupTitle() != "Reins · alice" {
		t.Fatal(alice.GroupTitle())
	}
	out := r.ok(alice, "tabs_create_mcp", map[string]any{"url": r.url + "/nav/a"})
	if !strings.Contains(out, `"Reins · alice"`) || !strings.Contains(out, "Title: Page A") {
		t.Fatalf("create: %s", out)
	}
	aliceTab := r.newTab(alice, "/nav/b")
	bobTab := r.newTab(bob, "/text")

	ctxA := listTabs(t, r, alice, r.ok(alice, "tabs_context_mcp", map[string]any{}))
	ctxB := listTabs(t, r, bob, r.ok(bob, "tabs_context_mcp", map[string]any{}))
	has := func(tc tabsContext, id int) (string, bool) {
		for _, tb := range tc.Tabs {
			if tb.TabID == id {
				return tb.SharedBy, true
			}
		}
		return "", false
	}
	if by, ok := has(ctxA, aliceTab); !ok || by != "you" {
		t.Fatalf("alice does not see her tab: %+v", ctxA)
	}
	if _, ok := has(ctxA, bobTab); ok {
		t.Fatalf("alice sees bob's tab: %+v", ctxA)
	}
	if _, ok := has(ctxB, aliceTab); ok {
		t.Fatalf("bob sees alice's tab: %+v", ctxB)
	}
	// The dev browser's first tab was not opened by an agent: it counts as
	// shared by hand and both agents see it.
	first := shared.hub.Tabs()[0]
	for _, tc := range []tabsContext{ctxA, ctxB} {
		if by, ok := has(tc, first.ID); !ok || by != "person" {
			t.Fatalf("hand-shared tab %d missing: %+v", first.ID, tc)
		}
	}
	for _, tb := range ctxA.Tabs {
		if tb.TabID == aliceTab && (tb.Title != "Page B" || !strings.HasSuffix(tb.URL, "/nav/b") || tb.Browser != "Chromium (dev)") {
			t.Fatalf("tab entry %+v", tb)
		}
	}

	r.fails(bob, "read_page", map[string]any{"tabId": aliceTab}, wire.CodeTabNotInSession)
	r.fails(bob, "computer", map[string]any{"action": "screenshot", "tabId": aliceTab}, wire.CodeTabNotInSession)
	r.fails(alice, "read_page", map[string]any{"tabId": 99999}, wire.CodeNoSuchTab)
	r.fails(alice, "read_page", map[string]any{}, wire.CodeBadParams)

	t.Run("createIfEmpty", func(t *testing.T) {
		// carol sees the hand-shared tab, so nothing is created for her.
		carol := r.e.NewSession("agent:carol", "carol")
		before := len(shared.hub.Tabs())
		r.ok(carol, "tabs_context_mcp", map[string]any{"createIfEmpty": true})
		if len(shared.hub.Tabs()) != before {
			t.Fatal("createIfEmpty created a tab although one was visible")
		}
	})
}
