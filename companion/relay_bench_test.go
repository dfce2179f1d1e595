package companion_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

// BenchmarkMCPRelay runs javascript_tool through the real MCP endpoint of
// an in-process companion to a fake extension that answers at once, from
// several agents in parallel: the companion's own cost per call (and the
// MCP client's, which shares the process), without a browser. Run it with
// -cpuprofile to see where a call's CPU goes.
func BenchmarkMCPRelay(b *testing.B) {
	dir := b.TempDir()
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		b.Fatal(err)
	}
	c, port := companiontest.Start(b, companion.Config{DataDir: dir, Tokens: tm, NoAdmin: true, Version: "bench"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x, err := hubtest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/", wire.Hello{
		Version: 3, Browser: "Chrome", BrowserEngine: wire.EngineChromium, InstanceID: "bench", BrowserSessionID: "s1",
	}, hubtest.Options{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(x.Kill)
	x.Handle(wire.MethodCDP, func(raw json.RawMessage) (any, error) {
		var p wire.CDPParams
		_ = json.Unmarshal(raw, &p)
		switch p.Method {
		case "Page.getFrameTree":
			return json.RawMessage(`{"frameTree":{"frame":{"id":"F1","url":"https://bench.test/"}}}`), nil
		case "Runtime.evaluate":
			return json.RawMessage(`{"result":{"type":"number","value":2,"description":"2"}}`), nil
		}
		return json.RawMessage(`{}`), nil
	})
	if err := x.SendTabs([]wire.TabInfo{{ID: 1, URL: "https://bench.test/", Title: "Bench", Shared: true, WindowID: 1}}); err != nil {
		b.Fatal(err)
	}
	changes, stop := c.Changes()
	defer stop()
	tab := 0
	for tab == 0 {
		for _, t := range c.Hub().Tabs() {
			tab = t.ID
		}
		if tab == 0 {
			select {
			case <-changes:
			case <-ctx.Done():
				b.Fatal("the fake tab never appeared")
			}
		}
	}
	const agents = 8
	sessions := make([]*sdk.ClientSession, agents)
	for i := range agents {
		tok, err := tm.Issue("bench-" + strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		if sessions[i], err = companiontest.Connect(b, port, tok, nil); err != nil {
			b.Fatal(err)
		}
	}
	params := &sdk.CallToolParams{Name: "javascript_tool", Arguments: map[string]any{"tabId": tab, "text": "1 + 1"}}
	if res, err := sessions[0].CallTool(ctx, params); err != nil || res.IsError {
		b.Fatalf("javascript_tool: %v %+v", err, res)
	}
	var next atomic.Int64
	b.SetParallelism(agents / 2)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		cs := sessions[int(next.Add(1)-1)%agents]
		for pb.Next() {
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Errorf("javascript_tool: %v %+v", err, res)
				return
			}
		}
	})
}
