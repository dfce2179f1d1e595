// Package desktoptest tests the tray app as a person meets it: the real
// `reins` binary under Xvfb, on a private session D-Bus where the test plays
// the desktop panel, with fake browser extensions connected over a real
// WebSocket. It also keeps the fake browser that the app package's binding
// tests share.
package desktoptest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

// Browser is a fake browser profile running the Reins extension: it keeps
// its tab list, answers tabs.share and tabs.create the way the extension
// does, and remembers the policies the companion sent.
type Browser struct {
	Ext *hubtest.Ext

	mu       sync.Mutex
	tabs     []wire.TabInfo
	nextTab  int
	policies []wire.Policy
	policyCh chan struct{} // closed and replaced on every policy
	created  []string      // URLs of the tabs the companion created
	createCh chan struct{} // closed and replaced on every tabs.create
}

// Dial connects a fake browser to the companion on 127.0.0.1:port with the
// extension's origin, proves the link key of the companion's data dir as
// the extension does, sends hello and then its tabs.
func Dial(ctx context.Context, port int, dataDir string, hello wire.Hello, tabs []wire.TabInfo) (*Browser, error) {
	if hello.Version == 0 {
		hello.Version = wire.ProtocolVersion
	}
	x, err := hubtest.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/", hello,
		hubtest.Options{Origin: "chrome-extension://" + companion.ExtensionID, DataDir: dataDir})
	if err != nil {
		return nil, fmt.Errorf("connecting a fake browser: %w", err)
	}
	b := &Browser{Ext: x, tabs: slices.Clone(tabs), nextTab: 1000, policyCh: make(chan struct{}), createCh: make(chan struct{})}
	x.Handle(wire.MethodTabsShare, b.share)
	x.Handle(wire.MethodTabsCreate, b.create)
	go b.readEvents()
	if err := b.SetTabs(tabs); err != nil {
		x.Kill()
		return nil, err
	}
	return b, nil
}

// Close drops the connection.
func (b *Browser) Close() { b.Ext.Kill() }

// SetTabs replaces the browser's tabs and reports them.
func (b *Browser) SetTabs(tabs []wire.TabInfo) error {
	b.mu.Lock()
	b.tabs = slices.Clone(tabs)
	b.mu.Unlock()
	return b.Ext.SendTabs(tabs)
}

// UpdateTab changes one tab (a navigation, a new title) and reports the tabs.
func (b *Browser) UpdateTab(t wire.TabInfo) error {
	b.mu.Lock()
	for i := range b.tabs {
		if b.tabs[i].ID == t.ID {
			b.tabs[i] = t
		}
	}
	tabs := slices.Clone(b.tabs)
	b.mu.Unlock()
	return b.Ext.SendTabs(tabs)
}

// Offer sends a pair.offer from a page of origin, as the extension's
// background forwards a page's window.postMessage. cfg is the page's
// config (transport, serverUrl, token, …).
func (b *Browser) Offer(origin, brand string, cfg map[string]any) error {
	raw, _ := json.Marshal(cfg)
	br, _ := json.Marshal(map[string]any{"name": brand})
	return b.Ext.Send(wire.EventPairOffer, wire.PairOffer{Config: raw, Brand: br, Origin: origin})
}

// WaitPolicy waits until the companion has sent a policy that satisfies ok.
func (b *Browser) WaitPolicy(ctx context.Context, ok func(wire.Policy) bool) (wire.Policy, error) {
	for {
		b.mu.Lock()
		for _, p := range slices.Backward(b.policies) {
			if ok(p) {
				b.mu.Unlock()
				return p, nil
			}
			break // only the latest policy is in force
		}
		ch := b.policyCh
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return wire.Policy{}, fmt.Errorf("waiting for a policy: %w", ctx.Err())
		}
	}
}

func (b *Browser) readEvents() {
	for {
		select {
		case ev := <-b.Ext.Events():
			if ev.Event != wire.EventPolicy {
				continue
			}
			var p wire.Policy
			if json.Unmarshal(ev.Params, &p) != nil {
				continue
			}
			b.mu.Lock()
			b.policies = append(b.policies, p)
			close(b.policyCh)
			b.policyCh = make(chan struct{})
			b.mu.Unlock()
		case <-b.Ext.Done():
			return
		}
	}
}

func (b *Browser) share(params json.RawMessage) (any, error) {
	var p wire.ShareParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, wire.Errorf(wire.CodeBadParams, "%w", err)
	}
	b.mu.Lock()
	found := false
	for i := range b.tabs {
		if b.tabs[i].ID == p.TabID {
			b.tabs[i].Shared, found = p.Shared, true
			// Sharing (or unsharing) by hand makes the tab the person's.
			b.tabs[i].Agent, b.tabs[i].Owner = false, ""
		}
	}
	tabs := slices.Clone(b.tabs)
	b.mu.Unlock()
	if !found {
		return nil, wire.Errorf(wire.CodeNoSuchTab, "no tab %d", p.TabID)
	}
	// The extension reports the change like any other, after answering.
	go b.Ext.SendTabs(tabs)
	return map[string]any{}, nil
}

func (b *Browser) create(params json.RawMessage) (any, error) {
	var p wire.CreateParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, wire.Errorf(wire.CodeBadParams, "%w", err)
	}
	b.mu.Lock()
	b.nextTab++
	t := wire.TabInfo{ID: b.nextTab, URL: p.URL, Title: "New Tab", Shared: true, Attached: true, WindowID: 1, Agent: true, Owner: p.Owner}
	b.tabs = append(b.tabs, t)
	b.created = append(b.created, p.URL)
	close(b.createCh)
	b.createCh = make(chan struct{})
	b.mu.Unlock()
	return t, nil
}

// WaitCreated waits until the companion has asked for a new tab and
// returns the URL of the latest one.
func (b *Browser) WaitCreated(ctx context.Context) (string, error) {
	for {
		b.mu.Lock()
		if n := len(b.created); n > 0 {
			u := b.created[n-1]
			b.mu.Unlock()
			return u, nil
		}
		ch := b.createCh
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a new tab: %w", ctx.Err())
		}
	}
}

// Deadline is how long the desktop tests wait for any one thing to happen.
const Deadline = 20 * time.Second
