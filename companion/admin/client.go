package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// DefaultTimeout bounds one admin request when the caller's context has no
// deadline: a wedged companion must not hang the CLI.
const DefaultTimeout = 30 * time.Second

// Client talks to the companion serving a data dir's admin channel.
type Client struct {
	hc *http.Client
}

// URL is the base of every request on the admin channel. Its host is a
// placeholder: Transport always dials the channel.
const URL = "http://reins-admin"

// Transport carries HTTP requests over dataDir's admin channel, whatever
// their URL's host, for clients of its routes other than Client (`reins
// mcp` speaks MCP to /mcp through it). A dial that finds nothing wraps
// ErrNotRunning.
func Transport(dataDir string) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dial(ctx, dataDir)
		},
		Proxy: nil,
	}
}

// NewClient returns a client for dataDir's admin channel. It connects lazily;
// a call returns an error wrapping ErrNotRunning when nothing answers.
func NewClient(dataDir string) *Client {
	tr := Transport(dataDir)
	// Connections are kept between calls (a benchmark measures the
	// inspection routes, not dialing), and not for long: a CLI run makes
	// one or two calls.
	tr.MaxIdleConnsPerHost = 64
	tr.IdleConnTimeout = 30 * time.Second
	tr.DisableCompression = true
	return &Client{hc: &http.Client{Transport: tr}}
}

// Close releases the client's connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Status asks the companion who it is; it doubles as "is one running".
func (c *Client) Status(ctx context.Context) (Status, error) {
	var s Status
	err := c.do(ctx, http.MethodGet, "/v1/status", nil, &s)
	return s, err
}

// IssueToken issues an agent token in the running companion's store.
func (c *Client) IssueToken(ctx context.Context, name string) (string, error) {
	var out issueResponse
	if err := c.do(ctx, http.MethodPost, "/v1/tokens", issueRequest{Name: name}, &out); err != nil {
		return "", err
	}
	return out.Token, nil
}

// ListTokens lists agent tokens: names and creation times only.
func (c *Client) ListTokens(ctx context.Context) ([]TokenInfo, error) {
	var out listResponse
	if err := c.do(ctx, http.MethodGet, "/v1/tokens", nil, &out); err != nil {
		return nil, err
	}
	return out.Tokens, nil
}

// RevokeToken revokes an agent token; the companion closes the agent's live
// MCP sessions at once.
func (c *Client) RevokeToken(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(name), nil, nil)
}

// ShowDashboard asks a running tray app to show its dashboard.
func (c *Client) ShowDashboard(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/v1/show-dashboard", nil, nil)
}

// LiveViewURL asks the running companion for a one-time Live view link for
// a shared tab.
func (c *Client) LiveViewURL(ctx context.Context, tabID int) (string, error) {
	var out LiveView
	if err := c.do(ctx, http.MethodPost, "/v1/live/"+strconv.Itoa(tabID), nil, &out); err != nil {
		return "", err
	}
	return out.URL, nil
}

// LiveViewOpenURL asks the running companion for a URL that opens a Live
// view of a shared tab and carries no secret (a file:// URL of a file only
// this user can read), safe on a command line.
func (c *Client) LiveViewOpenURL(ctx context.Context, tabID int) (string, error) {
	var out LiveView
	if err := c.do(ctx, http.MethodPost, "/v1/live/"+strconv.Itoa(tabID)+"?as="+LiveViewAsFile, nil, &out); err != nil {
		return "", err
	}
	return out.URL, nil
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return wire.Errorf(wire.CodeBadParams, "encoding the %s request: %w", path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, URL+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if errors.Is(err, ErrNotRunning) {
			return ErrNotRunning
		}
		return fmt.Errorf("admin channel: %w", err)
	}
	defer resp.Body.Close()
	// An inspection answer may carry a whole CDP result.
	data, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxFrameBytes+1<<10))
	if err != nil {
		return fmt.Errorf("admin channel: reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return errorOf(resp, data)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], bytes.TrimSpace(data)...)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("admin channel: malformed answer: %w", err)
	}
	return nil
}

// errorOf is the error a failed answer carries: its message, and its code,
// which errors.Is matches against the sentinel of the same code.
func errorOf(resp *http.Response, data []byte) error {
	var eb errorBody
	if json.Unmarshal(data, &eb) != nil || eb.Error == "" {
		return fmt.Errorf("admin channel: %s", resp.Status)
	}
	return wire.Remote(eb.Error, eb.Code)
}
