package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// A renderer that crashes under a call waiting in the engine on the page's
// events (a load, a URL, the network, a response) ends that call at once
// with attach_failed, not at its timeout: the browser's crash report is an
// event like the ones the waits read.
func TestWaitsEndWhenTheRendererCrashes(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:crashwait", "crashwait")
	// The crashed pages are on a site of their own, so that no other
	// test's page shares their renderer.
	site := strings.Replace(r.url, "127.0.0.1", "localhost", 1)
	for _, c := range []struct {
		name string
		tool string
		args func(tab int) map[string]any
		// loads: the call itself loads a page that never finishes;
		// otherwise the page keeps a request open while the call waits.
		loads bool
	}{
		{"navigate", "navigate", func(tab int) map[string]any {
			return map[string]any{"tabId": tab, "url": site + "/hung?k=navigate"}
		}, true},
		{"wait_for url", "wait_for", func(tab int) map[string]any {
			return map[string]any{"tabId": tab, "url": "*/never", "timeout": 60}
		}, false},
		{"wait_for networkIdle", "wait_for", func(tab int) map[string]any {
			return map[string]any{"tabId": tab, "networkIdle": true, "timeout": 60}
		}, false},
		{"devtools wait_response", "devtools", func(tab int) map[string]any {
			return map[string]any{"tabId": tab, "action": "wait_response", "pattern": "*/never", "timeout": 60}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := strings.ReplaceAll(c.name, " ", "-")
			asked := make(chan struct{}, 1)
			hangs.Store(key, asked)
			t.Cleanup(func() { hangs.Delete(key) })
			tab := r.newTab(s, "/text")
			r.ok(s, "navigate", map[string]any{"tabId": tab, "url": site + "/text"})
			if !c.loads {
				r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "fetch('/hang?k=" + key + "'); 1"})
			}
			waiting := make(chan struct{}, 1)
			tools.OnWait(t, func(id int) {
				if id == tab {
					select {
					case waiting <- struct{}{}:
					default:
					}
				}
			})
			answer := make(chan *tools.Result, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				raw, _ := json.Marshal(c.args(tab))
				answer <- r.e.Call(ctx, s, c.tool, raw)
			}()
			ctx := ctxFor(t)
			for _, ch := range []chan struct{}{waiting, asked} {
				select {
				case <-ch:
				case <-ctx.Done():
					t.Fatal("the call never started waiting")
				}
			}
			// Page.crash never answers: the renderer is gone first.
			crashCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, _ = shared.hub.CDP(crashCtx, tab, "Page.crash", nil, "", "test")
			cancel()
			var res *tools.Result
			select {
			case res = <-answer:
			case <-ctx.Done():
				t.Fatalf("%s did not answer after the crash", c.tool)
			}
			if !res.IsError || res.Code != wire.CodeAttachFailed || !strings.Contains(text(res), "crashed") {
				t.Fatalf("%s answered %v %q: %s; want attach_failed saying the page crashed", c.tool, res.IsError, res.Code, text(res))
			}
			// Navigating loads it again.
			if out := r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/text"}); !strings.Contains(out, "/text") {
				t.Fatalf("navigate after the crash: %s", out)
			}
		})
	}
}

// The engine's crash notice lasts until the page commits a document again,
// or until the debugger detaches (detached, it would hear no load that ends
// the crash; the browser's side refuses a crashed page's calls).
func TestACrashLastsUntilALoadOrADetach(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, nil)
	alice := p.e.NewSession("agent:alice", "alice")
	idle := map[string]any{"tabId": p.tab, "networkIdle": true, "timeout": 5}
	// An event reaches the engine on the link's reader before the answer
	// to a command sent after it: the script's round trip orders them.
	send := func(event string, v any) {
		t.Helper()
		if err := p.ext.Send(event, v); err != nil {
			t.Fatal(err)
		}
		p.ok(alice, "javascript_tool", map[string]any{"tabId": p.tab, "text": "1"})
	}
	crash := wire.CDPEvent{TabID: 1, Method: "Inspector.targetCrashed", Params: json.RawMessage(`{}`)}
	p.ok(alice, "wait_for", idle)

	send(wire.EventCDPEvent, crash)
	wantCode(t, p.call(alice, "wait_for", idle), wire.CodeAttachFailed)
	// A child frame's document does not end it; the main frame's does.
	send(wire.EventCDPEvent, wire.CDPEvent{TabID: 1, Method: "Page.frameNavigated", Params: json.RawMessage(`{"frame":{"id":"C1","parentId":"F1","loaderId":"L1"}}`)})
	wantCode(t, p.call(alice, "wait_for", idle), wire.CodeAttachFailed)
	send(wire.EventCDPEvent, wire.CDPEvent{TabID: 1, Method: "Page.frameNavigated", Params: json.RawMessage(`{"frame":{"id":"F1","loaderId":"L2"}}`)})
	p.ok(alice, "wait_for", idle)

	send(wire.EventCDPEvent, crash)
	wantCode(t, p.call(alice, "wait_for", idle), wire.CodeAttachFailed)
	send(wire.EventDetached, wire.Detached{TabID: 1, Reason: "idle"})
	p.ok(alice, "wait_for", idle)
}
