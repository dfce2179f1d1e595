//go:build !nogui

package app

import (
	"testing"

	"github.com/reinshq/reins/ui"
)

// The two permissions travel both ways: the UI's clicks change the
// companion, and the companion's state reaches the UI, per agent by its
// principal.
func TestBindingDeveloperAgentsAndExtensions(t *testing.T) {
	e := startBound(t)
	if _, err := e.b.IssueToken("builder"); err != nil {
		t.Fatal(err)
	}
	s := e.wait(t, "the agent", func(s ui.State) bool { return len(s.Agents) == 1 })
	a := s.Agents[0]
	if a.ID == "" || a.Developer || s.ManageExtensions {
		t.Fatalf("agent %+v, manage extensions %v", a, s.ManageExtensions)
	}
	if err := e.b.SetDeveloperAgent(a.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetManageExtensions(true); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the marks", func(s ui.State) bool {
		return len(s.Agents) == 1 && s.Agents[0].Developer && s.ManageExtensions
	})
	if !e.c.IsDeveloperAgent(a.ID) || !e.c.ManageExtensions() {
		t.Fatal("the companion did not take the changes")
	}
	if err := e.b.RevokeToken("builder"); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "the revoked agent to go", func(s ui.State) bool { return len(s.Agents) == 0 })
	if len(e.c.DeveloperAgents()) != 0 {
		t.Fatalf("a revoked agent is still a developer agent: %v", e.c.DeveloperAgents())
	}
}
