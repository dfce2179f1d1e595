package app

import (
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/mcp"
)

// `reins settings` turns on the two permissions a headless companion has
// no dashboard for, on the running companion, by token name.
func TestSettingsCommand(t *testing.T) {
	r := startCompanion(t)
	code, out, errOut := run(t, nil, "settings", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "agents may manage extensions: off") || !strings.Contains(out, "developer agents (raw DevTools): none") {
		t.Fatalf("settings: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := run(t, nil, "settings", "extensions", "on", "--data-dir", r.dir); code != 0 || !strings.Contains(out, "manage extensions: on") || !r.c.ManageExtensions() {
		t.Fatalf("extensions on: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := run(t, nil, "settings", "developer", "ghost", "on", "--data-dir", r.dir); code == 0 || !strings.Contains(errOut, `no agent token named "ghost"`) {
		t.Fatalf("an unknown agent: %d %q", code, errOut)
	}
	if code, _, errOut := run(t, nil, "token", "issue", "builder", "--data-dir", r.dir); code != 0 {
		t.Fatalf("token issue: %q", errOut)
	}
	if code, out, errOut := run(t, nil, "settings", "developer", "builder", "on", "--data-dir", r.dir); code != 0 || !strings.Contains(out, "builder is a developer agent") {
		t.Fatalf("developer on: %d %q %q", code, out, errOut)
	}
	infos, _ := r.c.Tokens().List()
	if len(infos) != 1 || !r.c.IsDeveloperAgent(mcp.AgentID(infos[0].ID)) {
		t.Fatalf("the companion does not know builder as a developer agent: %v", r.c.DeveloperAgents())
	}
	code, out, _ = run(t, nil, "settings", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "developer agents (raw DevTools): builder") || !strings.Contains(out, "extensions: on") {
		t.Fatalf("settings after: %q", out)
	}
	if code, _, errOut := run(t, nil, "settings", "extensions", "maybe", "--data-dir", r.dir); code == 0 || !strings.Contains(errOut, "neither on nor off") {
		t.Fatalf("a bad switch: %d %q", code, errOut)
	}
	if code, out, _ := run(t, nil, "settings", "developer", "builder", "off", "--data-dir", r.dir); code != 0 || !strings.Contains(out, "no longer") || len(r.c.DeveloperAgents()) != 0 {
		t.Fatalf("developer off: %q %v", out, r.c.DeveloperAgents())
	}
}
