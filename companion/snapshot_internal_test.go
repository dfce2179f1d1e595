package companion

import (
	"reflect"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/wire"
)

// The one computation of the connection graph: which agents are nodes, how
// a browser's tabs are counted, which tabs make edges; and what of it the
// extensions get.
func TestGraphFromState(t *testing.T) {
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := state{
		agents: []mcp.AgentInfo{
			{ID: "agent:t1", Name: "claude", Connected: true, LastSeen: seen},
			{ID: "agent:t2", Name: "cursor", LastSeen: seen}, // left: still a node, not connected
		},
		backends: []operator.State{
			{Record: operator.Record{ID: "b1"}, Principal: "backend:b1", Agent: "claude", Connected: true},
			{Record: operator.Record{ID: "b2", Revoked: true}, Principal: "backend:b2", Agent: "Gone"},
		},
		browsers: []hub.BrowserInfo{
			{ID: "1", Name: "Chrome (Work)", Mode: hub.ModeExtension, Engine: wire.EngineChromium, SharedTabs: 2, OpenTabs: 5,
				Hello: wire.Hello{Browser: "Chrome", Profile: "Work"}},
			{ID: "2", Name: "Dev", Mode: hub.ModeDev, Engine: wire.EngineChromium, SharedTabs: 1, OpenTabs: 1},
		},
		tabs: []hub.Tab{
			{TabInfo: wire.TabInfo{ID: 10, Shared: true}, BrowserID: "1"},
			{TabInfo: wire.TabInfo{ID: 11, Shared: true}, BrowserID: "1"},
			{TabInfo: wire.TabInfo{ID: 12}, BrowserID: "1"},
			{TabInfo: wire.TabInfo{ID: 20, Shared: true}, BrowserID: "2"},
		},
		users: map[int]string{10: "agent:t1", 11: "backend:b1", 12: "agent:t1", 20: "backend:b2"},
	}
	g := st.graph()
	want := Graph{
		Agents: []GraphAgent{
			{ID: "agent:t1", Name: "claude", Connected: true, LastSeen: seen},
			{ID: "agent:t2", Name: "cursor", LastSeen: seen},
			{ID: "backend:b1", Name: "claude", Backend: true, Connected: true},
		},
		Browsers: []GraphBrowser{
			{ID: "1", Name: "Chrome (Work)", Mode: hub.ModeExtension, Engine: wire.EngineChromium, Browser: "Chrome", Profile: "Work", SharedTabs: 2},
			{ID: "2", Name: "Dev", Mode: hub.ModeDev, Engine: wire.EngineChromium, SharedTabs: 1},
		},
		// Tab 12 is not shared and tab 20's principal is a revoked backend:
		// neither is an edge.
		Edges: []GraphEdge{{AgentID: "agent:t1", BrowserID: "1", Tabs: 1}, {AgentID: "backend:b1", BrowserID: "1", Tabs: 1}},
	}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("graph\n%+v\nwant\n%+v", g, want)
	}
	w := g.Wire()
	wantWire := wire.ConnectionGraph{
		Agents: []wire.GraphAgent{{ID: "agent:t1", Name: "claude"}, {ID: "backend:b1", Name: "claude"}},
		Browsers: []wire.GraphBrowser{
			{ID: "1", Name: "Chrome (Work)", Mode: "extension", SharedTabs: 2, BrowserEngine: wire.EngineChromium},
			{ID: "2", Name: "Dev", Mode: "dev", SharedTabs: 1, BrowserEngine: wire.EngineChromium},
		},
	}
	if !reflect.DeepEqual(w, wantWire) {
		t.Fatalf("graph.state\n%+v\nwant\n%+v", w, wantWire)
	}
	// An empty graph is empty lists, never null, on the wire.
	if w := (state{}).graph().Wire(); w.Agents == nil || w.Browsers == nil {
		t.Fatalf("empty graph.state %+v", w)
	}
}
