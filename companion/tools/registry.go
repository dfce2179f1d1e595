package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/wire"
)

// tool is one catalog entry. Its input schema is derived from the typed
// argument struct, so the catalog, MCP's validation and Call's decoding
// can never disagree.
type tool struct {
	info     Info
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	invoke   func(ctx context.Context, c *call, args json.RawMessage) (*Result, error)
	addMCP   func(srv *mcp.Server, h func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult)
}

// define adds a tool whose arguments decode into In. fix may refine the
// generated schema (enums, bounds) before it is published.
func define[In any](e *Engine, info Info, fix func(*jsonschema.Schema), run func(ctx context.Context, c *call, in *In) (*Result, error)) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: schema for %s: %v", info.Name, err))
	}
	// Agents from other catalogs send extra fields (reasons, hints); they
	// are ignored rather than refused.
	schema.AdditionalProperties = nil
	for _, p := range schema.Properties {
		nullableToPlain(p)
	}
	if fix != nil {
		fix(schema)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tools: resolving schema for %s: %v", info.Name, err))
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("tools: encoding schema for %s: %v", info.Name, err))
	}
	info.InputSchema = raw
	t := &tool{info: info, schema: schema, resolved: resolved}
	t.invoke = func(ctx context.Context, c *call, args json.RawMessage) (*Result, error) {
		var m map[string]any
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "%s arguments must be a JSON object: %v", info.Name, err)
		}
		if m == nil {
			m = map[string]any{}
		}
		if err := resolved.Validate(m); err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "invalid %s arguments: %s", info.Name, oneLine(err.Error()))
		}
		in := new(In)
		if err := json.Unmarshal(args, in); err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "invalid %s arguments: %v", info.Name, err)
		}
		return run(ctx, c, in)
	}
	t.addMCP = func(srv *mcp.Server, h func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult) {
		destructive := info.Destructive
		openWorld := true
		mcp.AddTool(srv, &mcp.Tool{
			Name:        info.Name,
			Description: info.Description,
			InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    info.ReadOnly,
				DestructiveHint: &destructive,
				OpenWorldHint:   &openWorld,
			},
		}, func(ctx context.Context, req *mcp.CallToolRequest, _ In) (*mcp.CallToolResult, any, error) {
			return h(ctx, req), nil, nil
		})
	}
	if _, dup := e.tools[info.Name]; dup {
		panic("tools: duplicate tool " + info.Name)
	}
	e.tools[info.Name] = t
	e.catalog = append(e.catalog, info)
}

// nullableToPlain turns the generator's ["null","array"] for slices into
// "array": agents omit optional fields rather than sending null, and
// several MCP clients reject type lists.
func nullableToPlain(s *jsonschema.Schema) {
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type = s.Types[1]
		s.Types = nil
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// RegisterMCP adds the tools that only accepts (every tool if only is nil)
// to an MCP server. sessionFor maps a request to the agent's session (the
// MCP layer knows the token); its error becomes a failed tool result.
func (e *Engine) RegisterMCP(srv *mcp.Server, sessionFor func(ctx context.Context, req *mcp.CallToolRequest) (*Session, error), only func(name string) bool) {
	for _, info := range e.catalog {
		if only != nil && !only(info.Name) {
			continue
		}
		t := e.tools[info.Name]
		name := info.Name
		t.addMCP(srv, func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
			s, err := sessionFor(ctx, req)
			if err != nil {
				if wire.CodeOf(err) == wire.CodeInternal {
					err = &wire.Error{Code: wire.CodeNoSuchSession, Message: err.Error()}
				}
				return ToMCP(errorResult(err))
			}
			var args json.RawMessage
			if req != nil && req.Params != nil {
				args = req.Params.Arguments
			}
			return ToMCP(e.Call(ctx, s, name, args))
		})
	}
}

// ToMCP converts a Result to the MCP SDK's shape. The code travels in _meta
// as well as in the text.
func ToMCP(r *Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, Content: make([]mcp.Content, 0, len(r.Content))}
	for _, c := range r.Content {
		switch c.Type {
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				out.Content = append(out.Content, &mcp.TextContent{Text: "[internal] undecodable image"})
				continue
			}
			out.Content = append(out.Content, &mcp.ImageContent{Data: data, MIMEType: c.MimeType})
		default:
			out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
		}
	}
	if r.Code != "" {
		out.Meta = mcp.Meta{"code": string(r.Code)}
	}
	return out
}

// enum sets the allowed values of a string property.
func enum(s *jsonschema.Schema, prop string, values ...string) {
	p := s.Properties[prop]
	if p == nil {
		panic("tools: no property " + prop)
	}
	p.Enum = make([]any, len(values))
	for i, v := range values {
		p.Enum[i] = v
	}
}

func bounds(s *jsonschema.Schema, prop string, lo, hi float64) {
	p := s.Properties[prop]
	if p == nil {
		panic("tools: no property " + prop)
	}
	p.Minimum, p.Maximum = &lo, &hi
}

func items(s *jsonschema.Schema, prop string, n int) {
	p := s.Properties[prop]
	if p == nil {
		panic("tools: no property " + prop)
	}
	p.MinItems, p.MaxItems = &n, &n
}
