package live

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html"
	"net/http"
	"strconv"
	"strings"
)

//go:embed page/live.html
var livePageHTML string

//go:embed page/expired.html
var expiredPageHTML string

//go:embed page/open.html
var openPageHTML string

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
	openPage    string // {{URL}} is the session's page
	liveCSP     string
	expiredCSP  string
	openCSP     string
)

func init() {
	livePage = []byte(strings.NewReplacer("{{STYLE}}", liveCSS, "{{SCRIPT}}", liveJS).Replace(livePageHTML))
	expiredPage = []byte(strings.NewReplacer("{{STYLE}}", liveCSS).Replace(expiredPageHTML))
	liveCSP = "default-src 'none'; script-src " + hashSource(liveJS) + "; style-src " + hashSource(liveCSS) +
		"; connect-src 'self' ws://{{HOST}}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	expiredCSP = "default-src 'none'; style-src " + hashSource(liveCSS) + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	openPage = strings.NewReplacer("{{STYLE}}", liveCSS).Replace(openPageHTML)
	openCSP = expiredCSP
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

// ServeLink answers GET /live/{tab}?ticket=…, the link the tray and `reins
// live` hand out. A valid ticket is consumed and always turns into a new
// session, whatever cookies the request brings; the answer sets the
// session's cookie and sends the browser on to the session's page, so the
// ticket is not left in the address bar. Anything else is the expired-link
// page with 403.
//
// The answer is a page that moves on by itself (a meta refresh) rather
// than an HTTP redirect: a link opened from a file:// page (OpenURL) starts
// a cross-site navigation, and a browser keeps treating its redirects as
// cross-site, so it would not send the SameSite=Strict cookie to the
// session's page. The page's own navigation is same-site.
func (s *Server) ServeLink(w http.ResponseWriter, r *http.Request) {
	tab, ok := parseTab(r.PathValue("tab"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	t := r.URL.Query().Get("ticket")
	if t == "" || !s.auth.redeem(tab, t) {
		if t != "" {
			s.log.Info("live view link refused: ticket unknown, used or expired", "tab", tab)
		}
		s.expired(w)
		return
	}
	path, cookie, err := s.auth.newSession(tab)
	if err != nil {
		s.log.Error("live view session not created", "tab", tab, "err", err)
		http.Error(w, "reins: could not start a live view session", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, sessionCookie(path, cookie))
	s.log.Info("live view link opened", "tab", tab)
	next := sessionPrefix + path + "/" + strconv.Itoa(tab)
	pageHeaders(w, openCSP)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write([]byte(strings.ReplaceAll(openPage, "{{URL}}", html.EscapeString(next))))
	}
}

// ServePage answers GET /live/s/{session}/{tab}: the Live view page, for a
// browser that holds the session's cookie on the session's path. Anything
// else is the expired-link page with 403.
func (s *Server) ServePage(w http.ResponseWriter, r *http.Request) {
	tab, ok := parseTab(r.PathValue("tab"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	if got, ok := s.auth.session(r.PathValue("session"), cookieValues(r)); !ok || got != tab {
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
