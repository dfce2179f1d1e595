package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/reinshq/reins/companion/nativemsg"
)

// runNativeHost is what a browser starts through the host manifests: it
// answers the extension's hello and start requests on stdin/stdout until the
// browser closes stdin.
//
// Browsers add arguments a manifest cannot change: Chromium the caller's
// origin (and --parent-window=N on Windows), Firefox the manifest path and
// the add-on id. They are accepted and ignored: the browser has already
// checked the caller against the manifest's allowed list, which is what
// makes it safe to hand the caller the link key. Besides the key the host
// gives out the port and a launch of the tray app.
func runNativeHost(env Env, args []string) error {
	fs := flag.NewFlagSet("native-host", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	common := Common{Keyring: "os"}
	fs.StringVar(&common.DataDir, "data-dir", "", "directory where the running app records its port (default: the OS config dir)/reins")
	fs.StringVar(&common.LogLevel, "log-level", "warn", "log level on stderr: debug, info, warn, error")
	fs.Int("parent-window", 0, "passed by Chromium on Windows; ignored")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	if err := common.resolve(); err != nil {
		return err
	}
	// stdout carries frames only; anything else there breaks the stream, so
	// logs go to stderr, which Firefox shows in its browser console.
	log, err := common.logger(env.Stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h := &nativemsg.System{DataDir: common.DataDir, AppVersion: Version}
	if err := nativemsg.Serve(ctx, env.Stdin, env.Stdout, h); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("native host stopped", "err", err)
		return err
	}
	return nil
}

// runInstallNativeHost writes this user's host manifests (and on Windows the
// HKCU keys) for every supported browser. Packages install system-wide
// manifests of their own; this is for a binary installed by hand, a
// development build, or a browser installed after Reins.
func runInstallNativeHost(env Env, args []string) error {
	fs := flag.NewFlagSet("install-native-host", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	hostPath := fs.String("host-path", "", "the program browsers start (default: the reins-native-host launcher installed beside reins, else this reins binary)")
	var extIDs stringList
	fs.Var(&extIDs, "allow-extension", "also allow this Chromium extension id to start the host, as the companion's flag of the same name accepts it (repeatable)")
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	if *hostPath == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the reins binary: %w (pass --host-path)", err)
		}
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		*hostPath = defaultHostPath(exe, runtime.GOOS, fileExists)
	}
	abs, err := filepath.Abs(*hostPath)
	if err != nil {
		return err
	}
	done, err := nativemsg.Install(abs, extIDs...)
	for _, p := range done {
		fmt.Fprintf(env.Stdout, "wrote %s\n", p)
	}
	if err != nil {
		return fmt.Errorf("some browsers were not registered: %w", err)
	}
	fmt.Fprintf(env.Stdout, "browsers will start %s for the Reins extension\n", abs)
	return nil
}

// runUninstallNativeHost removes what install-native-host wrote.
func runUninstallNativeHost(env Env, args []string) error {
	fs := flag.NewFlagSet("uninstall-native-host", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	done, err := nativemsg.Uninstall()
	for _, p := range done {
		fmt.Fprintf(env.Stdout, "removed %s\n", p)
	}
	if err != nil {
		return err
	}
	if len(done) == 0 {
		fmt.Fprintln(env.Stdout, "no per-user native host manifests were installed")
	}
	return nil
}

// defaultHostPath prefers the reins-native-host launcher that the packages
// install (/usr/lib/reins beside /usr/bin, the .cmd beside reins.exe): it
// runs `reins native-host` whatever arguments the browser adds. Without one,
// the manifests name the binary itself, which then has to recognise a
// browser launch by its arguments (nativemsg.LaunchedByBrowser).
func defaultHostPath(exe, goos string, exists func(string) bool) string {
	dir := filepath.Dir(exe)
	var candidates []string
	if goos == "windows" {
		candidates = []string{filepath.Join(dir, "reins-native-host.cmd")}
	} else {
		candidates = []string{
			filepath.Join(dir, "reins-native-host"),
			filepath.Join(dir, "..", "lib", "reins", "reins-native-host"),
		}
	}
	for _, c := range candidates {
		if exists(c) {
			return filepath.Clean(c)
		}
	}
	return exe
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
