//go:build !nogui

package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/reinshq/reins/app/browsers"
	"github.com/reinshq/reins/app/clients"
	"github.com/reinshq/reins/app/osenv"
	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/ui"
)

// Store listings, set at build time (-ldflags -X) once the extension is
// published; empty means the guide falls back to Load unpacked.
var (
	// ChromeStoreID is the Chrome Web Store item id (Chrome, Chromium,
	// Brave and Vivaldi install from it).
	ChromeStoreID = ""
	// EdgeStoreID is the Microsoft Edge Add-ons item id.
	EdgeStoreID = ""
	// FirefoxAddonSlug is the addons.mozilla.org slug.
	FirefoxAddonSlug = ""
)

// setupTimeout bounds one guide action that waits on a browser or a
// client's command.
const setupTimeout = time.Minute

// setup is ui.Setup for this machine: it finds browsers and MCP clients,
// writes client configs through the connector, and opens pages in the
// browsers.
type setup struct {
	env  osenv.Env
	k    *connector
	c    *companion.Companion
	log  *slog.Logger
	ids  []string // the Chromium extension ids the companion accepts
	demo *demoServer
	// start launches a program detached (a browser); tests replace it.
	start func(name string, args ...string) error
}

var _ ui.Setup = (*setup)(nil)

func newSetup(env osenv.Env, c *companion.Companion, common Common, extIDs []string, log *slog.Logger) (*setup, error) {
	exe, err := reinsExecutable()
	if err != nil {
		return nil, err
	}
	ts := c.Tokens()
	if ts == nil {
		return nil, errNoTokenStore
	}
	k := &connector{
		env: env, common: common, exe: exe, mcpURL: c.MCPURL(),
		issue:  func(_ context.Context, name string) (string, error) { return ts.Issue(name) },
		revoke: func(_ context.Context, name string) error { return ts.Revoke(name) },
		verify: func(token string) (string, bool) {
			_, name, ok := ts.Verify(token)
			return name, ok
		},
		readBack: agentToken,
	}
	return &setup{
		env: env, k: k, c: c, log: log,
		ids:   append([]string{companion.ExtensionID}, extIDs...),
		demo:  &demoServer{log: log},
		start: startDetached,
	}, nil
}

func (s *setup) close() { s.demo.close() }

// offered: the package's external-extensions file for an accepted id is
// in the browser's dir.
func (s *setup) offered(b browsers.Browser) bool {
	for _, id := range s.ids {
		if osenv.Exists(filepath.Join(b.ExternalDir, id+".json")) {
			return true
		}
	}
	return false
}

func (s *setup) Browsers() []ui.InstalledBrowser {
	var out []ui.InstalledBrowser
	for _, in := range browsers.Detect(s.env, s.offered) {
		b := ui.InstalledBrowser{ID: in.ID, Name: in.Name, Engine: ui.EngineChromium, Offered: in.Offered, Store: storeURL(in.Browser) != ""}
		if in.Engine == "firefox" {
			b.Engine = ui.EngineFirefox
		}
		for _, p := range in.Profiles {
			b.Profiles = append(b.Profiles, p.Name)
		}
		out = append(out, b)
	}
	return out
}

// storeURL is the browser's store listing of Reins, "" when none is
// configured.
func storeURL(b browsers.Browser) string {
	switch {
	case b.ID == "firefox" && FirefoxAddonSlug != "":
		return "https://addons.mozilla.org/firefox/addon/" + url.PathEscape(FirefoxAddonSlug) + "/"
	case b.ID == "edge" && EdgeStoreID != "":
		return "https://microsoftedge.microsoft.com/addons/detail/" + url.PathEscape(EdgeStoreID)
	case b.Engine == "chromium" && b.ID != "edge" && ChromeStoreID != "":
		return "https://chromewebstore.google.com/detail/" + url.PathEscape(ChromeStoreID)
	}
	return ""
}

func (s *setup) installed(id string) (browsers.Installed, error) {
	for _, in := range browsers.Detect(s.env, nil) {
		if in.ID == id {
			return in, nil
		}
	}
	return browsers.Installed{}, fmt.Errorf("%s is not installed", id)
}

// AddExtension opens the store listing, or the extensions page with the
// folder to load unpacked, in that browser itself: a chrome:// page can
// only be opened by the browser, never by a link.
func (s *setup) AddExtension(id string) (ui.ExtensionHelp, error) {
	in, err := s.installed(id)
	if err != nil {
		return ui.ExtensionHelp{}, err
	}
	if u := storeURL(in.Browser); u != "" {
		return ui.ExtensionHelp{Opened: u}, s.open(in, u)
	}
	folder, err := extensionFolder(in.Engine)
	if err != nil {
		return ui.ExtensionHelp{}, err
	}
	page := in.ExtensionsPage
	if in.Engine == "firefox" {
		page = "about:debugging#/runtime/this-firefox"
	}
	return ui.ExtensionHelp{Opened: page, Folder: folder}, s.open(in, page)
}

// open shows u in the installed browser.
func (s *setup) open(in browsers.Installed, u string) error {
	if s.env.GOOS == "darwin" {
		return s.start("open", "-a", in.Executable, u)
	}
	return s.start(in.Executable, u)
}

// extensionFolder is the unpacked extension shipped beside the binary: the
// .deb's /usr/share/reins/extension, the app bundle's Resources, the
// Windows install dir, or a source checkout's extension/. Firefox needs
// its own build of it (extension-firefox), which only some packages ship.
func extensionFolder(engine string) (string, error) {
	exe, err := reinsExecutable()
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(exe)
	name := "extension"
	if engine == "firefox" {
		name = "extension-firefox"
	}
	candidates := []string{
		filepath.Join(dir, "..", "share", "reins", name),
		filepath.Join(dir, "..", "Resources", name),
		filepath.Join(dir, name),
		filepath.Join(dir, "..", name),
	}
	if engine == "firefox" {
		candidates = append(candidates, filepath.Join(dir, "..", "build", "firefox"))
	}
	for _, c := range candidates {
		if osenv.Exists(filepath.Join(c, "manifest.json")) {
			return filepath.Clean(c), nil
		}
	}
	if engine == "firefox" {
		return "", errors.New("this build of Reins has no Firefox add-on to load: install Reins from addons.mozilla.org")
	}
	return "", fmt.Errorf("the extension folder is missing beside %s; reinstall Reins", exe)
}

// RestartBrowser closes the browser and starts it again with its tabs. The
// browser takes a moment to save its session and exit, and the guide must
// not freeze meanwhile, so that happens in the background; its outcome
// shows in the guide when the extension connects.
func (s *setup) RestartBrowser(id string) error {
	in, err := s.installed(id)
	if err != nil {
		return err
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := browsers.Stop(ctx, in.Executable); err != nil {
			s.log.Warn("closing the browser to restart it", "browser", in.ID, "err", err)
			return
		}
		if err := s.start(in.Executable, "--restore-last-session"); err != nil {
			s.log.Warn("starting the browser again", "browser", in.ID, "err", err)
			return
		}
		s.log.Info("browser restarted", "browser", in.ID)
	}()
	return nil
}

func (s *setup) Clients() []ui.MCPClient {
	var out []ui.MCPClient
	for _, st := range clients.Detect(s.env) {
		c := ui.MCPClient{
			ID: st.Client.ID, Name: st.Client.Name, Installed: st.Installed, Connected: st.Connected,
			Agent: s.k.entryAgent(st.Entry), ConfigPath: st.Path, Restart: st.Client.Restart,
		}
		if st.Problem != nil {
			c.Problem = st.Problem.Error()
		}
		out = append(out, c)
	}
	return out
}

func (s *setup) ConnectClient(id string) (ui.ClientResult, error) {
	c, err := clients.Find(id)
	if err != nil {
		return ui.ClientResult{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	res, err := s.k.connect(ctx, c, c.ID)
	if err != nil {
		return ui.ClientResult{}, err
	}
	s.log.Info("client connected", "client", c.ID, "agent", c.ID, "path", res.Path, "via", res.Via)
	return ui.ClientResult{Backup: res.Backup}, nil
}

func (s *setup) DisconnectClient(id string) error {
	c, err := clients.Find(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	_, agent, err := s.k.disconnect(ctx, c)
	if err == nil {
		s.log.Info("client disconnected", "client", c.ID, "agent", agent)
	}
	return err
}

// ShowFile shows a config file in the file manager.
func (s *setup) ShowFile(path string) error {
	switch s.env.GOOS {
	case "darwin":
		return s.start("open", "-R", path)
	case "windows":
		return s.start("explorer", "/select,"+path)
	}
	if err := showItem(path); err == nil {
		return nil
	}
	return s.start("xdg-open", filepath.Dir(path))
}

// OpenDemo opens the demo page in a new shared tab of browserID. The tab
// has no owner, so every agent may use it.
func (s *setup) OpenDemo(browserID string) (ui.DemoTab, error) {
	u, err := s.demo.url()
	if err != nil {
		return ui.DemoTab{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	t, err := s.c.Hub().TabsCreate(ctx, browserID, u, true, "", "")
	if err != nil {
		return ui.DemoTab{}, fmt.Errorf("opening the demo tab: %w", err)
	}
	// Opened for no agent: sharing it as the person would makes it every
	// agent's, where an agent tab without an owner would be nobody's.
	if err := s.c.Hub().TabsShare(ctx, t.ID, true); err != nil {
		return ui.DemoTab{}, fmt.Errorf("sharing the demo tab: %w", err)
	}
	return ui.DemoTab{TabID: t.ID, URL: u, Prompt: demoPrompt}, nil
}

// startDetached starts a program that outlives nothing of ours: no stdio,
// its own process group, reaped in the background.
func startDetached(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
