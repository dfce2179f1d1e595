// Package wire owns the browspark v3 message shapes spoken between the
// companion and the browser extensions, plus Reins' optional additions
// (error codes, pair.offer, policy). It has no behaviour beyond encoding,
// validation and the URL rules both sides must agree on.
package wire

import (
	"encoding/json"
)

// ProtocolVersion is the browspark wire protocol version this package speaks.
const ProtocolVersion = 3

// MaxFrameBytes caps every frame on every socket; a larger frame closes the
// connection.
const MaxFrameBytes = 64 << 20

// HealthText is the exact body of GET / required by the protocol.
const HealthText = "browspark companion"

// Request methods, companion → extension.
const (
	MethodTabsList             = "tabs.list"
	MethodTabsCreate           = "tabs.create"
	MethodTabsClose            = "tabs.close"
	MethodTabsActivate         = "tabs.activate"
	MethodTabsHold             = "tabs.hold"
	MethodTabsPrepare          = "tabs.prepare"
	MethodWindowSize           = "window.size"
	MethodDownloadsList        = "downloads.list"
	MethodExtensionsList       = "extensions.list"
	MethodExtensionsInfo       = "extensions.info"
	MethodExtensionsSetEnabled = "extensions.setEnabled"
	MethodExtensionsUninstall  = "extensions.uninstall"
	MethodExtensionsOptions    = "extensions.options"
	MethodExtensionsMessage    = "extensions.message"
	MethodToolsCatalog         = "tools.catalog"
	MethodGraphState           = "graph.state"
	MethodCDP                  = "cdp"
	MethodTabsShare            = "tabs.share" // Reins addition: share/unshare a tab from the companion (Stop sharing in the UI)
	// MethodDownloadsWait (Reins addition) answers once the browser's
	// download of DownloadsWaitParams is no longer in progress, or at its
	// timeout with the item as it is then.
	MethodDownloadsWait = "downloads.wait"
)

// DownloadsWaitParams names a download by the browser's id or, failing
// that, by its URL (the newest such download started at or after Since,
// in ms since the epoch).
type DownloadsWaitParams struct {
	ID        int    `json:"id,omitempty"`
	URL       string `json:"url,omitempty"`
	Since     int64  `json:"since,omitempty"`
	TimeoutMS int    `json:"timeoutMs"`
}

// DownloadItem is what downloads.wait answers: the browser's item, in the
// fields Reins reads.
type DownloadItem struct {
	ID       int    `json:"id"`
	URL      string `json:"url"`
	Filename string `json:"filename"` // absolute path where the browser saved it
	Mime     string `json:"mime"`
	State    string `json:"state"` // in_progress, interrupted, complete
	Error    string `json:"error,omitempty"`
	FileSize int64  `json:"fileSize"`
	Exists   bool   `json:"exists"`
}

// Events. The first six are browspark v3 (extension → companion); the rest
// are Reins additions that a strict v3 peer ignores.
const (
	EventHello       = "hello"
	EventTabs        = "tabs"
	EventCDPEvent    = "cdp.event"
	EventDetached    = "detached"
	EventToolsPolicy = "tools.policy"
	EventPing        = "ping"

	EventPairOffer = "pair.offer" // extension → companion
	EventPolicy    = "policy"     // companion → extension
)

// Req is a request from the companion to an extension.
type Req struct {
	ID     int64  `json:"id"`
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// Res answers a Req. Code is a Reins addition beside the protocol's error
// string.
type Res struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Code   Code            `json:"code,omitempty"`
}

// Evt is an event in either direction.
type Evt struct {
	Event  string          `json:"event"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Frame is any incoming frame, decoded just far enough to tell which kind it
// is: a response has an id and no method, an event has an event name.
type Frame struct {
	ID     *int64          `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Event  string          `json:"event,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Code   Code            `json:"code,omitempty"`
}

// Engine names a browser engine.
type Engine string

const (
	EngineChromium Engine = "chromium"
	EngineFirefox  Engine = "firefox"
)

// Hello is the first frame of every extension connection.
type Hello struct {
	Version          int    `json:"version"`
	ExtensionVersion string `json:"extensionVersion"`
	Browser          string `json:"browser,omitempty"`
	BrowserEngine    Engine `json:"browserEngine,omitempty"`
	UserAgent        string `json:"userAgent,omitempty"`
	InstanceID       string `json:"instanceId,omitempty"`
	BrowserSessionID string `json:"browserSessionId,omitempty"`
	// Profile is a Reins addition: the profile label the person gave, if any.
	Profile string `json:"profile,omitempty"`
	// Auth is a Reins addition: the start of the link handshake.
	Auth *HelloAuth `json:"auth,omitempty"`
}

// EngineOrDefault applies the protocol's legacy default: an omitted engine is
// Chromium.
func (h Hello) EngineOrDefault() Engine {
	if h.BrowserEngine == "" {
		return EngineChromium
	}
	return h.BrowserEngine
}

// TabInfo is a tab as the extension reports it, with native ids.
type TabInfo struct {
	ID          int    `json:"id"`
	URL         string `json:"url"`
	Title       string `json:"title"`
	Shared      bool   `json:"shared"`
	Attached    bool   `json:"attached"`
	WindowID    int    `json:"windowId"`
	Agent       bool   `json:"agent,omitempty"`
	FavIconURL  string `json:"favIconUrl,omitempty"`
	Unsupported string `json:"unsupported,omitempty"`
	// Owner is a Reins addition: the principal ("agent:<token id>",
	// "backend:<backend id>") an agent tab was created for. The extension
	// keeps it with the tab, so ownership survives reconnects and companion
	// restarts; a tab the person shared by hand has none.
	Owner string `json:"owner,omitempty"`
	// Opener is a Reins addition: the shared tab this one was opened from
	// (a target=_blank link, window.open, a middle-click), which is why it
	// is shared. A native id on the wire; hub.Tab carries the public one.
	Opener int `json:"openerTabId,omitempty"`
}

// CDPParams are the params of a cdp request.
type CDPParams struct {
	TabID     int             `json:"tabId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Client    string          `json:"client,omitempty"`
}

// CDPEvent is a cdp.event from the extension.
type CDPEvent struct {
	TabID     int             `json:"tabId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

// Detached is a detached event.
type Detached struct {
	TabID  int    `json:"tabId"`
	Reason string `json:"reason"`
}

// ToolsPolicy is the extension's tools.policy event.
type ToolsPolicy struct {
	Disabled    []string `json:"disabled"`
	HaveCatalog *bool    `json:"haveCatalog,omitempty"`
	DevMode     string   `json:"devMode,omitempty"`
	Overlay     *bool    `json:"overlay,omitempty"`
	Graph       *bool    `json:"graph,omitempty"`
}

// Policy is the Reins policy event, companion → extension.
type Policy struct {
	Paused   bool     `json:"paused"`
	Overlay  bool     `json:"overlay"`
	Disabled []string `json:"disabled,omitempty"`
}

// PairOffer is the Reins pair.offer event. Config and Brand come from the
// page untouched; Origin is the sender tab's origin as the browser reports
// it, added by the extension's background, never by the page.
type PairOffer struct {
	Config json.RawMessage `json:"config"`
	Brand  json.RawMessage `json:"brand,omitempty"`
	Origin string          `json:"origin"`
	TabID  int             `json:"tabId,omitempty"`
}

// ToolInfo describes one tool in a tools.catalog request.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly,omitempty"`
}

// ToolsCatalog is the params of tools.catalog.
type ToolsCatalog struct {
	Tools   []ToolInfo `json:"tools"`
	Version string     `json:"version"`
}

// CreateParams are the params of tabs.create.
type CreateParams struct {
	URL    string `json:"url"`
	Active *bool  `json:"active,omitempty"`
	// Group is a Reins addition: the tab group title to put the new tab in.
	Group string `json:"group,omitempty"`
	// Owner is a Reins addition: the principal the tab is created for. The
	// extension records it and reports it as TabInfo.Owner.
	Owner string `json:"owner,omitempty"`
}

// TabParams carry a single native tab id.
type TabParams struct {
	TabID int `json:"tabId"`
}

// HoldParams are the params of tabs.hold.
type HoldParams struct {
	TabID int  `json:"tabId"`
	Hold  bool `json:"hold"`
}

// ShareParams are the params of the Reins tabs.share request.
type ShareParams struct {
	TabID  int  `json:"tabId"`
	Shared bool `json:"shared"`
}

// WindowSizeParams are the params of window.size; zero fields read.
type WindowSizeParams struct {
	TabID  int `json:"tabId"`
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// WindowSize is the result of window.size.
type WindowSize struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// ExtensionParams address one installed extension.
type ExtensionParams struct {
	ID      string          `json:"id,omitempty"`
	Enabled *bool           `json:"enabled,omitempty"`
	Message json.RawMessage `json:"message,omitempty"`
	Client  string          `json:"client,omitempty"`
}
