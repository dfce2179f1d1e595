package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/reinshq/reins/companion/admin"
)

const liveUsage = "usage: reins live TABID"

// runLive prints a one-time Live view link for a shared tab of the running
// companion. The link works once, within a minute; open it in a browser on
// this machine.
func runLive(env Env, args []string) error {
	fs := flag.NewFlagSet("live", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var common Common
	common.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, liveUsage)
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := common.resolve(); err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(liveUsage)
	}
	tab, err := strconv.Atoi(pos[0])
	if err != nil || tab <= 0 {
		return fmt.Errorf("tab id %q is not a positive number; %s", pos[0], liveUsage)
	}
	ctx, cancel := context.WithTimeout(context.Background(), admin.DefaultTimeout)
	defer cancel()
	c := admin.NewClient(common.DataDir)
	defer c.Close()
	u, err := c.LiveViewURL(ctx, tab)
	if errors.Is(err, admin.ErrNotRunning) {
		return fmt.Errorf("%w: start Reins (or reins headless) first; Live view needs the running companion", err)
	}
	if err != nil {
		return err
	}
	// stdout carries the link alone so scripts can capture it.
	fmt.Fprintln(env.Stdout, u)
	fmt.Fprintln(env.Stderr, "This link works once, within a minute.")
	return nil
}
