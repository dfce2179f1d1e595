package tools

import (
	"context"
	"fmt"

	"github.com/reinshq/reins/companion/wire"
)

type formInputArgs struct {
	Ref   string `json:"ref" jsonschema:"element ref from read_page or find"`
	Value any    `json:"value" jsonschema:"the value: text for inputs, textareas and contenteditable; an option's value or label for selects (a list for multi-selects); true/false for checkboxes and radio buttons, or the value of the radio to pick"`
	TabID int    `json:"tabId" jsonschema:"tab id from tabs_context_mcp"`
}

func registerForm(e *Engine) {
	define(e, Info{
		Name: "form_input",
		Description: "Set the value of a form control by ref: text inputs, textareas, selects, checkboxes, radio buttons and contenteditable elements. " +
			"Fires input and change events like a person's edit would.",
		Destructive: true, Mutating: true, Batchable: true,
	}, nil, runFormInput)
}

// guardedHelper runs a page helper that changes the page, with the origin
// check done inside the same page task as the change.
func (c *call) guardedHelper(ctx context.Context, ts *tabState, fn string, out any, args ...any) (string, error) {
	args = append(args, c.s.observed(ts.id))
	href, err := ts.helper(ctx, c.s.Label, fn, out, args...)
	if err != nil && wire.CodeOf(err) == wire.CodeNavigatedAway {
		if gerr := c.guard(ts.id, href); gerr != nil {
			return href, gerr
		}
	}
	return href, err
}

func runFormInput(ctx context.Context, c *call, in *formInputArgs) (*Result, error) {
	if in.Ref == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "ref is required")
	}
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	var r struct {
		Desc string `json:"desc"`
		Now  string `json:"now"`
		Kind string `json:"kind"`
	}
	w := ts.watch()
	defer w.stop()
	if _, err := c.guardedHelper(ctx, ts, "formInput", &r, in.Ref, in.Value); err != nil {
		return nil, err
	}
	var line string
	switch r.Kind {
	case "password":
		line = fmt.Sprintf("Set %s [%s] (%s).", r.Desc, in.Ref, r.Now)
	case "checkbox", "radio", "switch":
		line = fmt.Sprintf("%s [%s] is now %s.", r.Desc, in.Ref, r.Now)
	default:
		line = fmt.Sprintf("Set %s [%s] to %q.", r.Desc, in.Ref, r.Now)
	}
	return c.after(ctx, ts, w, in.TabID, []string{line})
}
