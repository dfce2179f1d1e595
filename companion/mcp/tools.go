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

// registerCatalog registers a plain tools.Runner's catalog: each tool's
// schema and annotations as the engine describes them, and a handler that
// checks pause and runs the call in the agent's session.
func (s *Server) registerCatalog() {
	for _, info := range s.opts.Tools.Catalog() {
		if err := objectSchema(info.InputSchema); err != nil {
			// The SDK panics on a bad schema; one broken tool must not
			// take the endpoint down.
			s.log.Error("tool not registered", "tool", info.Name, "err", err)
			continue
		}
		s.srv.AddTool(ToolOf(info), s.callHandler(info.Name))
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
		name, _, _ := tokenOf(req.Extra)
		start := time.Now()
		if s.opts.Paused != nil {
			if err := s.opts.Paused(); err != nil {
				s.log.Info("tool refused", "agent", name, "tool", tool, "code", wire.CodePaused)
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
		s.log.Debug("tool call", "agent", name, "tool", tool, "outcome", outcome, "duration", time.Since(start))
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
