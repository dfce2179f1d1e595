package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

// Tokens is what the token routes need from the token store; the
// companion's *tokens.Manager satisfies it. Going through the running
// companion's Manager (rather than the CLI's own) is what lets /mcp refuse a
// revoked token on its very next request.
type Tokens interface {
	Issue(name string) (string, error)
	List() ([]tokens.Info, error)
	Revoke(name string) error
}

// Options is what the routes act on. A nil field makes its routes answer
// not_implemented.
type Options struct {
	Tokens Tokens
	// Status describes the running companion (port, version).
	Status func() Status
	// ShowDashboard asks the tray app to bring its dashboard forward, for a
	// second `reins` launch. Headless companions leave it nil.
	ShowDashboard func() error
	// LiveViewURL makes a one-time Live view link for a shared tab
	// (`reins live TABID`).
	LiveViewURL func(tabID int) (string, error)
	// LiveViewOpenURL makes a URL that opens a Live view of a shared tab
	// and carries no secret (`reins live --file TABID`).
	LiveViewOpenURL func(tabID int) (string, error)
	// Pairing lists, approves and denies pair offers and manages paired
	// backends (`reins pair`, `reins backends`).
	Pairing Pairing
	// Browsers lists, blocks and unblocks browser profiles
	// (`reins browsers`).
	Browsers Browsers
	// PairingCode issues the one-time code a browser without the native
	// host pairs with (`reins browsers code`).
	PairingCode func() (code string, expires time.Time)
	// Settings reads and changes the permissions behind the extensions and
	// cdp tools (`reins settings`).
	Settings Settings
	// MCP is the companion's /mcp, with its own bearer check: `reins mcp`
	// reaches it here, where only this user can connect, and so never
	// hands its token to whatever listens on the TCP port.
	MCP http.Handler
	// Pause pauses and resumes automation (`reins`' tray item, and the
	// fault tests that play it).
	Pause Pauser
	// Inspect turns on the inspection routes (inspect.go): tests,
	// benchmarks and diagnostics. Nil leaves them answering
	// not_implemented.
	Inspect *Inspect
	Logger  *slog.Logger
}

// handler answers one admin request with a JSON-encodable value or an error
// the error table maps to a code.
type handler func(r *http.Request) (any, error)

// routes is the admin channel's one route table. Adding a command is one
// entry here and, when it needs the companion, one Options field. Every
// route but /mcp answers JSON through serve.
func (h *Handler) routes() map[string]http.Handler {
	routes := map[string]http.Handler{
		"GET /v1/status": h.serve(h.status),

		"GET /v1/tokens":           with(h, h.opts.Tokens, noTokens, h.listTokens),
		"POST /v1/tokens":          with(h, h.opts.Tokens, noTokens, h.issueToken),
		"DELETE /v1/tokens/{name}": with(h, h.opts.Tokens, noTokens, h.revokeToken),

		"POST /v1/show-dashboard": h.serve(h.showDashboard),

		"GET /v1/pair":               with(h, h.opts.Pairing, noPairing, listOffers),
		"POST /v1/pair/{id}/approve": with(h, h.opts.Pairing, noPairing, approveOffer),
		"POST /v1/pair/{id}/deny":    with(h, h.opts.Pairing, noPairing, denyOffer),
		"GET /v1/backends":           with(h, h.opts.Pairing, noPairing, listBackends),
		"DELETE /v1/backends/{id}":   with(h, h.opts.Pairing, noPairing, forgetBackend),
		"POST /v1/live/{tab}":        h.serve(h.liveViewURL),

		"GET /v1/browsers":              with(h, h.opts.Browsers, noBrowsers, listBrowsers),
		"POST /v1/browsers/{id}/block":  with(h, h.opts.Browsers, noBrowsers, blockBrowser),
		"DELETE /v1/blocked/{instance}": with(h, h.opts.Browsers, noBrowsers, unblockBrowser),
		"POST /v1/browsers/code":        h.serve(h.pairingCode),

		"GET /v1/settings":                         h.serve(h.getSettings),
		"PUT /v1/settings/manage-extensions":       h.serve(h.setManageExtensions()),
		"PUT /v1/settings/developer-agents/{name}": h.serve(h.setDeveloperAgent()),

		"GET /v1/pause": with(h, h.opts.Pause, noPause, getPause),
		"PUT /v1/pause": with(h, h.opts.Pause, noPause, setPause),

		"/mcp": h.mcp(),
	}
	for p, route := range h.inspectRoutes() {
		routes[p] = route
	}
	return routes
}

// Handler is the admin channel's HTTP handler.
type Handler struct {
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	// stopping, closed by stop, ends the inspection streams so a graceful
	// shutdown does not wait on clients that never leave.
	stopping chan struct{}
	stop     func()
}

// NewHandler builds the route table over opts.
func NewHandler(opts Options) *Handler {
	h := &Handler{opts: opts, log: opts.Logger, mux: http.NewServeMux(), stopping: make(chan struct{})}
	h.stop = sync.OnceFunc(func() { close(h.stopping) })
	if h.log == nil {
		h.log = slog.Default()
	}
	for p, route := range h.routes() {
		h.mux.Handle(p, route)
	}
	return h
}

// Patterns lists the route table, sorted, for tests and documentation.
func (h *Handler) Patterns() []string {
	var ps []string
	for p := range h.routes() {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Browsers cannot open a Unix socket or a local pipe, so an Origin here
	// means something is proxying a page to us.
	if r.Header.Get("Origin") != "" {
		writeError(w, fmt.Errorf("%w: requests from web pages are refused", ErrForbidden))
		return
	}
	handler, pattern := h.mux.Handler(r)
	if pattern == "" {
		// No route: the mux's own answer (404, 405, a redirect to a clean
		// path) keeps its status and headers, with a JSON error for a body
		// like every other failure here.
		m := &missWriter{ResponseWriter: w}
		handler.ServeHTTP(m, r)
		if m.status < 400 {
			w.WriteHeader(m.status)
			return
		}
		writeRaw(w, m.status, mustJSON(errorBody{Error: fmt.Sprintf("no route %s %s on the admin channel", r.Method, r.URL.Path), Code: wire.CodeUnknownMethod}))
		return
	}
	// Through the mux, which sets the route's path values.
	h.mux.ServeHTTP(w, r)
}

// missWriter keeps the status of the mux's answer for a request no route
// matched, and drops its plain-text body.
type missWriter struct {
	http.ResponseWriter
	status int
}

func (m *missWriter) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}

func (m *missWriter) Write(p []byte) (int, error) {
	m.WriteHeader(http.StatusOK)
	return len(p), nil
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic("admin: encoding an error body: " + err.Error())
	}
	return data
}

// with serves fn with dep, the part of the companion (an Options field) its
// route acts on; a companion without one answers not_implemented, saying
// what it lacks.
func with[D any](h *Handler, dep D, lacks string, fn func(D, *http.Request) (any, error)) http.Handler {
	return h.serve(func(r *http.Request) (any, error) {
		if any(dep) == nil {
			return nil, fmt.Errorf("%w: %s", ErrNotImplemented, lacks)
		}
		return fn(dep, r)
	})
}

func (h *Handler) serve(fn handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		out, err := fn(r)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return fmt.Errorf("%w: reading the request: %w", ErrBadRequest, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return nil
}

// Status describes a running companion.
type Status struct {
	Port    int    `json:"port"`
	Version string `json:"version"`
	PID     int    `json:"pid"`
}

func (h *Handler) status(*http.Request) (any, error) {
	if h.opts.Status == nil {
		return Status{}, nil
	}
	return h.opts.Status(), nil
}

// TokenInfo is one agent token as the channel lists it: never the secret.
type TokenInfo struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

type issueRequest struct {
	Name string `json:"name"`
}

type issueResponse struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

type listResponse struct {
	Tokens []TokenInfo `json:"tokens"`
}

const noTokens = "this companion has no token store"

func (h *Handler) issueToken(ts Tokens, r *http.Request) (any, error) {
	var req issueRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	tok, err := ts.Issue(req.Name)
	if err != nil {
		return nil, err
	}
	h.log.Info("agent token issued", "agent", req.Name, "via", "admin")
	return issueResponse{Name: req.Name, Token: tok}, nil
}

func (h *Handler) listTokens(ts Tokens, _ *http.Request) (any, error) {
	infos, err := ts.List()
	if err != nil {
		return nil, err
	}
	out := listResponse{Tokens: make([]TokenInfo, 0, len(infos))}
	for _, in := range infos {
		out.Tokens = append(out.Tokens, TokenInfo{Name: in.Name, Created: in.Created})
	}
	return out, nil
}

func (h *Handler) revokeToken(ts Tokens, r *http.Request) (any, error) {
	name := r.PathValue("name")
	if err := ts.Revoke(name); err != nil {
		return nil, err
	}
	h.log.Info("agent token revoked", "agent", name, "via", "admin")
	return struct{}{}, nil
}

// mcp is the companion's /mcp, or not_implemented without one.
func (h *Handler) mcp() http.Handler {
	if h.opts.MCP != nil {
		return h.opts.MCP
	}
	return h.serve(func(*http.Request) (any, error) {
		return nil, fmt.Errorf("%w: this companion serves no agents", ErrNotImplemented)
	})
}

// PairingCode is the answer of POST /v1/browsers/code.
type PairingCode struct {
	Code    string    `json:"code"`
	Expires time.Time `json:"expires"`
}

func (h *Handler) pairingCode(*http.Request) (any, error) {
	if h.opts.PairingCode == nil {
		return nil, fmt.Errorf("%w: this companion pairs no browsers by code", ErrNotImplemented)
	}
	code, exp := h.opts.PairingCode()
	// The code is a secret until used: the companion logs its issue, never
	// the code.
	return PairingCode{Code: code, Expires: exp}, nil
}

func (h *Handler) showDashboard(*http.Request) (any, error) {
	if h.opts.ShowDashboard == nil {
		return nil, fmt.Errorf("%w: this companion runs headless and has no dashboard", ErrNotImplemented)
	}
	return struct{}{}, h.opts.ShowDashboard()
}

// LiveView is the answer of POST /v1/live/{tab}.
type LiveView struct {
	URL string `json:"url"`
}

// LiveViewAsFile is the query (?as=file) that asks POST /v1/live/{tab} for
// LiveViewOpenURL's URL instead of the link.
const LiveViewAsFile = "file"

func (h *Handler) liveViewURL(r *http.Request) (any, error) {
	mk := h.opts.LiveViewURL
	switch as := r.URL.Query().Get("as"); as {
	case "":
	case LiveViewAsFile:
		mk = h.opts.LiveViewOpenURL
	default:
		return nil, fmt.Errorf("%w: unknown live view form %q", ErrBadRequest, as)
	}
	if mk == nil {
		return nil, fmt.Errorf("%w: this companion has no live view", ErrNotImplemented)
	}
	tab, err := strconv.Atoi(r.PathValue("tab"))
	if err != nil || tab <= 0 {
		return nil, fmt.Errorf("%w: tab id %q is not a positive number", ErrBadRequest, r.PathValue("tab"))
	}
	u, err := mk(tab)
	if err != nil {
		// An unknown or unshared tab: the request names what cannot be viewed.
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	// The URL carries a one-time ticket: log the tab, never the link.
	h.log.Info("live view link made", "tab", tab, "via", "admin")
	return LiveView{URL: u}, nil
}
