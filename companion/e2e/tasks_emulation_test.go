package e2e

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/reinshq/reins/companion/e2e/internal/taskpages"
)

// The emulation task: the page shows its offer code only to phones in dark
// mode. The agent makes its tab one with emulate, reads the code from the
// page text and claims it; the server checks the code and what the page
// itself reported about its colour scheme and width when it was claimed.
func init() {
	var code secret
	registerTask(agentTask{
		name: "emulation",
		setup: func(pages *taskpages.Server) {
			code.renew("N-")
			pages.Handle("GET /emulation/code", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", "no-store")
				w.Write([]byte(code.get()))
			})
			pages.Handle("POST /emulation/claim", func(w http.ResponseWriter, r *http.Request) {
				width, _ := strconv.Atoi(r.FormValue("width"))
				if !code.is(r.FormValue("code")) || r.FormValue("dark") != "true" || width <= 0 || width > 600 {
					http.Error(w, "no offer for this device", http.StatusBadRequest)
					return
				}
				pages.Done("emulation", "dark, "+r.FormValue("width")+" px wide")
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(`<!doctype html><title>Claimed</title><p>Enjoy the trip.</p>`))
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/emulation"))
			if strings.Contains(a.on("get_page_text", nil).text, "Night offer code") {
				a.t.Fatal("the offer shows on a desktop in light mode")
			}
			a.on("emulate", map[string]any{"device": "iphone", "colorScheme": "dark"})
			text := a.on("get_page_text", nil).text
			m := regexp.MustCompile(`Night offer code: (N-\w+)`).FindStringSubmatch(text)
			if m == nil {
				a.t.Fatalf("no offer code in the page as a phone in dark mode:\n%s", text)
			}
			a.on("form_input", map[string]any{"ref": a.find("offer code field", "Offer code"), "value": m[1]})
			a.click(a.find("Claim button", `button "Claim"`))
			a.on("emulate", map[string]any{"reset": true})
		},
		notOn: map[string]string{"firefox": "WebExtensions cannot emulate a device or a colour scheme"},
		unsupported: func(a *taskAgent) {
			a.open(a.pages.URL("/task/emulation"))
			out := a.call("emulate", map[string]any{"tabId": a.tab, "device": "iphone", "colorScheme": "dark"})
			if !out.isErr || !strings.Contains(out.text, "[unsupported]") || !strings.Contains(out.text, "Chromium") {
				a.t.Fatalf("emulate in Firefox: %+v", out)
			}
		},
	})
}
