package live

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
)

//go:embed page/live.html
var livePageHTML string

//go:embed page/expired.html
var expiredPageHTML string

//go:embed page/live.css
var liveCSS string

//go:embed page/live.js
var liveJS string

// The page is one response with its script and style inlined, so the CSP
// can allow exactly those bytes by hash and nothing else: no external
// resource, no inline event handler, no eval.
var (
	livePage    []byte
	expiredPage []byte
	liveCSP     string
	expiredCSP  string
)

func init() {
	livePage = []byte(strings.NewReplacer("{{STYLE}}", liveCSS, "{{SCRIPT}}", liveJS).Replace(livePageHTML))
	expiredPage = []byte(strings.NewReplacer("{{STYLE}}", liveCSS).Replace(expiredPageHTML))
	liveCSP = "default-src 'none'; script-src " + hashSource(liveJS) + "; style-src " + hashSource(liveCSS) +
		"; connect-src 'self' ws://{{HOST}}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	expiredCSP = "default-src 'none'; style-src " + hashSource(liveCSS) + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func pageHeaders(w http.ResponseWriter, csp string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("Cache-Control", "no-store")
	// The ticket must not leak through a Referer, and nothing may frame the
	// page (a framed canvas with Take over on is a clickjacking target).
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// parseTab reads a positive decimal tab id.
func parseTab(s string) (int, bool) {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// ServePage answers GET /live/{tab}. With a valid ticket it consumes it,
// sets the session cookies and redirects to the same path without the
// ticket, so the ticket is not left in the history or the address bar. With
// a session valid for the tab it serves the page. Anything else is the
// expired-link page with 403.
func (s *Server) ServePage(w http.ResponseWriter, r *http.Request) {
	tab, ok := parseTab(r.PathValue("tab"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	if t := r.URL.Query().Get("ticket"); t != "" {
		if !s.auth.redeem(tab, t) {
			s.log.Info("live view link refused: ticket unknown, used or expired", "tab", tab)
			s.expired(w)
			return
		}
		value, err := s.auth.grant(tab, cookieValues(r))
		if err != nil {
			s.log.Error("live view session not created", "tab", tab, "err", err)
			http.Error(w, "reins: could not start a live view session", http.StatusInternalServerError)
			return
		}
		for _, c := range sessionCookies(value) {
			http.SetCookie(w, c)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		s.log.Info("live view link opened", "tab", tab)
		http.Redirect(w, r, "/live/"+strconv.Itoa(tab), http.StatusSeeOther)
		return
	}
	if !s.auth.allowed(tab, cookieValues(r)) {
		s.expired(w)
		return
	}
	pageHeaders(w, strings.ReplaceAll(liveCSP, "{{HOST}}", r.Host))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(livePage)
	}
}

func (s *Server) expired(w http.ResponseWriter) {
	pageHeaders(w, expiredCSP)
	w.WriteHeader(http.StatusForbidden)
	w.Write(expiredPage)
}

// expiredText is what the expired page says; tests look for it.
const expiredText = "This link has expired"
