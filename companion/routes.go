package companion

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/reinshq/reins/companion/edge"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/wire"
)

// routes is the companion's one route table. Every route passes the edge
// checks (Host, Origin) before its handler runs.
func (c *Companion) routes() map[string]edge.Route {
	return map[string]edge.Route{
		// The extension socket and the health text share "/".
		"/{$}": {Origins: edge.ExtensionOrigin, Handler: http.HandlerFunc(c.serveRoot)},
		// Agents; the handler checks the bearer token. SelfOrigin, not
		// NoWebOrigin: the MCP DNS-rebinding conformance check (and any
		// client in a page the companion serves) sends Origin
		// http://127.0.0.1:PORT, and once the edge has validated Host no
		// other page can claim that origin.
		"/mcp": {Origins: edge.SelfOrigin, Handler: c.mcp},
		// Live view: the link (a one-time ticket, which starts a session),
		// and the session's page and socket under the session's secret
		// path (its cookie, and an Origin that must be the companion's own).
		"GET /live/{tab}":             {Origins: edge.SelfOrigin, Handler: http.HandlerFunc(c.live.ServeLink)},
		"GET /live/s/{session}/{tab}": {Origins: edge.SelfOrigin, Handler: http.HandlerFunc(c.live.ServePage)},
		"GET /live/s/{session}/ws":    {Origins: edge.SelfOrigin, Handler: http.HandlerFunc(c.live.ServeSocket)},
		// The Browser Operator pairing example, for a product's developers:
		// a page the person navigates to, which a navigation sends without
		// an Origin; no other page may fetch it.
		"GET /pair": {Origins: edge.NoWebOrigin, Handler: pairing.PageHandler()},
	}
}

func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func (c *Companion) serveRoot(w http.ResponseWriter, r *http.Request) {
	if isWebSocketUpgrade(r) {
		c.hub.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Reins-Version", c.cfg.Version)
	w.Header().Set("X-Reins-Protocol", "3")
	w.Header().Set("Cache-Control", "no-store")
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"name":     wire.HealthText,
			"product":  "Reins",
			"version":  c.cfg.Version,
			"protocol": wire.ProtocolVersion,
		})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte(wire.HealthText))
}
