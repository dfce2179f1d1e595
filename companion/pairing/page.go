package pairing

import (
	_ "embed"
	"net/http"
)

//go:embed page.html
var page []byte

// PageHandler serves /pair: a documented example of the postMessage calls a
// hosted product's page makes, which also tries them against the installed
// extension.
func PageHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Write(page)
	})
}
