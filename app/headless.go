package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/devbrowser"
)

func runHeadless(env Env, args []string) error {
	var (
		extIDs             stringList
		devBrowser         string
		inspect, devHeaded bool
	)
	common, _, err := parseCommand(env, "headless", "", args, func(fs *flag.FlagSet) {
		fs.Var(&extIDs, "allow-extension", "also accept this Chromium extension id on the extension socket (repeatable)")
		fs.BoolVar(&inspect, "inspect", false, "serve the hub inspection routes on the admin socket (tests, benchmarks and diagnostics)")
		fs.StringVar(&devBrowser, "dev-browser", "", "also launch the Chromium at this path with a fresh profile and drive it over raw CDP (graph mode dev)")
		fs.BoolVar(&devHeaded, "dev-browser-window", false, "show the --dev-browser window instead of running it headless")
	})
	if err != nil {
		return err
	}
	log, err := common.logger(env.Stderr)
	if err != nil {
		return err
	}
	// Caught before the port opens: a SIGTERM the moment the companion
	// answers (a supervisor's, a test's) must still shut it down cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Refuse to start without a usable token store: with --keyring os and no
	// reachable keychain the error names --keyring file.
	store, err := openTokens(common.DataDir, common.Keyring)
	if err != nil {
		return err
	}
	c, err := companion.New(companion.Config{
		Port: common.Port, DataDir: common.DataDir, Version: Version, Logger: log,
		ExtensionIDs: extIDs, Tokens: store, Inspect: inspect,
	})
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		if errors.Is(err, companion.ErrPortInUse) {
			return fmt.Errorf("%w", err)
		}
		return err
	}
	var dev *devbrowser.Browser
	if devBrowser != "" {
		dev, err = startDevBrowser(ctx, c, devBrowser, !devHeaded, log)
		if err != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.Shutdown(sctx)
			return err
		}
		defer dev.Close()
	}
	<-ctx.Done()
	log.Info("shutting down")
	if dev != nil {
		// First, while its link is up: Browser.close lets Chromium flush
		// its profile. Shutting the hub down closes the link, and Chromium
		// would then only see its pipe close.
		if err := dev.Close(); err != nil {
			log.Warn("dev browser not closed cleanly", "err", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Shutdown(sctx)
}

// startDevBrowser launches a Chromium the companion drives itself and
// registers it with the hub, where it shows with mode dev.
func startDevBrowser(ctx context.Context, c *companion.Companion, path string, headless bool, log *slog.Logger) (*devbrowser.Browser, error) {
	lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	b, err := devbrowser.Launch(lctx, devbrowser.Options{Path: path, Headless: headless, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--dev-browser: %w", err)
	}
	if _, err := b.Attach(c.Hub()); err != nil {
		b.Close()
		return nil, fmt.Errorf("--dev-browser: %w", err)
	}
	log.Info("dev browser attached", "path", path, "headless", headless)
	return b, nil
}

type stringList []string

func (s *stringList) String() string { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
