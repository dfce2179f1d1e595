package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/reinshq/reins/companion/e2e/internal/taskpages"
)

// The order task: the page fetches its order as JSON and shows only part
// of it; the confirmation number support asks for is in the response body
// alone. The agent reads the body with devtools and types the number in;
// the server checks it.
func init() {
	var confirmation secret
	registerTask(agentTask{
		name: "order",
		setup: func(pages *taskpages.Server) {
			confirmation.renew("C")
			pages.Handle("GET /api/order", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", "no-store")
				json.NewEncoder(w).Encode(map[string]any{"orderId": "A-1041", "items": 3, "confirmation": confirmation.get()})
			})
			pages.Handle("POST /order/confirm", func(w http.ResponseWriter, r *http.Request) {
				if !confirmation.is(r.FormValue("confirmation")) {
					http.Error(w, "that is not the confirmation number", http.StatusBadRequest)
					return
				}
				pages.Done("order", "confirmation matched")
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(`<!doctype html><title>Confirmed</title><p>Thank you.</p>`))
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/order"))
			// The page fetched its order while loading; wait_response hands
			// over the response that load caused, finished or not.
			body := a.on("devtools", map[string]any{"action": "wait_response", "pattern": "/api/order"}).text
			m := regexp.MustCompile(`"confirmation":"(\w+)"`).FindStringSubmatch(body)
			if m == nil {
				a.t.Fatalf("no confirmation in the response:\n%s", body)
			}
			a.on("form_input", map[string]any{"ref": a.find("confirmation number field", "Confirmation number"), "value": m[1]})
			a.click(a.find("Confirm button", `button "Confirm"`))
		},
		notOn: map[string]string{"firefox": "Firefox gives extensions no response bodies"},
		unsupported: func(a *taskAgent) {
			a.open(a.pages.URL("/task/order"))
			out := a.on("devtools", map[string]any{"action": "wait_response", "pattern": "/api/order"}).text
			if !strings.Contains(out, "/api/order → 200") || !strings.Contains(out, "[unsupported] not available in Firefox") || strings.Contains(out, `"confirmation"`) {
				a.t.Fatalf("Firefox's answer for a response body:\n%s", out)
			}
		},
	})
}
