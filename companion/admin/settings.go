package admin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// Settings is what the settings routes need (`reins settings`): the two
// permissions a headless companion has no dashboard for. The companion
// satisfies it.
type Settings interface {
	SettingsState() (SettingsResponse, error)
	SetManageExtensions(on bool) error
	// SetDeveloperAgentByName marks the agent whose token is named name
	// as a developer agent, or unmarks it; tokens.ErrNotFound when no
	// token has that name.
	SetDeveloperAgentByName(name string, on bool) error
}

// SettingsResponse is the state of those permissions.
type SettingsResponse struct {
	ManageExtensions bool `json:"manageExtensions"`
	// DeveloperAgents are the names of the agent tokens marked as
	// developer agents, sorted.
	DeveloperAgents []string `json:"developerAgents"`
}

// switchRequest turns a setting on or off.
type switchRequest struct {
	On *bool `json:"on"`
}

func (h *Handler) settings() (Settings, error) {
	if h.opts.Settings == nil {
		return nil, fmt.Errorf("%w: settings are not available in this companion", ErrNotImplemented)
	}
	return h.opts.Settings, nil
}

func (h *Handler) getSettings(*http.Request) (any, error) {
	s, err := h.settings()
	if err != nil {
		return nil, err
	}
	out, err := s.SettingsState()
	if out.DeveloperAgents == nil {
		out.DeveloperAgents = []string{}
	}
	return out, err
}

// setSwitch answers a route that turns a setting on or off with the
// request's {"on": bool}.
func (h *Handler) setSwitch(set func(s Settings, r *http.Request, on bool) error) handler {
	return func(r *http.Request) (any, error) {
		s, err := h.settings()
		if err != nil {
			return nil, err
		}
		var req switchRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		if req.On == nil {
			return nil, fmt.Errorf("%w: on (true or false) is required", ErrBadRequest)
		}
		return struct{}{}, set(s, r, *req.On)
	}
}

func (h *Handler) setManageExtensions() handler {
	return h.setSwitch(func(s Settings, _ *http.Request, on bool) error { return s.SetManageExtensions(on) })
}

func (h *Handler) setDeveloperAgent() handler {
	return h.setSwitch(func(s Settings, r *http.Request, on bool) error {
		return s.SetDeveloperAgentByName(r.PathValue("name"), on)
	})
}

// Settings reads the permissions of the running companion.
func (c *Client) Settings(ctx context.Context) (SettingsResponse, error) {
	var out SettingsResponse
	err := c.do(ctx, http.MethodGet, "/v1/settings", nil, &out)
	return out, err
}

// SetManageExtensions lets agents manage the browser's extensions, or not.
func (c *Client) SetManageExtensions(ctx context.Context, on bool) error {
	return c.do(ctx, http.MethodPut, "/v1/settings/manage-extensions", switchRequest{On: &on}, nil)
}

// SetDeveloperAgent marks the agent with the token named name as a
// developer agent, or unmarks it.
func (c *Client) SetDeveloperAgent(ctx context.Context, name string, on bool) error {
	return c.do(ctx, http.MethodPut, "/v1/settings/developer-agents/"+url.PathEscape(name), switchRequest{On: &on}, nil)
}
