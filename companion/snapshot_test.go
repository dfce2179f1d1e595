package companion_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

// The dashboard and the extensions draw one graph: what a Graph-enabled
// profile receives in graph.state is the Snapshot's graph as Wire gives it,
// while agents come and go. The rest of the Snapshot reads the same moment.
func TestSnapshotAndGraphStateAgree(t *testing.T) {
	dir := t.TempDir()
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, Tokens: tm, NoAdmin: true, Version: "test"})
	x := dialExt(t, dir, port, "inst-graph")
	graphs := companiontest.RecordGraphs(t, x)
	if err := x.SendTabs([]wire.TabInfo{
		{ID: 1, URL: "https://a.test/", Title: "A", Shared: true, WindowID: 1},
		{ID: 2, URL: "https://b.test/", Title: "B", Shared: true, WindowID: 1},
		{ID: 3, URL: "https://c.test/", Title: "C", WindowID: 1},
	}); err != nil {
		t.Fatal(err)
	}
	y := dialExt(t, dir, port, "inst-other") // no Graph: it gets no graph.state
	if err := y.SendTabs([]wire.TabInfo{{ID: 7, URL: "https://d.test/", Title: "D", Shared: true, WindowID: 1}}); err != nil {
		t.Fatal(err)
	}
	waitBrowsers(t, c, 2)

	// agrees waits for a graph.state that is the Snapshot's graph, seen
	// from x, and returns that Snapshot.
	agrees := func(what string, ok func(companion.Snapshot) bool) companion.Snapshot {
		t.Helper()
		deadline := time.After(10 * time.Second)
		var last wire.ConnectionGraph
		for {
			select {
			case g := <-graphs:
				last = g
				s := c.Snapshot()
				want := s.Graph.Wire()
				want.ThisBrowserID = g.ThisBrowserID
				if ok(s) && reflect.DeepEqual(g, want) {
					return s
				}
			case <-deadline:
				t.Fatalf("no graph.state %s that agrees with the Snapshot; last %+v, snapshot %+v", what, last, c.Snapshot().Graph)
			}
		}
	}
	s := agrees("with both browsers", func(s companion.Snapshot) bool {
		return len(s.Graph.Browsers) == 2 && s.Graph.Browsers[0].SharedTabs+s.Graph.Browsers[1].SharedTabs == 3
	})
	if len(s.Graph.Agents) != 0 || len(s.Tabs) != 3 || s.Port != port || s.Version != "test" || s.Paused || !s.Overlay || len(s.Tools) < 10 {
		t.Fatalf("snapshot %+v", s)
	}

	tok, err := tm.Issue("claude")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tm.Issue("idle"); err != nil {
		t.Fatal(err)
	}
	cs, err := companiontest.Connect(t, port, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	s = agrees("with claude", func(s companion.Snapshot) bool { return len(s.Graph.Agents) == 1 && s.Graph.Agents[0].Connected })
	if a := s.Graph.Agents[0]; a.Name != "claude" || a.Backend || a.LastSeen.IsZero() {
		t.Fatalf("agent node %+v", a)
	}
	if len(s.Agents) != 2 || s.Agents[0].Name != "claude" || !s.Agents[0].Connected || s.Agents[1].Name != "idle" || s.Agents[1].Connected {
		t.Fatalf("tokens %+v", s.Agents)
	}

	// Gone, claude stays a node of the dashboard (not connected) and leaves
	// the extensions' graph.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	s = agrees("without claude", func(s companion.Snapshot) bool { return len(s.Graph.Agents) == 1 && !s.Graph.Agents[0].Connected })
	if w := s.Graph.Wire(); len(w.Agents) != 0 {
		t.Fatalf("a disconnected agent in graph.state: %+v", w.Agents)
	}
}
