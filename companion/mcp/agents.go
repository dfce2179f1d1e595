package mcp

import (
	"context"
	"sort"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// AgentInfo describes an agent that connected since the companion started.
type AgentInfo struct {
	// ID is the agent's principal, "agent:<token id>"; Name its token's
	// name, a label.
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Connected bool      `json:"connected"`
	LastSeen  time.Time `json:"lastSeen"`
	// Sessions counts the agent's initialized MCP sessions.
	Sessions int `json:"sessions"`
}

// agent is one token: one principal. Its tool session outlives its MCP
// sessions, so an agent that reconnects finds its tab group again; revoking
// the token ends both.
type agent struct {
	id       string // principal
	name     string // label
	session  *tools.Session
	live     int // initialized MCP sessions
	lastSeen time.Time
}

// live is one MCP session, tracked from its initialize request.
type live struct {
	agent       string // principal
	label       string
	initialized bool
}

// AgentID is the principal of the agent whose token has id tokenID: the
// identity its tabs, sessions and graph node hang on. Paired backends use
// another prefix (operator.PrincipalID).
func AgentID(tokenID string) string { return "agent:" + tokenID }

// Agents lists the agents seen since start, connected or not, by name (and
// principal, for two tokens of one name).
func (s *Server) Agents() []AgentInfo {
	s.mu.Lock()
	out := make([]AgentInfo, 0, len(s.agents))
	for _, a := range s.agents {
		out = append(out, AgentInfo{ID: a.id, Name: a.name, Connected: a.live > 0, LastSeen: a.lastSeen, Sessions: a.live})
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Revoke forgets an agent (by principal) whose token was revoked or
// replaced: its live MCP sessions are closed and its tool session dropped.
// The token check itself needs no help, since the Verifier refuses the
// token from now on.
func (s *Server) Revoke(principal string) {
	s.mu.Lock()
	s.epochs[principal]++
	var doomed []*sdk.ServerSession
	label := ""
	for ss, l := range s.sessions {
		if l.agent == principal {
			doomed = append(doomed, ss)
			label = l.label
		}
	}
	a, known := s.agents[principal]
	if known {
		label = a.name
	}
	delete(s.agents, principal)
	closed := s.closed
	if !closed {
		s.wg.Add(len(doomed))
	}
	s.mu.Unlock()
	if closed {
		return
	}
	if len(doomed) > 0 || known {
		s.log.Info("agent token revoked; closing its sessions", "agent", label, "principal", principal, "sessions", len(doomed))
	}
	// ServerSession.Close waits for requests in flight; the caller (a token
	// store callback) must not wait for a slow tool.
	for _, ss := range doomed {
		go func() {
			defer s.wg.Done()
			ss.Close()
		}()
	}
	if known {
		s.changed()
	}
}

func (s *Server) changed() {
	if s.opts.OnChange != nil {
		s.opts.OnChange()
	}
}

// track is receiving middleware: it learns which agent owns a session from
// the session's initialize request, and counts the agent as connected once
// the client says it is initialized.
func (s *Server) track(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		ss, ok := req.GetSession().(*sdk.ServerSession)
		if !ok {
			return res, err
		}
		switch method {
		case "initialize":
			s.opened(ss, req.GetExtra())
		case "notifications/initialized":
			s.initialized(ss)
		}
		return res, err
	}
}

// tokenOf is the verified caller of a request: its principal, label and
// revocation epoch.
func tokenOf(extra *sdk.RequestExtra) (principal, label string, epoch uint64, ok bool) {
	if extra == nil || extra.TokenInfo == nil || extra.TokenInfo.UserID == "" {
		return "", "", 0, false
	}
	epoch, _ = extra.TokenInfo.Extra[epochKey].(uint64)
	label, _ = extra.TokenInfo.Extra[labelKey].(string)
	return extra.TokenInfo.UserID, label, epoch, true
}

func (s *Server) opened(ss *sdk.ServerSession, extra *sdk.RequestExtra) {
	principal, label, epoch, ok := tokenOf(extra)
	s.mu.Lock()
	if _, dup := s.sessions[ss]; dup {
		s.mu.Unlock()
		return
	}
	// A request verified just before its token was revoked must not leave
	// a session behind that Revoke did not see.
	if s.closed {
		// Close already ended (or is ending) every session; the wait group
		// may be waited on, so this closes without it. Close is idempotent
		// and returns at once here.
		s.mu.Unlock()
		go ss.Close()
		return
	}
	stale := !ok || s.epochs[principal] != epoch
	if !stale {
		s.sessions[ss] = &live{agent: principal, label: label}
	}
	s.wg.Add(1)
	s.mu.Unlock()
	if stale {
		// Close waits for requests in flight, this initialize among them.
		go func() {
			defer s.wg.Done()
			ss.Close()
		}()
		return
	}
	go func() {
		defer s.wg.Done()
		ss.Wait()
		s.ended(ss)
	}()
}

func (s *Server) initialized(ss *sdk.ServerSession) {
	s.mu.Lock()
	l := s.sessions[ss]
	if l == nil || l.initialized {
		s.mu.Unlock()
		return
	}
	l.initialized = true
	a := s.agents[l.agent]
	if a == nil {
		a = &agent{id: l.agent, name: l.label}
		s.agents[l.agent] = a
	}
	a.live++
	a.lastSeen = time.Now()
	s.mu.Unlock()
	s.log.Info("agent session initialized", "agent", l.label, "principal", l.agent, "session", ss.ID())
	s.changed()
}

func (s *Server) ended(ss *sdk.ServerSession) {
	s.mu.Lock()
	l := s.sessions[ss]
	delete(s.sessions, ss)
	counted := false
	if l != nil && l.initialized {
		if a := s.agents[l.agent]; a != nil {
			a.live--
			a.lastSeen = time.Now()
			counted = true
		}
	}
	s.mu.Unlock()
	if l == nil {
		return
	}
	s.log.Info("agent session ended", "agent", l.label, "principal", l.agent, "session", ss.ID())
	if counted {
		s.changed()
	}
}

// sessionFor is the engine's way to the calling agent's tool session.
func (s *Server) sessionFor(_ context.Context, req *sdk.CallToolRequest) (*tools.Session, error) {
	principal, label, _, ok := tokenOf(req.Extra)
	if !ok {
		return nil, wire.Errorf(wire.CodeUnauthorized, "this call carries no verified agent token")
	}
	return s.toolSession(principal, label)
}

func (s *Server) toolSession(principal, label string) (*tools.Session, error) {
	s.mu.Lock()
	a := s.agents[principal]
	if a != nil && a.session != nil {
		defer s.mu.Unlock()
		return a.session, nil
	}
	s.mu.Unlock()
	// NewSession may do work; build outside the lock and keep the first.
	ts := s.opts.Tools.NewSession(principal, label)
	s.mu.Lock()
	defer s.mu.Unlock()
	a = s.agents[principal]
	if a == nil {
		// Called before the client finished initializing, or after a
		// revocation raced this call: either way not connected.
		a = &agent{id: principal, name: label, lastSeen: time.Now()}
		s.agents[principal] = a
	}
	if a.session == nil {
		a.session = ts
	}
	return a.session, nil
}
