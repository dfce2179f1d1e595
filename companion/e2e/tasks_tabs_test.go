package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// openedRE reads the new tab an action's result names.
var openedRE = regexp.MustCompile(`opened a new tab: tab (\d+), (\S+)\.`)

// opened returns the tab an action's result says the page opened.
func (a *taskAgent) opened(out toolOut, path string) int {
	a.t.Helper()
	m := openedRE.FindStringSubmatch(out.text)
	if m == nil || !strings.HasSuffix(m[2], path) {
		a.t.Fatalf("the action does not name a new tab at %s: %s", path, out.text)
	}
	id, _ := strconv.Atoi(m[1])
	return id
}

// timed runs a tool on the task's tab and logs how long it took.
func (a *taskAgent) timed(what, tool string, args map[string]any) toolOut {
	a.t.Helper()
	start := time.Now()
	out := a.on(tool, args)
	a.t.Logf("%s on %s: %v", what, a.transport, time.Since(start))
	return out
}

// Tabs a page opens: a target=_blank link whose page holds the answer, and
// a tab that takes the front while the agent goes on in its opener.
func init() {
	registerTask(agentTask{
		name: "new-tab",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/return"))
			policy := a.opened(a.click(a.find("return policy link", "return policy")), "/task/returns")
			text := a.must("get_page_text", map[string]any{"tabId": policy}).text
			m := regexp.MustCompile(`within (\d+) days`).FindStringSubmatch(text)
			if m == nil {
				a.t.Fatalf("the policy tab's text: %s", text)
			}
			a.must("tab", map[string]any{"tabId": policy, "action": "close"})
			a.on("form_input", map[string]any{"ref": a.find("return window field", "Return window"), "value": m[1]})
			a.click(a.find("Submit request button", "Submit request"))
		},
	})
	registerTask(agentTask{
		name: "popup-focus",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/newsletter"))
			preview := a.opened(a.click(a.find("Open preview button", "Open preview")), "/task/newsletter-preview")
			name, weekly := a.find("name field", "Name on the newsletter"), a.find("Weekly digest checkbox", "Weekly digest")
			a.timed("form_input with the preview in front", "form_input", map[string]any{"ref": name, "value": "Ada Lovelace"})
			a.timed("click with the preview in front", "computer", map[string]any{"action": "left_click", "ref": weekly})
			out := a.timed("scroll with the preview in front", "computer", map[string]any{"action": "scroll", "scroll_direction": "down", "scroll_amount": 30})
			if !strings.Contains(out.text, "scroll position is now") {
				a.t.Fatalf("the page did not scroll: %s", out.text)
			}
			a.click(a.find("Save preferences button", "Save preferences"))
			a.must("tab", map[string]any{"tabId": preview, "action": "close"})
		},
	})
}

// History through the tab tool: back, forward and reload, judged by how
// the pages were reached.
func init() {
	registerTask(agentTask{
		name: "history",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/history-a"))
			a.on("navigate", map[string]any{"url": a.pages.URL("/task/history-b")})
			if out := a.on("tab", map[string]any{"action": "back"}); !strings.Contains(out.text, "/task/history-a") {
				a.t.Fatalf("back: %s", out.text)
			}
			if out := a.on("tab", map[string]any{"action": "forward"}); !strings.Contains(out.text, "/task/history-b") {
				a.t.Fatalf("forward: %s", out.text)
			}
			a.on("tab", map[string]any{"action": "activate"})
			a.on("tab", map[string]any{"action": "reload"})
		},
	})
}
