package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// tokenPlaceholder stands in for the token until one is issued on screen.
const tokenPlaceholder = "<token>"

// snippet is ready-to-paste configuration for one MCP client.
type snippet struct {
	Client string
	Where  string // what to do with Text
	Text   string
}

// setupSnippets returns the configuration for each supported client, for the
// endpoint mcpURL and the bearer token (or tokenPlaceholder).
//
// JSON is produced with encoding/json rather than a template so a URL or a
// token can never break the quoting; field order follows each client's docs.
func setupSnippets(mcpURL, token string) []snippet {
	if token == "" {
		token = tokenPlaceholder
	}
	bearer := map[string]string{"Authorization": "Bearer " + token}

	type cursorServer struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	type vscodeServer struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	type desktopServer struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
	type windsurfServer struct {
		ServerURL string            `json:"serverUrl"`
		Headers   map[string]string `json:"headers"`
	}

	return []snippet{
		{
			Client: "Claude Code",
			Where:  "Run in a terminal:",
			Text:   fmt.Sprintf("claude mcp add --transport http reins %s --header \"Authorization: Bearer %s\"", mcpURL, token),
		},
		{
			Client: "Cursor",
			Where:  "Add to ~/.cursor/mcp.json:",
			Text:   jsonText(map[string]any{"mcpServers": map[string]any{"reins": cursorServer{mcpURL, bearer}}}),
		},
		{
			Client: "VS Code",
			Where:  "Add to .vscode/mcp.json in your workspace:",
			Text:   jsonText(map[string]any{"servers": map[string]any{"reins": vscodeServer{"http", mcpURL, bearer}}}),
		},
		{
			Client: "Claude Desktop",
			Where:  "Add to claude_desktop_config.json (Settings → Developer → Edit Config):",
			Text: jsonText(map[string]any{"mcpServers": map[string]any{"reins": desktopServer{
				Command: "reins", Args: []string{"mcp"}, Env: map[string]string{"REINS_TOKEN": token},
			}}}),
		},
		{
			Client: "Windsurf",
			Where:  "Add to ~/.codeium/windsurf/mcp_config.json:",
			Text:   jsonText(map[string]any{"mcpServers": map[string]any{"reins": windsurfServer{mcpURL, bearer}}}),
		},
	}
}

func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<token>" and "&" in URLs readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // only fixed, encodable types reach here
	}
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}
