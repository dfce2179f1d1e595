package hub_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// A call is timed only when its context carries a Trace: each CDP request
// is recorded with its method, in the order they ended; a call without one
// records nothing anywhere.
func TestCDPTraceIsOptIn(t *testing.T) {
	e, changed, x := oneBrowser(t)
	x.Handle(wire.MethodCDP, func(json.RawMessage) (any, error) { return json.RawMessage(`{}`), nil })
	id := sharedTab(t, e, changed, x, 5)
	tr := &hub.Trace{}
	ctx := hub.WithTrace(context.Background(), tr)
	for _, c := range []struct {
		ctx    context.Context
		method string
	}{{ctx, "Runtime.evaluate"}, {context.Background(), "Page.enable"}, {ctx, "Input.dispatchMouseEvent"}} {
		if _, err := e.hub.CDP(c.ctx, id, c.method, nil, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	steps := tr.Steps()
	if len(steps) != 2 || steps[0].Method != "Runtime.evaluate" || steps[1].Method != "Input.dispatchMouseEvent" || steps[0].MS < 0 {
		t.Fatalf("steps %+v, want Runtime.evaluate then Input.dispatchMouseEvent (Page.enable was not traced)", steps)
	}
}
