package e2e

import (
	"regexp"
	"strings"
)

// Tasks on big pages: far below the fold, a form to fix, a long article,
// a thousand rows.
func init() {
	registerTask(agentTask{
		name: "far-below",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/far"))
			a.click(a.find("I have read the terms button", "I have read the terms"))
		},
	})
	registerTask(agentTask{
		name: "validation",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/validate"))
			a.click(a.find("Save address button", `button "Save address"`))
			// The agent fixes exactly what the form complains about, with
			// the details the page gave.
			known := map[string]any{"Full name": "Ada Lovelace", "Email": "ada@example.test", "Phone": "5551234567", "Postcode": "10115", "Country": "Germany"}
			tree := a.on("read_page", map[string]any{"filter": "interactive"}).text
			var fixed []string
			for _, line := range strings.Split(tree, "\n") {
				if !strings.Contains(line, " invalid") {
					continue
				}
				m := regexp.MustCompile(`^\w+ "([^"]+)" \[(ref_(?:f\d+_)?\d+)\]`).FindStringSubmatch(line)
				if m == nil || known[m[1]] == nil {
					a.t.Fatalf("a complaint the agent cannot place: %s", line)
				}
				a.on("form_input", map[string]any{"ref": m[2], "value": known[m[1]]})
				fixed = append(fixed, m[1])
			}
			if strings.Join(fixed, ",") != "Email,Phone,Country" {
				a.t.Fatalf("the form complained about %v:\n%s", fixed, tree)
			}
			a.click(a.find("Save address button", `button "Save address"`))
		},
	})
	registerTask(agentTask{
		name: "article",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/article"))
			text := a.on("get_page_text", nil).text
			m := regexp.MustCompile(`Elias Marrow retired as keeper in (\d{4})`).FindStringSubmatch(text)
			if m == nil {
				a.t.Fatalf("the answer is not in the page text (%d chars)", len(text))
			}
			a.on("form_input", map[string]any{"ref": a.find("answer box", "Elias Marrow retire"), "value": m[1]})
			a.click(a.find("Check button", `button "Check"`))
		},
	})
	registerTask(agentTask{
		name: "rows",
		run: func(a *taskAgent) {
			// Every row has a "Mark paid" button: the agent reads the table
			// in pieces until INV-0873's row, then takes its button.
			a.open(a.pages.URL("/task/invoices"))
			from, pieces := "", 0
			for {
				args := map[string]any{}
				if from != "" {
					args["from_ref"] = from
				}
				out := a.on("read_page", args).text
				pieces++
				if ref := buttonAfter(out, `text "INV-0873"`, `button "Mark paid"`); ref != "" {
					a.click(ref)
					break
				}
				m := regexp.MustCompile(`from_ref="(ref_\d+)"`).FindStringSubmatch(out)
				if m == nil || pieces > 20 {
					a.t.Fatalf("read %d pieces without finding INV-0873", pieces)
				}
				from = m[1]
			}
			if pieces < 2 {
				a.t.Fatalf("the thousand rows fit in one read; the task tests nothing")
			}
		},
	})
}

// buttonAfter returns the ref of the first line matching button after the
// line containing anchor.
func buttonAfter(tree, anchor, button string) string {
	lines := strings.Split(tree, "\n")
	for i, l := range lines {
		if !strings.Contains(l, anchor) {
			continue
		}
		for _, next := range lines[i+1:] {
			if strings.Contains(next, button) {
				return refRE.FindString(next)
			}
		}
	}
	return ""
}
