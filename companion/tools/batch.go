package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

const maxBatchSteps = 50

type batchStep struct {
	Tool string          `json:"tool" jsonschema:"tool name, e.g. computer"`
	Args json.RawMessage `json:"args,omitempty" jsonschema:"the tool's arguments"`
}

type batchArgs struct {
	Steps []batchStep `json:"steps" jsonschema:"tool calls (1 to 50)"`
}

func registerBatch(e *Engine) {
	define(e, Info{
		Name:        "browser_batch",
		Description: "Run tool calls in order in one request, stopping at the first failure, and return every step's result.",
		Destructive: true, Mutating: true,
	}, func(s *jsonschema.Schema) {
		p := s.Properties["steps"]
		lo, hi := 1, maxBatchSteps
		p.MinItems, p.MaxItems = &lo, &hi
		step := p.Items
		step.AdditionalProperties = nil
		step.Properties["args"] = &jsonschema.Schema{Type: "object", Description: "the tool's arguments"}
	}, runBatch)
}

func runBatch(ctx context.Context, c *call, in *batchArgs) (*Result, error) {
	if c.batch {
		return nil, wire.Errorf(wire.CodeBadParams, "browser_batch cannot be nested")
	}
	if len(in.Steps) == 0 || len(in.Steps) > maxBatchSteps {
		return nil, wire.Errorf(wire.CodeBadParams, "a batch has 1 to %d steps", maxBatchSteps)
	}
	for i, st := range in.Steps {
		t := c.e.tools[st.Tool]
		if t != nil && !t.info.Batchable {
			return nil, wire.Errorf(wire.CodeBadParams, "step %d: %s cannot run inside browser_batch", i+1, st.Tool)
		}
	}
	out := &Result{}
	for i, st := range in.Steps {
		step := &call{e: c.e, s: c.s, tool: st.Tool, batch: true}
		start := time.Now()
		res := step.run(ctx, st.Tool, st.Args)
		c.e.record(step, st.Tool, res, time.Since(start))
		if step.tabID != 0 {
			c.tabID = step.tabID
		}
		status := "ok"
		if res.IsError {
			status = "failed"
		}
		out.Content = append(out.Content, Content{Type: "text", Text: fmt.Sprintf("--- step %d/%d: %s %s ---", i+1, len(in.Steps), st.Tool, status)})
		out.Content = append(out.Content, res.Content...)
		if res.IsError {
			out.IsError, out.Code = true, res.Code
			if i+1 < len(in.Steps) {
				out.Content = append(out.Content, Content{Type: "text", Text: fmt.Sprintf("[%s] batch stopped at step %d; %d step(s) not run", res.Code, i+1, len(in.Steps)-i-1)})
			}
			break
		}
	}
	return out, nil
}
