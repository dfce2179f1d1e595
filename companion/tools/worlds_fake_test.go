package tools_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

// A fresh world's first helper call carries the world's setup, and later
// calls do not; a world the browser made whose helper never ran (its
// new-document script did not) is replaced by one the engine makes, which
// takes its setup the same way.
func TestAFreshWorldTakesItsSetupWithItsFirstCall(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, nil)
	alice := p.e.NewSession("agent:alice", "alice")
	p.ok(alice, "read_page", map[string]any{"tabId": p.tab})
	p.forget()
	// The browser makes the next document's world; its helper is missing.
	p.helperless.Store(9)
	if err := p.ext.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: 1, Method: "Runtime.executionContextsCleared", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := p.ext.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: 1, Method: "Runtime.executionContextCreated",
		Params: json.RawMessage(`{"context":{"id":9,"name":"reins","auxData":{"isDefault":false,"frameId":"F1"}}}`)}); err != nil {
		t.Fatal(err)
	}
	// An event reaches the engine on the link's reader before the answer
	// to a command sent after it: a script's round trip (no helper world)
	// orders them.
	p.ok(alice, "javascript_tool", map[string]any{"tabId": p.tab, "text": "1"})
	p.forget()
	p.ok(alice, "read_page", map[string]any{"tabId": p.tab})
	var got []string
	p.mu.Lock()
	sent := slices.Clone(p.sent)
	p.mu.Unlock()
	for _, c := range sent {
		switch c.method {
		case "Runtime.callFunctionOn":
			h := helperOf(c.params)
			got = append(got, fmt.Sprintf("%s in %d (setup %v)", h.fn, h.context, h.setup))
		case "Page.createIsolatedWorld", "Runtime.evaluate":
			got = append(got, c.method)
		}
	}
	want := []string{"tree in 9 (setup true)", "Page.createIsolatedWorld", "Runtime.evaluate", "tree in 7 (setup true)"}
	if !slices.Equal(got, want) {
		t.Fatalf("requests: %q\nwant %q", got, want)
	}
	p.forget()
	p.ok(alice, "read_page", map[string]any{"tabId": p.tab})
	for _, raw := range p.paramsOf("Runtime.callFunctionOn") {
		if h := helperOf(raw); h.setup || h.context != 7 {
			t.Fatalf("a set-up world's call: %+v", h)
		}
	}
}
