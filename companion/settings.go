package companion

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/atomicfile"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// SettingsFile is the file in the data dir that keeps the person's choices
// from the dashboard's Settings view across restarts.
const SettingsFile = "settings.json"

// settingsDoc is settings.json. Overlay is a pointer so a file written
// before the field existed keeps the default (on); the two permissions
// below default to off, as a missing field reads.
type settingsDoc struct {
	Version         int              `json:"version"`
	DisabledTools   []string         `json:"disabledTools"`
	Overlay         *bool            `json:"overlay,omitempty"`
	BlockedBrowsers []BlockedBrowser `json:"blockedBrowsers,omitempty"`
	// ManageExtensions lets agents list, enable and disable the browser's
	// extensions (the extensions tool).
	ManageExtensions bool `json:"manageExtensions,omitempty"`
	// DeveloperAgents are the principals ("agent:<token id>") the person
	// marked as developer agents, which may send raw DevTools commands
	// (the cdp tool). A token issued anew under the same name is a new
	// principal and is not one.
	DeveloperAgents []string `json:"developerAgents,omitempty"`
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
	c.manageExt.Store(doc.ManageExtensions)
	if doc.DialogTimeoutSeconds > 0 {
		// A hand-edited value outside the bounds is brought within them.
		c.dialogTimeout.Store(int64(tools.ClampDialogTimeout(time.Duration(doc.DialogTimeoutSeconds) * time.Second)))
	}
	c.setMu.Lock()
	c.disabled = normalizeTools(doc.DisabledTools)
	c.blocked = doc.BlockedBrowsers
	c.developers = normalizeTools(doc.DeveloperAgents)
	c.setMu.Unlock()
	return nil
}

// saveSettingsLocked writes settings.json atomically with mode 0600: the
// settings in force with change applied. The caller holds setMu so two
// writers cannot interleave, and applies the change itself once it saved.
func (c *Companion) saveSettingsLocked(change func(*settingsDoc)) error {
	overlay := c.overlay.Load()
	doc := settingsDoc{
		Version: 1, DisabledTools: c.disabled, Overlay: &overlay, BlockedBrowsers: c.blocked,
		ManageExtensions: c.manageExt.Load(), DeveloperAgents: c.developers,
		DialogTimeoutSeconds: int(time.Duration(c.dialogTimeout.Load()) / time.Second),
	}
	change(&doc)
	if doc.DisabledTools == nil {
		doc.DisabledTools = []string{}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(c.cfg.DataDir, SettingsFile), append(data, '\n'), 0o600); err != nil {
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
	if err := c.saveSettingsLocked(func(d *settingsDoc) { d.DisabledTools = names }); err != nil {
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

// Overlay reports whether the "controlled by an agent" overlay is shown in
// shared tabs.
func (c *Companion) Overlay() bool { return c.overlay.Load() }

// SetOverlay turns the page overlay in shared tabs on or off, saves the
// choice, and sends it to the extensions.
func (c *Companion) SetOverlay(on bool) error {
	c.setMu.Lock()
	if err := c.saveSettingsLocked(func(d *settingsDoc) { d.Overlay = &on }); err != nil {
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

// RawRefusal is the check in front of every raw request the inspection
// routes send to a browser. Such a request can do what any tool does, so it
// runs only while the person lets every tool run: it fails with code paused
// while automation is paused, and with tool_disabled while any tool is
// turned off.
func (c *Companion) RawRefusal() error {
	if err := c.CheckPaused(); err != nil {
		return err
	}
	if off := c.DisabledTools(); len(off) > 0 {
		return wire.Errorf(wire.CodeToolDisabled, "raw browser requests are refused while tools are turned off in Reins' settings (%s)", strings.Join(off, ", "))
	}
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
	if err := c.saveSettingsLocked(func(doc *settingsDoc) { doc.DialogTimeoutSeconds = int(d / time.Second) }); err != nil {
		c.setMu.Unlock()
		return err
	}
	old := c.dialogTimeout.Swap(int64(d))
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
// tool the person turned off fails with wire.CodeToolDisabled.
func (c *Companion) toolRefusal(tool string) error {
	c.setMu.Lock()
	_, off := slices.BinarySearch(c.disabled, tool)
	c.setMu.Unlock()
	if off {
		return wire.Errorf(wire.CodeToolDisabled, "%s is turned off in Reins' settings; the person can turn it back on in the dashboard", tool)
	}
	return nil
}

// ManageExtensions reports whether agents may list, enable and disable the
// browser's extensions. Off until the person turns it on.
func (c *Companion) ManageExtensions() bool { return c.manageExt.Load() }

// SetManageExtensions lets agents manage the browser's extensions, or stops
// them, and saves the choice. The browser still asks the person for its
// own management permission the first time.
func (c *Companion) SetManageExtensions(on bool) error {
	c.setMu.Lock()
	if c.manageExt.Load() == on {
		c.setMu.Unlock()
		return nil
	}
	if err := c.saveSettingsLocked(func(d *settingsDoc) { d.ManageExtensions = on }); err != nil {
		c.setMu.Unlock()
		return err
	}
	c.manageExt.Store(on)
	c.setMu.Unlock()
	c.log.Info("agents may manage extensions", "on", on)
	c.changed()
	return nil
}

// DeveloperAgents lists the principals marked as developer agents, sorted.
func (c *Companion) DeveloperAgents() []string {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	return slices.Clone(c.developers)
}

// IsDeveloperAgent reports whether the person marked principal as a
// developer agent, which may send raw DevTools commands.
func (c *Companion) IsDeveloperAgent(principal string) bool {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	_, found := slices.BinarySearch(c.developers, principal)
	return found
}

var errNotAnAgent = errors.New("only agents with a token can be developer agents")

// SetDeveloperAgent marks an agent (its principal, "agent:<token id>") as a
// developer agent or unmarks it, and saves the choice.
func (c *Companion) SetDeveloperAgent(principal string, on bool) error {
	if !strings.HasPrefix(principal, "agent:") || len(principal) == len("agent:") {
		return fmt.Errorf("%w: %q", errNotAnAgent, principal)
	}
	c.setMu.Lock()
	i, found := slices.BinarySearch(c.developers, principal)
	if found == on {
		c.setMu.Unlock()
		return nil
	}
	next := slices.Clone(c.developers)
	if on {
		next = slices.Insert(next, i, principal)
	} else {
		next = slices.Delete(next, i, i+1)
	}
	if err := c.saveSettingsLocked(func(d *settingsDoc) { d.DeveloperAgents = next }); err != nil {
		c.setMu.Unlock()
		return err
	}
	c.developers = next
	c.setMu.Unlock()
	c.log.Info("developer agent", "principal", principal, "on", on)
	c.changed()
	return nil
}

// forgetDeveloper drops a revoked token's principal from the developer
// agents, so the file does not keep ids that can never come back.
func (c *Companion) forgetDeveloper(principal string) {
	if !c.IsDeveloperAgent(principal) {
		return
	}
	if err := c.SetDeveloperAgent(principal, false); err != nil {
		c.log.Warn("could not forget a revoked developer agent", "principal", principal, "err", err)
	}
}

// adminSettings is the companion as the admin channel's settings routes
// see it: agents by their token names, which is how a person names them on
// the command line.
type adminSettings struct{ c *Companion }

func (a adminSettings) SettingsState() (admin.SettingsResponse, error) {
	out := admin.SettingsResponse{ManageExtensions: a.c.ManageExtensions()}
	ts := a.c.cfg.Tokens
	if ts == nil {
		return out, nil
	}
	infos, err := ts.List()
	if err != nil {
		return out, err
	}
	for _, in := range infos {
		if a.c.IsDeveloperAgent(mcp.AgentID(in.ID)) {
			out.DeveloperAgents = append(out.DeveloperAgents, in.Name)
		}
	}
	slices.Sort(out.DeveloperAgents)
	return out, nil
}

func (a adminSettings) SetManageExtensions(on bool) error { return a.c.SetManageExtensions(on) }

func (a adminSettings) SetDeveloperAgentByName(name string, on bool) error {
	ts := a.c.cfg.Tokens
	if ts == nil {
		return fmt.Errorf("%w: this companion has no agent tokens", admin.ErrNotImplemented)
	}
	infos, err := ts.List()
	if err != nil {
		return err
	}
	for _, in := range infos {
		if in.Name == name {
			return a.c.SetDeveloperAgent(mcp.AgentID(in.ID), on)
		}
	}
	return fmt.Errorf("no agent token named %q (reins token list shows them): %w", name, tokens.ErrNotFound)
}
