package tools_test

import "testing"

func TestSmoke(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("smoke")
	t.Log(r.ok(s, "tabs_context_mcp", map[string]any{}))
	tab := r.newTab(s, "/record")
	t.Log(r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab}))
	t.Log(r.ok(s, "read_page", map[string]any{"tabId": tab}))
	t.Log(r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{150, 150}}))
	t.Log(r.ok(s, "find", map[string]any{"tabId": tab, "query": "press me button"}))
	t.Log(r.log(s, tab))
	tab2 := r.newTab(s, "/form")
	t.Log(r.ok(s, "read_page", map[string]any{"tabId": tab2}))
	t.Log(r.ok(s, "read_page", map[string]any{"tabId": tab2, "filter": "interactive"}))
	t.Log(r.ok(s, "get_page_text", map[string]any{"tabId": tab2}))
}
