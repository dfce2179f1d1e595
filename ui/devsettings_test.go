package ui

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2/test"
)

// Settings: "Agents may manage extensions" follows the State, is off unless
// the State says on, and a tap asks the companion.
func TestSettingsManageExtensions(t *testing.T) {
	d, fc, _ := newTestDashboard(t, sampleState())
	v := d.settings
	if v.exts.Checked {
		t.Fatal("managing extensions shows as allowed in a State that does not allow it")
	}
	test.Tap(v.exts)
	if got := fc.Calls(); !slices.Equal(got, []string{"SetManageExtensions(true)"}) {
		t.Fatalf("calls = %q", got)
	}
	s := sampleState()
	s.ManageExtensions = true
	d.Update(s)
	if !v.exts.Checked || len(fc.Calls()) != 1 {
		t.Fatalf("applying a State: checked %v, calls %q", v.exts.Checked, fc.Calls())
	}
	test.Tap(v.exts)
	if got := fc.Calls(); got[len(got)-1] != "SetManageExtensions(false)" {
		t.Fatalf("calls = %q", got)
	}
	// A change the companion refuses goes back to what the State says.
	d2, fc2, _ := newTestDashboard(t, sampleState())
	fc2.fail = true
	test.Tap(d2.settings.exts)
	if d2.settings.exts.Checked {
		t.Fatal("a refused change left the check on")
	}
}

// Agents view: each agent has a "Developer agent" mark that follows the
// State, and a tap marks or unmarks that agent by its id, not its name.
func TestAgentsDeveloperMark(t *testing.T) {
	d, fc, _ := newTestDashboard(t, sampleState())
	d.Select(ViewAgents)
	claude, cursor := d.agents.devs["claude-code"], d.agents.devs["cursor"]
	if claude == nil || cursor == nil {
		t.Fatalf("developer marks: %v", d.agents.devs)
	}
	if claude.Checked || !cursor.Checked {
		t.Fatalf("marks do not follow the State: claude %v, cursor %v", claude.Checked, cursor.Checked)
	}
	if len(fc.Calls()) != 0 {
		t.Fatalf("showing the marks called the companion: %q", fc.Calls())
	}
	test.Tap(claude)
	test.Tap(cursor)
	want := []string{"SetDeveloperAgent(agent:t1, true)", "SetDeveloperAgent(agent:t2, false)"}
	if got := fc.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls = %q, want %q", got, want)
	}
	d2, fc2, _ := newTestDashboard(t, sampleState())
	d2.Select(ViewAgents)
	fc2.fail = true
	test.Tap(d2.agents.devs["claude-code"])
	if d2.agents.devs["claude-code"].Checked || len(fc2.Calls()) != 1 {
		t.Fatalf("a refused mark stayed checked (calls %q)", fc2.Calls())
	}
}
