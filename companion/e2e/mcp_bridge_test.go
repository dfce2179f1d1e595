package e2e

import (
	"encoding/json"
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
// own tab, with no step of the client's: calls made while the companion is
// away are refused at once, and once it is back the same client session
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
	call := func(name string, args map[string]any) (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "", err
		}
		var out strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				out.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return "", &toolError{out.String()}
		}
		return out.String(), nil
	}
	out, err := call("tabs_create_mcp", map[string]any{"url": s.Pages.URL("bridge")})
	if err != nil {
		t.Fatal(err)
	}
	m := tabCreated.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("tabs_create_mcp answered %s", out)
	}
	tab, _ := strconv.Atoi(m[1])
	js := map[string]any{"tabId": tab, "text": "document.title"}
	if _, err := call("javascript_tool", js); err != nil {
		t.Fatal(err)
	}

	if err := s.Reins.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := call("javascript_tool", js); err == nil || !strings.Contains(err.Error(), "Reins is not running") {
		t.Fatalf("a call while the companion is down: %v", err)
	}

	if err := s.Reins.Relaunch(ctx); err != nil {
		t.Fatal(err)
	}
	// The restarted companion numbers tabs anew: the agent finds its own
	// in its context once the extension is back, as an agent does after a
	// restart. Every call from the first on reaches the new companion.
	url := s.Pages.URL("bridge")
	next := harness.Backoff()
	for tab = 0; tab == 0; {
		out, err := call("tabs_context_mcp", nil)
		if err != nil {
			t.Fatalf("the agent's context after the restart: %v", err)
		}
		var tc struct {
			Tabs []struct {
				TabID    int    `json:"tabId"`
				URL      string `json:"url"`
				SharedBy string `json:"sharedBy"`
			} `json:"tabs"`
		}
		if i := strings.LastIndex(out, "}"); i >= 0 {
			json.Unmarshal([]byte(out[:i+1]), &tc)
		}
		for _, e := range tc.Tabs {
			if e.URL == url && e.SharedBy == "you" {
				tab = e.TabID
			}
		}
		if tab == 0 {
			select {
			case <-ctx.Done():
				t.Fatalf("the agent's tab never came back; its context: %s", out)
			case <-time.After(next()):
			}
		}
	}
	got, err := call("javascript_tool", map[string]any{"tabId": tab, "text": "document.title"})
	if err != nil {
		t.Fatalf("the agent's call on its own tab after the restart: %v", err)
	}
	if want := harness.TestPageTitle("bridge"); !strings.Contains(got, want) {
		t.Fatalf("after the restart the tab's title is %q, want %q", got, want)
	}
}

type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }
