package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reinshq/reins/companion/admin"
)

const settingsUsage = "usage: reins settings | reins settings extensions on|off | reins settings developer NAME on|off"

// runSettings is `reins settings`: the permissions a headless companion has
// no dashboard for. Whether agents may manage the browser's extensions, and
// which agents (by token name) are developer agents that may send raw
// DevTools commands. Both are off until the person turns them on.
func runSettings(env Env, args []string) error {
	return adminCall(env, "settings", args, settingsUsage, func(ctx context.Context, c *admin.Client, pos []string) error {
		switch {
		case len(pos) == 0:
			s, err := c.Settings(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "agents may manage extensions: %s\n", onOff(s.ManageExtensions))
			devs := "none"
			if len(s.DeveloperAgents) > 0 {
				devs = strings.Join(s.DeveloperAgents, ", ")
			}
			fmt.Fprintf(env.Stdout, "developer agents (raw DevTools): %s\n", devs)
			return nil
		case len(pos) == 2 && pos[0] == "extensions":
			on, err := parseOnOff(pos[1])
			if err != nil {
				return err
			}
			if err := c.SetManageExtensions(ctx, on); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "agents may manage extensions: %s\n", onOff(on))
			return nil
		case len(pos) == 3 && pos[0] == "developer":
			on, err := parseOnOff(pos[2])
			if err != nil {
				return err
			}
			if err := c.SetDeveloperAgent(ctx, pos[1], on); err != nil {
				return err
			}
			if on {
				fmt.Fprintf(env.Stdout, "%s is a developer agent: it may send raw DevTools commands to its tabs\n", pos[1])
			} else {
				fmt.Fprintf(env.Stdout, "%s is no longer a developer agent\n", pos[1])
			}
			return nil
		}
		return errors.New(settingsUsage)
	})
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func parseOnOff(s string) (bool, error) {
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither on nor off; %s", s, settingsUsage)
}
