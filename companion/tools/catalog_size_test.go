package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/tools"
)

// maxToolsList bounds what tools/list sends an agent, below Playwright
// MCP's 20.3k characters: every tool's description and schema counts.
const maxToolsList = 20000

func TestToolsListSize(t *testing.T) {
	e := tools.NewEngine(tools.Options{Hub: hub.New(hub.Options{Logger: quietLogger()}), Logger: quietLogger()})
	defer e.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "reins", Version: "test"}, nil)
	e.RegisterMCP(srv, func(context.Context, *mcp.CallToolRequest) (*tools.Session, error) { return nil, nil }, nil)
	ct, st := mcp.NewInMemoryTransports()
	ctx := ctxFor(t)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "size", Version: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tools/list: %d tools, %d characters", len(list.Tools), len(raw))
	for _, tl := range list.Tools {
		one, _ := json.Marshal(tl)
		t.Logf("  %-22s %5d", tl.Name, len(one))
	}
	if len(raw) > maxToolsList {
		t.Fatalf("tools/list is %d characters, more than %d", len(raw), maxToolsList)
	}
}
