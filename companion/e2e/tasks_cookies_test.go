package e2e

import (
	"net/http"
	"regexp"
	"sync/atomic"

	"github.com/reinshq/reins/companion/e2e/internal/taskpages"
)

// The cookies task: the site hands the agent a promotion code in an
// HttpOnly cookie, which no page script and no page text shows; the agent
// reads it with storage, types it in, and then sets the consent cookie the
// site asks for. The server judges both: the code typed must be the cookie's,
// and the request after must carry consent=granted.
func init() {
	var (
		code     secret
		redeemed atomic.Bool
	)
	registerTask(agentTask{
		name: "cookies",
		setup: func(pages *taskpages.Server) {
			code.renew("P-")
			redeemed.Store(false)
			pages.Handle("GET /cookies/start", func(w http.ResponseWriter, r *http.Request) {
				http.SetCookie(w, &http.Cookie{Name: "promo", Value: code.get(), Path: "/", HttpOnly: true})
				http.Redirect(w, r, "/task/cookies", http.StatusSeeOther)
			})
			pages.Handle("POST /cookies/redeem", func(w http.ResponseWriter, r *http.Request) {
				if !code.is(r.FormValue("code")) {
					http.Error(w, "that is not your promotion code", http.StatusBadRequest)
					return
				}
				redeemed.Store(true)
				http.Redirect(w, r, "/task/cookies-redeemed", http.StatusSeeOther)
			})
			pages.Handle("GET /cookies/continue", func(w http.ResponseWriter, r *http.Request) {
				consent, err := r.Cookie("consent")
				if !redeemed.Load() || err != nil || consent.Value != "granted" {
					http.Error(w, "redeem the code and set consent=granted first", http.StatusBadRequest)
					return
				}
				pages.Done("cookies", "redeemed and consent="+consent.Value)
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(`<!doctype html><title>All set</title><p>All set.</p>`))
			})
		},
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/cookies/start"))
			got := a.on("storage", map[string]any{"action": "get", "area": "cookies", "name": "promo"}).text
			m := regexp.MustCompile(`promo=([^;\s]+);`).FindStringSubmatch(got)
			if m == nil {
				a.t.Fatalf("storage shows no promo cookie:\n%s", got)
			}
			a.on("form_input", map[string]any{"ref": a.find("promotion code field", "Promotion code"), "value": m[1]})
			a.click(a.find("Redeem button", `button "Redeem"`))
			a.on("storage", map[string]any{"action": "set", "area": "cookies", "name": "consent", "value": "granted"})
			a.click(a.find("Continue button", `button "Continue"`))
		},
	})
}
