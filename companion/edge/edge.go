// Package edge owns the checks every HTTP request to the companion passes
// before any handler runs: the route table, Host validation against DNS
// rebinding, and refusal of web-page Origins. It is the one place those
// rules live (Tailscale's LocalAPI shape).
package edge

import (
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// OriginRule says which Origin headers a route accepts. A request without an
// Origin (a CLI, an agent, a native process) is always let through to the
// handler, which does its own authentication.
type OriginRule int

const (
	// NoWebOrigin refuses any Origin at all: the zero value, so a route
	// that names no rule admits no web page.
	NoWebOrigin OriginRule = iota
	// ExtensionOrigin accepts our browser extensions' origins only.
	ExtensionOrigin
	// SelfOrigin accepts only the companion's own origin (the live-view page).
	SelfOrigin
)

// Route is one entry of the route table.
type Route struct {
	Origins OriginRule
	Handler http.Handler
}

// Config holds what the checks need to know.
type Config struct {
	Port int
	// ExtensionIDs lists the Chromium extension ids allowed on the extension
	// socket; every moz-extension:// origin is allowed (Firefox gives each
	// installation a random UUID, so ids can't be pinned).
	ExtensionIDs func() []string
}

// Handler serves a route table behind the edge checks.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	routes map[string]Route
}

// New builds the handler. Patterns use net/http's ServeMux syntax.
func New(cfg Config, routes map[string]Route) *Handler {
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), routes: routes}
	for _, p := range Patterns(routes) {
		r := routes[p]
		h.mux.Handle(p, h.guard(r))
	}
	return h
}

// Patterns lists a route table's patterns in sorted order.
func Patterns(routes map[string]Route) []string {
	ps := make([]string, 0, len(routes))
	for p := range routes {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r.Host) {
		http.Error(w, "reins: bad Host header; the companion only answers on 127.0.0.1 or localhost", http.StatusForbidden)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) guard(route Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(route.Origins, origin, r.Host) {
			http.Error(w, "reins: requests from web pages are refused", http.StatusForbidden)
			return
		}
		route.Handler.ServeHTTP(w, r)
	})
}

// hostAllowed accepts loopback names with the companion's own port only, so
// a DNS-rebound name pointing at 127.0.0.1 is refused.
func (h *Handler) hostAllowed(host string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil || port != strconv.Itoa(h.cfg.Port) {
		return false
	}
	switch strings.ToLower(name) {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

func (h *Handler) originAllowed(rule OriginRule, origin, host string) bool {
	switch rule {
	case ExtensionOrigin:
		return h.IsExtensionOrigin(origin)
	case SelfOrigin:
		return origin == "http://"+host
	}
	return false
}

// IsExtensionOrigin reports whether origin belongs to one of our extensions.
func (h *Handler) IsExtensionOrigin(origin string) bool {
	if rest, ok := strings.CutPrefix(origin, "moz-extension://"); ok {
		return rest != "" && !strings.ContainsAny(rest, "/?#@:")
	}
	if id, ok := strings.CutPrefix(origin, "chrome-extension://"); ok && h.cfg.ExtensionIDs != nil {
		for _, allowed := range h.cfg.ExtensionIDs() {
			if id == allowed {
				return true
			}
		}
	}
	return false
}
