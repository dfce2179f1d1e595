//go:build !nogui

package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"
	"github.com/godbus/dbus/v5"

	"github.com/reinshq/reins/app/osenv"

	"github.com/reinshq/reins/assets"
	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/nativemsg"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/ui"
)

// AppID is the Fyne application id (FyneApp.toml's Details.ID).
const AppID = "dev.reins.app"

// FirstRunFile is written to the data dir once Reins has turned start at
// login on for the first time. Its presence means the person has had the
// chance to say no, so a later "off" is never overridden.
const FirstRunFile = "first-run"

// singleInstanceTimeout bounds the question "is a companion already running
// on this data dir?". A live one answers over a local socket in
// milliseconds; a wedged one must not keep the person waiting.
const singleInstanceTimeout = 2 * time.Second

// statusNotifierWatcher is the D-Bus name a desktop panel owns when it can
// show tray icons (StatusNotifierItem hosts: KDE, GNOME with the AppIndicator
// extension, XFCE, …).
const statusNotifierWatcher = "org.kde.StatusNotifierWatcher"

// errNoDisplay is what `reins` says on a machine without a graphical
// session: GLFW would otherwise panic deep in its init.
var errNoDisplay = errors.New("no display: use `reins headless`")

// runTray is `reins` with no subcommand: the companion in-process, with the
// tray icon, dashboard and approval windows.
func runTray(env Env, args []string) error {
	var extIDs stringList
	common, _, err := parseCommand(env, "reins", "", args, func(fs *flag.FlagSet) {
		fs.Var(&extIDs, "allow-extension", "also accept this Chromium extension id on the extension socket (repeatable)")
	})
	if err != nil {
		return err
	}
	log, err := common.logger(env.Stderr)
	if err != nil {
		return err
	}

	// A second launch (a click on the menu entry while Reins already runs)
	// shows the running one's dashboard. This comes before the display
	// check: the running instance has its own display.
	if shown, err := showRunning(common.DataDir); shown || err != nil {
		if err == nil {
			fmt.Fprintln(env.Stdout, "Reins is already running; its dashboard is now on screen.")
		}
		return err
	}
	if err := checkDisplay(env.Getenv); err != nil {
		return err
	}

	fyneapp.SetMetadata(fyne.AppMetadata{ID: AppID, Name: "Reins", Version: Version, Icon: assets.AppIcon})
	a := fyneapp.NewWithID(AppID)
	a.SetIcon(assets.AppIcon)
	// Caught from here on, not just once the app runs: windows can be on
	// screen before app.Run, and a SIGTERM then must still quit cleanly.
	sigs, stopSigs := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSigs()

	store, err := openTokens(common.DataDir, common.Keyring)
	if errors.Is(err, tokens.ErrKeychainUnavailable) {
		// Never fall back to a plaintext file on our own: the person chooses.
		return fatalWindow(env, a, sigs, err, "No keychain reachable",
			"Reins keeps agent tokens in the OS keychain, and none answered.\n\n"+err.Error(),
			"Unlock your keyring (or install one, such as GNOME Keyring or KWallet) and start Reins again. "+
				"Or start Reins with\n\n    reins --keyring file\n\nto keep tokens in a file only you can read, in "+common.DataDir+".")
	}
	if err != nil {
		return err
	}

	// The admin channel calls ShowDashboard on its own goroutine; the
	// shell only exists once the UI is built, and the UI may only be
	// touched on the Fyne goroutine.
	var shell atomic.Pointer[ui.Shell]
	var quitting atomic.Bool
	showDashboard := func() error {
		fyne.Do(func() {
			if s := shell.Load(); s != nil && !quitting.Load() {
				s.ShowDashboard("")
			}
		})
		return nil
	}
	c, err := companion.New(companion.Config{
		Port: common.Port, DataDir: common.DataDir, Version: Version, Logger: log,
		ExtensionIDs: extIDs, Tokens: store, ShowDashboard: showDashboard,
	})
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		switch {
		case errors.Is(err, companion.ErrPortInUse):
			port := c.Port()
			return fatalWindow(env, a, sigs, err, "Port in use",
				fmt.Sprintf("Another program is listening on 127.0.0.1:%d, the port Reins needs for browsers and agents.", port),
				fmt.Sprintf("Quit that program and start Reins again, or start Reins on another port:\n\n    reins --port %d", suggestPort(port)))
		case errors.Is(err, admin.ErrAlreadyRunning):
			// Another `reins` won the race to the data dir since we asked.
			if _, err := showRunning(common.DataDir); err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, "Reins is already running; its dashboard is now on screen.")
			return nil
		}
		return err
	}

	host := probeTrayHost(log)
	var uiApp fyne.App = a
	var tray *trayIcon
	quit := func() {
		quitting.Store(true)
		if s := shell.Load(); s != nil {
			// No State may reach the widgets once the driver stops.
			s.Stop()
		}
		if tray != nil {
			tray.stop()
		}
		stopDriver(a)
	}
	if host.bus {
		tray = newTrayIcon(a, log)
		uiApp = trayApp{quitApp{a, quit}, tray}
	} else {
		// The tray is a D-Bus service here: without a session bus it is
		// never set up, and the UI sees an app without one.
		uiApp = quitApp{a, quit}
	}

	registerNativeHostOnFirstRun(common.DataDir, log)
	var auto ui.Autostart
	if as, err := NewAutostart(); err != nil {
		log.Warn("start at login is unavailable", "err", err)
	} else {
		auto = as
		enableAutostartOnFirstRun(common.DataDir, as, log)
	}

	bind := newBinding(c, log)
	var opts ui.Options
	if tray != nil {
		opts.SetTooltip = tray.setTooltip
	}
	if env, err := osenv.System(); err != nil {
		log.Warn("the setup guide is unavailable", "err", err)
	} else if st, err := newSetup(env, c, common, extIDs, log); err != nil {
		log.Warn("the setup guide is unavailable", "err", err)
	} else {
		opts.Setup = st
		defer st.close()
	}
	s := ui.Start(uiApp, bind, auto, nil, opts)
	shell.Store(s)
	if !host.watcher {
		log.Warn("no system tray on this desktop; showing the dashboard instead (run reins again to bring it back)", "reason", host.reason)
		s.ShowDashboard(ui.ViewConnections)
	}
	a.Lifecycle().SetOnStarted(func() {
		if tray != nil {
			tray.start()
		}
		log.Info("tray app ready", "tray", host.watcher, "mcp", c.MCPURL())
		// Start-up garbage (font and icon decoding, the first snapshots)
		// would otherwise stay resident until the next GC cycle, which an
		// idle tray app may not reach for a long time.
		go debug.FreeOSMemory()
	})

	runUntilQuit(a, sigs, func() {
		log.Info("signal received; quitting")
		quit()
	})
	quitting.Store(true)
	s.Stop()
	bind.close()

	log.Info("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Shutdown(ctx)
}

// quitApp routes every Quit (the tray's Quit item, a signal) through quit,
// which detaches the UI from the companion before the driver stops.
type quitApp struct {
	fyne.App
	quit func()
}

func (q quitApp) Quit() { q.quit() }

// trayApp is quitApp with the system tray, which ui.Tray finds by asserting
// desktop.App.
type trayApp struct {
	quitApp
	desktop.App
}

// showRunning asks a companion already serving dataDir to show its
// dashboard. shown is false when none runs.
func showRunning(dataDir string) (shown bool, err error) {
	cl := admin.NewClient(dataDir)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), singleInstanceTimeout)
	defer cancel()
	err = cl.ShowDashboard(ctx)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, admin.ErrNotRunning):
		return false, nil
	case errors.Is(err, admin.ErrNotImplemented):
		return false, fmt.Errorf("a headless Reins is already running with %s; stop it first to start the tray app: %w", dataDir, err)
	default:
		return false, fmt.Errorf("asking the running Reins to show its dashboard: %w", err)
	}
}

// checkDisplay refuses to start the GUI where GLFW cannot open a window.
// Fyne is built for X11 here (XWayland serves Wayland sessions), so DISPLAY
// is what matters.
func checkDisplay(getenv func(string) string) error {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
		if getenv == nil || getenv("DISPLAY") == "" {
			return errNoDisplay
		}
	}
	return nil
}

// trayHost says whether this desktop can show a tray icon.
type trayHost struct {
	bus     bool // a session D-Bus answers: Fyne's systray may run
	watcher bool // a panel owns the StatusNotifierWatcher: the icon will show
	reason  string
}

// probeTrayHost looks for a desktop panel that shows tray icons. Only Linux
// and the BSDs need to ask: there the tray is a D-Bus service of the panel.
func probeTrayHost(log *slog.Logger) trayHost {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
	default:
		return trayHost{bus: true, watcher: true}
	}
	// The shared connection: Fyne's systray uses the same one, so it stays
	// open for the life of the process.
	conn, err := dbus.SessionBus()
	if err != nil {
		return trayHost{reason: fmt.Sprintf("no session D-Bus: %v", err)}
	}
	owned, err := nameHasOwner(conn, statusNotifierWatcher)
	if err != nil {
		log.Debug("asking the session bus for a tray host", "err", err)
		return trayHost{bus: true, reason: fmt.Sprintf("asking the session bus for %s: %v", statusNotifierWatcher, err)}
	}
	if !owned {
		// The icon is still installed: Fyne's systray registers it as soon
		// as a panel starts.
		return trayHost{bus: true, reason: "no panel owns " + statusNotifierWatcher}
	}
	return trayHost{bus: true, watcher: true}
}

func nameHasOwner(conn *dbus.Conn, name string) (bool, error) {
	var owned bool
	err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&owned)
	return owned, err
}

// enableAutostartOnFirstRun turns start at login on the first time Reins
// runs for this data dir, and records that it did. The installer's promise
// is that Reins starts at login; the record keeps a person's later "off".
func enableAutostartOnFirstRun(dataDir string, auto ui.Autostart, log *slog.Logger) {
	marker := filepath.Join(dataDir, FirstRunFile)
	if _, err := os.Stat(marker); err == nil {
		return
	} else if !errors.Is(err, fs.ErrNotExist) {
		log.Warn("reading the first-run record", "path", marker, "err", err)
		return
	}
	if err := auto.SetEnabled(true); err != nil {
		// Try again next start rather than record a first run that did
		// not take effect.
		log.Warn("turning on start at login", "err", err)
		return
	}
	if err := os.WriteFile(marker, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		log.Warn("recording the first run", "path", marker, "err", err)
		return
	}
	log.Info("start at login turned on (first run)")
}

// registerNativeHostOnFirstRun writes this user's native messaging host
// manifests the first time Reins runs on macOS, where the .dmg installs
// none system-wide (the Linux and Windows packages register the host
// themselves). Without them the extension only finds Reins on the default
// port, and cannot start it.
func registerNativeHostOnFirstRun(dataDir string, log *slog.Logger) {
	if runtime.GOOS != "darwin" {
		return
	}
	if _, err := os.Stat(filepath.Join(dataDir, FirstRunFile)); err == nil {
		return
	}
	exe, err := reinsExecutable()
	if err != nil {
		log.Warn("registering the native messaging host", "err", err)
		return
	}
	done, err := nativemsg.Install(defaultHostPath(exe, runtime.GOOS, fileExists))
	if err != nil {
		log.Warn("registering the native messaging host", "err", err)
	}
	log.Info("native messaging host registered for this user (first run)", "manifests", len(done))
}

// fatalWindow shows a problem Reins cannot solve by itself, waits for the
// person to close the window (or for a signal), and makes the process exit
// non-zero.
func fatalWindow(env Env, a fyne.App, sigs context.Context, cause error, title, message, remedy string) error {
	fmt.Fprintf(env.Stderr, "reins: %v\n", cause)
	quit := func() { stopDriver(a) }
	w := ui.NewErrorWindow(a, title, message, remedy, quit)
	w.Show()
	runUntilQuit(a, sigs, quit)
	return ExitError{Code: 1}
}

// stopDriver ends the event loop and so a.Run, leaving the windows to the
// driver's teardown. fyne.App.Quit would close every window first, and a
// closed window still receives the pointer events already queued for it
// (the pointer entering a window that has just opened, a last motion)
// until the loop ends; Fyne 2.7's handler for them dereferences the closed
// window's nil handle when the cursor shape changes, which crashes the
// process. Hidden windows handle those events safely and disappear at once.
func stopDriver(a fyne.App) {
	for _, w := range a.Driver().AllWindows() {
		w.Hide()
	}
	a.Driver().Quit()
}

// runUntilQuit runs the Fyne app until it quits, and calls quit on the Fyne
// goroutine when sigs ends (SIGINT, SIGTERM).
func runUntilQuit(a fyne.App, sigs context.Context, quit func()) {
	ran := make(chan struct{})
	go func() {
		select {
		case <-sigs.Done():
			fyne.Do(quit)
		case <-ran:
		}
	}()
	a.Run()
	close(ran)
}

// suggestPort proposes the next port for the error window's remedy.
func suggestPort(p int) int {
	if p >= 65535 {
		return companion.DefaultPort + 1
	}
	return p + 1
}
