package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// The Go API of every browspark v3 request. Tab-level calls take public tab
// ids; browser-level calls take a browser id.

// TabsList asks the browser for every tab of every window and refreshes the
// hub's records from the answer.
func (h *Hub) TabsList(ctx context.Context, browserID string) ([]Tab, error) {
	b, err := h.Browser(browserID)
	if err != nil {
		return nil, err
	}
	var tabs []wire.TabInfo
	if err := b.call(ctx, wire.MethodTabsList, nil, &tabs); err != nil {
		return nil, err
	}
	b.setTabs(tabs)
	return b.Tabs(), nil
}

// TabsCreate opens a tab in the browser's current window; the extension
// shares it automatically. group names the tab group and owner the
// principal the tab is for, which the extension keeps with the tab (Reins
// additions).
func (h *Hub) TabsCreate(ctx context.Context, browserID, url string, active bool, group, owner string) (Tab, error) {
	b, err := h.Browser(browserID)
	if err != nil {
		return Tab{}, err
	}
	var t wire.TabInfo
	if err := b.call(ctx, wire.MethodTabsCreate, wire.CreateParams{URL: url, Active: &active, Group: group, Owner: owner}, &t); err != nil {
		return Tab{}, err
	}
	b.upsertTab(t)
	return b.public(t), nil
}

func (b *Browser) upsertTab(t wire.TabInfo) {
	b.mu.Lock()
	if b.tabs == nil {
		b.tabs = map[int]wire.TabInfo{}
	}
	if _, ok := b.tabs[t.ID]; !ok {
		b.order = append(b.order, t.ID)
	}
	b.tabs[t.ID] = t
	b.mu.Unlock()
	b.hub.changed()
}

func (h *Hub) tabCall(ctx context.Context, publicID int, method string, params func(native int) any, out any) (Tab, *Browser, error) {
	t, b, err := h.Tab(publicID)
	if err != nil {
		return Tab{}, nil, err
	}
	return t, b, b.call(ctx, method, params(t.Native), out)
}

// TabsClose closes a tab.
func (h *Hub) TabsClose(ctx context.Context, publicID int) error {
	_, _, err := h.tabCall(ctx, publicID, wire.MethodTabsClose, func(n int) any { return wire.TabParams{TabID: n} }, nil)
	return err
}

// TabsActivate brings a tab to the front of its window.
func (h *Hub) TabsActivate(ctx context.Context, publicID int) error {
	_, _, err := h.tabCall(ctx, publicID, wire.MethodTabsActivate, func(n int) any { return wire.TabParams{TabID: n} }, nil)
	return err
}

// TabsHold keeps the debugger attached past the idle timeout, or releases it.
func (h *Hub) TabsHold(ctx context.Context, publicID int, hold bool) error {
	_, _, err := h.tabCall(ctx, publicID, wire.MethodTabsHold, func(n int) any { return wire.HoldParams{TabID: n, Hold: hold} }, nil)
	return err
}

// TabsPrepare moves a shared New Tab page to about:blank for navigation.
func (h *Hub) TabsPrepare(ctx context.Context, publicID int) error {
	_, _, err := h.tabCall(ctx, publicID, wire.MethodTabsPrepare, func(n int) any { return wire.TabParams{TabID: n} }, nil)
	return err
}

// TabsShare shares or stops sharing a tab (Reins addition).
func (h *Hub) TabsShare(ctx context.Context, publicID int, shared bool) error {
	_, _, err := h.tabCall(ctx, publicID, wire.MethodTabsShare, func(n int) any { return wire.ShareParams{TabID: n, Shared: shared} }, nil)
	return err
}

// WindowSize reads the size of the tab's window, or sets it when width and
// height are non-zero.
func (h *Hub) WindowSize(ctx context.Context, publicID, width, height int) (wire.WindowSize, error) {
	var ws wire.WindowSize
	_, _, err := h.tabCall(ctx, publicID, wire.MethodWindowSize, func(n int) any {
		return wire.WindowSizeParams{TabID: n, Width: width, Height: height}
	}, &ws)
	return ws, err
}

// DownloadsList returns the browser's download items as the browser gives them.
func (h *Hub) DownloadsList(ctx context.Context, browserID string) (json.RawMessage, error) {
	return h.Request(ctx, browserID, wire.MethodDownloadsList, nil)
}

// GraphState sends a graph snapshot; false means the profile disabled Graph.
func (h *Hub) GraphState(ctx context.Context, browserID string, g wire.ConnectionGraph) (bool, error) {
	b, err := h.Browser(browserID)
	if err != nil {
		return false, err
	}
	var r wire.GraphReceipt
	if err := b.call(ctx, wire.MethodGraphState, g, &r); err != nil {
		return false, err
	}
	return r.Received, nil
}

// CDP runs one DevTools protocol command on a shared tab. Sharing and the
// URL rules (the tab's page, and where a navigating command would take it)
// are checked here and again by the extension that owns the tab.
func (h *Hub) CDP(ctx context.Context, publicID int, method string, params any, sessionID, client string) (json.RawMessage, error) {
	t, b, err := h.Tab(publicID)
	if err != nil {
		return nil, err
	}
	if !t.Shared {
		return nil, wire.Errorf(wire.CodeNotShared, "tab %d is not shared with Reins", publicID)
	}
	if t.Unsupported != "" {
		return nil, wire.Errorf(wire.CodeRestrictedURL, "tab %d cannot be automated: %s", publicID, t.Unsupported)
	}
	var raw json.RawMessage
	switch p := params.(type) {
	case nil:
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		raw, err = json.Marshal(p)
		if err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "encoding %s params: %w", method, err)
		}
	}
	if reason := wire.CDPNavigationRefusal(method, raw, b.Engine()); reason != "" {
		return nil, wire.Errorf(wire.CodeRestrictedURL, "%s on tab %d refused: %s", method, publicID, reason)
	}
	if tr := traceOf(ctx); tr != nil {
		start := time.Now()
		defer func() { tr.add(method, time.Since(start)) }()
	}
	return b.Call(ctx, wire.MethodCDP, wire.CDPParams{TabID: t.Native, Method: method, Params: raw, SessionID: sessionID, Client: client})
}

// PushGraph sends each Graph-enabled extension profile the connection graph
// g (the companion draws it, for the dashboard too), as seen from that
// profile, if it changed since the last one the profile received.
func (h *Hub) PushGraph(ctx context.Context, g wire.ConnectionGraph) {
	for _, bi := range h.Browsers() {
		if !bi.Graph || bi.Mode != ModeExtension {
			continue
		}
		b, err := h.Browser(bi.ID)
		if err != nil {
			continue
		}
		g.ThisBrowserID = bi.ID
		data, _ := json.Marshal(g)
		b.mu.Lock()
		same := bytes.Equal(b.lastGraph, data)
		if !same {
			b.lastGraph = data
		}
		b.mu.Unlock()
		if same {
			continue
		}
		if _, err := h.GraphState(ctx, bi.ID, g); err != nil {
			h.log.Debug("graph.state not delivered", "browser", bi.ID, "err", err)
			b.mu.Lock()
			b.lastGraph = nil
			b.mu.Unlock()
		}
	}
}

// ExtensionsList lists the browser's installed extensions (needs the
// person's consent: the management permission).
func (h *Hub) ExtensionsList(ctx context.Context, browserID, client string) (json.RawMessage, error) {
	return h.Request(ctx, browserID, wire.MethodExtensionsList, wire.ExtensionParams{Client: client})
}

// ExtensionsSetEnabled enables or disables one installed extension.
func (h *Hub) ExtensionsSetEnabled(ctx context.Context, browserID, id string, enabled bool, client string) (json.RawMessage, error) {
	return h.Request(ctx, browserID, wire.MethodExtensionsSetEnabled, wire.ExtensionParams{ID: id, Enabled: &enabled, Client: client})
}
