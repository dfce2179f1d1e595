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
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"time"
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

// Env is the machine a client is looked for on. Everything is injected so
// that Linux, macOS and Windows layouts are all tested on one machine.
type Env struct {
	GOOS   string // "linux", "darwin", "windows"
	Home   string
	Getenv func(string) string
	// LookPath finds a command on PATH (exec.LookPath).
	LookPath func(string) (string, error)
	// Run runs a command and returns its combined output (the Claude Code
	// CLI).
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
	Now func() time.Time
}

// SystemEnv is this user on this machine.
func SystemEnv(goos string) (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, err
	}
	return Env{
		GOOS: goos, Home: home, Getenv: os.Getenv, LookPath: exec.LookPath, Now: time.Now,
		Run: func(ctx context.Context, name string, args ...string) ([]byte, error) {
			return exec.CommandContext(ctx, name, args...).CombinedOutput()
		},
	}, nil
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

func (e Env) join(elem ...string) string {
	if e.GOOS == "windows" {
		// Windows paths are built with backslashes even when tested on
		// Linux; the file operations below accept them there as names.
		out := elem[0]
		for _, p := range elem[1:] {
			out = trimSep(out) + `\` + p
		}
		return out
	}
	return filepath.Join(elem...)
}

func trimSep(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\\' || s[len(s)-1] == '/') {
		s = s[:len(s)-1]
	}
	return s
}

// configHome is XDG_CONFIG_HOME on Linux, Application Support on macOS and
// %APPDATA% (Roaming) on Windows: where desktop apps keep settings.
func (e Env) configHome() string {
	switch e.GOOS {
	case "darwin":
		return e.join(e.Home, "Library", "Application Support")
	case "windows":
		if d := e.getenv("APPDATA"); d != "" {
			return d
		}
		return e.join(e.Home, "AppData", "Roaming")
	default:
		if d := e.getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
			return d
		}
		return e.join(e.Home, ".config")
	}
}

func (e Env) localAppData() string {
	if d := e.getenv("LOCALAPPDATA"); d != "" {
		return d
	}
	return e.join(e.Home, "AppData", "Local")
}

func (e Env) onPath(cmd string) (string, bool) {
	if e.LookPath == nil {
		return "", false
	}
	p, err := e.LookPath(cmd)
	return p, err == nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

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
			return e.join(e.configHome(), "Claude", "claude_desktop_config.json")
		},
		markers: func(e Env) []string {
			m := []string{e.join(e.configHome(), "Claude")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Claude.app", e.join(e.Home, "Applications", "Claude.app"))
			case "windows":
				m = append(m, e.join(e.localAppData(), "AnthropicClaude"))
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
		config: func(e Env) string { return e.join(e.Home, ".cursor", "mcp.json") },
		markers: func(e Env) []string {
			m := []string{e.join(e.Home, ".cursor"), e.join(e.configHome(), "Cursor")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Cursor.app")
			case "windows":
				m = append(m, e.join(e.localAppData(), "Programs", "cursor"))
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
		config: func(e Env) string { return e.join(e.configHome(), "Code", "User", "mcp.json") },
		markers: func(e Env) []string {
			m := []string{e.join(e.configHome(), "Code")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Visual Studio Code.app")
			case "windows":
				m = append(m, e.join(e.localAppData(), "Programs", "Microsoft VS Code"))
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
		config: func(e Env) string { return e.join(e.Home, ".codeium", "windsurf", "mcp_config.json") },
		markers: func(e Env) []string {
			m := []string{e.join(e.Home, ".codeium", "windsurf")}
			switch e.GOOS {
			case "darwin":
				m = append(m, "/Applications/Windsurf.app")
			case "windows":
				m = append(m, e.join(e.localAppData(), "Programs", "Windsurf"))
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
		config: func(e Env) string { return e.join(e.Home, ".claude.json") },
		markers: func(e Env) []string {
			return []string{e.join(e.Home, ".claude.json"), e.join(e.Home, ".claude")}
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
		if exists(m) {
			return true
		}
	}
	for _, cmd := range c.commands {
		if _, ok := e.onPath(cmd); ok {
			return true
		}
	}
	return false
}

// Entry is Reins' entry in this client's shape.
func (c Client) Entry(s Server) any { return c.entry(s) }
