package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// CodeMetaKey is the _meta key of a failed tool result that carries its wire
// code ("paused", "not_shared", …), so agents can branch without parsing
// text. tools.ToMCP writes it.
const CodeMetaKey = "code"

// registerCatalog registers a plain tools.Runner's catalog (the tools only
// accepts, or all if only is nil): each tool's schema and annotations as the
// engine describes them, and a handler that checks pause and runs the call
// in the agent's session.
func (s *Server) registerCatalog(only func(name string) bool) {
	for _, info := range s.opts.Tools.Catalog() {
		if only != nil && !only(info.Name) {
			continue
		}
		if err := objectSchema(info.InputSchema); err != nil {
			// The SDK panics on a bad schema; one broken tool must not
			// take the endpoint down.
			s.log.Error("tool not registered", "tool", info.Name, "err", err)
			continue
		}
		s.srv.AddTool(ToolOf(info), s.callHandler(info.Name))
	}
}

// SetHidden takes the named tools out of tools/list (the person turned them
// off) and puts back those hidden before and not named now. Connected
// clients get one notifications/tools/list_changed for the change. A call
// to a hidden tool from a list fetched earlier fails with Options.Refusal's
// error.
func (s *Server) SetHidden(names []string) {
	s.hideMu.Lock()
	defer s.hideMu.Unlock()
	old := *s.hidden.Load()
	now := make(map[string]bool, len(names))
	var hide []string
	for _, n := range names {
		now[n] = true
		if !old[n] {
			hide = append(hide, n)
		}
	}
	show := map[string]bool{}
	for n := range old {
		if !now[n] {
			show[n] = true
		}
	}
	s.hidden.Store(&now)
	if len(hide) > 0 {
		s.srv.RemoveTools(hide...)
	}
	if len(show) > 0 {
		s.register(func(n string) bool { return show[n] })
	}
}

// refuseHidden answers a tools/call of a hidden tool with the refusal the
// person's setting explains, rather than the SDK's unknown-tool error.
func (s *Server) refuseHidden(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" && s.opts.Refusal != nil {
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && (*s.hidden.Load())[p.Name] {
				principal, label, _, _ := tokenOf(req.GetExtra())
				if err := s.opts.Refusal(principal, label, p.Name); err != nil {
					s.log.Info("tool refused", "agent", label, "principal", principal, "tool", p.Name, "code", wire.CodeOf(err))
					return tools.ToMCP(failure(err)), nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

func objectSchema(raw json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	if m["type"] != "object" {
		return fmt.Errorf("input schema type is %v, not object", m["type"])
	}
	return nil
}

// ToolOf is the MCP description of a catalog entry.
func ToolOf(info tools.Info) *sdk.Tool {
	destructive := info.Destructive
	// Every tool acts on the open web through the person's browser.
	openWorld := true
	return &sdk.Tool{
		Name:        info.Name,
		Description: info.Description,
		InputSchema: info.InputSchema,
		Annotations: &sdk.ToolAnnotations{
			ReadOnlyHint:    info.ReadOnly,
			DestructiveHint: &destructive,
			OpenWorldHint:   &openWorld,
		},
	}
}

func (s *Server) callHandler(tool string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		principal, label, _, _ := tokenOf(req.Extra)
		start := time.Now()
		if s.opts.Paused != nil {
			if err := s.opts.Paused(); err != nil {
				s.log.Info("tool refused", "agent", label, "principal", principal, "tool", tool, "code", wire.CodePaused)
				return tools.ToMCP(failure(err)), nil
			}
		}
		sess, err := s.sessionFor(ctx, req)
		if err != nil {
			return tools.ToMCP(failure(err)), nil
		}
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		res := s.opts.Tools.Call(ctx, sess, tool, args)
		if res == nil {
			res = failure(wire.Errorf(wire.CodeInternal, "tool %s returned nothing", tool))
		}
		outcome := "ok"
		if res.IsError {
			outcome = string(res.Code)
		}
		s.log.Debug("tool call", "agent", label, "principal", principal, "tool", tool, "outcome", outcome, "duration", time.Since(start))
		return tools.ToMCP(res), nil
	}
}

// failure turns an error into a failed tool result whose text starts with
// its wire code, as the engine's failures do.
func failure(err error) *tools.Result {
	code := wire.CodeOf(err)
	return &tools.Result{
		Content: []tools.Content{{Type: "text", Text: "[" + string(code) + "] " + err.Error()}},
		IsError: true,
		Code:    code,
	}
}
