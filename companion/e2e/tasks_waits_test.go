package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/reinshq/reins/companion/e2e/internal/taskpages"
)

// Waits: content that comes later, a slow server, a single-page app's
// route change and an infinite list, each waited for with wait_for
// instead of sleeping.

var ticketRE = regexp.MustCompile(`ticket number is (T-\d+)`)

func init() {
	registerTask(agentTask{
		name: "delayed",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/delayed"))
			a.click(a.find("Create ticket button", `button "Create ticket"`))
			a.on("wait_for", map[string]any{"text": "Your ticket number is", "timeout": 10})
			m := ticketRE.FindStringSubmatch(a.on("get_page_text", nil).text)
			if m == nil {
				a.t.Fatal("wait_for returned but the page shows no ticket number")
			}
			a.on("form_input", map[string]any{"ref": a.find("Ticket number field", "Ticket number"), "value": m[1]})
			a.click(a.find("Confirm button", `button "Confirm"`))
		},
	})
	registerTask(agentTask{
		name: "slownav",
		setup: func(pages *taskpages.Server) {
			pages.Handle("GET /task-slow/checkout", func(w http.ResponseWriter, r *http.Request) {
				// A slow shop: the checkout takes its time to answer.
				select {
				case <-time.After(1500 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, `<!doctype html><title>Checkout</title><h1>Checkout</h1><form action="/task-slow/confirm" method="post"><button>Confirm order</button></form>`)
			})
			pages.Handle("POST /task-slow/confirm", func(w http.ResponseWriter, r *http.Request) {
				pages.Done("slownav", r.Referer())
				fmt.Fprint(w, `<!doctype html><title>Thanks</title><p>Order placed.</p>`)
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/slow"))
			a.click(a.find("Continue to checkout link", "Continue to checkout"))
			a.on("wait_for", map[string]any{"url": "*/task-slow/checkout", "timeout": 15})
			a.on("wait_for", map[string]any{"text": "Confirm order", "timeout": 15})
			// A click that posts a form returns with the page it led to
			// (in Firefox it once waited for the request timeout first).
			out := a.click(a.find("Confirm order button", `button "Confirm order"`))
			if !strings.Contains(out.text, "The page navigated to") || !strings.Contains(out.text, `"Thanks"`) {
				a.t.Errorf("the click that posted the form answered %s", out.text)
			}
		},
	})
	registerTask(agentTask{
		name: "spa",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/spa"))
			a.on("wait_for", map[string]any{"text": "No orders yet"})
			a.click(a.find("Settings link", `link "Settings"`))
			a.on("wait_for", map[string]any{"url": "view=settings"})
			a.on("wait_for", map[string]any{"selector": "#name", "state": "visible"})
			a.on("form_input", map[string]any{"ref": a.find("Display name field", "Display name"), "value": "Ada L."})
			a.click(a.find("Save settings button", `button "Save settings"`))
		},
	})
	registerTask(agentTask{
		name: "feed",
		setup: func(pages *taskpages.Server) {
			pages.Handle("GET /task-feed", func(w http.ResponseWriter, r *http.Request) {
				page, _ := strconv.Atoi(r.URL.Query().Get("page"))
				type item struct {
					Name   string `json:"name"`
					Target bool   `json:"target"`
				}
				items := []item{}
				for i := page * 10; i < page*10+10 && i < 80; i++ {
					name := fmt.Sprintf("Item %d: a grey chair", i+1)
					if i == 56 {
						name = "Item 57: the blue reading lamp"
					}
					items = append(items, item{Name: name, Target: i == 56})
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(items)
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/feed"))
			for range 20 {
				a.on("wait_for", map[string]any{"networkIdle": true})
				out := a.call("find", map[string]any{"tabId": a.tab, "query": "Buy the blue reading lamp"})
				if !out.isErr && strings.Contains(out.text, `button "Buy Item 57`) {
					a.click(refFor(a.t, out.text, `button "Buy Item 57`))
					return
				}
				a.on("computer", map[string]any{"action": "scroll", "coordinate": []int{400, 300}, "scroll_direction": "down", "scroll_amount": 10})
			}
			a.t.Fatal("the blue reading lamp never loaded")
		},
	})
}
