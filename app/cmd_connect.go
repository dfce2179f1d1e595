package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinshq/reins/app/clients"
	"github.com/reinshq/reins/app/osenv"
	"github.com/reinshq/reins/companion/admin"
)

var connectUsage = "usage: reins connect [CLIENT [--name NAME]] | reins disconnect CLIENT\nCLIENT is one of " + strings.Join(clients.IDs(), ", ")

// systemEnv is the machine the connect commands look at; tests replace it.
var systemEnv = osenv.System

// runConnect is `reins connect`: with no client it lists the clients found
// and whether each is connected; with one it issues the agent's token and
// writes the client's config.
func runConnect(env Env, args []string) error {
	var name string
	common, pos, err := parseCommand(env, "connect", connectUsage, args, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "", "the agent's name in Reins (its token); default: the client's name, e.g. claude-desktop")
	})
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return errors.New(connectUsage)
	}
	k, closeK, err := newCLIConnector(common)
	if err != nil {
		return err
	}
	defer closeK()
	if len(pos) == 0 {
		return listClients(env, k)
	}
	c, err := clients.Find(pos[0])
	if err != nil {
		return fmt.Errorf("%w %q; %s", err, pos[0], connectUsage)
	}
	if name == "" {
		name = c.ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), admin.DefaultTimeout+clientsTimeout)
	defer cancel()
	res, err := k.connect(ctx, c, name)
	if err != nil {
		return explainFileError(err)
	}
	how := "wrote " + res.Path
	if res.Via != "" {
		how = "added it with `" + res.Via + " mcp add`"
	}
	fmt.Fprintf(env.Stdout, "connected %s as agent %q: %s\n", c.Name, name, how)
	if res.Backup != "" {
		fmt.Fprintf(env.Stdout, "the previous file is kept as %s\n", res.Backup)
	}
	if c.Transport == clients.Stdio {
		fmt.Fprintf(env.Stdout, "%s starts `reins mcp --token-name %s`; the token stays in the keychain.\n", c.Name, name)
	}
	fmt.Fprintln(env.Stdout, c.Restart)
	return nil
}

// clientsTimeout bounds a client's own command (claude mcp add).
const clientsTimeout = time.Minute

// runDisconnect is `reins disconnect CLIENT`: Reins' entry leaves the
// client's config and its token is revoked.
func runDisconnect(env Env, args []string) error {
	common, pos, err := parseCommand(env, "disconnect", connectUsage, args, nil)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(connectUsage)
	}
	c, err := clients.Find(pos[0])
	if err != nil {
		return fmt.Errorf("%w %q; %s", err, pos[0], connectUsage)
	}
	k, closeK, err := newCLIConnector(common)
	if err != nil {
		return err
	}
	defer closeK()
	ctx, cancel := context.WithTimeout(context.Background(), admin.DefaultTimeout+clientsTimeout)
	defer cancel()
	res, name, err := k.disconnect(ctx, c)
	if err != nil {
		return explainFileError(err)
	}
	if !res.Changed {
		fmt.Fprintf(env.Stdout, "%s has no Reins entry; nothing to do\n", c.Name)
		return nil
	}
	fmt.Fprintf(env.Stdout, "removed Reins from %s (%s)\n", c.Name, res.Path)
	if res.Backup != "" {
		fmt.Fprintf(env.Stdout, "the previous file is kept as %s\n", res.Backup)
	}
	if name != "" {
		fmt.Fprintf(env.Stdout, "revoked agent token %q\n", name)
	}
	return nil
}

func listClients(env Env, k *connector) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tINSTALLED\tREINS\tCONFIG")
	for _, st := range clients.Detect(k.env) {
		state := "not connected"
		switch {
		case st.Problem != nil:
			state = "cannot read its config: " + oneLine(st.Problem.Error())
		case st.Connected:
			state = "connected"
			if a := k.entryAgent(st.Entry); a != "" {
				state += " as " + a
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", st.Client.ID, yesNo(st.Installed), state, st.Path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Stderr, "connect one with: reins connect CLIENT [--name NAME]")
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// explainFileError adds what to do to a config file Reins refused.
func explainFileError(err error) error {
	switch {
	case errors.Is(err, clients.ErrMalformed):
		return fmt.Errorf("%w\nReins left the file as it was. Fix it (or move it away) and run the command again", err)
	case errors.Is(err, clients.ErrReadOnly):
		return fmt.Errorf("%w\nReins left the file as it was. Make it writable and run the command again", err)
	}
	return err
}

// newCLIConnector issues and revokes through the running companion when
// one answers, and on the store otherwise, as `reins token` does.
func newCLIConnector(common Common) (*connector, func(), error) {
	e, err := systemEnv()
	if err != nil {
		return nil, nil, err
	}
	exe, err := reinsExecutable()
	if err != nil {
		return nil, nil, err
	}
	ts := &tokenSource{common: common, admin: admin.NewClient(common.DataDir)}
	k := &connector{
		env: e, common: common, exe: exe, mcpURL: mcpURLFor(common),
		issue:    ts.issue,
		revoke:   ts.revoke,
		readBack: agentToken,
		verify: func(token string) (string, bool) {
			m, err := ts.store()
			if err != nil {
				return "", false
			}
			_, name, ok := m.Verify(token)
			return name, ok
		},
	}
	return k, ts.admin.Close, nil
}
