package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinshq/reins/companion/wire"
)

type formInputArgs struct {
	Ref   string `json:"ref" jsonschema:"element ref from read_page or find"`
	Value any    `json:"value" jsonschema:"text (typed into editors); an option's value or text (a list for multi-selects); true/false for checkboxes and radios, or the radio's value"`
	TabID int    `json:"tabId" jsonschema:"tab id"`
}

func registerForm(e *Engine) {
	define(e, Info{
		Name: "form_input",
		Description: "Set the value of a form control by ref, in frames too: text inputs, textareas, selects, checkboxes, radio buttons and contenteditable editors. " +
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

// guardedRef is guardedHelper for a helper whose first argument is ref, run
// in the frame ref lives in. In a frame the tab's own URL is checked first,
// and the frame's helper checks it again where the browser tells a frame
// its top origin (Chromium); the href returned is the tab's.
func (c *call) guardedRef(ctx context.Context, ts *tabState, ref, fn string, out any, args ...any) (string, error) {
	f, err := ts.frameOfRef(ref)
	if err != nil {
		return "", err
	}
	if f == nil {
		return c.guardedHelper(ctx, ts, fn, out, append([]any{ref}, args...)...)
	}
	href, err := c.topHref(ctx, ts)
	if err != nil {
		return "", err
	}
	if err := c.guard(ts.id, href); err != nil {
		return href, err
	}
	args = append(append([]any{ref}, args...), c.s.observed(ts.id))
	if _, err := ts.callIn(ctx, c.s.Label, f, fn, out, true, args...); err != nil {
		if wire.CodeOf(err) == wire.CodeNavigatedAway {
			return href, wire.Errorf(wire.CodeNavigatedAway, "tab %d navigated away from %s since you last looked; nothing was done. Take a screenshot or read_page, then act again", ts.id, c.s.observed(ts.id))
		}
		return href, err
	}
	return href, nil
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
		Desc    string `json:"desc"`
		Now     string `json:"now"`
		Kind    string `json:"kind"`
		Focused bool   `json:"focused"`
	}
	w := ts.watch()
	defer w.stop()
	if _, err := c.guardedRef(ctx, ts, in.Ref, "formInput", &r, in.Value); err != nil {
		return nil, err
	}
	var line string
	switch r.Kind {
	case "type":
		now, err := c.typeInto(ctx, ts, in.TabID, in.Ref, r.Focused, textValue(in.Value))
		if err != nil {
			return nil, err
		}
		line = fmt.Sprintf("Typed into %s [%s]; it now reads %q.", r.Desc, in.Ref, now)
	case "password":
		line = fmt.Sprintf("Set %s [%s] (%s).", r.Desc, in.Ref, r.Now)
	case "checkbox", "radio", "switch":
		line = fmt.Sprintf("%s [%s] is now %s.", r.Desc, in.Ref, r.Now)
	default:
		line = fmt.Sprintf("Set %s [%s] to %q.", r.Desc, in.Ref, r.Now)
	}
	return c.after(ctx, ts, w, in.TabID, []string{line})
}

// typeInto types text over the selected contents of an editable element,
// as keystrokes, so the editor's own input handling sees them. An element
// the helper could not focus (in a frame without focus) is clicked first.
func (c *call) typeInto(ctx context.Context, ts *tabState, tabID int, ref string, focused bool, text string) (string, error) {
	if !focused {
		at, err := c.locate(ctx, ts, ref)
		if err != nil {
			return "", err
		}
		for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
			button, buttons := "left", 1
			if typ == "mouseMoved" {
				button, buttons = "", 0
			} else if typ == "mouseReleased" {
				buttons = 0
			}
			if err := c.mouse(ctx, tabID, typ, at.x, at.y, button, buttons, 1, 0); err != nil {
				return "", err
			}
		}
		if _, _, err := c.helperFor(ctx, ts, ref, "prepareType", nil); err != nil {
			return "", err
		}
	}
	if text == "" {
		del := keyCombo{key: namedKeys["delete"]}
		if err := c.pressKeys(ctx, tabID, []keyCombo{del}, 1); err != nil {
			return "", err
		}
	} else if err := c.typeString(ctx, tabID, text); err != nil {
		return "", err
	}
	var v struct {
		Now string `json:"now"`
	}
	if _, _, err := c.helperFor(ctx, ts, ref, "valueOf", &v); err != nil {
		return "", err
	}
	return v.Now, nil
}

// textValue is a form value as text.
func textValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
