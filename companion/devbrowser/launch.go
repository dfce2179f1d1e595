// Package devbrowser owns the `dev` transport: a Chromium the companion
// launches itself with a fresh profile and drives over raw CDP. It presents
// that browser to the hub as a hub.RoundTripper that answers the browspark v3
// requests the tool engine uses, so everything above the hub sees it as one
// more connected browser (graph mode `dev`).
package devbrowser

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// DefaultStartTimeout bounds the wait for Chromium to open its DevTools
// endpoint when Options.StartTimeout is zero.
const DefaultStartTimeout = 30 * time.Second

// Options configure Launch.
type Options struct {
	// Path is the Chromium executable.
	Path string
	// Headless runs Chromium with --headless=new.
	Headless bool
	// UserDataDir is the profile directory. Empty means a fresh temporary
	// directory that Close removes; a given directory is left in place.
	UserDataDir string
	Logger      *slog.Logger
	// ExtraArgs are appended to the command line. A --window-size here
	// replaces the default 1280×800.
	ExtraArgs []string
	// StartTimeout bounds the wait for the DevTools endpoint.
	StartTimeout time.Duration
}

// Browser is a running dev Chromium and its CDP connection.
type Browser struct {
	log     *slog.Logger
	dir     string
	tempDir bool

	cmd        *exec.Cmd
	exited     chan struct{} // closed when the process has been reaped
	stderrDone chan struct{}

	conn       *websocket.Conn
	readerDone chan struct{}
	link       *link

	closeOnce sync.Once
	closeErr  error
}

// Launch starts Chromium, waits for its DevTools endpoint (never with a
// fixed sleep: it watches stderr for the listening line and the profile's
// DevToolsActivePort file) and connects to the browser target.
func Launch(ctx context.Context, opts Options) (*Browser, error) {
	if opts.Path == "" {
		return nil, errors.New("devbrowser: no chromium path given")
	}
	if _, err := os.Stat(opts.Path); err != nil {
		return nil, fmt.Errorf("devbrowser: chromium not found: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	b := &Browser{log: opts.Logger.With("browser", "dev"), dir: opts.UserDataDir, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "reins-dev-profile-")
		if err != nil {
			return nil, fmt.Errorf("devbrowser: creating profile directory: %w", err)
		}
		b.dir, b.tempDir = dir, true
	}
	// A stale file from a previous run would point at a dead port.
	_ = os.Remove(filepath.Join(b.dir, "DevToolsActivePort"))

	ok := false
	defer func() {
		if !ok {
			b.kill()
			b.removeDir()
		}
	}()

	args := []string{
		"--disable-gpu", "--no-sandbox", "--disable-quic", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--password-store=basic",
		"--use-mock-keychain", "--remote-debugging-port=0",
		"--user-data-dir=" + b.dir,
	}
	if opts.Headless {
		args = append([]string{"--headless=new"}, args...)
	}
	winW, winH := 1280, 800
	hasSize := false
	for _, a := range opts.ExtraArgs {
		if v, ok := strings.CutPrefix(a, "--window-size="); ok {
			hasSize = true
			if w, h, ok := strings.Cut(v, ","); ok {
				winW, _ = strconv.Atoi(w)
				winH, _ = strconv.Atoi(h)
			}
		}
	}
	if !hasSize {
		args = append(args, fmt.Sprintf("--window-size=%d,%d", winW, winH))
	}
	args = append(args, opts.ExtraArgs...)
	args = append(args, "about:blank")

	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("devbrowser: stderr pipe: %w", err)
	}
	cmd := exec.Command(opts.Path, args...)
	cmd.Stdout = nil
	cmd.Stderr = pw
	cmd.Dir = b.dir
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("devbrowser: starting chromium: %w", err)
	}
	pw.Close()
	b.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(b.exited)
	}()

	wsURL := make(chan string, 1)
	tail := &lineTail{max: 20}
	go b.readStderr(pr, wsURL, tail)

	startCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	endpoint, err := b.waitEndpoint(startCtx, wsURL, tail)
	if err != nil {
		return nil, err
	}

	conn, _, err := websocket.Dial(startCtx, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("devbrowser: connecting to %s: %w", endpoint, err)
	}
	conn.SetReadLimit(wire.MaxFrameBytes)
	b.conn = conn
	b.link = newLink(b, conn)
	b.link.winW, b.link.winH = winW, winH
	b.readerDone = make(chan struct{})
	go func() {
		defer close(b.readerDone)
		b.link.read()
	}()
	if err := b.link.start(startCtx); err != nil {
		return nil, fmt.Errorf("devbrowser: discovering targets: %w", err)
	}
	ok = true
	b.log.Info("dev browser started", "pid", cmd.Process.Pid, "endpoint", endpoint, "profile", b.dir)
	return b, nil
}

// waitEndpoint returns the browser target's WebSocket URL. The stderr line
// usually wins; the file check covers builds that log elsewhere.
func (b *Browser) waitEndpoint(ctx context.Context, fromStderr <-chan string, tail *lineTail) (string, error) {
	backoff := 5 * time.Millisecond
	timer := time.NewTimer(backoff)
	defer timer.Stop()
	for {
		if u, ok := readActivePort(b.dir); ok {
			return u, nil
		}
		select {
		case u := <-fromStderr:
			return u, nil
		case <-b.exited:
			return "", fmt.Errorf("devbrowser: chromium exited before opening DevTools: %s", tail.String())
		case <-ctx.Done():
			return "", fmt.Errorf("devbrowser: waiting for the DevTools endpoint: %w (stderr: %s)", ctx.Err(), tail.String())
		case <-timer.C:
			backoff = min(backoff*2, 200*time.Millisecond)
			timer.Reset(backoff)
		}
	}
}

func readActivePort(dir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
	if err != nil {
		return "", false
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 2 {
		return "", false // still being written
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || port <= 0 {
		return "", false
	}
	return "ws://127.0.0.1:" + strconv.Itoa(port) + strings.TrimSpace(lines[1]), true
}

func (b *Browser) readStderr(r io.ReadCloser, wsURL chan<- string, tail *lineTail) {
	defer close(b.stderrDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		if !sent {
			if i := strings.Index(line, "DevTools listening on "); i >= 0 {
				wsURL <- strings.TrimSpace(line[i+len("DevTools listening on "):])
				sent = true
				continue
			}
			tail.add(line)
		}
		if strings.Contains(line, "dbus") {
			continue // containers have no bus; the noise helps no one
		}
		b.log.Debug("chromium", "line", line)
	}
}

// Attach registers the browser with the hub as a dev-mode browser and sends
// its first tab list.
func (b *Browser) Attach(h *hub.Hub) (*hub.Browser, error) {
	hello := wire.Hello{
		Version:          wire.ProtocolVersion,
		ExtensionVersion: "dev",
		Browser:          "Chromium (dev)",
		BrowserEngine:    wire.EngineChromium,
		InstanceID:       "dev-" + randomID(),
		BrowserSessionID: randomID(),
	}
	hb, err := h.Attach(hello, hub.ModeDev, b.link)
	if err != nil {
		return nil, fmt.Errorf("devbrowser: attaching to hub: %w", err)
	}
	b.link.setHub(hb)
	return hb, nil
}

// ProfileDir is the profile directory in use.
func (b *Browser) ProfileDir() string { return b.dir }

// Done is closed when the Chromium process has exited.
func (b *Browser) Done() <-chan struct{} { return b.exited }

// Close disconnects the browser from the hub, asks Chromium to quit, kills
// what is left of its process group and removes a temporary profile.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		if b.link != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			// Browser.close lets Chromium flush its profile before it exits.
			_, _ = b.link.send(ctx, "", "Browser.close", nil)
			cancel()
			b.link.detachHub("dev browser closed")
			b.link.Close("dev browser closed")
			<-b.readerDone
		}
		select {
		case <-b.exited:
		case <-time.After(5 * time.Second):
			b.log.Warn("chromium did not quit; killing it")
		}
		b.kill()
		b.closeErr = b.removeDir()
	})
	return b.closeErr
}

func (b *Browser) kill() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	killProcessGroup(b.cmd)
	<-b.exited
	// Helpers that inherited stderr keep the pipe open until they die too.
	select {
	case <-b.stderrDone:
	case <-time.After(5 * time.Second):
		b.log.Warn("chromium helpers still hold stderr")
	}
}

func (b *Browser) removeDir() error {
	if !b.tempDir || b.dir == "" {
		return nil
	}
	if err := os.RemoveAll(b.dir); err != nil {
		return fmt.Errorf("devbrowser: removing profile %s: %w", b.dir, err)
	}
	return nil
}

func randomID() string {
	var buf [12]byte
	_, _ = rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

// lineTail keeps the last lines of stderr for startup error messages.
type lineTail struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *lineTail) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if strings.Contains(s, "dbus") {
		return
	}
	t.lines = append(t.lines, s)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *lineTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(no output)"
	}
	return strings.Join(t.lines, " | ")
}
