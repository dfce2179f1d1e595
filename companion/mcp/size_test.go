package mcp_test

import (
	"encoding/json"
	"testing"
)

// maxToolsListChars bounds what tools/list costs every agent in its
// context: the whole catalog, Browser Operator tools and Reins' own, as an
// agent receives it. Below Playwright MCP's 20.3k.
const maxToolsListChars = 20_000

// TestToolsListSize measures the real engine's tools/list as an agent
// receives it, prints the size, and fails above maxToolsListChars.
func TestToolsListSize(t *testing.T) {
	e := newEnvWith(t, nil)
	cs := e.connect(t, e.issue(t, "claude"))
	res, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	total := len([]rune(string(raw)))
	t.Logf("tools/list: %d tools, %d characters (limit %d)", len(res.Tools), total, maxToolsListChars)
	for _, tl := range res.Tools {
		one, _ := json.Marshal(tl)
		t.Logf("  %-24s %5d", tl.Name, len([]rune(string(one))))
	}
	if len(res.Tools) < 19 {
		t.Fatalf("only %d tools listed; is the real engine behind /mcp?", len(res.Tools))
	}
	if total > maxToolsListChars {
		t.Fatalf("tools/list is %d characters, over the %d limit: shorten descriptions or group actions", total, maxToolsListChars)
	}
}
