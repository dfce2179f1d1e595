package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

// tool is one catalog entry. Its input schema is derived from the typed
// argument struct, so the catalog an MCP client lists and the check Call
// makes can never disagree.
type tool struct {
	info   Info
	invoke func(ctx context.Context, c *call, args json.RawMessage) (*Result, error)
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
	t := &tool{info: info}
	// The one check of a call's arguments, whoever calls (MCP agents,
	// paired backends, browser_batch steps): the schema, then one decode
	// into In. A failure is bad_params, so it reaches the caller and the
	// activity with its code.
	t.invoke = func(ctx context.Context, c *call, args json.RawMessage) (*Result, error) {
		var m map[string]any
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "%s arguments must be a JSON object: %w", info.Name, err)
		}
		if m == nil {
			m = map[string]any{}
		}
		if err := resolved.Validate(m); err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "invalid %s arguments: %s", info.Name, oneLine(err.Error()))
		}
		in := new(In)
		if err := json.Unmarshal(args, in); err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "invalid %s arguments: %w", info.Name, err)
		}
		return run(ctx, c, in)
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
