package companion

import (
	"fmt"
	"slices"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// BlockedBrowser is a browser profile the person refused. Its extension is
// recognized by the instanceId of its hello (one per profile install) and
// closed with hub.StatusRefused until the person unblocks it.
type BlockedBrowser struct {
	InstanceID string      `json:"instanceId"`
	Name       string      `json:"name"` // as the dashboard showed it, e.g. "Chrome (Work)"
	Engine     wire.Engine `json:"browserEngine,omitempty"`
	Since      time.Time   `json:"since"`
}

var (
	errBlockDev       = wire.Errorf(wire.CodeBadParams, "a browser Reins launched itself cannot be blocked; close it instead")
	errBlockAnonymous = wire.Errorf(wire.CodeBadParams, "this browser's extension does not say which profile it is, so it could not be recognized again")
	errBlockedProfile = hub.ErrBlocked
)

// BlockBrowser refuses the browser profile behind a connected browser: it
// is disconnected now, and its extension is refused on every reconnect,
// across restarts, until UnblockBrowser. Tabs it shared stop working for
// agents at once.
func (c *Companion) BlockBrowser(browserID string) error {
	b, err := c.hub.Browser(browserID)
	if err != nil {
		return fmt.Errorf("%w: %s is not connected (reins browsers lists them)", wire.ErrNoSuchBrowser, browserID)
	}
	info := b.Info()
	if info.Mode != hub.ModeExtension {
		return errBlockDev
	}
	if info.Hello.InstanceID == "" {
		return errBlockAnonymous
	}
	c.setMu.Lock()
	if !slices.ContainsFunc(c.blocked, func(x BlockedBrowser) bool { return x.InstanceID == info.Hello.InstanceID }) {
		next := append(slices.Clone(c.blocked), BlockedBrowser{
			InstanceID: info.Hello.InstanceID, Name: info.Name, Engine: info.Engine, Since: time.Now().UTC(),
		})
		if err := c.saveSettingsLocked(func(d *settingsDoc) { d.BlockedBrowsers = next }); err != nil {
			c.setMu.Unlock()
			return err
		}
		c.blocked = next
	}
	c.setMu.Unlock()
	c.log.Info("browser blocked", "browser", browserID, "name", info.Name, "instance", info.Hello.InstanceID)
	b.Disconnect(hub.ErrBlocked)
	c.changed()
	return nil
}

// UnblockBrowser lets a blocked browser profile connect again; its
// extension does on its next retry.
func (c *Companion) UnblockBrowser(instanceID string) error {
	c.setMu.Lock()
	i := slices.IndexFunc(c.blocked, func(x BlockedBrowser) bool { return x.InstanceID == instanceID })
	if i < 0 {
		c.setMu.Unlock()
		return fmt.Errorf("%w: no blocked profile has instance id %q", wire.ErrNoSuchBrowser, instanceID)
	}
	name := c.blocked[i].Name
	next := slices.Delete(slices.Clone(c.blocked), i, i+1)
	if err := c.saveSettingsLocked(func(d *settingsDoc) { d.BlockedBrowsers = next }); err != nil {
		c.setMu.Unlock()
		return err
	}
	c.blocked = next
	delete(c.refusedLogged, instanceID)
	c.setMu.Unlock()
	c.log.Info("browser unblocked", "name", name, "instance", instanceID)
	c.changed()
	return nil
}

// BlockedBrowsers lists the blocked browser profiles, oldest first.
func (c *Companion) BlockedBrowsers() []BlockedBrowser {
	c.setMu.Lock()
	defer c.setMu.Unlock()
	return slices.Clone(c.blocked)
}

// admit is the hub's check of each extension's hello. A blocked profile's
// extension retries every few seconds, so its refusal is logged once per
// blocking.
func (c *Companion) admit(h wire.Hello) error {
	if h.InstanceID == "" {
		return nil
	}
	c.setMu.Lock()
	defer c.setMu.Unlock()
	i := slices.IndexFunc(c.blocked, func(x BlockedBrowser) bool { return x.InstanceID == h.InstanceID })
	if i < 0 {
		return nil
	}
	if c.refusedLogged == nil {
		c.refusedLogged = map[string]bool{}
	}
	if !c.refusedLogged[h.InstanceID] {
		c.refusedLogged[h.InstanceID] = true
		c.log.Info("refused a blocked browser profile (further attempts are not logged)", "name", c.blocked[i].Name, "instance", h.InstanceID)
	}
	return errBlockedProfile
}

// adminBrowsers is the companion as the admin channel's browsers routes see
// it.
type adminBrowsers struct{ c *Companion }

func (a adminBrowsers) BrowsersState() admin.BrowsersResponse {
	var out admin.BrowsersResponse
	for _, b := range a.c.hub.Browsers() {
		out.Connected = append(out.Connected, admin.BrowserEntry{
			ID: b.ID, Name: b.Name, Engine: string(b.Engine), Mode: string(b.Mode),
			InstanceID: b.Hello.InstanceID, SharedTabs: b.SharedTabs,
		})
	}
	for _, b := range a.c.BlockedBrowsers() {
		out.Blocked = append(out.Blocked, admin.BlockedEntry{InstanceID: b.InstanceID, Name: b.Name, Engine: string(b.Engine), Since: b.Since})
	}
	return out
}

func (a adminBrowsers) BlockBrowser(id string) error { return a.c.BlockBrowser(id) }

func (a adminBrowsers) UnblockBrowser(instanceID string) error { return a.c.UnblockBrowser(instanceID) }
