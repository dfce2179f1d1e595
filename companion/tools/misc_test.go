package tools_test

import (
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestMiscTools(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:planner", "planner")
	out := r.ok(s, "update_plan", map[string]any{"domains": []string{"example.com", "docs.example.com"}, "approach": []string{"open the docs", "find the API page"}})
	if !strings.Contains(out, "- example.com") || !strings.Contains(out, "2. find the API page") {
		t.Fatal(out)
	}
	r.fails(s, "update_plan", map[string]any{"domains": []string{"x"}}, wire.CodeBadParams)

	out = r.ok(s, "switch_browser", map[string]any{})
	if !strings.Contains(out, "* "+shared.hb.ID+": Chromium (dev)") || !strings.Contains(out, "dev browser launched by Reins") {
		t.Fatal(out)
	}
	out = r.ok(s, "switch_browser", map[string]any{"browserId": shared.hb.ID})
	if !strings.Contains(out, "New tabs now open in "+shared.hb.ID) || s.BrowserID() != shared.hb.ID {
		t.Fatal(out)
	}
	r.fails(s, "switch_browser", map[string]any{"browserId": "b999"}, wire.CodeNoSuchBrowser)

	for _, name := range []string{"gif_creator", "shortcuts_list", "shortcuts_execute"} {
		if out := r.ok(s, name, map[string]any{}); !strings.Contains(out, "Reins") {
			t.Errorf("%s: %s", name, out)
		}
	}
	res := r.call(s, "frobnicate", map[string]any{})
	if !res.IsError || res.Code != wire.CodeUnknownTool || text(res) != "[unknown_tool] Unknown tool: frobnicate" {
		t.Fatalf("unknown tool: %+v", res)
	}
}
