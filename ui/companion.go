package ui

import "time"

// Companion is what the UI needs from the running companion.
//
// The UI calls the action methods on the Fyne goroutine in response to a click,
// so they must return quickly; slow work (dialing a backend after an approval,
// say) belongs on the companion's own goroutines, and its outcome comes back
// through the State stream.
type Companion interface {
	// Subscribe delivers the current State at once, then a new snapshot after
	// every change. cancel ends the subscription and closes the channel.
	// A subscriber that falls behind may miss intermediate snapshots, never the
	// latest one.
	Subscribe() (states <-chan State, cancel func())

	// SetPaused makes every new tool call fail with code "paused" (or resumes).
	SetPaused(paused bool) error
	// ApproveOffer applies a pending pair offer; DenyOffer discards it.
	ApproveOffer(id string) error
	DenyOffer(id string) error
	// ShowingOffer tells the companion whether an approval window shows an
	// offer: while one does, no newer offer from the same page may take its
	// place under the person's eyes.
	ShowingOffer(id string, showing bool) error
	// IssueToken creates (or replaces) the agent token for name and returns it.
	// It is the only time the token is visible.
	IssueToken(name string) (token string, err error)
	RevokeToken(name string) error
	// AgentFolder returns (making it if needed) the folder of the agent
	// named name: the files it may upload and the files it downloaded.
	AgentFolder(name string) (string, error)
	// ForgetBackend revokes a paired hosted backend and drops its token.
	ForgetBackend(id string) error
	// StopSharing takes a tab out of every agent's tab group.
	StopSharing(tabID int) error
	// LiveViewURL returns a URL that opens the live view of a tab. It goes
	// on the opener's command line, so it carries no secret.
	LiveViewURL(tabID int) (string, error)
	// SetDisabledTools replaces the set of tools no agent may call.
	SetDisabledTools(names []string) error
	// SetOverlay turns the on-page "controlled by an agent" overlay on or off.
	SetOverlay(on bool) error
	// SetManageExtensions lets agents list, enable and disable the
	// browser's extensions, or stops them.
	SetManageExtensions(on bool) error
	// SetDeveloperAgent marks an agent (Agent.ID) as a developer agent,
	// which may send raw DevTools commands to its tabs, or unmarks it.
	SetDeveloperAgent(agentID string, on bool) error
	// SetDialogTimeout sets how long a dialog in an agent's tab waits for
	// the agent before Reins dismisses it (whole seconds, 5 s to 10 min).
	SetDialogTimeout(d time.Duration) error
	// BlockBrowser disconnects a browser profile (by browser id) and refuses
	// its extension until UnblockBrowser (by the profile's instance id).
	BlockBrowser(browserID string) error
	UnblockBrowser(instanceID string) error
	// PairingCode issues the one-time code that pairs a browser without
	// the native host, and says until when it works. A new code replaces
	// the previous one.
	PairingCode() (code string, expires time.Time, err error)
}

// Autostart controls whether Reins starts at login. It is not part of the
// State stream because only the person changes it, through the UI.
type Autostart interface {
	Enabled() bool
	SetEnabled(on bool) error
}

// State is one snapshot of everything the UI shows. Slices are owned by the
// receiver: the companion must not modify them after sending.
type State struct {
	Paused  bool
	Port    int
	MCPURL  string
	Version string

	Graph    Graph
	Tabs     []Tab      // shared tabs
	Agents   []Agent    // token holders
	Backends []Backend  // paired hosted products
	Offers   []Offer    // pair offers waiting for the person
	Activity []Activity // newest last; the UI shows at most MaxActivity

	Tools         []string // every tool name
	DisabledTools []string
	Overlay       bool
	// ManageExtensions: agents may manage the browser's extensions.
	ManageExtensions bool
	DialogTimeout    time.Duration // see Companion.SetDialogTimeout

	Blocked []BlockedBrowser // browser profiles the person refused, oldest first
}

// BlockedBrowser is a browser profile the person blocked.
type BlockedBrowser struct {
	InstanceID string
	Name       string
	Engine     string // EngineChromium or EngineFirefox
	Since      time.Time
}

// Graph is who is connected to what, as drawn on the Connections view.
type Graph struct {
	Agents   []Node
	Browsers []BrowserNode
	Edges    []Edge
}

// Node kinds.
const (
	KindAgent   = "agent"   // an MCP client holding a token
	KindBackend = "backend" // a paired hosted product
)

// Node is an agent or a paired backend.
type Node struct {
	ID        string
	Name      string
	Kind      string // KindAgent or KindBackend
	Connected bool
	LastSeen  time.Time
}

// Browser modes and engines.
const (
	ModeExtension = "extension" // a profile running the Reins extension
	ModeDev       = "dev"       // a browser Reins launched and drives over raw CDP

	EngineChromium = "chromium"
	EngineFirefox  = "firefox"
)

// BrowserNode is one browser profile.
type BrowserNode struct {
	ID         string
	Name       string
	Browser    string // the product as the extension reports it ("Chrome"), "" if unknown
	Profile    string // the profile name the extension reports, "" if unknown
	Mode       string // ModeExtension or ModeDev
	Engine     string // EngineChromium or EngineFirefox
	SharedTabs int
	Paused     bool
}

// Edge says an agent has Tabs shared tabs in a browser.
type Edge struct {
	AgentID   string
	BrowserID string
	Tabs      int
}

// Tab is a shared tab. ID is the companion's public tab id.
type Tab struct {
	ID          int
	Title       string
	URL         string
	BrowserID   string
	BrowserName string
	AgentName   string
}

// Agent is a token holder. LastSeen is zero if it never connected.
type Agent struct {
	ID        string // the principal, "agent:<token id>"
	Name      string
	Created   time.Time
	LastSeen  time.Time
	Connected bool
	// Developer: the person marked it a developer agent (raw DevTools).
	Developer bool
}

// Backend is a paired hosted product.
type Backend struct {
	ID        string
	Brand     string // self-declared by the product; untrusted
	Origin    string // the page origin that made the offer
	ServerURL string
	Transport string
	Connected bool
	Revoked   bool
	LastError string
}

// Offer is a pair offer waiting for the person's decision.
type Offer struct {
	ID        string
	Brand     string // self-declared by the page; untrusted, shown as secondary text only
	Origin    string // the page's real origin, as the browser reported it
	BrowserID string // the browser profile that relayed the offer
	Browser   string // its product name, as it introduced itself ("Chrome")
	Profile   string // the label the person gave that profile, if any
	ServerURL string
	Transport string
	Received  time.Time
	Expires   time.Time
}

// Activity is one finished tool call.
type Activity struct {
	Time     time.Time
	Agent    string
	Tool     string
	TabID    int    // 0 when the tool has no tab
	Outcome  string // "ok" or an error code
	Duration time.Duration
}
