package tools_test

import (
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestBrowserBatch(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:batcher", "batcher")
	tab := r.newTab(s, "/record")
	res := r.call(s, "browser_batch", map[string]any{"steps": []map[string]any{
		{"tool": "computer", "args": map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{650, 210}}},
		{"tool": "computer", "args": map[string]any{"action": "type", "tabId": tab, "text": "batched"}},
		{"tool": "computer", "args": map[string]any{"action": "screenshot", "tabId": tab}},
	}})
	if res.IsError {
		t.Fatal(text(res))
	}
	images := 0
	for _, c := range res.Content {
		if c.Type == "image" {
			images++
		}
	}
	out := text(res)
	if images != 1 || !strings.Contains(out, "step 1/3: computer ok") || !strings.Contains(out, "step 3/3: computer ok") || !strings.Contains(out, "Typed 7 characters") {
		t.Fatalf("batch result (%d images):\n%s", images, out)
	}
	var v string
	r.js(s, tab, "document.getElementById('name').value", &v)
	if v != "batched" {
		t.Fatalf("value %q", v)
	}

	t.Run("stops at the first failure", func(t *testing.T) {
		r.clearLog(s, tab)
		res := r.call(s, "browser_batch", map[string]any{"steps": []map[string]any{
			{"tool": "update_plan", "args": map[string]any{"domains": []string{"127.0.0.1"}, "approach": []string{"click"}}},
			{"tool": "computer", "args": map[string]any{"action": "left_click", "tabId": tab, "ref": "ref_424242"}},
			{"tool": "computer", "args": map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{200, 200}}},
		}})
		out := text(res)
		if !res.IsError || res.Code != wire.CodeBadParams || !strings.Contains(out, "step 2/3: computer failed") || strings.Contains(out, "step 3/3") || !strings.Contains(out, "batch stopped at step 2; 1 step(s) not run") {
			t.Fatalf("batch: code=%s\n%s", res.Code, out)
		}
		if clicks := only(r.log(s, tab), "click"); len(clicks) != 0 {
			t.Fatalf("a step after the failure ran: %+v", clicks)
		}
	})

	t.Run("limits", func(t *testing.T) {
		r.fails(s, "browser_batch", map[string]any{"steps": []map[string]any{}}, wire.CodeBadParams)
		many := make([]map[string]any, 51)
		for i := range many {
			many[i] = map[string]any{"tool": "shortcuts_list", "args": map[string]any{}}
		}
		r.fails(s, "browser_batch", map[string]any{"steps": many}, wire.CodeBadParams)
		r.fails(s, "browser_batch", map[string]any{"steps": []map[string]any{{"tool": "browser_batch", "args": map[string]any{"steps": []any{}}}}}, wire.CodeBadParams)
		res := r.call(s, "browser_batch", map[string]any{"steps": []map[string]any{{"tool": "no_such_tool"}}})
		if res.Code != wire.CodeUnknownTool || !strings.Contains(text(res), "Unknown tool: no_such_tool") {
			t.Fatalf("unknown tool in a batch: %s", text(res))
		}
	})
}
