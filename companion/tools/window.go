package tools

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/hub"
)

type resizeArgs struct {
	Width  int `json:"width" jsonschema:"window width in pixels"`
	Height int `json:"height" jsonschema:"window height in pixels"`
	TabID  int `json:"tabId" jsonschema:"tab id"`
}

func registerWindow(e *Engine) {
	define(e, Info{
		Name:        "resize_window",
		Description: "Resize the window that holds a tab, e.g. to test a layout at a phone or laptop size.",
		Mutating:    true, Batchable: true,
	}, func(s *jsonschema.Schema) {
		bounds(s, "width", 100, 10000)
		bounds(s, "height", 100, 10000)
	}, runResize)
}

func runResize(ctx context.Context, c *call, in *resizeArgs) (*Result, error) {
	ts, _, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	_, b, err := c.tab(in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	ws, err := c.e.hub.WindowSize(ctx, in.TabID, in.Width, in.Height)
	if err != nil {
		return nil, fmt.Errorf("resizing the window of tab %d: %w", in.TabID, err)
	}
	c.s.forgetView(in.TabID)
	var vp viewportInfo
	if _, err := ts.helper(ctx, c.s.Label, "viewport", &vp); err != nil {
		return nil, err
	}
	if b.Mode == hub.ModeDev && (vp.W != in.Width || vp.H != in.Height) {
		// A headless window has no frame to resize; the viewport is set
		// directly so the page really lays out at the asked size.
		if err := c.cdp(ctx, in.TabID, "Emulation.setDeviceMetricsOverride", map[string]any{
			"width": in.Width, "height": in.Height, "deviceScaleFactor": 0, "mobile": false,
		}, nil); err != nil {
			return nil, err
		}
		if _, err := ts.helper(ctx, c.s.Label, "viewport", &vp); err != nil {
			return nil, err
		}
	}
	return textResult(fmt.Sprintf("The window of tab %d is %d×%d; the page's viewport is %d×%d CSS px.", in.TabID, ws.Width, ws.Height, vp.W, vp.H)), nil
}
