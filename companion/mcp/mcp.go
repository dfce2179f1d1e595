// Package mcp serves agents at /mcp over MCP Streamable HTTP (the official
// go-sdk). It owns the bearer-token check in front of the SDK, the mapping of
// a token to an agent identity (the principal "agent:<token id>", labelled
// with the token's name) with one tool session per agent, and the registry
// of connected agents that feeds the connection graph. Host and Origin are
// checked by the companion's edge before any request reaches it.
package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/tools"
)

// DefaultSessionTimeout closes an MCP session that sent no request for this
// long, so an agent that vanished without a DELETE leaves the connection
// graph. Clients re-initialize after it, as the spec requires on a 404.
const DefaultSessionTimeout = 30 * time.Minute

// MaxRequestBytes bounds one request body to /mcp: room for upload_file's
// 10 MiB of files in base64 (13.4 MiB) and the JSON around them.
const MaxRequestBytes = 16 << 20

// Verifier checks a bearer token and says which agent it belongs to: the
// token's stable id, which makes the agent's principal (AgentID), and its
// name, a label. It must compare in constant time and see revocations at
// once; the companion's *tokens.Manager does both.
type Verifier interface {
	Verify(token string) (id, name string, ok bool)
}

// Options configure a Server.
type Options struct {
	// Verifier checks bearer tokens. Nil refuses every request.
	Verifier Verifier
	// Tools is the tool engine: its Catalog is what agents list, and every
	// call goes to its Call with the raw arguments.
	Tools tools.Runner
	// Paused returns a paused-coded error while automation is paused; it is
	// checked before each Call.
	Paused func() error
	// Refusal explains why a tool hidden with SetHidden may not be called,
	// to an agent that calls it from a tool list it fetched earlier. The
	// refusal is recorded through OnActivity. Nil leaves such calls to the
	// SDK's unknown-tool error.
	Refusal func(tool string) error
	// OnActivity receives the calls this layer refuses before the engine
	// sees them (paused, hidden), as the engine's Options.OnActivity
	// receives the calls it runs. It must not block.
	OnActivity func(tools.Activity)
	// OnChange is called, without locks held, when an agent's sessions
	// change (connect, leave, revoked). It must not block.
	OnChange func()
	// SessionTimeout overrides DefaultSessionTimeout.
	SessionTimeout time.Duration
	Version        string
	Logger         *slog.Logger
}

// Server is the /mcp endpoint.
type Server struct {
	opts    Options
	log     *slog.Logger
	srv     *sdk.Server
	handler http.Handler

	mu       sync.Mutex
	agents   map[string]*agent // by principal
	sessions map[*sdk.ServerSession]*live
	epochs   map[string]uint64 // by principal, bumped on revocation; see opened
	closed   bool
	wg       sync.WaitGroup
	// stopping ends when Close starts: the calls still running are cut
	// short, so no tool holds the companion's stop.
	stopping context.Context
	stop     context.CancelFunc
	calls    sync.WaitGroup // the tool calls running

	hideMu sync.Mutex // serializes SetHidden
	hidden atomic.Pointer[map[string]bool]
}

// New builds the endpoint and registers the tools.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		agents:   map[string]*agent{},
		sessions: map[*sdk.ServerSession]*live{},
		epochs:   map[string]uint64{},
	}
	s.stopping, s.stop = context.WithCancel(context.Background())
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "reins", Title: "Reins", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: "Reins drives the person's own logged-in browser. Tools act only on tabs the person shared with Reins; " +
			"your tabs are kept in a tab group named after you. The person can pause automation at any time: tools then fail with code paused.",
		Capabilities: &sdk.ServerCapabilities{
			//lint:ignore SA1019 deprecated from protocol 2026-07-28, still served to clients of earlier versions
			Logging: &sdk.LoggingCapabilities{},
			Tools:   &sdk.ToolCapabilities{ListChanged: true},
		},
	})
	s.srv.AddReceivingMiddleware(s.track, s.refuseHidden)
	s.hidden.Store(&map[string]bool{})
	s.register(nil)
	httpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, &sdk.StreamableHTTPOptions{
		SessionTimeout:      opts.SessionTimeout,
		MaxRequestBodyBytes: MaxRequestBytes,
		// DNS-rebinding protection stays on (the SDK's default); the edge
		// already refused bad Hosts, this is the second lock.
		Logger: opts.Logger,
	})
	// The SDK binds each session to the TokenInfo's UserID, the principal,
	// so one agent cannot ride another's session id (nor one token another
	// token's of the same name). The token was verified already; this only
	// hands the result over.
	s.handler = auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if ti, ok := ctx.Value(verifiedKey{}).(*auth.TokenInfo); ok {
			return ti, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(httpHandler)
	return s
}

type verifiedKey struct{}

// Keys of TokenInfo.Extra: the agent's revocation epoch at the time its
// token was verified, and its label.
const (
	epochKey = "reins.epoch"
	labelKey = "reins.label"
)

// unauthorizedBody tells a person reading a client's error log what to do.
const unauthorizedBody = "reins: missing or invalid bearer token. Issue a token with `reins token issue NAME` or from the Reins dashboard, " +
	"and send it as \"Authorization: Bearer TOKEN\".\n"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	principal, label, ok := s.authenticate(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="reins", error="invalid_token"`)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(unauthorizedBody))
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "reins: the companion is shutting down", http.StatusServiceUnavailable)
		return
	}
	epoch := s.epochs[principal]
	if a := s.agents[principal]; a != nil {
		a.lastSeen = time.Now()
	}
	s.mu.Unlock()
	ti := &auth.TokenInfo{UserID: principal, Extra: map[string]any{epochKey: epoch, labelKey: label}}
	s.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verifiedKey{}, ti)))
}

// authenticate returns the principal and label of the request's bearer
// token. The token itself is never logged nor kept.
func (s *Server) authenticate(r *http.Request) (principal, label string, ok bool) {
	if s.opts.Verifier == nil {
		return "", "", false
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", "", false
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return "", "", false
	}
	id, name, ok := s.opts.Verifier.Verify(token)
	if !ok || id == "" {
		return "", "", false
	}
	return AgentID(id), name, true
}

// Close ends every MCP session and waits for the bookkeeping of each to
// finish. Later requests get 503. Close it before shutting the HTTP server
// down: open SSE streams would otherwise hold Shutdown until its deadline.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	// A session's close waits for its calls; a tool waiting on the page
	// (wait_for, a dialog, a download) would hold it for its whole timeout.
	// Their answers go out before the sessions close.
	s.stop()
	s.calls.Wait()
	for ss := range s.srv.Sessions() {
		ss.Close()
	}
	s.wg.Wait()
}
