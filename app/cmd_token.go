package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/tokens"
)

const tokenUsage = "usage: reins token issue NAME | reins token list | reins token revoke NAME"

// openTokens opens the token store; tests replace it to simulate a machine
// without a keychain.
var openTokens = tokens.Open

// runToken manages agent tokens. It asks the running companion over the
// admin channel, so /mcp sees a revocation on its very next request, and
// works on the store directly only when no companion answers.
func runToken(env Env, args []string) error {
	common, pos, err := parseCommand(env, "token", tokenUsage, args, nil)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return errors.New(tokenUsage)
	}
	verb, rest := pos[0], pos[1:]
	want := map[string]int{"issue": 1, "list": 0, "revoke": 1}
	n, ok := want[verb]
	if !ok {
		return fmt.Errorf("unknown token command %q; %s", verb, tokenUsage)
	}
	if len(rest) != n {
		return errors.New(tokenUsage)
	}
	ctx, cancel := context.WithTimeout(context.Background(), admin.DefaultTimeout)
	defer cancel()
	ts := &tokenSource{common: common, admin: admin.NewClient(common.DataDir)}
	defer ts.admin.Close()
	switch verb {
	case "issue":
		tok, err := ts.issue(ctx, rest[0])
		if err != nil {
			return err
		}
		// stdout carries the token alone so scripts can capture it.
		fmt.Fprintln(env.Stdout, tok)
		fmt.Fprintf(env.Stderr, "Agent token for %q issued. It is shown only this once; give it to the agent as \"Authorization: Bearer TOKEN\".\n", rest[0])
		return nil
	case "list":
		infos, err := ts.list(ctx)
		if err != nil {
			return err
		}
		return printTokens(env.Stdout, env.Stderr, infos)
	default:
		if err := ts.revoke(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "revoked agent token %q\n", rest[0])
		return nil
	}
}

func printTokens(out, errOut io.Writer, infos []admin.TokenInfo) error {
	if len(infos) == 0 {
		fmt.Fprintln(errOut, "no agent tokens; issue one with reins token issue NAME")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCREATED")
	for _, in := range infos {
		fmt.Fprintf(tw, "%s\t%s\n", in.Name, in.Created.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

// tokenSource performs each token operation through the running companion,
// or on the store when none runs.
type tokenSource struct {
	common Common
	admin  *admin.Client
}

func (ts *tokenSource) store() (*tokens.Manager, error) {
	return openTokens(ts.common.DataDir, ts.common.Keyring)
}

func (ts *tokenSource) issue(ctx context.Context, name string) (string, error) {
	// Refuse a bad name before any keychain prompt or socket round trip.
	if err := tokens.ValidName(name); err != nil {
		return "", err
	}
	tok, err := ts.admin.IssueToken(ctx, name)
	if !errors.Is(err, admin.ErrNotRunning) {
		return tok, err
	}
	m, err := ts.store()
	if err != nil {
		return "", err
	}
	return m.Issue(name)
}

func (ts *tokenSource) list(ctx context.Context) ([]admin.TokenInfo, error) {
	infos, err := ts.admin.ListTokens(ctx)
	if !errors.Is(err, admin.ErrNotRunning) {
		return infos, err
	}
	m, err := ts.store()
	if err != nil {
		return nil, err
	}
	list, err := m.List()
	if err != nil {
		return nil, err
	}
	out := make([]admin.TokenInfo, 0, len(list))
	for _, in := range list {
		out = append(out, admin.TokenInfo{Name: in.Name, Created: in.Created})
	}
	return out, nil
}

func (ts *tokenSource) revoke(ctx context.Context, name string) error {
	err := ts.admin.RevokeToken(ctx, name)
	if !errors.Is(err, admin.ErrNotRunning) {
		return err
	}
	m, err := ts.store()
	if err != nil {
		return err
	}
	return m.Revoke(name)
}
