package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// DefaultFirefox is Debian's firefox-esr.
const DefaultFirefox = "/usr/bin/firefox-esr"

// FirefoxPath is $REINS_FIREFOX or DefaultFirefox.
func FirefoxPath() string {
	if p := os.Getenv("REINS_FIREFOX"); p != "" {
		return p
	}
	return DefaultFirefox
}

// WebExtPath is $REINS_WEB_EXT, or the web-ext that `make deps-test`
// installs under the repository's .test-tmp.
func WebExtPath() (string, error) {
	p := os.Getenv("REINS_WEB_EXT")
	if p == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		p = filepath.Join(root, ".test-tmp", "npm", "node_modules", ".bin", "web-ext")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no web-ext at %s (run make deps-test, or set REINS_WEB_EXT): %w", p, err)
	}
	return p, nil
}

var (
	ffExtOnce sync.Once
	ffExtPath string
	ffExtDir  string
	ffExtErr  error
)

// FirefoxExtension is the loadable Firefox folder: $REINS_FIREFOX_EXT
// (`make extension-firefox` builds build/firefox), else one built from this
// checkout by extpack, once per test process.
func FirefoxExtension() (string, error) {
	if p := os.Getenv("REINS_FIREFOX_EXT"); p != "" {
		if _, err := os.Stat(filepath.Join(p, "manifest.json")); err != nil {
			return "", fmt.Errorf("REINS_FIREFOX_EXT: %w", err)
		}
		return p, nil
	}
	ffExtOnce.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			ffExtErr = err
			return
		}
		if ffExtDir, err = os.MkdirTemp("", "reins-e2e-ffext-"); err != nil {
			ffExtErr = err
			return
		}
		ffExtPath = filepath.Join(ffExtDir, "firefox")
		cmd := exec.Command("go", "run", "./packaging/cmd/extpack", "firefox-dir", "-o", ffExtPath, "-data-collection", "none")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			ffExtErr = fmt.Errorf("building the Firefox extension: %w\n%s", err, out)
		}
	})
	return ffExtPath, ffExtErr
}

// firefoxPrefs keep a test Firefox quiet: no updates, telemetry, captive
// portal or safe-browsing lookups, no remote settings, and every HTTP(S)
// connection except to loopback sent to a proxy that does not exist, so
// nothing leaves 127.0.0.1 even by mistake. The idle timeout keeps the
// background script alive for the whole test, as in the brief.
var firefoxPrefs = []string{
	"extensions.background.idle.timeout=300000",
	// The console of extension pages on stdout, for BackgroundStarted.
	"devtools.console.stdout.content=true",
	"app.update.enabled=false",
	"app.update.auto=false",
	"browser.shell.checkDefaultBrowser=false",
	"browser.startup.page=0",
	"browser.startup.homepage=about:blank",
	"browser.newtabpage.enabled=false",
	"browser.aboutwelcome.enabled=false",
	"datareporting.policy.dataSubmissionEnabled=false",
	"datareporting.healthreport.uploadEnabled=false",
	"toolkit.telemetry.enabled=false",
	"toolkit.telemetry.unified=false",
	"toolkit.telemetry.archive.enabled=false",
	"toolkit.telemetry.server=",
	"network.captive-portal-service.enabled=false",
	"network.connectivity-service.enabled=false",
	"network.dns.disablePrefetch=true",
	"network.prefetch-next=false",
	"network.http.speculative-parallel-limit=0",
	"network.trr.mode=5",
	"browser.safebrowsing.malware.enabled=false",
	"browser.safebrowsing.phishing.enabled=false",
	"browser.safebrowsing.downloads.enabled=false",
	"browser.safebrowsing.downloads.remote.enabled=false",
	"browser.safebrowsing.blockedURIs.enabled=false",
	"browser.safebrowsing.update.enabled=false",
	"extensions.update.enabled=false",
	"extensions.getAddons.cache.enabled=false",
	"extensions.systemAddon.update.enabled=false",
	"extensions.blocklist.enabled=false",
	"services.settings.server=data:,#remote-settings-dummy/v1",
	"browser.region.network.url=",
	"browser.search.update=false",
	"geo.provider.network.url=",
	"media.gmp-manager.updateEnabled=false",
	"dom.push.connection.enabled=false",
	"browser.topsites.contile.enabled=false",
	"network.proxy.type=1",
	"network.proxy.http=127.0.0.1",
	"network.proxy.http_port=9",
	"network.proxy.ssl=127.0.0.1",
	"network.proxy.ssl_port=9",
	"network.proxy.share_proxy_settings=true",
	"network.proxy.no_proxies_on=127.0.0.1,localhost",
	// Console output in the log helps a failed test.
	"devtools.console.stdout.chrome=true",
}

// Firefox is a running headless Firefox ESR with the Reins extension
// installed as a temporary add-on by web-ext.
type Firefox struct {
	Dir     string // HOME, profile and temp files, removed by Close
	Profile string

	cmd     *exec.Cmd
	out     *syncBuffer
	starts  *lineClock // when the extension's background started
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

// BackgroundStarted is the extension's line when its background script
// starts (the console reaches web-ext's output through the
// devtools.console.stdout.content pref).
const BackgroundStarted = "reins: background started"

// StartedAfter waits for the extension's background script to start after
// t and returns when its start line arrived.
func (f *Firefox) StartedAfter(ctx context.Context, t time.Time) (time.Time, error) {
	return f.starts.after(ctx, t)
}

// lineClock is a writer that notes when each line holding mark arrives.
type lineClock struct {
	mark string

	mu      sync.Mutex
	partial []byte
	seen    []time.Time
	changed chan struct{} // closed and replaced on each new mark
}

func newLineClock(mark string) *lineClock {
	return &lineClock{mark: mark, changed: make(chan struct{})}
}

func (l *lineClock) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		if bytes.Contains(l.partial[:i], []byte(l.mark)) {
			l.seen = append(l.seen, now)
			close(l.changed)
			l.changed = make(chan struct{})
		}
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 64<<10 {
		l.partial = l.partial[:0] // a runaway line holds no mark worth keeping
	}
	return len(p), nil
}

func (l *lineClock) after(ctx context.Context, t time.Time) (time.Time, error) {
	for {
		l.mu.Lock()
		for _, at := range l.seen {
			if at.After(t) {
				l.mu.Unlock()
				return at, nil
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("no %q line after %s: %w", l.mark, t.Format(time.TimeOnly), ctx.Err())
		}
	}
}

// StartFirefox launches Firefox through `web-ext run` with a fresh profile,
// pointed at the companion on port. A missing Firefox or web-ext is an
// error, never a reason to skip.
//
// The port and the link key reach the extension the way a real install
// finds them: through the native messaging host. Firefox reads host
// manifests from $HOME/.mozilla/native-messaging-hosts, so with HOME in a
// temp dir the test registers `reins native-host` for the companion's data
// dir; the host asks that companion for its port over the admin channel
// and hands over the data dir's link key. The extension asks the host
// before falling back to the default port 47100, which other tests may
// hold.
//
// prefs override the test defaults (firefoxPrefs), e.g. a short
// extensions.background.idle.timeout.
func StartFirefox(ctx context.Context, dataDir string, prefs ...string) (*Firefox, error) {
	bin := FirefoxPath()
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return nil, fmt.Errorf("no Firefox at %s (set REINS_FIREFOX, or install the firefox-esr package): %w", bin, err)
	}
	webExt, err := WebExtPath()
	if err != nil {
		return nil, err
	}
	ext, err := FirefoxExtension()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "reins-firefox-")
	if err != nil {
		return nil, err
	}
	f := &Firefox{Dir: dir, Profile: filepath.Join(dir, "profile"), out: &syncBuffer{}, starts: newLineClock(BackgroundStarted), exited: make(chan struct{})}
	for _, d := range []string{"profile", "home", "cache", "config", "tmp", "host"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	script, err := nativeHostScript(filepath.Join(dir, "host"), dataDir)
	if err == nil {
		err = writeFirefoxHost(filepath.Join(dir, "home"), script)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{"run",
		"--source-dir", ext,
		"--target", "firefox-desktop",
		"--firefox", bin,
		"--arg=-headless",
		"--no-input",
		"--no-reload",
		"--no-config-discovery",
		// Firefox's own stdout (the console lines) is passed on only in
		// verbose mode.
		"--verbose",
		// In place: web-ext otherwise copies the profile to a temp dir it
		// only removes on a clean exit.
		"--firefox-profile", f.Profile,
		"--keep-profile-changes",
	}
	for _, p := range mergePrefs(firefoxPrefs, prefs) {
		args = append(args, "--pref", p)
	}
	f.cmd = exec.Command(webExt, args...)
	f.cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"TMPDIR="+filepath.Join(dir, "tmp"),
		"MOZ_CRASHREPORTER_DISABLE=1",
		"MOZ_HEADLESS=1",
		"NO_UPDATE_NOTIFIER=1",
	)
	// Its own process group, so Close reaches Firefox and its content
	// processes, which web-ext starts as children.
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	f.cmd.Stdout = io.MultiWriter(f.out, f.starts)
	f.cmd.Stderr = f.cmd.Stdout
	if err := f.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting web-ext: %w", err)
	}
	go func() {
		f.waitErr = f.cmd.Wait()
		close(f.exited)
	}()
	return f, nil
}

// mergePrefs is base with the prefs of over replacing those of the same name.
func mergePrefs(base, over []string) []string {
	name := func(p string) string { n, _, _ := strings.Cut(p, "="); return n }
	out := make([]string, 0, len(base)+len(over))
	for _, p := range base {
		if !slices.ContainsFunc(over, func(o string) bool { return name(o) == name(p) }) {
			out = append(out, p)
		}
	}
	return append(out, over...)
}

// Output is what web-ext and Firefox printed.
func (f *Firefox) Output() string { return f.out.String() }

// Exited is closed when web-ext has exited.
func (f *Firefox) Exited() <-chan struct{} { return f.exited }

// Close kills web-ext, Firefox and its content processes, waits for them
// and removes the profile and temp files.
func (f *Firefox) Close() {
	f.once.Do(func() {
		syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
		<-f.exited
		// A content process that left the group would keep files busy.
		killMatching(f.Dir)
		os.RemoveAll(f.Dir)
	})
}

// WaitBrowser waits on the change stream for a connected browser of the
// given engine that is not one of skip (ids), and returns it.
func WaitBrowser(ctx context.Context, w *admin.Watch, engine wire.Engine, exited <-chan struct{}, skip ...string) (hub.BrowserInfo, error) {
	var found hub.BrowserInfo
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := w.Until(ctx, func(snap admin.Snapshot) bool {
		for _, b := range snap.Browsers {
			if b.Engine == engine && !contains(skip, b.ID) {
				found = b
				return true
			}
		}
		return false
	})
	if err != nil {
		select {
		case <-exited:
			return hub.BrowserInfo{}, errors.New("the browser exited before its extension said hello")
		default:
		}
		return hub.BrowserInfo{}, err
	}
	return found, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FirefoxStack is reins headless, the test pages and one Firefox whose
// extension is connected to that reins.
type FirefoxStack struct {
	Companion
	Firefox *Firefox
}

// FirefoxHelloTimeout bounds Firefox's start and the extension's hello; a
// first start on a 2-core machine that other builds keep busy has taken
// over a minute, and this is a deadline, not a wait.
const FirefoxHelloTimeout = 180 * time.Second

// StartFirefoxStack starts everything and returns once the extension's
// hello has reached the companion. On error, whatever started is closed.
func StartFirefoxStack(ctx context.Context) (s *FirefoxStack, err error) {
	s = &FirefoxStack{Companion: Companion{Pages: StartPages()}}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if err = s.start(ctx); err != nil {
		return s, err
	}
	if s.Firefox, err = StartFirefox(ctx, s.Reins.DataDir); err != nil {
		return s, err
	}
	wctx, cancel := context.WithTimeout(ctx, FirefoxHelloTimeout)
	defer cancel()
	if s.Browser, err = WaitBrowser(wctx, s.Watch, wire.EngineFirefox, s.Firefox.Exited()); err != nil {
		return s, fmt.Errorf("the Firefox extension never said hello to reins: %w\n%s", err, Tail(s.Firefox.Output(), 40))
	}
	return s, nil
}

// Close stops Firefox (killed), then reins with SIGTERM; it returns an error
// when reins did not exit cleanly.
func (s *FirefoxStack) Close() error {
	return s.stop(func() {
		if s.Firefox != nil {
			s.Firefox.Close()
		}
	})
}

// Diagnostics is the tail of each process's output, for a failed test.
func (s *FirefoxStack) Diagnostics() string {
	out := ""
	if s.Firefox != nil {
		out = s.Firefox.Output()
	}
	return s.diagnostics("web-ext/firefox", out, 40)
}

// CleanupFirefox removes what FirefoxExtension built for the test process.
func CleanupFirefox() {
	if ffExtDir != "" {
		os.RemoveAll(ffExtDir)
	}
}

// CrashContent kills Firefox's web content processes, as a content crash
// does: their tabs show Firefox's crashed-tab page, while the parent and
// the extension's process live on. It returns how many it killed.
func (f *Firefox) CrashContent() (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	killed := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces.
		open, close := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || close < open {
			continue
		}
		comm := string(stat[open+1 : close])
		fields := strings.Fields(string(stat[close+1:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(f.cmd.Process.Pid) {
			continue
		}
		if comm == "Isolated Web Co" || comm == "Web Content" {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		return 0, fmt.Errorf("no web content process of this Firefox (process group %d)", f.cmd.Process.Pid)
	}
	return killed, nil
}
