package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// An agent whose client launched `reins mcp` (Claude Desktop, Claude
// Code) keeps working when the companion crashes and starts again, on its
// own tab, with no step of the client's: a call made while the companion
// is down is refused at once, and once it is back the same client session
// goes on. Before, the bridge died with the companion and the client had
// lost Reins until the person restarted it.
func TestReinsMCPOutlivesACompanionCrash(t *testing.T) {
	s := newStack(t)
	ctx := within(t, 3*time.Minute)
	bin, err := harness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	issueToken(t, s.Reins, "desktop")
	cmd := exec.Command(bin, "mcp", "--token-name", "desktop", "--data-dir", s.Reins.DataDir, "--keyring", "file")
	cl := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting through reins mcp: %v", err)
	}
	defer cs.Close()
	url := s.Pages.URL("bridge")
	out := mustTool(t, cs, "tabs_create_mcp", map[string]any{"url": url})
	m := tabCreated.FindStringSubmatch(out.text)
	if m == nil {
		t.Fatalf("tabs_create_mcp answered %s", out.text)
	}
	tab, _ := strconv.Atoi(m[1])
	mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "document.title"})

	if err := s.Reins.Kill(); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "javascript_tool", Arguments: map[string]any{"tabId": tab, "text": "1"}})
	if err == nil || !strings.Contains(err.Error(), "Reins is not running") {
		t.Fatalf("a call while the companion is down: %v", err)
	}

	if err := s.Reins.Relaunch(ctx); err != nil {
		t.Fatal(err)
	}
	// The restarted companion numbers tabs anew: the agent finds its own
	// in its context once the extension is back, as an agent does after a
	// restart. Every call from the first on reaches the new companion.
	next := harness.Backoff()
	for tab = 0; tab == 0; {
		for id, e := range agentTabs(t, cs) {
			if e.URL == url && e.SharedBy == "you" {
				tab = id
			}
		}
		if tab == 0 {
			select {
			case <-ctx.Done():
				t.Fatal("the agent's tab never came back")
			case <-time.After(next()):
			}
		}
	}
	got := mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "document.title"}).text
	if want := harness.TestPageTitle("bridge"); !strings.Contains(got, want) {
		t.Fatalf("after the restart the tab's title is %q, want %q", got, want)
	}
}
