package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// panicLog records the engine's "tool panicked" lines: the engine turns a
// panic into an internal error, so only its log tells one happened.
type panicLog struct {
	mu     sync.Mutex
	panics []string
}

func (p *panicLog) Enabled(context.Context, slog.Level) bool { return true }
func (p *panicLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p *panicLog) WithGroup(string) slog.Handler            { return p }
func (p *panicLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panicked") {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		p.mu.Lock()
		p.panics = append(p.panics, b.String())
		p.mu.Unlock()
	}
	return nil
}

func (p *panicLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.panics
	p.panics = nil
	return out
}

// exampleArgs is an argument object for a tool's schema with a plausible
// value for every property (an enum's first value, a type's simple one),
// so the seeds reach past the argument check into the tool.
func exampleArgs(schema json.RawMessage) []byte {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
			Enum []any  `json:"enum"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	out := map[string]any{}
	for name, p := range s.Properties {
		switch {
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
		case p.Type == "string":
			out[name] = "x"
		case p.Type == "integer":
			out[name] = 1
		case p.Type == "number":
			out[name] = 1.5
		case p.Type == "boolean":
			out[name] = true
		case p.Type == "array":
			out[name] = []any{}
		case p.Type == "object":
			out[name] = map[string]any{}
		}
	}
	data, _ := json.Marshal(out)
	return data
}

// fuzzCallTimeout bounds each fuzzed call; the engine's own waits are cut
// short so that no call needs it.
const fuzzCallTimeout = 3 * time.Second

// FuzzToolArguments feeds fuzzed JSON arguments to every tool of the
// engine's catalog (tool picks one by index, so a tool added later is
// fuzzed too) through the real handlers, against a fake extension. Whatever
// the arguments, no tool panics, and each call answers in time with a
// result or an error whose code is in the wire table.
func FuzzToolArguments(f *testing.F) {
	const principal = "agent:fuzz"
	env := newFake(f, []wire.TabInfo{{ID: 101, URL: "https://shop.example/cart", Title: "Cart", Shared: true, Agent: true, Owner: principal, WindowID: 1}})
	logs := &panicLog{}
	e := tools.NewEngine(tools.Options{
		Hub: env.hub, Logger: slog.New(logs),
		NavigationTimeout: 200 * time.Millisecond, SettleTimeout: 100 * time.Millisecond, QuietWindow: 10 * time.Millisecond,
	})
	f.Cleanup(e.Close)
	catalog := e.Catalog()
	tab := env.hub.Tabs()[0].ID
	for i, info := range catalog {
		idx := uint16(i)
		f.Add(idx, []byte(`{}`))
		f.Add(idx, []byte(`null`))
		f.Add(idx, exampleArgs(info.InputSchema))
		var withTab map[string]any
		json.Unmarshal(exampleArgs(info.InputSchema), &withTab)
		withTab["tabId"] = tab
		data, _ := json.Marshal(withTab)
		f.Add(idx, data)
	}
	f.Add(uint16(0), []byte(`{"tabId":-1,"x":[1,2,{"y":null}]}`))
	f.Add(uint16(1), []byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, which uint16, args []byte) {
		info := catalog[int(which)%len(catalog)]
		ctx, cancel := context.WithTimeout(context.Background(), fuzzCallTimeout)
		defer cancel()
		start := time.Now()
		res := e.Call(ctx, e.NewSession(principal, "fuzz"), info.Name, args)
		if took := time.Since(start); took > fuzzCallTimeout+2*time.Second {
			t.Fatalf("%s %s answered after %s, past its deadline", info.Name, args, took)
		}
		if p := logs.take(); len(p) > 0 {
			t.Fatalf("%s %s panicked: %s", info.Name, args, p)
		}
		if res == nil {
			t.Fatalf("%s %s: no result", info.Name, args)
		}
		if res.IsError {
			if !slices.Contains(wire.Codes, res.Code) {
				t.Fatalf("%s %s failed with code %q, which is not in the wire table: %s", info.Name, args, res.Code, text(res))
			}
			if !strings.HasPrefix(text(res), "["+string(res.Code)+"] ") {
				t.Fatalf("%s %s: an error whose text does not start with its code: %s", info.Name, args, text(res))
			}
			return
		}
		for _, c := range res.Content {
			if c.Type != "text" && c.Type != "image" {
				t.Fatalf("%s %s: content of type %q", info.Name, args, c.Type)
			}
		}
	})
}
