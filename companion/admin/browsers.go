package admin

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// ErrNoSuchBrowser means no connected browser, or no blocked profile, has
// the id given.
var ErrNoSuchBrowser error = wire.ErrNoSuchBrowser

// Browsers is what the browsers routes need (`reins browsers`); the
// companion satisfies it.
type Browsers interface {
	BrowsersState() BrowsersResponse
	BlockBrowser(id string) error
	UnblockBrowser(instanceID string) error
}

// BrowserEntry is a connected browser.
type BrowserEntry struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Engine     string `json:"engine"`
	Mode       string `json:"mode"`
	InstanceID string `json:"instanceId"`
	SharedTabs int    `json:"sharedTabs"`
}

// BlockedEntry is a browser profile the person blocked.
type BlockedEntry struct {
	InstanceID string    `json:"instanceId"`
	Name       string    `json:"name"`
	Engine     string    `json:"engine"`
	Since      time.Time `json:"since"`
}

// BrowsersResponse lists connected browsers and blocked profiles.
type BrowsersResponse struct {
	Connected []BrowserEntry `json:"connected"`
	Blocked   []BlockedEntry `json:"blocked"`
}

const noBrowsers = "blocking browsers is not available in this companion"

func listBrowsers(b Browsers, _ *http.Request) (any, error) {
	out := b.BrowsersState()
	if out.Connected == nil {
		out.Connected = []BrowserEntry{}
	}
	if out.Blocked == nil {
		out.Blocked = []BlockedEntry{}
	}
	return out, nil
}

func blockBrowser(b Browsers, r *http.Request) (any, error) {
	return struct{}{}, b.BlockBrowser(r.PathValue("id"))
}

func unblockBrowser(b Browsers, r *http.Request) (any, error) {
	return struct{}{}, b.UnblockBrowser(r.PathValue("instance"))
}

// Browsers lists the connected browsers and the blocked profiles.
func (c *Client) Browsers(ctx context.Context) (BrowsersResponse, error) {
	var out BrowsersResponse
	err := c.do(ctx, http.MethodGet, "/v1/browsers", nil, &out)
	return out, err
}

// BlockBrowser disconnects a connected browser's profile and refuses it
// until unblocked.
func (c *Client) BlockBrowser(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/v1/browsers/"+url.PathEscape(id)+"/block", nil, nil)
}

// PairingCode asks the running companion for a one-time pairing code.
func (c *Client) PairingCode(ctx context.Context) (PairingCode, error) {
	var out PairingCode
	err := c.do(ctx, http.MethodPost, "/v1/browsers/code", nil, &out)
	return out, err
}

// UnblockBrowser lets a blocked profile connect again.
func (c *Client) UnblockBrowser(ctx context.Context, instanceID string) error {
	return c.do(ctx, http.MethodDelete, "/v1/blocked/"+url.PathEscape(instanceID), nil, nil)
}
