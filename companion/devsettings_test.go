package companion

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

// The two permissions behind the extensions and cdp tools: off by default,
// refused by the engine until the person turns them on, saved across
// restarts, and a developer agent's mark dies with its token.
func TestExtensionAndDeveloperSettings(t *testing.T) {
	dir := t.TempDir()
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	start := func() *Companion {
		c, err := New(Config{Port: 47997, DataDir: dir, Tokens: tm, NoAdmin: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Shutdown(t.Context()) })
		return c
	}
	c := start()
	if _, err := tm.Issue("builder"); err != nil {
		t.Fatal(err)
	}
	infos, _ := tm.List()
	dev := mcp.AgentID(infos[0].ID)
	if c.ManageExtensions() || c.IsDeveloperAgent(dev) || len(c.DeveloperAgents()) != 0 {
		t.Fatal("the permissions are on by default")
	}
	s := c.engine.NewSession(dev, "builder")
	for _, call := range []struct{ tool, args string }{
		{"extensions", `{"action":"list"}`},
		{"cdp", `{"tabId":1,"method":"DOM.getDocument"}`},
	} {
		if res := c.engine.Call(t.Context(), s, call.tool, json.RawMessage(call.args)); res.Code != wire.CodeNotAllowed {
			t.Fatalf("%s with the setting off: %+v", call.tool, res)
		}
	}
	if err := c.SetManageExtensions(true); err != nil {
		t.Fatal(err)
	}
	if err := c.SetDeveloperAgent(dev, true); err != nil {
		t.Fatal(err)
	}
	if err := c.SetDeveloperAgent("backend:b1", true); err == nil {
		t.Fatal("a paired backend became a developer agent")
	}
	// Allowed now, the calls go on to the browser, and there is none.
	for _, call := range []struct{ tool, args string }{
		{"extensions", `{"action":"list"}`},
		{"cdp", `{"tabId":1,"method":"DOM.getDocument"}`},
	} {
		if res := c.engine.Call(t.Context(), s, call.tool, json.RawMessage(call.args)); res.Code == wire.CodeNotAllowed || !res.IsError {
			t.Fatalf("%s with the setting on: %+v", call.tool, res)
		}
	}
	other := c.engine.NewSession("agent:someone-else", "builder")
	if res := c.engine.Call(t.Context(), other, "cdp", json.RawMessage(`{"tabId":1,"method":"DOM.getDocument"}`)); res.Code != wire.CodeNotAllowed {
		t.Fatalf("another principal with the same label: %+v", res)
	}
	c.Shutdown(t.Context())

	again := start()
	if !again.ManageExtensions() || !slices.Equal(again.DeveloperAgents(), []string{dev}) {
		t.Fatalf("after a restart: manage %v, developers %v", again.ManageExtensions(), again.DeveloperAgents())
	}
	var doc map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, SettingsFile))
	if json.Unmarshal(data, &doc) != nil || doc["manageExtensions"] != true {
		t.Fatalf("settings.json: %s", data)
	}
	// Revoking the token drops the mark; the same name issued again is a
	// new principal, and not a developer agent.
	if err := tm.Revoke("builder"); err != nil {
		t.Fatal(err)
	}
	if again.IsDeveloperAgent(dev) {
		t.Fatal("a revoked token stays a developer agent")
	}
	if _, err := tm.Issue("builder"); err != nil {
		t.Fatal(err)
	}
	infos, _ = tm.List()
	if again.IsDeveloperAgent(mcp.AgentID(infos[0].ID)) {
		t.Fatal("a token issued anew under the name inherited the mark")
	}
	if err := again.SetManageExtensions(false); err != nil || again.ManageExtensions() {
		t.Fatalf("turning it off: %v", err)
	}
	// Like every tool, the new ones can be turned off altogether.
	if err := again.SetDisabledTools([]string{"cdp", "devtools", "emulate", "extensions", "storage"}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"cdp", "devtools", "emulate", "extensions", "storage"} {
		if res := again.engine.Call(t.Context(), again.engine.NewSession("agent:x", "x"), tool, json.RawMessage(`{"tabId":1,"action":"list"}`)); res.Code != wire.CodeToolDisabled {
			t.Fatalf("%s turned off: %+v", tool, res)
		}
	}
}
