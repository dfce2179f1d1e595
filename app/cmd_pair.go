package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/reinshq/reins/companion/admin"
)

const (
	pairUsage     = "usage: reins pair list | reins pair approve ID | reins pair deny ID"
	backendsUsage = "usage: reins backends | reins backends forget ID"
)

// adminCall runs fn against the running companion of the data dir the
// flags name, for commands that only the running companion can answer
// (pair offers, backends, Live view links): there is no store fallback.
func adminCall(env Env, name string, args []string, usage string, fn func(ctx context.Context, c *admin.Client, pos []string) error) error {
	return adminCallFlags(env, name, args, usage, nil, fn)
}

// adminCallFlags is adminCall for a command with flags of its own.
func adminCallFlags(env Env, name string, args []string, usage string, flags func(*flag.FlagSet), fn func(ctx context.Context, c *admin.Client, pos []string) error) error {
	common, pos, err := parseCommand(env, name, usage, args, flags)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), admin.DefaultTimeout)
	defer cancel()
	c := admin.NewClient(common.DataDir)
	defer c.Close()
	err = fn(ctx, c, pos)
	if errors.Is(err, admin.ErrNotRunning) {
		return fmt.Errorf("%w: start Reins (or reins headless) first; reins %s needs the running companion", err, name)
	}
	return err
}

func runPair(env Env, args []string) error {
	return adminCall(env, "pair", args, pairUsage, func(ctx context.Context, c *admin.Client, pos []string) error {
		if len(pos) == 0 {
			return errors.New(pairUsage)
		}
		switch {
		case pos[0] == "list" && len(pos) == 1:
			offers, err := c.Offers(ctx)
			if err != nil {
				return err
			}
			if len(offers) == 0 {
				fmt.Fprintln(env.Stdout, "no pairing offers are waiting")
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tORIGIN\tBRAND (claimed)\tTRANSPORT\tSERVER\tEXPIRES")
			for _, o := range offers {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.ID, o.Origin, o.Brand, o.Transport, o.ServerURL, until(o.Expires))
			}
			return tw.Flush()
		case pos[0] == "approve" && len(pos) == 2:
			st, err := c.ApproveOffer(ctx, pos[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "approved: backend %s (%s) from %s, connecting to %s over %s\n", st.ID, st.Agent, st.Origin, st.ServerURL, st.Transport)
			return nil
		case pos[0] == "deny" && len(pos) == 2:
			if err := c.DenyOffer(ctx, pos[1]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "denied offer %s\n", pos[1])
			return nil
		}
		return errors.New(pairUsage)
	})
}

func runBackends(env Env, args []string) error {
	return adminCall(env, "backends", args, backendsUsage, func(ctx context.Context, c *admin.Client, pos []string) error {
		switch {
		case len(pos) == 0:
			bs, err := c.Backends(ctx)
			if err != nil {
				return err
			}
			return printBackends(env.Stdout, bs)
		case len(pos) == 2 && pos[0] == "forget":
			if err := c.ForgetBackend(ctx, pos[1]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "forgot backend %s; its token was removed from the keychain\n", pos[1])
			return nil
		}
		return errors.New(backendsUsage)
	})
}

func printBackends(w io.Writer, bs []admin.BackendState) error {
	if len(bs) == 0 {
		fmt.Fprintln(w, "no hosted products are paired")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tORIGIN\tTRANSPORT\tSERVER\tSTATE")
	for _, b := range bs {
		state := "disconnected"
		switch {
		case b.Revoked:
			state = "revoked by the backend"
		case b.Stopped:
			state = "stopped by the backend"
		case b.Connected:
			state = "connected"
		}
		if b.LastError != "" && !b.Connected {
			state += " (" + b.LastError + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.ID, b.Agent, b.Origin, b.Transport, b.ServerURL, state)
	}
	return tw.Flush()
}

func until(t time.Time) string {
	d := time.Until(t).Round(time.Second)
	if d <= 0 {
		return "expired"
	}
	return "in " + d.String()
}
