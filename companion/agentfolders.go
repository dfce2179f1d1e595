package companion

import (
	"errors"
	"fmt"

	"github.com/reinshq/reins/companion/mcp"
)

// AgentFolder returns the folder of the agent with the token named name,
// which holds its uploads and downloads folders, making them if needed, so
// the person can open it from the dashboard.
func (c *Companion) AgentFolder(name string) (string, error) {
	ts := c.cfg.Tokens
	if ts == nil {
		return "", errors.New("no token store")
	}
	list, err := ts.List()
	if err != nil {
		return "", fmt.Errorf("listing agents: %w", err)
	}
	for _, info := range list {
		if info.Name == name && info.ID != "" {
			return c.files.AgentDir(mcp.AgentID(info.ID))
		}
	}
	return "", fmt.Errorf("no agent named %q", name)
}
