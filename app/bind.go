//go:build !nogui

package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
	"github.com/reinshq/reins/ui"
)

// stopSharingTimeout bounds the round trip to the extension when the person
// stops sharing a tab from the dashboard.
const stopSharingTimeout = 10 * time.Second

// binding adapts the running companion to ui.Companion: the companion's
// change signals become ui.State snapshots, and the UI's clicks become
// companion calls. It is the only place that knows both shapes.
type binding struct {
	c   *companion.Companion
	log *slog.Logger

	// Stop-sharing round trips run in the background (the UI calls on its
	// own goroutine and must not wait on a browser); close waits for them.
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

var _ ui.Companion = (*binding)(nil)

func newBinding(c *companion.Companion, log *slog.Logger) *binding {
	ctx, cancel := context.WithCancel(context.Background())
	return &binding{c: c, log: log, ctx: ctx, cancel: cancel}
}

// close cancels background actions and waits for them.
func (b *binding) close() {
	b.cancel()
	b.wg.Wait()
}

// Subscribe turns the companion's coalesced change signals into snapshots.
// The channel holds one State: a newer snapshot replaces one the UI has not
// read yet, so a slow UI sees the latest state, never a backlog. Nothing
// polls: a snapshot is built only when the companion signals a change.
func (b *binding) Subscribe() (<-chan ui.State, func()) {
	changes, stopChanges := b.c.Changes()
	out := make(chan ui.State, 1)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for {
			select {
			case <-quit:
				return
			case _, ok := <-changes:
				if !ok {
					return // the companion shut down
				}
				s := b.snapshot()
				// This goroutine is the only sender, so after the drain
				// the send cannot block.
				select {
				case <-out:
				default:
				}
				out <- s
			}
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() {
			close(quit)
			stopChanges()
			<-done
		})
	}
}

// snapshot maps the companion's Snapshot to the UI's State. It computes
// nothing: the companion counts and names (companion.Snapshot).
func (b *binding) snapshot() ui.State {
	c := b.c.Snapshot()
	s := ui.State{
		Paused:        c.Paused,
		Port:          c.Port,
		MCPURL:        c.MCPURL,
		Version:       c.Version,
		Tools:         c.Tools,
		DisabledTools: c.DisabledTools,
		Overlay:       c.Overlay,
		DialogTimeout: c.DialogTimeout,
		Blocked:       blockedBrowsers(c.Blocked),

		ManageExtensions: c.ManageExtensions,
	}
	for _, n := range c.Graph.Agents {
		kind := ui.KindAgent
		if n.Backend {
			kind = ui.KindBackend
		}
		s.Graph.Agents = append(s.Graph.Agents, ui.Node{ID: n.ID, Name: n.Name, Kind: kind, Connected: n.Connected, LastSeen: n.LastSeen})
	}
	for _, n := range c.Graph.Browsers {
		s.Graph.Browsers = append(s.Graph.Browsers, ui.BrowserNode{
			ID: n.ID, Name: n.Name, Mode: browserMode(n.Mode), Engine: string(n.Engine),
			Browser: n.Browser, Profile: n.Profile, SharedTabs: n.SharedTabs, Paused: c.Paused,
		})
	}
	for _, e := range c.Graph.Edges {
		s.Graph.Edges = append(s.Graph.Edges, ui.Edge{AgentID: e.AgentID, BrowserID: e.BrowserID, Tabs: e.Tabs})
	}
	for _, t := range c.Tabs {
		s.Tabs = append(s.Tabs, ui.Tab{ID: t.ID, Title: t.Title, URL: t.URL, BrowserID: t.BrowserID, BrowserName: t.BrowserName, AgentName: t.AgentName})
	}
	for _, a := range c.Agents {
		s.Agents = append(s.Agents, ui.Agent{ID: a.ID, Name: a.Name, Created: a.Created, LastSeen: a.LastSeen, Connected: a.Connected, Developer: a.Developer})
	}
	for _, be := range c.Backends {
		s.Backends = append(s.Backends, ui.Backend{
			ID: be.ID, Brand: be.Brand, Origin: be.Origin, ServerURL: be.ServerURL,
			Transport: be.Transport, Connected: be.Connected, Revoked: be.Revoked, LastError: be.LastError,
		})
	}
	for _, o := range c.Offers {
		s.Offers = append(s.Offers, ui.Offer{
			ID: o.ID, Brand: o.Brand, Origin: o.Origin, ServerURL: o.ServerURL,
			BrowserID: o.BrowserID, Browser: o.Browser, Profile: o.Profile,
			Transport: o.Transport, Received: o.Received, Expires: o.Expires,
		})
	}
	for _, a := range c.Activity {
		s.Activity = append(s.Activity, ui.Activity{
			Time: a.Time, Agent: a.Agent, Tool: a.Tool, TabID: a.TabID, Outcome: a.Outcome, Duration: a.Duration,
		})
	}
	return s
}

func browserMode(m hub.Mode) string {
	if m == hub.ModeDev {
		return ui.ModeDev
	}
	return ui.ModeExtension
}

// SetPaused pauses or resumes automation.
func (b *binding) SetPaused(paused bool) error {
	if paused {
		b.c.Pause()
	} else {
		b.c.Resume()
	}
	return nil
}

// ApproveOffer applies an offer the person allowed; the backend dials in the
// background and its state arrives through the State stream.
func (b *binding) ApproveOffer(id string) error {
	_, err := b.c.ApproveOffer(id)
	return err
}

// DenyOffer discards an offer.
func (b *binding) DenyOffer(id string) error { return b.c.DenyOffer(id) }

// ShowingOffer records whether an approval window shows an offer.
func (b *binding) ShowingOffer(id string, showing bool) error { return b.c.ShowingOffer(id, showing) }

var errNoTokenStore = errors.New("no token store: agents cannot be given tokens")

// IssueToken creates or replaces an agent's token.
func (b *binding) IssueToken(name string) (string, error) {
	ts := b.c.Tokens()
	if ts == nil {
		return "", errNoTokenStore
	}
	return ts.Issue(name)
}

// RevokeToken revokes an agent's token; the companion closes its sessions.
func (b *binding) RevokeToken(name string) error {
	ts := b.c.Tokens()
	if ts == nil {
		return errNoTokenStore
	}
	return ts.Revoke(name)
}

// AgentFolder returns the folder that holds an agent's uploads and
// downloads.
func (b *binding) AgentFolder(name string) (string, error) { return b.c.AgentFolder(name) }

// ForgetBackend disconnects a paired backend and deletes its token.
func (b *binding) ForgetBackend(id string) error { return b.c.ForgetBackend(id) }

// StopSharing asks the tab's browser to stop sharing it. The local checks
// answer at once; the browser round trip runs in the background because
// the UI must not wait on a browser, and its outcome (the tab leaving the
// shared list) arrives through the State stream.
func (b *binding) StopSharing(tabID int) error {
	t, _, err := b.c.Hub().Tab(tabID)
	if err != nil {
		return err
	}
	if !t.Shared {
		return wire.Errorf(wire.CodeNotShared, "tab %d is not shared", tabID)
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		ctx, cancel := context.WithTimeout(b.ctx, stopSharingTimeout)
		defer cancel()
		if err := b.c.Hub().TabsShare(ctx, tabID, false); err != nil {
			b.log.Warn("stop sharing failed", "tab", tabID, "browser", t.BrowserID, "err", err)
		}
	}()
	return nil
}

// LiveViewURL returns the URL the tray opens for a Live view of a shared
// tab. The opener puts it on a command line (xdg-open URL), which every user
// of the machine can read, so it carries no secret: it names a file only
// the person can read, which leads the browser to the one-time link.
func (b *binding) LiveViewURL(tabID int) (string, error) { return b.c.LiveViewOpenURL(tabID) }

// SetDisabledTools replaces the set of tools no agent may call.
func (b *binding) SetDisabledTools(names []string) error { return b.c.SetDisabledTools(names) }

// SetOverlay turns the page overlay on or off.
func (b *binding) SetOverlay(on bool) error { return b.c.SetOverlay(on) }

// SetManageExtensions lets agents manage the browser's extensions, or not.
func (b *binding) SetManageExtensions(on bool) error { return b.c.SetManageExtensions(on) }

// SetDeveloperAgent marks an agent (its principal) as a developer agent,
// or unmarks it.
func (b *binding) SetDeveloperAgent(agentID string, on bool) error {
	return b.c.SetDeveloperAgent(agentID, on)
}

// SetDialogTimeout sets how long a dialog in an agent's tab waits for it.
func (b *binding) SetDialogTimeout(d time.Duration) error { return b.c.SetDialogTimeout(d) }

// BlockBrowser disconnects and refuses a browser profile.
func (b *binding) BlockBrowser(browserID string) error { return b.c.BlockBrowser(browserID) }

// UnblockBrowser lets a blocked browser profile connect again.
func (b *binding) UnblockBrowser(instanceID string) error { return b.c.UnblockBrowser(instanceID) }

// PairingCode issues a one-time code that pairs a browser without the
// native host.
func (b *binding) PairingCode() (string, time.Time, error) {
	code, exp := b.c.PairingCode()
	return code, exp, nil
}

func blockedBrowsers(in []companion.BlockedBrowser) []ui.BlockedBrowser {
	out := make([]ui.BlockedBrowser, 0, len(in))
	for _, x := range in {
		out = append(out, ui.BlockedBrowser{InstanceID: x.InstanceID, Name: x.Name, Engine: string(x.Engine), Since: x.Since})
	}
	return out
}
