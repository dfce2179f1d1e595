package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/reinshq/reins/companion/admin"
)

const liveUsage = "usage: reins live [--file] TABID"

// runLive prints a Live view link for a shared tab of the running
// companion. The link works once, within a minute; open it in a browser on
// this machine. With --file it prints a file:// URL that leads to such a
// link instead: it carries no secret, so it may go on a command line
// (chromium "$(reins live --file 7)"), where every user of the machine can
// read it.
func runLive(env Env, args []string) error {
	var asFile bool
	flags := func(fs *flag.FlagSet) {
		fs.BoolVar(&asFile, "file", false, "print a file:// URL that carries no secret, to pass to a browser on its command line")
	}
	return adminCallFlags(env, "live", args, liveUsage, flags, func(ctx context.Context, c *admin.Client, pos []string) error {
		if len(pos) != 1 {
			return errors.New(liveUsage)
		}
		tab, err := strconv.Atoi(pos[0])
		if err != nil || tab <= 0 {
			return fmt.Errorf("tab id %q is not a positive number; %s", pos[0], liveUsage)
		}
		get := c.LiveViewURL
		if asFile {
			get = c.LiveViewOpenURL
		}
		u, err := get(ctx, tab)
		if err != nil {
			return err
		}
		// stdout carries the URL alone so scripts can capture it.
		fmt.Fprintln(env.Stdout, u)
		fmt.Fprintln(env.Stderr, "This link works once, within a minute.")
		return nil
	})
}
