package e2e

// Tasks on pages whose controls sit in frames and shadow roots.
func init() {
	registerTask(agentTask{
		name: "iframe-form",
		run: func(a *taskAgent) {
			// The payment form is a same-origin frame of the checkout page.
			a.open(a.pages.URL("/task/checkout"))
			a.on("form_input", map[string]any{"ref": a.find("Cardholder name", "Cardholder name"), "value": "Ada Lovelace"})
			a.on("form_input", map[string]any{"ref": a.find("Card number", "Card number"), "value": "4242 4242 4242 4242"})
			a.on("form_input", map[string]any{"ref": a.find("Expiry", "Expiry"), "value": "12/30"})
			a.click(a.find("Pay button", `button "Pay`))
		},
	})
	registerTask(agentTask{
		name: "cross-origin-frames",
		run: func(a *taskAgent) {
			// Two widgets of other origins: the cookie notice of another
			// port, the newsletter of another site (out of process in
			// Chromium).
			a.open(a.pages.URL("/task/widgets?consent=" + a.pages.OtherOrigin() + "&news=" + a.pages.CrossSiteOrigin()))
			a.click(a.find("Accept cookies button", "Accept cookies"))
			a.on("form_input", map[string]any{"ref": a.find("Your email", "Your email"), "value": "ada@example.test"})
			a.click(a.find("Subscribe button", `button "Subscribe"`))
		},
	})
	registerTask(agentTask{
		name: "shadow-form",
		run: func(a *taskAgent) {
			a.open(a.pages.URL("/task/shadow"))
			a.on("form_input", map[string]any{"ref": a.find("Work email", "Work email"), "value": "grace@example.test"})
			a.on("form_input", map[string]any{"ref": a.find("Plan select", "Plan"), "value": "Team"})
			a.on("form_input", map[string]any{"ref": a.find("accept the terms checkbox", "accept the terms"), "value": true})
			a.click(a.find("Request access button", `button "Request access"`))
		},
	})
}
