package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// CodeMetaKey is the _meta key of a failed tool result that carries its wire
// code ("paused", "not_shared", …), so agents can branch without parsing
// text. toMCP writes it.
const CodeMetaKey = "code"

// register adds the tools of the engine's catalog that only accepts (all if
// only is nil): each tool's schema and annotations as the engine describes
// them, and a handler that hands the call's raw arguments to the engine.
// The engine alone checks and decodes them, so a schema error is a tool
// result with code bad_params that shows in the activity like any other.
func (s *Server) register(only func(name string) bool) {
	if s.opts.Tools == nil {
		return
	}
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
				if err := s.opts.Refusal(p.Name); err != nil {
					return s.refused(principal, label, p.Name, err), nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// refused answers a call the MCP layer turns away before the engine sees
// it, and records it in the activity as the engine records its own
// refusals, with the refusal's code.
func (s *Server) refused(principal, label, tool string, err error) *sdk.CallToolResult {
	res := tools.Failure(err)
	s.log.Info("tool refused", "agent", label, "principal", principal, "tool", tool, "code", res.Code)
	if s.opts.OnActivity != nil {
		s.opts.OnActivity(tools.Activity{Time: time.Now(), Principal: principal, Agent: label, Tool: tool, Outcome: string(res.Code)})
	}
	return toMCP(res)
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

// callHandler runs one tool for the calling agent: pause is checked here,
// so a paused call never reaches the engine; everything else (the schema,
// hidden and operator-only tools, scope) is the engine's.
func (s *Server) callHandler(tool string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		principal, label, _, _ := tokenOf(req.Extra)
		if s.opts.Paused != nil {
			if err := s.opts.Paused(); err != nil {
				return s.refused(principal, label, tool, err), nil
			}
		}
		sess, err := s.sessionFor(ctx, req)
		if err != nil {
			return toMCP(tools.Failure(err)), nil
		}
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		var tr *hub.Trace
		if on, _ := req.Params.Meta[TraceMetaKey].(bool); on {
			tr = &hub.Trace{}
			ctx = hub.WithTrace(ctx, tr)
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return toMCP(tools.Failure(wire.Errorf(wire.CodeShuttingDown, "Reins is stopping; try again once it is back"))), nil
		}
		s.calls.Add(1)
		s.mu.Unlock()
		defer s.calls.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.stopping, cancel)()
		start := time.Now()
		res := s.opts.Tools.Call(ctx, sess, tool, args)
		if s.stopping.Err() != nil && ctx.Err() != nil && (res == nil || res.IsError) {
			res = tools.Failure(wire.Errorf(wire.CodeShuttingDown, "Reins is stopping: the %s call was cut short and may not have finished", tool))
		}
		if res == nil {
			res = tools.Failure(wire.Errorf(wire.CodeInternal, "tool %s returned nothing", tool))
		}
		out := toMCP(res)
		if tr != nil {
			if out.Meta == nil {
				out.Meta = sdk.Meta{}
			}
			out.Meta[TraceMetaKey] = CallTrace{EngineMS: float64(time.Since(start).Microseconds()) / 1000, Steps: tr.Steps()}
		}
		return out, nil
	}
}

// TraceMetaKey is the _meta key that asks for a call's timing (true in the
// request) and carries it (a CallTrace in the result). Only benchmarks ask;
// a call without it records nothing.
const TraceMetaKey = "reins/trace"

// CallTrace is where one tool call's time went inside the companion: the
// engine's whole run, and each browser request it made.
type CallTrace struct {
	EngineMS float64         `json:"engineMs"`
	Steps    []hub.TraceStep `json:"steps"`
}

// toMCP converts a Result to the MCP SDK's shape. The code travels in _meta
// as well as in the text.
func toMCP(r *tools.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: r.IsError, Content: make([]sdk.Content, 0, len(r.Content))}
	for _, c := range r.Content {
		switch c.Type {
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				out.Content = append(out.Content, &sdk.TextContent{Text: "[internal] undecodable image"})
				continue
			}
			out.Content = append(out.Content, &sdk.ImageContent{Data: data, MIMEType: c.MimeType})
		default:
			out.Content = append(out.Content, &sdk.TextContent{Text: c.Text})
		}
	}
	if r.Code != "" {
		out.Meta = sdk.Meta{CodeMetaKey: string(r.Code)}
	}
	return out
}
