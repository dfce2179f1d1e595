package admin

import (
	"context"
	"fmt"
	"net/http"
)

// Pauser is what the pause routes need: the pause switch the tray's menu
// flips. The companion satisfies it.
type Pauser interface {
	Paused() bool
	Pause()
	Resume()
}

const noPause = "pausing is not available in this companion"

// PauseState is whether automation is paused.
type PauseState struct {
	Paused bool `json:"paused"`
}

// pauseRequest pauses or resumes; Paused is required.
type pauseRequest struct {
	Paused *bool `json:"paused"`
}

func getPause(p Pauser, _ *http.Request) (any, error) {
	return PauseState{Paused: p.Paused()}, nil
}

func setPause(p Pauser, r *http.Request) (any, error) {
	var req pauseRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Paused == nil {
		return nil, fmt.Errorf("%w: paused (true or false) is required", ErrBadRequest)
	}
	if *req.Paused {
		p.Pause()
	} else {
		p.Resume()
	}
	return PauseState{Paused: p.Paused()}, nil
}

// Paused reports whether the running companion has automation paused.
func (c *Client) Paused(ctx context.Context) (bool, error) {
	var out PauseState
	err := c.do(ctx, http.MethodGet, "/v1/pause", nil, &out)
	return out.Paused, err
}

// SetPaused pauses automation (every new tool call fails with code paused)
// or resumes it, as the tray's Pause item does.
func (c *Client) SetPaused(ctx context.Context, paused bool) error {
	return c.do(ctx, http.MethodPut, "/v1/pause", pauseRequest{Paused: &paused}, nil)
}
