package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// CodeMetaKey is the _meta key of a failed tool result that carries its wire
// code ("paused", "not_shared", …), so agents can branch without parsing
// text.
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
				return ResultOf(failure(err)), nil
			}
		}
		sess, err := s.sessionFor(ctx, req)
		if err != nil {
			return ResultOf(failure(err)), nil
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
		return ResultOf(res), nil
	}
}

// failure turns an error into a failed tool result with its wire code.
func failure(err error) *tools.Result {
	code := wire.CodeInternal
	var we *wire.Error
	if errors.As(err, &we) {
		code = we.Code
	}
	return &tools.Result{
		Content: []tools.Content{{Type: "text", Text: string(code) + ": " + err.Error()}},
		IsError: true,
		Code:    code,
	}
}

// ResultOf is the MCP form of an engine result. A failure stays a result
// with isError, as MCP wants tool failures reported, and its code goes in
// _meta.
func ResultOf(r *tools.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: r.IsError, Content: []sdk.Content{}}
	for _, c := range r.Content {
		switch c.Type {
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				out.Content = append(out.Content, &sdk.TextContent{Text: "(an image the engine encoded badly was dropped)"})
				continue
			}
			out.Content = append(out.Content, &sdk.ImageContent{Data: data, MIMEType: c.MimeType})
		default:
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
		}
	}
	if r.IsError && r.Code != "" {
		out.Meta = sdk.Meta{CodeMetaKey: string(r.Code)}
	}
	return out
}
