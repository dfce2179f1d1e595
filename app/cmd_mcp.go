package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/tokens"
)

// ErrNotRunning means no companion serves the data dir's admin channel.
var ErrNotRunning = errors.New("reins is not running")

// runMCP is `reins mcp`: an MCP server on stdin/stdout, for clients that
// can only launch commands, relaying every message to the running
// companion's /mcp over the admin channel (mcp.Bridge). stdout carries
// JSON-RPC only; diagnostics go to stderr.
func runMCP(env Env, args []string) error {
	var tokenName string
	var wait time.Duration
	common, _, err := parseCommand(env, "mcp", "", args, func(fs *flag.FlagSet) {
		fs.StringVar(&tokenName, "token-name", "", "read the agent token NAME from the token store (default: the REINS_TOKEN environment variable)")
		fs.DurationVar(&wait, "wait", mcpStartWait, "how long to wait for Reins to start when it is not running yet")
	})
	if err != nil {
		return err
	}
	token := ""
	if env.Getenv != nil {
		token = strings.TrimSpace(env.Getenv("REINS_TOKEN"))
	}
	if tokenName != "" {
		t, err := agentToken(common.DataDir, common.Keyring, tokenName)
		if err != nil {
			return err
		}
		token = t
	}
	if token == "" {
		return errors.New("no agent token: set REINS_TOKEN or pass --token-name NAME (issue one with reins token issue NAME)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in, ok := env.Stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(env.Stdin)
	}
	// The admin channel, not the TCP port: only a companion of this user
	// can serve it, so the token never reaches a program that merely
	// listens where Reins should be.
	err = mcp.Bridge(ctx, in, env.Stdout, mcp.BridgeOptions{
		Transport: admin.Transport(common.DataDir),
		Endpoint:  admin.URL + "/mcp",
		Token:     token,
		StartWait: wait,
		OnWaiting: func() { fmt.Fprintln(env.Stderr, "reins mcp: Reins is not running yet; waiting for it to start") },
	})
	if errors.Is(err, admin.ErrNotRunning) {
		return fmt.Errorf("%w with the data dir %s: start the Reins app or `reins headless`", ErrNotRunning, common.DataDir)
	}
	return err
}

// mcpStartWait is how long `reins mcp` waits by default for a companion
// that is not running yet: at login the client may start before the app.
const mcpStartWait = 30 * time.Second

// agentToken reads an agent's token from the store. The Manager keeps only
// digests, so the secret is read from the Store itself, under the account
// name the tokens package documents ("agent:NAME"); the index decides
// whether the name exists.
func agentToken(dataDir, keyring, name string) (string, error) {
	m, err := openTokens(dataDir, keyring)
	if err != nil {
		return "", err
	}
	infos, err := m.List()
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(infos, func(in tokens.Info) bool { return in.Name == name }) {
		return "", fmt.Errorf("no agent token named %q (reins token list shows them; reins token issue %s makes one): %w", name, name, tokens.ErrNotFound)
	}
	var s tokens.Store
	if keyring == tokens.KeyringFile {
		if s, err = tokens.NewFileStore(dataDir); err != nil {
			return "", err
		}
	} else {
		s = tokens.NewKeychainStore(tokens.SystemKeyring(), 0)
	}
	tok, err := s.Get("agent:" + name)
	if err != nil {
		return "", fmt.Errorf("reading agent token %q: %w", name, err)
	}
	return tok, nil
}
