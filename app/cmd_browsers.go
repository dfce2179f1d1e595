package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/reinshq/reins/companion/admin"
)

const browsersUsage = "usage: reins browsers | reins browsers block ID | reins browsers unblock INSTANCE"

// runBrowsers is `reins browsers`: the connected browsers and the blocked
// profiles, and blocking or unblocking one, on the running companion.
func runBrowsers(env Env, args []string) error {
	return adminCall(env, "browsers", args, browsersUsage, func(ctx context.Context, c *admin.Client, pos []string) error {
		switch {
		case len(pos) == 0:
			bs, err := c.Browsers(ctx)
			if err != nil {
				return err
			}
			return printBrowsers(env.Stdout, bs)
		case len(pos) == 2 && pos[0] == "block":
			if err := c.BlockBrowser(ctx, pos[1]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "blocked browser %s; its profile is refused until reins browsers unblock\n", pos[1])
			return nil
		case len(pos) == 2 && pos[0] == "unblock":
			if err := c.UnblockBrowser(ctx, pos[1]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "unblocked %s; its extension connects on its next retry\n", pos[1])
			return nil
		}
		return errors.New(browsersUsage)
	})
}

func printBrowsers(w io.Writer, bs admin.BrowsersResponse) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(bs.Connected) == 0 {
		fmt.Fprintln(tw, "no browsers are connected")
	} else {
		fmt.Fprintln(tw, "ID\tNAME\tENGINE\tMODE\tSHARED TABS\tINSTANCE")
		for _, b := range bs.Connected {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", b.ID, b.Name, b.Engine, b.Mode, b.SharedTabs, b.InstanceID)
		}
	}
	if len(bs.Blocked) > 0 {
		fmt.Fprintln(tw, "\nBLOCKED\tNAME\tENGINE\tSINCE")
		for _, b := range bs.Blocked {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.InstanceID, b.Name, b.Engine, b.Since.Local().Format("2006-01-02 15:04"))
		}
	}
	return tw.Flush()
}
