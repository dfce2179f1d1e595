package companion

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

func TestSettingsDefaults(t *testing.T) {
	c := quietCompanion(t, t.TempDir())
	if !c.Overlay() || len(c.DisabledTools()) != 0 {
		t.Fatalf("defaults: overlay %v, disabled %v", c.Overlay(), c.DisabledTools())
	}
	if p := c.hub.Policy(); !p.Overlay || p.Paused || len(p.Disabled) != 0 {
		t.Fatalf("the hub's first policy does not carry the settings: %+v", p)
	}
	if tools := c.Tools(); len(tools) < 10 || !slices.IsSorted(tools) || !slices.Contains(tools, "computer") {
		t.Fatalf("tools %v", tools)
	}
}

func TestSettingsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	c := quietCompanion(t, dir)
	if err := c.SetDisabledTools([]string{"javascript_tool", "computer", "computer"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetOverlay(false); err != nil {
		t.Fatal(err)
	}
	if got := c.DisabledTools(); !slices.Equal(got, []string{"computer", "javascript_tool"}) {
		t.Fatalf("disabled %v", got)
	}
	if p := c.hub.Policy(); p.Overlay || !slices.Equal(p.Disabled, []string{"computer", "javascript_tool"}) {
		t.Fatalf("policy for extensions %+v", p)
	}
	path := filepath.Join(dir, SettingsFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings.json mode %v, want 0600", fi.Mode().Perm())
	}
	c.Shutdown(t.Context())

	again := quietCompanion(t, dir)
	if again.Overlay() || !slices.Equal(again.DisabledTools(), []string{"computer", "javascript_tool"}) {
		t.Fatalf("after restart: overlay %v, disabled %v", again.Overlay(), again.DisabledTools())
	}
	if p := again.hub.Policy(); p.Overlay || len(p.Disabled) != 2 {
		t.Fatalf("after restart the policy is %+v", p)
	}
	if err := again.SetDisabledTools(nil); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if d, ok := doc["disabledTools"].([]any); !ok || len(d) != 0 || doc["overlay"] != false {
		t.Fatalf("settings.json after re-enabling every tool: %s", data)
	}
}

func TestSettingsRefuseUnknownToolsAndBadFiles(t *testing.T) {
	dir := t.TempDir()
	c := quietCompanion(t, dir)
	if err := c.SetDisabledTools([]string{"computer", "launch_missiles"}); !errors.Is(err, errUnknownTool) || !strings.Contains(err.Error(), "launch_missiles") {
		t.Fatalf("unknown tool: %v", err)
	}
	if len(c.DisabledTools()) != 0 {
		t.Fatal("a refused change applied anyway")
	}
	c.Shutdown(t.Context())

	// A settings file that cannot be read must not silently turn back on
	// the tools it turned off.
	if err := os.WriteFile(filepath.Join(dir, SettingsFile), []byte(`{"disabledTools": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Port: 47998, DataDir: dir, NoAdmin: true}); err == nil || !strings.Contains(err.Error(), SettingsFile) {
		t.Fatalf("a corrupt settings file: %v", err)
	}
}

// The engine refuses a disabled tool, alone and as a browser_batch step,
// before it reaches any browser.
func TestEngineRefusesDisabledTools(t *testing.T) {
	c := quietCompanion(t, t.TempDir())
	if err := c.SetDisabledTools([]string{"tabs_context_mcp"}); err != nil {
		t.Fatal(err)
	}
	s := c.engine.NewSession("agent:c1", "claude")
	res := c.engine.Call(t.Context(), s, "tabs_context_mcp", nil)
	if !res.IsError || res.Code != wire.CodeToolDisabled {
		t.Fatalf("disabled tool: %+v", res)
	}
	batch := json.RawMessage(`{"steps":[{"tool":"tabs_context_mcp","args":{}}]}`)
	res = c.engine.Call(t.Context(), s, "browser_batch", batch)
	if !res.IsError || res.Code != wire.CodeToolDisabled {
		t.Fatalf("disabled tool inside a batch: %+v", res)
	}
	acts := c.Activity()
	if len(acts) < 2 || acts[0].Outcome != string(wire.CodeToolDisabled) {
		t.Fatalf("refusals are activity too: %+v", acts)
	}
	if err := c.SetDisabledTools(nil); err != nil {
		t.Fatal(err)
	}
	res = c.engine.Call(t.Context(), s, "tabs_context_mcp", nil)
	if res.IsError && res.Code == wire.CodeToolDisabled {
		t.Fatalf("re-enabled tool still refused: %+v", res)
	}
	if wire.CodeOf(c.toolRefusal("computer")) != "" {
		t.Fatal("an enabled tool is refused")
	}
}

// The dialog timeout is 60 s until the person changes it, whole seconds
// from 5 s to 10 min, saved, and brought within bounds when the file was
// edited by hand.
func TestDialogTimeoutSetting(t *testing.T) {
	dir := t.TempDir()
	c := quietCompanion(t, dir)
	if got := c.DialogTimeout(); got != 60*time.Second {
		t.Fatalf("default %v", got)
	}
	for _, bad := range []time.Duration{0, 4 * time.Second, 10*time.Minute + time.Second, 90*time.Second + 500*time.Millisecond, -time.Second} {
		if err := c.SetDialogTimeout(bad); !errors.Is(err, errBadSetting) {
			t.Errorf("SetDialogTimeout(%v) = %v", bad, err)
		}
	}
	for _, good := range []time.Duration{5 * time.Second, 10 * time.Minute, 2 * time.Minute} {
		if err := c.SetDialogTimeout(good); err != nil || c.DialogTimeout() != good {
			t.Fatalf("SetDialogTimeout(%v): %v, now %v", good, err, c.DialogTimeout())
		}
	}
	c.Shutdown(t.Context())
	again := quietCompanion(t, dir)
	if got := again.DialogTimeout(); got != 2*time.Minute {
		t.Fatalf("after a restart %v", got)
	}
	path := filepath.Join(dir, SettingsFile)
	for _, tc := range []struct {
		seconds int
		want    time.Duration
	}{{1, 5 * time.Second}, {100000, 10 * time.Minute}, {0, 60 * time.Second}} {
		if err := os.WriteFile(path, []byte(`{"version":1,"disabledTools":[],"dialogTimeoutSeconds":`+strconv.Itoa(tc.seconds)+`}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := quietCompanion(t, dir).DialogTimeout(); got != tc.want {
			t.Errorf("a file with %d s gives %v, want %v", tc.seconds, got, tc.want)
		}
	}
}
