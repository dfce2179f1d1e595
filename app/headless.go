package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
	var dev *devbrowser.Keeper
	if devBrowser != "" {
		// Kept for the companion's life: one that exits on its own starts
		// again under the same browser id.
		dev, err = devbrowser.Keep(ctx, devbrowser.Options{Path: devBrowser, Headless: !devHeaded, Logger: log}, c.Hub())
		if err != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.Shutdown(sctx)
			return fmt.Errorf("--dev-browser: %w", err)
		}
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

type stringList []string

func (s *stringList) String() string { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
