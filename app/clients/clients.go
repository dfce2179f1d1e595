// Package clients finds the MCP clients installed for this user (Claude
// Desktop, Cursor, VS Code, Windsurf, Claude Code) and writes or removes
// Reins' entry in their configuration, so a person connects an agent with
// one click or one `reins connect CLIENT`.
//
// Writing someone else's config file has to be trustworthy: the entry is
// merged into the file keeping every other key (and VS Code's comments), a
// timestamped backup is kept beside it, the new file replaces the old one
// atomically, and a file Reins cannot read as its client does, or may not
// write, is left alone with an error that names it. The package knows no
// GUI; the tray app and the CLI share it.
package clients

import (
	"errors"

	"github.com/reinshq/reins/app/osenv"
)

// EntryName is the key of Reins' server in every client's config.
const EntryName = "reins"

// Transport is how a client reaches Reins.
type Transport string

const (
	// Stdio clients start `reins mcp --token-name NAME`: the token stays
	// in the keychain and no secret sits in their config or on a command
	// line.
	Stdio Transport = "stdio"
	// HTTP clients get the /mcp URL and an Authorization header.
	HTTP Transport = "http"
)

// Env is the machine a client is looked for on.
type Env = osenv.Env

// Client is one MCP client Reins knows how to configure.
type Client struct {
	ID        string // the CLI's name for it: claude-desktop, cursor, vscode, windsurf, claude-code
	Name      string
	Transport Transport
	// JSONC: the client reads comments and trailing commas.
	JSONC bool
	// Path is the object under which servers are listed.
	Path []string
	// config is the file for env; markers are paths whose presence means
	// the client is installed; commands are CLIs that mean the same.
	config   func(Env) string
	markers  func(Env) []string
	commands []string
	// entry is Reins' server in this client's own shape.
	entry func(Server) any
	// cli is the client's own command for adding servers, when it has one.
	cli string
	// Restart says what the person does for the client to load the entry.
	Restart string
}

// Server is what Reins offers a client: a command for stdio clients, the
// endpoint and token for HTTP ones.
type Server struct {
	Command string
	Args    []string
	URL     string
	Token   string
}

type stdioEntry struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

type httpEntry struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url,omitempty"`
	Server  string            `json:"serverUrl,omitempty"`
	Headers map[string]string `json:"headers"`
}

func bearer(s Server) map[string]string {
	return map[string]string{"Authorization": "Bearer " + s.Token}
}

// All lists the clients in the order the guide shows them.
var All = []Client{
	{
		ID: "claude-desktop", Name: "Claude Desktop", Transport: Stdio,
		Path: []string{"mcpServers"},
		config: func(e Env) string {
			return e.Join(e.ConfigHome(), "Claude", "claude_desktop_config.json")
		},
		markers: func(e Env) []string {
			m := []string{e.Join(e.ConfigHome(), "Claude")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Claude.app", e.Join(e.Home, "Applications", "Claude.app"))
			case "windows":
				m = append(m, e.Join(e.LocalAppData(), "AnthropicClaude"))
			}
			return m
		},
		commands: []string{"claude-desktop"},
		entry: func(s Server) any {
			return stdioEntry{Command: s.Command, Args: s.Args}
		},
		Restart: "Quit Claude Desktop and open it again.",
	},
	{
		ID: "cursor", Name: "Cursor", Transport: HTTP,
		Path:   []string{"mcpServers"},
		config: func(e Env) string { return e.Join(e.Home, ".cursor", "mcp.json") },
		markers: func(e Env) []string {
			m := []string{e.Join(e.Home, ".cursor"), e.Join(e.ConfigHome(), "Cursor")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Cursor.app")
			case "windows":
				m = append(m, e.Join(e.LocalAppData(), "Programs", "cursor"))
			}
			return m
		},
		commands: []string{"cursor"},
		entry: func(s Server) any {
			return httpEntry{URL: s.URL, Headers: bearer(s)}
		},
		Restart: "Cursor picks it up at once; if not, open Settings → MCP and refresh.",
	},
	{
		ID: "vscode", Name: "VS Code", Transport: HTTP, JSONC: true,
		Path:   []string{"servers"},
		config: func(e Env) string { return e.Join(e.ConfigHome(), "Code", "User", "mcp.json") },
		markers: func(e Env) []string {
			m := []string{e.Join(e.ConfigHome(), "Code")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Visual Studio Code.app")
			case "windows":
				m = append(m, e.Join(e.LocalAppData(), "Programs", "Microsoft VS Code"))
			}
			return m
		},
		commands: []string{"code"},
		entry: func(s Server) any {
			return httpEntry{Type: "http", URL: s.URL, Headers: bearer(s)}
		},
		Restart: "In VS Code, start the reins server from the MCP view (or reload the window).",
	},
	{
		ID: "windsurf", Name: "Windsurf", Transport: HTTP,
		Path:   []string{"mcpServers"},
		config: func(e Env) string { return e.Join(e.Home, ".codeium", "windsurf", "mcp_config.json") },
		markers: func(e Env) []string {
			m := []string{e.Join(e.Home, ".codeium", "windsurf")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Windsurf.app")
			case "windows":
				m = append(m, e.Join(e.LocalAppData(), "Programs", "Windsurf"))
			}
			return m
		},
		commands: []string{"windsurf"},
		entry: func(s Server) any {
			return httpEntry{Server: s.URL, Headers: bearer(s)}
		},
		Restart: "In Windsurf, refresh the MCP servers (Cascade → MCP → Refresh).",
	},
	{
		// Claude Code is a stdio client here too: `claude mcp add` would
		// otherwise put the token on a command line, where every local
		// user can read it for as long as the command runs.
		ID: "claude-code", Name: "Claude Code", Transport: Stdio,
		Path:   []string{"mcpServers"},
		config: func(e Env) string { return e.Join(e.Home, ".claude.json") },
		markers: func(e Env) []string {
			return []string{e.Join(e.Home, ".claude.json"), e.Join(e.Home, ".claude")}
		},
		commands: []string{"claude"},
		cli:      "claude",
		entry: func(s Server) any {
			return stdioEntry{Type: "stdio", Command: s.Command, Args: s.Args}
		},
		Restart: "Start a new Claude Code session; /mcp lists reins.",
	},
}

// ErrUnknownClient is returned for a client id Reins does not know.
var ErrUnknownClient = errors.New("unknown client")

// Find returns the client with id.
func Find(id string) (Client, error) {
	for _, c := range All {
		if c.ID == id {
			return c, nil
		}
	}
	return Client{}, ErrUnknownClient
}

// IDs lists every client id, for usage messages.
func IDs() []string {
	out := make([]string, 0, len(All))
	for _, c := range All {
		out = append(out, c.ID)
	}
	return out
}

// ConfigPath is the file the client reads its servers from.
func (c Client) ConfigPath(e Env) string { return c.config(e) }

// Installed reports whether the client is on this machine: its config,
// its settings folder, its app or its command.
func (c Client) Installed(e Env) bool {
	for _, m := range c.markers(e) {
		if osenv.Exists(m) {
			return true
		}
	}
	for _, cmd := range c.commands {
		if _, ok := e.OnPath(cmd); ok {
			return true
		}
	}
	return false
}

// Entry is Reins' entry in this client's shape.
func (c Client) Entry(s Server) any { return c.entry(s) }
