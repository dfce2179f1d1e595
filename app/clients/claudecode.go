package clients

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// cliTimeout bounds one run of a client's own command.
const cliTimeout = 30 * time.Second

// connectCLI adds the entry with the client's own command (`claude mcp
// add`), which knows where and how its config is kept. An older Reins
// entry is removed first: the command refuses to add a name twice.
func connectCLI(ctx context.Context, e Env, c Client, bin string, s Server) (Result, error) {
	res := Result{Path: c.ConfigPath(e), Via: c.cli}
	if _, err := disconnectCLI(ctx, e, c, bin); err != nil {
		return res, err
	}
	args := append([]string{"mcp", "add", "--scope", "user", EntryName, "--", s.Command}, s.Args...)
	if err := runCLI(ctx, e, bin, args...); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

// disconnectCLI removes the entry with the client's own command, when
// there is one to remove.
func disconnectCLI(ctx context.Context, e Env, c Client, bin string) (Result, error) {
	res := Result{Path: c.ConfigPath(e), Via: c.cli}
	st := Status(e, c)
	if !st.Connected && st.Problem == nil {
		return res, nil
	}
	if err := runCLI(ctx, e, bin, "mcp", "remove", "--scope", "user", EntryName); err != nil {
		return res, err
	}
	res.Changed = true
	return res, nil
}

func runCLI(ctx context.Context, e Env, bin string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	out, err := e.Run(ctx, bin, args...)
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		return fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args[:2], " "), err, msg)
	}
	return nil
}
