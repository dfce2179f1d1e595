package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ExtensionID is the id the manifest's key pins (companion.ExtensionID).
const ExtensionID = "cahakjcjmollcmebjjnhhlhcdhipahla"

// DefaultChromium is where Debian's chromium package puts the real binary
// (/usr/bin/chromium is a wrapper script that adds flags of its own).
const DefaultChromium = "/usr/lib/chromium/chromium"

// ChromiumPath is $REINS_CHROMIUM or DefaultChromium.
func ChromiumPath() string {
	if p := os.Getenv("REINS_CHROMIUM"); p != "" {
		return p
	}
	return DefaultChromium
}

// Chromium is a running headless Chromium with the unpacked extension.
type Chromium struct {
	// Browser is the browser-level DevTools connection.
	Browser      *CDP
	DevToolsPort int
	UserDataDir  string

	cmd      *exec.Cmd
	out      *syncBuffer
	exited   chan struct{}
	exitedAt time.Time
	waitErr  error
	dir      string
	once     sync.Once
}

// ChromiumOption configures StartChromium.
type ChromiumOption func(*chromiumOptions)

type chromiumOptions struct {
	hostDataDir string
	// extensions, when set, replaces the extension folder to load with
	// the folders it returns (made under dir).
	extensions func(dir, ext string) ([]string, error)
	// windowW×windowH is the first window's size when set.
	windowW, windowH int
}

// WithWindowSize opens the first window at w×h on a screen larger than
// that: the default headless screen is too small to resize a window to a
// 1280×800 viewport.
func WithWindowSize(w, h int) ChromiumOption {
	return func(o *chromiumOptions) { o.windowW, o.windowH = w, h }
}

// WithNativeHost registers `reins native-host` for the companion of
// dataDir with the profile, as the packages (or `reins install-native-host`)
// do for a person: the extension gets the link key and the port from it.
// Without it the extension has no key until a test gives it one
// (UseCompanion) or pairs it with a code.
func WithNativeHost(dataDir string) ChromiumOption {
	return func(o *chromiumOptions) { o.hostDataDir = dataDir }
}

// StartChromium launches Chromium with a fresh profile in a temp dir, the
// repo's extension/ loaded unpacked, and DevTools on a kernel-chosen port.
// A missing binary is an error, never a reason to skip.
func StartChromium(ctx context.Context, opts ...ChromiumOption) (*Chromium, error) {
	var o chromiumOptions
	for _, f := range opts {
		f(&o)
	}
	bin := ChromiumPath()
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return nil, fmt.Errorf("no Chromium at %s (set REINS_CHROMIUM, or install the chromium package): %w", bin, err)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	ext := filepath.Join(root, "extension")
	if _, err := os.Stat(filepath.Join(ext, "manifest.json")); err != nil {
		return nil, fmt.Errorf("no extension to load: %w", err)
	}
	dir, err := os.MkdirTemp("", "reins-chromium-")
	if err != nil {
		return nil, err
	}
	c := &Chromium{UserDataDir: filepath.Join(dir, "profile"), out: &syncBuffer{}, exited: make(chan struct{}), dir: dir}
	for _, d := range []string{"cache", "config", "home", "profile"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if o.hostDataDir != "" {
		script, err := nativeHostScript(filepath.Join(dir, "host"), o.hostDataDir)
		if err == nil {
			err = writeChromiumHost(c.UserDataDir, script)
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	exts := []string{ext}
	if o.extensions != nil {
		if exts, err = o.extensions(dir, ext); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	args := []string{
		"--headless=new",
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-domain-reliability",
		"--metrics-recording-only",
		// Belt and braces for "traffic to 127.0.0.1 only": any name other
		// than the loopback ones fails to resolve.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
		"--user-data-dir=" + c.UserDataDir,
		"--load-extension=" + strings.Join(exts, ","),
		"--disable-extensions-except=" + strings.Join(exts, ","),
		"--silent-debugger-extension-api",
		"--remote-debugging-port=0",
	}
	if o.windowW > 0 && o.windowH > 0 {
		// A screen with room to spare, so the window can be resized to
		// any viewport up to w×h (the window frame comes on top).
		args = append(args, fmt.Sprintf("--window-size=%d,%d", o.windowW, o.windowH),
			fmt.Sprintf("--screen-info={0,0 %dx%d}", o.windowW+400, o.windowH+400))
	}
	args = append(args, "about:blank")
	c.cmd = exec.Command(bin, args...)
	// Chromium writes caches (fontconfig, shaders) and NSS state under the
	// XDG dirs and HOME; keep them in the temp dir, not the person's home.
	c.cmd.Env = append(os.Environ(),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HOME="+filepath.Join(dir, "home"),
	)
	// Its own process group, so Close reaches the renderers and helpers.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	listening := make(chan string, 1)
	w := &lineWatch{w: c.out, prefix: "DevTools listening on ", found: listening}
	c.cmd.Stdout = w
	c.cmd.Stderr = w
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting chromium: %w", err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		c.exitedAt = time.Now()
		close(c.exited)
	}()
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	var wsURL string
	select {
	case wsURL = <-listening:
	case <-c.exited:
		err := fmt.Errorf("chromium exited at start: %v\n%s", c.waitErr, Tail(c.out.String(), 30))
		c.Close()
		return nil, err
	case <-ctx.Done():
		c.Close()
		return nil, fmt.Errorf("chromium never opened DevTools: %w\n%s", ctx.Err(), Tail(c.out.String(), 30))
	}
	// DevToolsActivePort is the documented source; the listening line,
	// printed from the same place, stands in if the file is not there yet.
	if port, err := devToolsPort(c.UserDataDir); err == nil {
		c.DevToolsPort = port
	} else if u, err := url.Parse(wsURL); err == nil {
		c.DevToolsPort, _ = strconv.Atoi(u.Port())
	}
	if c.Browser, err = DialCDP(ctx, wsURL); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// devToolsPort reads DevToolsActivePort, which Chromium writes before it
// prints the listening line.
func devToolsPort(profile string) (int, error) {
	data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(data), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// lineWatch copies output and reports the rest of the first line that
// starts with prefix.
type lineWatch struct {
	w      *syncBuffer
	prefix string
	found  chan string
	mu     sync.Mutex
	line   []byte
	done   bool
}

func (l *lineWatch) Write(p []byte) (int, error) {
	l.w.Write(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return len(p), nil
	}
	l.line = append(l.line, p...)
	for {
		i := bytes.IndexByte(l.line, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(l.line[:i]))
		l.line = l.line[i+1:]
		if rest, ok := strings.CutPrefix(line, l.prefix); ok {
			l.done = true
			l.line = nil
			l.found <- rest
			break
		}
	}
	return len(p), nil
}

// Output is what Chromium printed (mostly noise; for failure reports).
func (c *Chromium) Output() string { return c.out.String() }

// Exited is closed when the main browser process has exited.
func (c *Chromium) Exited() <-chan struct{} { return c.exited }

// ExitedAt is when the main process was reaped, once Exited is closed.
func (c *Chromium) ExitedAt() time.Time {
	<-c.exited
	return c.exitedAt
}

// Kill SIGKILLs the whole browser at once, the main process and all its
// helpers: the extension's socket drops without a close frame.
func (c *Chromium) Kill() error {
	return syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
}

// KillMain SIGKILLs only the main browser process, as `kill -9` of the
// browser's pid does. The network service outlives it for a moment and
// closes the extension's socket with a close frame of its own.
func (c *Chromium) KillMain() error {
	return c.cmd.Process.Signal(syscall.SIGKILL)
}

// Close kills every process of the browser, waits for the main one and
// removes the profile and caches.
func (c *Chromium) Close() {
	c.once.Do(func() {
		if c.Browser != nil {
			c.Browser.Close()
		}
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
		// A helper that left the process group would keep the profile busy.
		killMatching(c.dir)
		os.RemoveAll(c.dir)
	})
}

// killMatching SIGKILLs processes whose command line mentions s.
func killMatching(s string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TargetInfo is a DevTools target.
type TargetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Attached bool   `json:"attached"`
}

// Targets lists the browser's targets.
func (c *Chromium) Targets(ctx context.Context) ([]TargetInfo, error) {
	var out struct {
		TargetInfos []TargetInfo `json:"targetInfos"`
	}
	return out.TargetInfos, c.Browser.Call(ctx, "", "Target.getTargets", nil, &out)
}

// WaitTarget waits, on Target.targetCreated/targetInfoChanged events, for a
// target that match accepts.
func (c *Chromium) WaitTarget(ctx context.Context, match func(TargetInfo) bool) (TargetInfo, error) {
	found := make(chan TargetInfo, 1)
	cancel := c.Browser.Subscribe(func(ev CDPEvent) {
		if ev.SessionID != "" || (ev.Method != "Target.targetCreated" && ev.Method != "Target.targetInfoChanged") {
			return
		}
		var p struct {
			TargetInfo TargetInfo `json:"targetInfo"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && match(p.TargetInfo) {
			select {
			case found <- p.TargetInfo:
			default:
			}
		}
	})
	defer cancel()
	// Discovery reports every existing target as created, so subscribing
	// first and then enabling it misses nothing.
	if err := c.Browser.Call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		return TargetInfo{}, err
	}
	ts, err := c.Targets(ctx)
	if err != nil {
		return TargetInfo{}, err
	}
	for _, t := range ts {
		if match(t) {
			return t, nil
		}
	}
	select {
	case t := <-found:
		return t, nil
	case <-ctx.Done():
		return TargetInfo{}, fmt.Errorf("waiting for a target: %w", ctx.Err())
	case <-c.exited:
		return TargetInfo{}, errors.New("chromium exited")
	}
}

// ServiceWorker waits for the extension's service worker target.
func (c *Chromium) ServiceWorker(ctx context.Context) (TargetInfo, error) {
	prefix := "chrome-extension://" + ExtensionID + "/"
	return c.WaitTarget(ctx, func(t TargetInfo) bool {
		return t.Type == "service_worker" && strings.HasPrefix(t.URL, prefix)
	})
}

// Attach attaches to a target with a flattened session.
func (c *Chromium) Attach(ctx context.Context, targetID string) (string, error) {
	var out struct {
		SessionID string `json:"sessionId"`
	}
	err := c.Browser.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}, &out)
	return out.SessionID, err
}

// Detach ends a session.
func (c *Chromium) Detach(ctx context.Context, sessionID string) error {
	return c.Browser.Call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": sessionID}, nil)
}

// Evaluate runs expression in a session, awaiting a promise, and decodes
// its value into out (when non-nil).
func (c *Chromium) Evaluate(ctx context.Context, sessionID, expression string, out any) error {
	var res struct {
		Result           json.RawMessage `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := c.Browser.Call(ctx, sessionID, "Runtime.evaluate", map[string]any{
		"expression": expression, "awaitPromise": true, "returnByValue": true,
	}, &res)
	if err != nil {
		return err
	}
	if e := res.ExceptionDetails; e != nil {
		msg := e.Text
		if e.Exception != nil {
			msg = e.Exception.Description
		}
		return fmt.Errorf("evaluating %q: %s", expression, msg)
	}
	if out == nil {
		return nil
	}
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(res.Result, &v); err != nil {
		return err
	}
	if len(v.Value) == 0 {
		return fmt.Errorf("evaluating %q: no value", expression)
	}
	return json.Unmarshal(v.Value, out)
}

// InWorker runs fn with a session on the extension's service worker and
// detaches afterwards: an attached DevTools session keeps an MV3 worker
// alive, which would hide the very idle behaviour the tests check. Call it
// only once the worker has started (the extension said hello): attaching
// to a worker that is still starting crashes it (Chromium 156).
func (c *Chromium) InWorker(ctx context.Context, fn func(sessionID string) error) error {
	sw, err := c.ServiceWorker(ctx)
	if err != nil {
		return err
	}
	sid, err := c.Attach(ctx, sw.TargetID)
	if err != nil {
		return fmt.Errorf("attaching to the extension's worker: %w", err)
	}
	defer c.Detach(context.WithoutCancel(ctx), sid)
	return fn(sid)
}

// UseCompanionPort points the extension at a companion on port, the way a
// person does on the options page: it stores the port in
// chrome.storage.local and sends the worker the reconnect message the page
// sends on save. Both run in the options page, not in the worker: attaching
// DevTools to a worker that is still starting crashes its renderer
// (Chromium 156), and an attached session would keep the worker alive,
// hiding the idle behaviour the tests check. Without the reconnect the port
// would only take effect at the next backoff retry, up to 15 s later, and
// never while another companion holds the default port.
func (c *Chromium) UseCompanionPort(ctx context.Context, port int) error {
	return c.useCompanion(ctx, port, map[string]any{"port": port})
}

// UseCompanion points the extension at port and gives it a link key, as a
// pairing would: for tests of a browser without the native host, and for
// pointing it at a fake companion.
func (c *Chromium) UseCompanion(ctx context.Context, port int, key []byte) error {
	return c.useCompanion(ctx, port, map[string]any{"port": port, "linkKey": base64.StdEncoding.EncodeToString(key)})
}

// useCompanion stores items in the extension's storage.local from its
// options page and sends the worker the reconnect message the page sends
// on save.
func (c *Chromium) useCompanion(ctx context.Context, port int, items map[string]any) error {
	data, err := json.Marshal(items)
	if err != nil {
		return err
	}
	return c.inExtensionPage(ctx, "options.html", func(sid string) error {
		var got int
		expr := fmt.Sprintf(`(async () => {
			await chrome.storage.local.set(%s);
			const r = await chrome.runtime.sendMessage({type: 'reconnect'});
			if (!r || !r.ok) throw new Error('reconnect refused: ' + JSON.stringify(r));
			return (await chrome.storage.local.get('port')).port;
		})()`, data)
		if err := c.Evaluate(ctx, sid, expr, &got); err != nil {
			return fmt.Errorf("setting the extension's port: %w", err)
		}
		if got != port {
			return fmt.Errorf("storage holds port %d after setting %d", got, port)
		}
		return nil
	})
}

// TypePairingCode types code into the extension's popup, as a person does
// with the code the app shows, and submits it.
func (c *Chromium) TypePairingCode(ctx context.Context, code string) error {
	return c.inExtensionPage(ctx, "popup.html", func(sid string) error {
		var shown bool
		expr := fmt.Sprintf(`(async () => {
			const form = document.getElementById('pair');
			// The popup offers pairing by itself to a browser with no key,
			// once it has heard the worker's state: wait for the form to show.
			if (form.hidden) {
				await new Promise((resolve) => {
					const mo = new MutationObserver(() => { if (!form.hidden) { mo.disconnect(); clearTimeout(timer); resolve(); } });
					mo.observe(form, {attributes: true, attributeFilter: ['hidden']});
					const timer = setTimeout(() => { mo.disconnect(); resolve(); }, 5000);
				});
			}
			if (form.hidden) return false;
			document.getElementById('pair-code').value = %q;
			const answered = new Promise((resolve) => {
				const go = document.getElementById('pair-go');
				new MutationObserver(() => { if (go.textContent === 'Pairing…' || !document.getElementById('pair-error').hidden) resolve(); })
					.observe(document.body, {subtree: true, attributes: true, childList: true, characterData: true});
			});
			form.requestSubmit();
			await answered;
			return true;
		})()`, code)
		if err := c.Evaluate(ctx, sid, expr, &shown); err != nil {
			return fmt.Errorf("typing the pairing code: %w", err)
		}
		if !shown {
			return errors.New("the popup did not offer pairing")
		}
		return nil
	})
}

// LinkKey is the link key the extension holds (nil when it holds none).
func (c *Chromium) LinkKey(ctx context.Context) ([]byte, error) {
	var b64 string
	err := c.inExtensionPage(ctx, "options.html", func(sid string) error {
		return c.Evaluate(ctx, sid, `chrome.storage.local.get('linkKey').then((s) => s.linkKey || '')`, &b64)
	})
	if err != nil || b64 == "" {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(b64)
}

// WaitConnectionError waits until the connection error the extension's
// popup shows contains substr, and returns it. It asks from the options
// page, listening to the worker's change broadcasts rather than polling.
func (c *Chromium) WaitConnectionError(ctx context.Context, substr string) (string, error) {
	var got string
	err := c.inExtensionPage(ctx, "options.html", func(sid string) error {
		expr := fmt.Sprintf(`(async () => {
			const want = %q;
			const error = async () => {
				const answer = await chrome.runtime.sendMessage({type: 'popup.state'});
				if (!answer || !answer.ok) throw new Error('popup.state: ' + JSON.stringify(answer));
				return answer.result.connection.error || '';
			};
			return await new Promise((resolve) => {
				const check = async () => { const e = await error(); if (e.includes(want)) resolve(e); };
				// Listen first, then look: a change in between is not missed.
				chrome.runtime.onMessage.addListener((m) => { if (m && m.type === 'reins.changed') check(); });
				check();
			});
		})()`, substr)
		return c.Evaluate(ctx, sid, expr, &got)
	})
	return got, err
}

// inExtensionPage opens one of the extension's pages in a new target, runs
// fn once it has loaded, and closes it.
func (c *Chromium) inExtensionPage(ctx context.Context, page string, fn func(sessionID string) error) error {
	targetID, sid, err := c.OpenPage(ctx, "chrome-extension://"+ExtensionID+"/"+page)
	if err != nil {
		return err
	}
	defer c.CloseTarget(context.WithoutCancel(ctx), targetID)
	return fn(sid)
}

// OpenPage opens url in a new tab through the browser's own DevTools (so the
// extension does not share it), attaches to it and returns once its load
// event fired.
func (c *Chromium) OpenPage(ctx context.Context, url string) (targetID, sessionID string, err error) {
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := c.Browser.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank", "background": true}, &created); err != nil {
		return "", "", err
	}
	sid, err := c.Attach(ctx, created.TargetID)
	if err != nil {
		return "", "", err
	}
	loaded := make(chan struct{}, 1)
	cancel := c.Browser.Subscribe(func(ev CDPEvent) {
		if ev.SessionID == sid && ev.Method == "Page.loadEventFired" {
			select {
			case loaded <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	if err := c.Browser.Call(ctx, sid, "Page.enable", nil, nil); err != nil {
		return "", "", err
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := c.Browser.Call(ctx, sid, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return "", "", err
	}
	if nav.ErrorText != "" {
		return "", "", fmt.Errorf("navigating to %s: %s", url, nav.ErrorText)
	}
	select {
	case <-loaded:
	case <-ctx.Done():
		return "", "", fmt.Errorf("%s never loaded: %w", url, ctx.Err())
	}
	return created.TargetID, sid, nil
}

// CloseTarget closes a tab opened through DevTools.
func (c *Chromium) CloseTarget(ctx context.Context, targetID string) error {
	return c.Browser.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": targetID}, nil)
}

// ExtensionVersion is the version in extension/manifest.json, which the
// extension must report in hello.
func ExtensionVersion() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(root, "extension", "manifest.json"))
	if err != nil {
		return "", err
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", err
	}
	return m.Version, nil
}

// Deadline is a convenience for a context bounded by d.
func Deadline(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
