package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/reinshq/reins/companion/admin"
)

const liveUsage = "usage: reins live TABID"

// runLive prints a one-time Live view link for a shared tab of the running
// companion. The link works once, within a minute; open it in a browser on
// this machine.
func runLive(env Env, args []string) error {
	return adminCall(env, "live", args, liveUsage, func(ctx context.Context, c *admin.Client, pos []string) error {
		if len(pos) != 1 {
			return errors.New(liveUsage)
		}
		tab, err := strconv.Atoi(pos[0])
		if err != nil || tab <= 0 {
			return fmt.Errorf("tab id %q is not a positive number; %s", pos[0], liveUsage)
		}
		u, err := c.LiveViewURL(ctx, tab)
		if err != nil {
			return err
		}
		// stdout carries the link alone so scripts can capture it.
		fmt.Fprintln(env.Stdout, u)
		fmt.Fprintln(env.Stderr, "This link works once, within a minute.")
		return nil
	})
}
