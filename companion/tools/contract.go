// Package tools owns the Browser Operator tool catalog and the engine that
// runs it: per-agent sessions and tab groups, the TOCTOU origin guard,
// screenshots, waits, batching, and the mapping of every tool onto CDP
// commands sent through the hub. MCP and hosted backends both call it.
package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// This file is the engine's contract with its callers (companion/mcp, the
// hosted-backend operator, the companion's UI API).

// Content is one MCP-style content block.
type Content struct {
	Type     string `json:"type"` // "text" or "image"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"` // base64
	MimeType string `json:"mimeType,omitempty"`
}

// Result is a tool's outcome. A failure is a Result with IsError and Code,
// never a Go error: MCP reports tool failures as results with isError.
type Result struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
	Code    wire.Code `json:"code,omitempty"`
}

// Info describes a tool of the catalog.
type Info struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	ReadOnly    bool // MCP readOnlyHint
	Destructive bool // MCP destructiveHint
	// Mutating says the tool changes the page or the browser. It is a
	// description for the catalog's readers, checked against ReadOnly and
	// Destructive by the tests; nothing is enforced from it. What a live-view
	// take-over refuses is each call that asks for its tab to act on
	// (accessAct), and the TOCTOU origin guard is called by the actions
	// that act on what the agent last saw.
	Mutating  bool
	Batchable bool // may run inside browser_batch
	// Extended marks Reins' own tools, beyond the Browser Operator catalog:
	// MCP agents get them, paired backends (whose catalog the Browser
	// Operator Protocol fixes) do not.
	Extended bool
}

// Activity is one finished tool call, for the dashboard's Activity view. It
// never holds arguments that may carry secrets.
type Activity struct {
	Time time.Time
	// Principal is the caller's id (Session.Principal); Agent its label.
	Principal string
	Agent     string
	Tool      string
	TabID     int
	Outcome   string // "ok" or an error code
	Duration  time.Duration
}

// Runner is the engine's interface as its callers use it.
type Runner interface {
	Catalog() []Info
	// NewSession starts the session of a principal ("agent:<token id>",
	// "backend:<backend id>") shown to the person as label.
	NewSession(principal, label string) *Session
	Call(ctx context.Context, s *Session, tool string, args json.RawMessage) *Result
}

// Failure is the failed Result for err, as Call returns it: IsError, the
// error's wire code, and a text that starts with the code, so an agent
// reading only text still sees it. Callers that refuse a call before it
// reaches Call (the MCP layer while paused) answer with it.
func Failure(err error) *Result { return errorResult(err) }
