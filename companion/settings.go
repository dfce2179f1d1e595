package companion

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// SettingsFile is the file in the data dir that keeps the person's choices
// from the dashboard's Settings view across restarts.
const SettingsFile = "settings.json"

// CodeToolDisabled is the code of a call to a tool the person turned off in
// Reins' settings. It sits beside the wire codes the way the engine's own
// page-failure codes do: only the companion refuses for this reason.
const CodeToolDisabled wire.Code = "tool_disabled"

// settingsDoc is settings.json. Overlay is a pointer so a file written
// before the field existed keeps the default (on).
type settingsDoc struct {
	Version         int              `json:"version"`
	DisabledTools   []string         `json:"disabledTools"`
	Overlay         *bool            `json:"overlay,omitempty"`
	BlockedBrowsers []BlockedBrowser `json:"blockedBrowsers,omitempty"`
	// DialogTimeoutSeconds is how long a dialog in an agent's tab waits
	// for the agent before Reins dismisses it; 0 means the default.
	DialogTimeoutSeconds int `json:"dialogTimeoutSeconds,omitempty"`
}

// loadSettings reads settings.json. A missing file means the defaults
// (every tool on, overlay on). An unreadable one is an error rather than a
// silent reset: quietly dropping it would turn back on tools the person
// turned off.
func (c *Companion) loadSettings() error {
	path := filepath.Join(c.cfg.DataDir, SettingsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.overlay.Store(true)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading settings: %w", err)
	}
	var doc settingsDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("reading settings: %s is not valid JSON (fix or delete it): %w", path, err)
	}
	c.overlay.Store(doc.Overlay == nil || *doc.Overlay)
	if doc.DialogTimeoutSeconds > 0 {
		// A hand-edited value outside the bounds is brought within them.
		c.dialogTimeout.Store(int64(tools.ClampDialogTimeout(time.Duration(doc.DialogTimeoutSeconds) * time.Second)))
	}
	c.setMu.Lock()
	c.disabled = normalizeTools(doc.DisabledTools)
	c.blocked = doc.BlockedBrowsers
	c.setMu.Unlock()
	return nil
}

// saveSettingsLocked writes settings.json atomically with mode 0600; the
// caller holds setMu so two writers cannot interleave.
func (c *Companion) saveSettingsLocked(disabled []string, overlay bool, blocked []BlockedBrowser) error {
	doc := settingsDoc{Version: 1, DisabledTools: disabled, Overlay: &overlay, BlockedBrowsers: blocked,
		DialogTimeoutSeconds: int(time.Duration(c.dialogTimeout.Load()) / time.Second)}
	if doc.DisabledTools == nil {
		doc.DisabledTools = []string{}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(c.cfg.DataDir, SettingsFile)
	tmp, err := os.CreateTemp(c.cfg.DataDir, ".settings-*.tmp")
	if err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("saving settings: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("saving settings: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	return nil
}

func normalizeTools(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

// Tools lists the name of every tool of the catalog, sorted.
func (c *Companion) Tools() []string {
	r := c.runner()
	if r == nil {
		return nil
	}
	var names []string
	for _, info := range r.Catalog() {
		names = append(names, info.Name)
	}
	slices.Sort(names)
	return names
}

// DisabledTools lists the tools no agent may call, sorted.
func (c *Companion) DisabledTools() []string {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	return slices.Clone(c.disabled)
}

// SetDisabledTools replaces the set of tools no agent or paired backend may
// call. It is saved before it applies, so what the person sees is what
// survives a restart. Extensions receive it in the policy event.
func (c *Companion) SetDisabledTools(names []string) error {
	names = normalizeTools(names)
	if known := c.Tools(); known != nil {
		for _, n := range names {
			if _, found := slices.BinarySearch(known, n); !found {
				return fmt.Errorf("%w: %q", errUnknownTool, n)
			}
		}
	}
	c.setMu.Lock()
	if slices.Equal(names, c.disabled) {
		c.setMu.Unlock()
		return nil
	}
	if err := c.saveSettingsLocked(names, c.overlay.Load(), c.blocked); err != nil {
		c.setMu.Unlock()
		return err
	}
	c.disabled = names
	c.mcp.SetHidden(names)
	c.setMu.Unlock()
	c.log.Info("disabled tools changed", "disabled", names)
	c.pushPolicy()
	c.changed()
	return nil
}

var errUnknownTool = errors.New("no such tool")

// refuseHiddenCall refuses, for the MCP layer, a call to a tool taken out of
// tools/list, and records it in the activity as the engine records its own
// refusals.
func (c *Companion) refuseHiddenCall(principal, label, tool string) error {
	err := c.toolRefusal(tool)
	if err != nil {
		c.RecordActivity(tools.Activity{Time: time.Now(), Principal: principal, Agent: label, Tool: tool, Outcome: string(wire.CodeOf(err))})
	}
	return err
}

// Overlay reports whether the "controlled by an agent" overlay is shown in
// shared tabs.
func (c *Companion) Overlay() bool { return c.overlay.Load() }

// SetOverlay turns the page overlay in shared tabs on or off, saves the
// choice, and sends it to the extensions.
func (c *Companion) SetOverlay(on bool) error {
	c.setMu.Lock()
	if err := c.saveSettingsLocked(c.disabled, on, c.blocked); err != nil {
		c.setMu.Unlock()
		return err
	}
	changed := c.overlay.Swap(on) != on
	c.setMu.Unlock()
	if !changed {
		return nil
	}
	c.log.Info("page overlay", "on", on)
	c.pushPolicy()
	c.changed()
	return nil
}

// DialogTimeout is how long a dialog in an agent's tab waits for an answer
// before Reins dismisses it.
func (c *Companion) DialogTimeout() time.Duration {
	return tools.ClampDialogTimeout(time.Duration(c.dialogTimeout.Load()))
}

// SetDialogTimeout changes how long a dialog in an agent's tab waits for an
// answer, from tools.MinDialogTimeout to tools.MaxDialogTimeout in whole
// seconds, and saves it. Dialogs already open keep the timeout they opened
// with.
func (c *Companion) SetDialogTimeout(d time.Duration) error {
	if d < tools.MinDialogTimeout || d > tools.MaxDialogTimeout || d%time.Second != 0 {
		return fmt.Errorf("%w: a dialog timeout is whole seconds from %s to %s, not %s", errBadSetting, tools.MinDialogTimeout, tools.MaxDialogTimeout, d)
	}
	c.setMu.Lock()
	old := c.dialogTimeout.Swap(int64(d))
	if err := c.saveSettingsLocked(c.disabled, c.overlay.Load(), c.blocked); err != nil {
		c.dialogTimeout.Store(old)
		c.setMu.Unlock()
		return err
	}
	c.setMu.Unlock()
	if time.Duration(old) == d {
		return nil
	}
	c.log.Info("dialog timeout", "timeout", d)
	c.changed()
	return nil
}

var errBadSetting = errors.New("setting out of range")

// toolRefusal is the engine's check before every call and batch step: a
// tool the person turned off fails with CodeToolDisabled.
func (c *Companion) toolRefusal(tool string) error {
	c.setMu.Lock()
	_, off := slices.BinarySearch(c.disabled, tool)
	c.setMu.Unlock()
	if off {
		return wire.Errorf(CodeToolDisabled, "%s is turned off in Reins' settings; the person can turn it back on in the dashboard", tool)
	}
	return nil
}
