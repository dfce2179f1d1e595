package ui

// Setup is what the first-run guide needs beyond the companion: the
// browsers and MCP clients installed on this machine, and the few things
// the guide does to them on the person's click. Detection reads files, so
// the guide asks when it opens and after each action, never on a timer;
// what happens in the browsers and agents reaches it through the State
// stream like everything else.
type Setup interface {
	// Browsers lists the browsers installed, with their profiles.
	Browsers() []InstalledBrowser
	// AddExtension starts adding the Reins extension to a browser: it
	// opens the store listing when one is configured, and otherwise the
	// browser's extensions page and names the extension folder, which the
	// guide puts on the clipboard for Load unpacked.
	AddExtension(browserID string) (ExtensionHelp, error)
	// RestartBrowser closes the browser and starts it again with its
	// tabs, so it offers the extension the package installed. It returns
	// at once; the browser restarts in the background.
	RestartBrowser(browserID string) error
	// Clients lists the MCP clients Reins can configure.
	Clients() []MCPClient
	// ConnectClient issues the client's agent token and writes its config;
	// DisconnectClient takes Reins out of it again.
	ConnectClient(clientID string) (ClientResult, error)
	DisconnectClient(clientID string) error
	// ShowFile shows a file in the file manager.
	ShowFile(path string) error
	// OpenDemo opens the demo page in a shared tab of the browser, for the
	// person's first try.
	OpenDemo(browserID string) (DemoTab, error)
}

// InstalledBrowser is a browser found on this machine.
type InstalledBrowser struct {
	ID       string // chrome, chromium, edge, brave, vivaldi, firefox
	Name     string // Google Chrome
	Engine   string // EngineChromium or EngineFirefox
	Profiles []string
	// Offered: the Linux package put the packed extension where this
	// browser looks at its start; it offers Reins the next time it starts.
	Offered bool
	// Store: AddExtension opens a store listing.
	Store bool
}

// ExtensionHelp says what AddExtension did.
type ExtensionHelp struct {
	Opened string // the page it opened
	// Folder is the extension folder, now on the clipboard, for Load
	// unpacked; "" when a store listing opened.
	Folder string
}

// MCPClient is an MCP client Reins can connect.
type MCPClient struct {
	ID         string // claude-desktop, cursor, vscode, windsurf, claude-code
	Name       string
	Installed  bool
	Connected  bool   // Reins' entry is in its config
	Agent      string // the agent (token) name the entry uses
	ConfigPath string
	Problem    string // why its config cannot be read; empty when it can
	Restart    string // what the person does for the client to load Reins
}

// ClientResult is what ConnectClient did.
type ClientResult struct {
	Client MCPClient
	Backup string // the previous config, kept beside it
}

// DemoTab is the demo page, open in a shared tab.
type DemoTab struct {
	TabID  int
	URL    string
	Prompt string // a first thing to ask an agent
}
