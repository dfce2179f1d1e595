// Package app owns the Reins process lifecycle: command-line parsing,
// configuration and data dir, logging, single instance, autostart and the
// keychain choice, and it binds the tray UI to the companion.
package app

import (
	"github.com/reinshq/reins/companion/nativemsg"

	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Version is stamped at build time with -ldflags "-X github.com/reinshq/reins/app.Version=…".
var Version = "0.1.0-dev"

// ExitError carries a process exit code.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// Env is the process environment, injected so tests can run commands in-process.
type Env struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// Common flags shared by every subcommand.
type Common struct {
	Port     int
	DataDir  string
	Keyring  string
	LogLevel string
}

func (c *Common) register(fs *flag.FlagSet) {
	fs.IntVar(&c.Port, "port", 0, "companion port on 127.0.0.1 (default 47100)")
	fs.StringVar(&c.DataDir, "data-dir", "", "directory for Reins state (default: the OS config dir)/reins")
	fs.StringVar(&c.Keyring, "keyring", "os", "where tokens are kept: os (the OS keychain) or file (a 0600 file in the data dir)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
}

func (c *Common) resolve() error {
	if c.DataDir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("finding the config dir: %w (pass --data-dir)", err)
		}
		c.DataDir = filepath.Join(base, "reins")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = abs
	if err := checkDataDir(c.DataDir); err != nil {
		return err
	}
	if c.Keyring != "os" && c.Keyring != "file" {
		return fmt.Errorf("--keyring must be os or file, not %q", c.Keyring)
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("--port %d is out of range 1-65535", c.Port)
	}
	return nil
}

func (c *Common) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

// parseInterspersed parses flags that may come before or after positional
// arguments, returning the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseCommand parses a subcommand's common flags, which may come before or
// after its positional arguments, resolves them, and returns the positional
// arguments. A bad flag prints usage.
func parseCommand(env Env, name, usage string, args []string, flags func(*flag.FlagSet)) (Common, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var common Common
	common.register(fs)
	if flags != nil {
		flags(fs)
	}
	if usage != "" {
		fs.Usage = func() {
			fmt.Fprintln(env.Stderr, usage)
			fs.PrintDefaults()
		}
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return common, nil, err
	}
	return common, pos, common.resolve()
}

type command struct {
	name    string
	summary string
	run     func(env Env, args []string) error
}

func commands() []command {
	return []command{
		{"headless", "run the companion without the tray (servers, tests)", runHeadless},
		{"token", "issue, list or revoke agent tokens: token issue NAME | token list | token revoke NAME", runToken},
		{"mcp", "serve MCP on stdin/stdout, relayed to the running companion (for clients that launch commands)", runMCP},
		{"pair", "list, approve or deny pairing offers from hosted products: pair list | pair approve ID | pair deny ID", runPair},
		{"backends", "list paired hosted products, or forget one: backends | backends forget ID", runBackends},
		{"browsers", "list connected browsers and blocked profiles, or block or unblock one: browsers | browsers block ID | browsers unblock INSTANCE", runBrowsers},
		{"live", "print a one-time Live view link for a shared tab: live [--file] TABID", runLive},
		{"settings", "show or change what agents may do beyond the tools: settings | settings extensions on|off | settings developer NAME on|off", runSettings},
		{"connect", "connect an MCP client (writes its config): connect CLIENT [--name NAME]; with no CLIENT, list the clients found", runConnect},
		{"disconnect", "remove Reins from an MCP client's config and revoke its token: disconnect CLIENT", runDisconnect},
		{"native-host", "serve the browser extension over native messaging (browsers start this)", runNativeHost},
		{"install-native-host", "register the native messaging host with this user's browsers", runInstallNativeHost},
		{"uninstall-native-host", "remove this user's native messaging host registrations", runUninstallNativeHost},
		{"version", "print the version", runVersion},
	}
}

// Main runs the reins command line and returns the process exit code.
func Main(env Env) int {
	args := env.Args[1:]
	// A browser starting the host runs the binary named in its manifest
	// with its own arguments, never a subcommand.
	if nativemsg.LaunchedByBrowser(args) {
		args = append([]string{"native-host"}, args...)
	}
	name := ""
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		name, args = args[0], args[1:]
	}
	if name == "" {
		name = "tray"
	}
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		usage(env.Stdout)
		return 0
	}
	for _, c := range append(commands(), extraCommands()...) {
		if c.name == name {
			err := c.run(env, args)
			var ee ExitError
			switch {
			case err == nil:
				return 0
			case errors.As(err, &ee):
				return ee.Code
			case errors.Is(err, flag.ErrHelp):
				return 2
			default:
				fmt.Fprintf(env.Stderr, "reins %s: %v\n", name, err)
				return 1
			}
		}
	}
	fmt.Fprintf(env.Stderr, "reins: unknown command %q\n\n", name)
	usage(env.Stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: reins [command] [flags]")
	fmt.Fprintf(w, "\n%s\n\nCommands:\n", withNoCommand)
	for _, c := range append(commands(), extraCommands()...) {
		fmt.Fprintf(w, "  %-20s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nCommon flags: --port N (default 47100), --data-dir DIR, --keyring os|file, --log-level LEVEL")
}

func runVersion(env Env, args []string) error {
	fmt.Fprintf(env.Stdout, "reins %s%s\n", Version, buildSuffix)
	return nil
}
