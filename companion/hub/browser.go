package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// Browser is one connected browser profile.
type Browser struct {
	ID    string
	Hello wire.Hello
	Mode  Mode

	hub   *Hub
	rt    RoundTripper
	ids   *idMap
	name  string
	since time.Time

	mu        sync.RWMutex
	tabs      map[int]wire.TabInfo // by native id; nil until the first listing
	order     []int                // native ids in the extension's order
	policy    wire.ToolsPolicy
	lastSeen  time.Time
	lastGraph []byte

	// The policy sender: the newest policy waiting, and whether a sender
	// goroutine is running.
	policyMu      sync.Mutex
	nextPolicy    *wire.Policy
	policySending bool

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// Name is the browser's display name (browser and profile label).
func (b *Browser) Name() string { return b.name }

// Engine is the browser's engine.
func (b *Browser) Engine() wire.Engine { return b.Hello.EngineOrDefault() }

// Done is closed when the browser disconnects.
func (b *Browser) Done() <-chan struct{} { return b.closed }

// Err says why the browser disconnected, after Done is closed.
func (b *Browser) Err() error {
	select {
	case <-b.closed:
		return b.closeErr
	default:
		return nil
	}
}

// Info summarizes the browser.
func (b *Browser) Info() BrowserInfo {
	b.mu.RLock()
	defer b.mu.RUnlock()
	shared := 0
	for _, t := range b.tabs {
		if t.Shared {
			shared++
		}
	}
	graph := b.policy.Graph != nil && *b.policy.Graph
	return BrowserInfo{
		ID: b.ID, Name: b.name, Mode: b.Mode, Engine: b.Hello.EngineOrDefault(),
		Hello: b.Hello, SharedTabs: shared, OpenTabs: len(b.tabs), Graph: graph, Since: b.since,
	}
}

// ToolsPolicy is the latest tools.policy the extension sent.
func (b *Browser) ToolsPolicy() wire.ToolsPolicy {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.policy
}

// Call sends a request and waits for its answer, bounded by the hub's
// request timeout unless ctx ends sooner. An error answer comes back as a
// *wire.Error with the extension's code.
func (b *Browser) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	select {
	case <-b.closed:
		return nil, b.closeErr
	default:
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.hub.timeout)
		defer cancel()
	}
	res, err := b.rt.RoundTrip(ctx, method, params)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, wire.Errorf(wire.CodeTimeout, "%s on browser %s timed out", method, b.ID)
		}
		return nil, err
	}
	return res, nil
}

// call is Call with the result decoded into out (when non-nil).
func (b *Browser) call(ctx context.Context, method string, params, out any) error {
	raw, err := b.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if len(raw) == 0 || string(raw) == "null" {
		return wire.Errorf(wire.CodeInternal, "%s returned no result", method)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return wire.Errorf(wire.CodeInternal, "%s returned a malformed result: %w", method, err)
	}
	return nil
}

// Tabs lists the browser's tabs with public ids, in the extension's order.
func (b *Browser) Tabs() []Tab {
	b.mu.RLock()
	natives := append([]int(nil), b.order...)
	infos := make([]wire.TabInfo, len(natives))
	for i, n := range natives {
		infos[i] = b.tabs[n]
	}
	b.mu.RUnlock()
	out := make([]Tab, len(infos))
	for i, t := range infos {
		out[i] = b.public(t)
	}
	return out
}

// lists reports whether the browser's latest listing has the tab.
func (b *Browser) lists(native int) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	_, ok := b.tabs[native]
	return ok
}

func (b *Browser) tab(native int) (Tab, bool) {
	b.mu.RLock()
	t, ok := b.tabs[native]
	b.mu.RUnlock()
	if !ok {
		return Tab{}, false
	}
	return b.public(t), true
}

func (b *Browser) public(t wire.TabInfo) Tab {
	native := t.ID
	t.ID = b.hub.publicID(b, native)
	if t.Opener != 0 {
		// An opener that is gone has no public id left to name.
		t.Opener, _ = b.ids.public(t.Opener)
	}
	if t.Unsupported == "" {
		t.Unsupported = wire.UnsupportedReason(t.URL, b.Engine())
	}
	return Tab{TabInfo: t, Native: native, BrowserID: b.ID, BrowserName: b.name, BrowserEngine: b.Engine()}
}

// Handle processes one event from the browser. The WebSocket link calls it
// from its reader goroutine; a virtual browser calls it from its own.
func (b *Browser) Handle(event string, params json.RawMessage) {
	b.mu.Lock()
	b.lastSeen = time.Now()
	b.mu.Unlock()
	switch event {
	case wire.EventPing:
	case wire.EventTabs:
		var tabs []wire.TabInfo
		if err := json.Unmarshal(params, &tabs); err != nil {
			b.hub.log.Warn("malformed tabs event", "browser", b.ID, "err", err)
			return
		}
		b.setTabs(tabs)
	case wire.EventCDPEvent:
		var ev wire.CDPEvent
		if err := json.Unmarshal(params, &ev); err != nil {
			b.hub.log.Warn("malformed cdp.event", "browser", b.ID, "err", err)
			return
		}
		if pub, ok := b.ids.public(ev.TabID); ok {
			b.hub.publishTab(pub, TabEvent{Kind: TabCDPEvent, Method: ev.Method, Params: ev.Params, SessionID: ev.SessionID})
		}
	case wire.EventDetached:
		var d wire.Detached
		if err := json.Unmarshal(params, &d); err != nil {
			b.hub.log.Warn("malformed detached event", "browser", b.ID, "err", err)
			return
		}
		b.mu.Lock()
		if t, ok := b.tabs[d.TabID]; ok {
			t.Attached = false
			b.tabs[d.TabID] = t
		}
		b.mu.Unlock()
		if pub, ok := b.ids.public(d.TabID); ok {
			b.hub.publishTab(pub, TabEvent{Kind: TabDetached, Reason: d.Reason})
		}
	case wire.EventToolsPolicy:
		var p wire.ToolsPolicy
		if err := json.Unmarshal(params, &p); err != nil {
			b.hub.log.Warn("malformed tools.policy", "browser", b.ID, "err", err)
			return
		}
		b.mu.Lock()
		b.policy = p
		b.mu.Unlock()
		b.hub.changed()
	case wire.EventPairOffer:
		var offer wire.PairOffer
		if err := json.Unmarshal(params, &offer); err != nil {
			b.hub.log.Warn("malformed pair.offer", "browser", b.ID, "err", err)
			return
		}
		if b.hub.opts.OnPairOffer != nil {
			b.hub.opts.OnPairOffer(b.ID, offer)
		}
	case wire.EventHello:
		b.hub.log.Warn("second hello ignored", "browser", b.ID)
	default:
		b.hub.log.Debug("unknown event ignored", "browser", b.ID, "event", event)
	}
}

func (b *Browser) setTabs(tabs []wire.TabInfo) {
	next := make(map[int]wire.TabInfo, len(tabs))
	order := make([]int, 0, len(tabs))
	for _, t := range tabs {
		if _, dup := next[t.ID]; dup {
			continue
		}
		next[t.ID] = t
		order = append(order, t.ID)
	}
	b.mu.Lock()
	prev := b.tabs
	b.tabs = next
	b.order = order
	b.mu.Unlock()

	var gone []int
	updated := map[int]bool{}
	for id, old := range prev {
		t, ok := next[id]
		if !ok {
			gone = append(gone, id)
		} else if t.URL != old.URL || t.Title != old.Title || t.Shared != old.Shared {
			updated[id] = true
		}
	}
	if prev == nil {
		// The first listing of a link that joined a browser run the hub
		// knows (a worker that stopped and came back): the run keeps its
		// public ids, and a tab closed while the link was down is named by
		// no listing before this one, so it goes now or never.
		for _, id := range b.ids.natives() {
			if _, ok := next[id]; !ok {
				gone = append(gone, id)
			}
		}
	}
	// A shared tab that appeared from another, or was just shared because
	// of its opener, is news for whoever follows the opener.
	var opened []int
	for _, id := range order {
		t := next[id]
		old, known := prev[id]
		if t.Opener != 0 && t.Shared && (!known || !old.Shared || old.Opener != t.Opener) {
			opened = append(opened, id)
		}
	}
	sort.Ints(gone)
	for _, id := range gone {
		b.hub.forgetTab(b, id)
	}
	for _, id := range order {
		pub := b.hub.publicID(b, id)
		if updated[id] {
			t, _ := b.tab(id)
			b.hub.publishTab(pub, TabEvent{Kind: TabUpdated, Tab: t})
		}
	}
	for _, id := range opened {
		if t, ok := b.tab(id); ok && t.Opener != 0 {
			b.hub.publishTab(t.Opener, TabEvent{Kind: TabOpened, Tab: t})
		}
	}
	b.hub.changed()
}

// detach marks the browser gone, fails its pending requests with err and
// closes the link for cause.
func (b *Browser) detach(err, cause error) {
	reason := cause.Error()
	b.closeOnce.Do(func() {
		b.closeErr = err
		close(b.closed)
		b.hub.log.Info("browser disconnected", "browser", b.ID, "reason", reason)
		b.hub.remove(b)
		b.mu.RLock()
		natives := append([]int(nil), b.order...)
		b.mu.RUnlock()
		for _, n := range natives {
			if pub, ok := b.ids.public(n); ok {
				b.hub.publishTab(pub, TabEvent{Kind: TabGone, Reason: reason})
			}
		}
		// Last, because closing the link waits for the peer's close frame.
		b.rt.Close(cause)
	})
}

// Disconnect closes the browser's link for cause (ErrBlocked, or any error
// whose text is the reason the browser is given).
func (b *Browser) Disconnect(cause error) {
	b.detach(wire.Errorf(wire.CodeNoSuchBrowser, "browser %s disconnected: %w", b.ID, cause), cause)
}

// sendPolicy queues p for the browser. One sender per browser delivers
// the newest queued policy, so two quick changes never arrive out of order
// and a slow browser never holds up the caller.
func (b *Browser) sendPolicy(p wire.Policy) {
	n, ok := b.rt.(Notifier)
	if !ok {
		return
	}
	b.policyMu.Lock()
	b.nextPolicy = &p
	if b.policySending {
		b.policyMu.Unlock()
		return
	}
	b.policySending = true
	b.policyMu.Unlock()
	go func() {
		for {
			b.policyMu.Lock()
			next := b.nextPolicy
			b.nextPolicy = nil
			if next == nil {
				b.policySending = false
				b.policyMu.Unlock()
				return
			}
			b.policyMu.Unlock()
			if err := n.Notify(wire.EventPolicy, *next); err != nil {
				b.hub.log.Debug("policy not delivered", "browser", b.ID, "err", err)
			}
		}
	}()
}

// Notifier is a RoundTripper that can also send events to the browser.
type Notifier interface {
	Notify(event string, params any) error
}

func (b *Browser) String() string { return fmt.Sprintf("%s (%s)", b.ID, b.name) }
