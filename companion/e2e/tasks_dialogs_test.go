package e2e

import "strings"

// Dialogs: a confirm to dismiss, a confirm to accept and a prompt to
// answer. The page judges by what is left on it.
func init() {
	registerTask(agentTask{
		name:  "dialogs",
		notOn: map[string]string{"firefox": "WebExtensions can neither see nor answer a page's dialogs"},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/dialogs"))
			out := a.click(a.find("Delete Q4 plan button", "Delete Q4 plan"))
			if !strings.Contains(out.text, `confirm dialog "Delete the draft \"Q4 plan\"? This cannot be undone."`) {
				a.t.Fatalf("the click does not say a confirm waits: %s", out.text)
			}
			a.on("dialog", map[string]any{"action": "dismiss"})
			a.click(a.find("Delete Q3 plan button", "Delete Q3 plan"))
			a.on("dialog", map[string]any{"action": "accept"})
			out = a.click(a.find("Rename project button", "Rename project"))
			if !strings.Contains(out.text, `prompt dialog "New project name:"`) {
				a.t.Fatalf("the click does not say a prompt waits: %s", out.text)
			}
			a.on("dialog", map[string]any{"action": "accept", "promptText": "Apollo"})
		},
		unsupported: func(a *taskAgent) {
			a.open(a.pages.URL("/task/dialogs"))
			out := a.call("dialog", map[string]any{"tabId": a.tab, "action": "accept"})
			if !out.isErr || !strings.Contains(out.text, "[unsupported]") || !strings.Contains(out.text, "Firefox") {
				a.t.Fatalf("the dialog tool in Firefox: %+v", out)
			}
		},
	})
}
