// Package inspect serves the hub's Go API as JSON over a local Unix socket,
// for end-to-end tests and diagnostics, and holds the Go client of that API.
// It is never mounted on the browser-reachable port: only processes of the
// same user that can open the socket in the data dir reach it.
//
// Routes (one table, see routes):
//
//	GET  /browsers       connected browsers (hub.Browsers)
//	GET  /tabs           every tab with public ids (hub.Tabs)
//	GET  /changes        NDJSON: a {browsers, tabs} snapshot now and after every change signal
//	GET  /events?tab=N   NDJSON: the tab's events (hub.SubscribeTab) until the client leaves
//	POST /request        {browserId, method, params} → the raw result of one wire request
//	POST /cdp            {tabId, method, params, sessionId} → hub.CDP
//	POST /tabs/create    {browserId, url, active, group, owner} → the new tab
//	POST /tabs/close     {tabId} → {}
//
// A failure is a non-2xx answer with the body {error, code}, code being the
// wire error code.
package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// ChangeFunc subscribes to state changes: the channel receives a coalesced
// signal on every change (and one at once), and is closed when the source
// shuts down; cancel ends the subscription. Companion.Changes is one.
type ChangeFunc func() (<-chan struct{}, func())

// Option configures Handler and Serve.
type Option func(*options)

type options struct {
	changes ChangeFunc
	log     *slog.Logger
	queue   int
	// stopping, when closed, ends every stream so a graceful shutdown does
	// not wait on clients that never leave.
	stopping <-chan struct{}
}

// WithChanges gives /changes its source of change signals. Without it
// /changes answers 501: the hub alone offers no change subscription, and
// polling would hide the missing hookup.
func WithChanges(f ChangeFunc) Option { return func(o *options) { o.changes = f } }

// WithLogger sets the logger (default: slog.Default).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// StreamQueue is the default bound on the events waiting for one /events
// client. A client that falls this far behind is cut off instead of
// stalling the hub's reader.
const StreamQueue = 1024

// WithStreamQueue sets the bound of each /events backlog (default
// StreamQueue). A smaller bound cuts slow clients off sooner.
func WithStreamQueue(n int) Option { return func(o *options) { o.queue = n } }

type server struct {
	hub  *hub.Hub
	opts options
	mux  *http.ServeMux
}

// routes is the inspection API's one route table.
func (s *server) routes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"GET /browsers":     s.browsers,
		"GET /changes":      s.changes,
		"GET /events":       s.events,
		"GET /tabs":         s.tabs,
		"POST /cdp":         s.cdp,
		"POST /request":     s.request,
		"POST /tabs/close":  s.closeTab,
		"POST /tabs/create": s.createTab,
	}
}

// Handler returns the inspection API for h.
func Handler(h *hub.Hub, opts ...Option) http.Handler {
	s := &server{hub: h, mux: http.NewServeMux()}
	for _, o := range opts {
		o(&s.opts)
	}
	if s.opts.log == nil {
		s.opts.log = slog.Default()
	}
	if s.opts.queue <= 0 {
		s.opts.queue = StreamQueue
	}
	for pattern, fn := range s.routes() {
		s.mux.HandleFunc(pattern, fn)
	}
	return s
}

// ServeHTTP holds the edge checks of this listener. A Unix socket is out of
// a web page's reach, but a request carrying an Origin came through some
// browser-driven proxy and is refused all the same.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" {
		writeError(w, wire.Errorf(wire.CodeUnauthorized, "requests from web pages are refused"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Serve listens on the Unix socket at path (mode 0600) until ctx ends. Then
// it stops accepting, ends the streams and waits (up to 10 s) for requests in
// flight, so a request failed by the hub's own shutdown still gets its error
// written back before Serve returns.
func Serve(ctx context.Context, path string, h *hub.Hub, log *slog.Logger, opts ...Option) error {
	os.Remove(path)
	ln, err := listenPrivate(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	stopping := make(chan struct{})
	opts = append(opts, WithLogger(log), func(o *options) { o.stopping = stopping })
	srv := &http.Server{Handler: Handler(h, opts...), ReadHeaderTimeout: 10 * time.Second}
	shut := make(chan error, 1)
	go func() {
		<-ctx.Done()
		close(stopping)
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-shut
}

// listenPrivate narrows the socket to its owner. The window before the chmod
// is harmless when the socket sits in the 0700 data dir, as reins puts it.
func listenPrivate(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// errorBody is every failure's body.
type errorBody struct {
	Error string    `json:"error"`
	Code  wire.Code `json:"code"`
}

// statusOf maps wire codes to HTTP statuses, for humans with curl; clients
// go by the code in the body.
var statusOf = map[wire.Code]int{
	wire.CodeBadParams:       http.StatusBadRequest,
	wire.CodeUnknownMethod:   http.StatusBadRequest,
	wire.CodeUnknownTool:     http.StatusBadRequest,
	wire.CodeNoSuchTab:       http.StatusNotFound,
	wire.CodeNoSuchBrowser:   http.StatusNotFound,
	wire.CodeNoSuchSession:   http.StatusNotFound,
	wire.CodeNotShared:       http.StatusForbidden,
	wire.CodeRestrictedURL:   http.StatusForbidden,
	wire.CodeBlockedURL:      http.StatusForbidden,
	wire.CodeUnauthorized:    http.StatusForbidden,
	wire.CodePaused:          http.StatusForbidden,
	wire.CodeTabNotInSession: http.StatusForbidden,
	wire.CodeTimeout:         http.StatusGatewayTimeout,
}

func writeError(w http.ResponseWriter, err error) {
	code := wire.CodeOf(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusBadGateway
	}
	writeJSON(w, status, errorBody{Error: err.Error(), Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed","code":"internal"}`)
	}
	writeRaw(w, status, data)
}

func writeRaw(w http.ResponseWriter, status int, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
	w.Write([]byte{'\n'})
}

// decode reads a JSON request body into v, capped at the wire frame limit.
func decode(r *http.Request, v any) error {
	body := http.MaxBytesReader(nil, r.Body, wire.MaxFrameBytes)
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return wire.Errorf(wire.CodeBadParams, "malformed request body: %v", err)
	}
	return nil
}

func (s *server) browsers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.hub.Browsers())
}

func (s *server) tabs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, nonNil(s.hub.Tabs()))
}

func nonNil(t []hub.Tab) []hub.Tab {
	if t == nil {
		return []hub.Tab{}
	}
	return t
}

// RequestBody is the body of POST /request.
type RequestBody struct {
	BrowserID string          `json:"browserId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
}

func (s *server) request(w http.ResponseWriter, r *http.Request) {
	var in RequestBody
	if err := decode(r, &in); err != nil {
		writeError(w, err)
		return
	}
	if in.BrowserID == "" || in.Method == "" {
		writeError(w, wire.Errorf(wire.CodeBadParams, "browserId and method are required"))
		return
	}
	var params any
	if len(in.Params) > 0 && string(in.Params) != "null" {
		params = in.Params
	}
	res, err := s.hub.Request(r.Context(), in.BrowserID, in.Method, params)
	if err != nil {
		writeError(w, err)
		return
	}
	writeResult(w, res)
}

func writeResult(w http.ResponseWriter, res json.RawMessage) {
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	writeRaw(w, http.StatusOK, res)
}

// CDPBody is the body of POST /cdp.
type CDPBody struct {
	TabID     int             `json:"tabId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

func (s *server) cdp(w http.ResponseWriter, r *http.Request) {
	var in CDPBody
	if err := decode(r, &in); err != nil {
		writeError(w, err)
		return
	}
	if in.Method == "" {
		writeError(w, wire.Errorf(wire.CodeBadParams, "method is required"))
		return
	}
	var params any
	if len(in.Params) > 0 && string(in.Params) != "null" {
		params = in.Params
	}
	res, err := s.hub.CDP(r.Context(), in.TabID, in.Method, params, in.SessionID, "inspect")
	if err != nil {
		writeError(w, err)
		return
	}
	writeResult(w, res)
}

// CreateBody is the body of POST /tabs/create.
type CreateBody struct {
	BrowserID string `json:"browserId"`
	URL       string `json:"url"`
	Active    bool   `json:"active"`
	Group     string `json:"group,omitempty"`
	Owner     string `json:"owner,omitempty"`
}

func (s *server) createTab(w http.ResponseWriter, r *http.Request) {
	var in CreateBody
	if err := decode(r, &in); err != nil {
		writeError(w, err)
		return
	}
	t, err := s.hub.TabsCreate(r.Context(), in.BrowserID, in.URL, in.Active, in.Group, in.Owner)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// CloseBody is the body of POST /tabs/close.
type CloseBody struct {
	TabID int `json:"tabId"`
}

func (s *server) closeTab(w http.ResponseWriter, r *http.Request) {
	var in CloseBody
	if err := decode(r, &in); err != nil {
		writeError(w, err)
		return
	}
	if err := s.hub.TabsClose(r.Context(), in.TabID); err != nil {
		writeError(w, err)
		return
	}
	writeRaw(w, http.StatusOK, []byte("{}"))
}
