package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/reinshq/reins/companion/admin"
)

const browsersUsage = "usage: reins browsers | reins browsers block ID | reins browsers unblock INSTANCE | reins browsers code"

// runBrowsers is `reins browsers`: the connected browsers and the blocked
// profiles, blocking or unblocking one, and a one-time code that pairs a
// browser without the native host, on the running companion.
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
		case len(pos) == 1 && pos[0] == "code":
			pc, err := c.PairingCode(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "pairing code: %s\n", pc.Code)
			fmt.Fprintf(env.Stdout, "type it in the Reins extension's popup (Pair with a code) before %s; it works once\n", pc.Expires.Local().Format("15:04:05"))
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
