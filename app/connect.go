package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/reinshq/reins/app/clients"
	"github.com/reinshq/reins/app/osenv"
	"github.com/reinshq/reins/companion/nativemsg"
	"github.com/reinshq/reins/companion/tokens"
)

// connector connects MCP clients to this Reins: it issues the agent's
// token and writes the client's config. `reins connect` and the first-run
// guide share it, so both write the same entries.
type connector struct {
	env    osenv.Env
	common Common // the data dir, keyring and port this Reins runs with
	// exe is the reins binary stdio clients start.
	exe string
	// mcpURL is the endpoint HTTP clients call.
	mcpURL string
	issue  func(ctx context.Context, name string) (string, error)
	revoke func(ctx context.Context, name string) error
	// verify names the agent a token belongs to (to revoke an HTTP
	// client's token on disconnect); nil when unknown.
	verify func(token string) (string, bool)
	// readBack reads an agent's token the way `reins mcp --token-name`
	// will (agentToken); nil skips the check.
	readBack func(dataDir, keyring, name string) (string, error)
}

// reinsExecutable is the binary a client should start: this one, with
// links resolved so an update that replaces a link target keeps working.
func reinsExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the reins binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, nil
}

// server is what client c gets for the agent name: stdio clients start
// `reins mcp --token-name NAME` with the flags that find this Reins' data
// and keychain; HTTP clients get the URL and the token.
func (k *connector) server(c clients.Client, name, token, keyring string) clients.Server {
	args := []string{"mcp", "--token-name", name}
	if def, err := defaultDataDir(); err != nil || def != k.common.DataDir {
		args = append(args, "--data-dir", k.common.DataDir)
	}
	if keyring != "" && keyring != tokens.KeyringOS {
		args = append(args, "--keyring", keyring)
	}
	s := clients.Server{Command: k.exe, Args: args, URL: k.mcpURL}
	if c.Transport == clients.HTTP {
		s.Token = token
	}
	return s
}

func defaultDataDir() (string, error) {
	var c Common
	if err := c.resolve(); err != nil {
		return "", err
	}
	return c.DataDir, nil
}

// connect issues a token for name and writes c's config. A config Reins
// cannot read is refused before any token is issued; a failed write
// revokes the token it issued.
func (k *connector) connect(ctx context.Context, c clients.Client, name string) (clients.Result, error) {
	if err := tokens.ValidName(name); err != nil {
		return clients.Result{}, err
	}
	if st := clients.Status(k.env, c); st.Problem != nil {
		return clients.Result{Path: st.Path}, st.Problem
	}
	tok, err := k.issue(ctx, name)
	if err != nil {
		return clients.Result{}, fmt.Errorf("issuing a token for %q: %w", name, err)
	}
	keyring := k.common.Keyring
	if c.Transport == clients.Stdio && k.readBack != nil {
		if keyring, err = k.workingKeyring(name, tok); err != nil {
			if rerr := k.revoke(ctx, name); rerr != nil {
				err = errors.Join(err, fmt.Errorf("revoking the unused token %q: %w", name, rerr))
			}
			return clients.Result{}, err
		}
	}
	res, err := clients.Connect(ctx, k.env, c, k.server(c, name, tok, keyring))
	if err != nil {
		if rerr := k.revoke(ctx, name); rerr != nil {
			err = errors.Join(err, fmt.Errorf("revoking the unused token %q: %w", name, rerr))
		}
		return res, err
	}
	return res, nil
}

// workingKeyring makes sure the entry will work before it is written:
// `reins mcp --token-name` must read back the very token just issued. A
// running companion issues into its own store, which may not be the one
// this command was pointed at (a tray started with --keyring file and a
// `reins connect` without it); the entry then names the store that holds
// the token.
func (k *connector) workingKeyring(name, tok string) (string, error) {
	first := k.common.Keyring
	if first == "" {
		first = tokens.KeyringOS
	}
	order := []string{first, otherKeyring(first)}
	if first == tokens.KeyringOS && osenv.Exists(filepath.Join(k.common.DataDir, tokens.SecretsFile)) {
		// The data dir keeps its secrets in a file: look there before
		// asking the keychain, which may prompt the person.
		order = []string{tokens.KeyringFile, tokens.KeyringOS}
	}
	var errs []error
	for _, kr := range order {
		got, err := k.readBack(k.common.DataDir, kr, name)
		if err == nil && got == tok {
			return kr, nil
		}
		if err == nil {
			err = errors.New("it holds another token")
		}
		errs = append(errs, fmt.Errorf("--keyring %s: %w", kr, err))
	}
	return "", fmt.Errorf("the token for %q was issued, but reins mcp could not read it back: %w", name, errors.Join(errs...))
}

func otherKeyring(kr string) string {
	if kr == tokens.KeyringFile {
		return tokens.KeyringOS
	}
	return tokens.KeyringFile
}

// disconnect removes Reins' entry from c's config and revokes the token it
// used, when the entry says which.
func (k *connector) disconnect(ctx context.Context, c clients.Client) (clients.Result, string, error) {
	st := clients.Status(k.env, c)
	name := k.entryAgent(st.Entry)
	res, err := clients.Disconnect(ctx, k.env, c)
	if err != nil {
		return res, "", err
	}
	if name != "" {
		if err := k.revoke(ctx, name); err != nil && !errors.Is(err, tokens.ErrNotFound) {
			return res, name, fmt.Errorf("the entry is gone, but revoking the token %q failed: %w", name, err)
		}
	}
	return res, name, nil
}

// entryAgent reads the agent name back from an entry Reins wrote: the
// --token-name argument of a stdio entry, or the owner of an HTTP entry's
// token.
func (k *connector) entryAgent(entry any) string {
	m, ok := entry.(map[string]any)
	if !ok {
		return ""
	}
	if args, ok := m["args"].([]any); ok {
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "--token-name" {
				s, _ := args[i+1].(string)
				return s
			}
		}
	}
	if h, ok := m["headers"].(map[string]any); ok && k.verify != nil {
		auth, _ := h["Authorization"].(string)
		if len(auth) > 7 && auth[:7] == "Bearer " {
			if name, ok := k.verify(auth[7:]); ok {
				return name
			}
		}
	}
	return ""
}

// mcpURLFor is the endpoint of the companion serving dataDir (its port
// file), or of the port given.
func mcpURLFor(common Common) string {
	port := common.Port
	if port == 0 {
		port = nativemsg.ReadPort(common.DataDir)
	}
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
}
