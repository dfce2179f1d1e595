// Package devbrowser owns the `dev` transport: a Chromium the companion
// launches itself with a fresh profile and drives over raw CDP. It presents
// that browser to the hub as a hub.RoundTripper that answers the browspark v3
// requests the tool engine uses, so everything above the hub sees it as one
// more connected browser (graph mode `dev`).
//
// CDP runs over --remote-debugging-pipe (fds 3 and 4, NUL-terminated JSON),
// never a TCP port: a debugging port on 127.0.0.1 lets every local user
// drive the browser. Chromium keeps its sandbox unless it cannot work here
// (see sandbox.go), and it dies with the companion even when the companion
// is killed: Linux has it signalled when the companion goes (Pdeathsig),
// Windows puts it in a job object that closes with the companion, and on
// every system the pipe closes with the companion, which makes Chromium
// quit by itself.
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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/internal/jsonrpc"
	"github.com/reinshq/reins/companion/wire"
)

// DefaultStartTimeout bounds the wait for Chromium's first answer when
// Options.StartTimeout is zero.
const DefaultStartTimeout = 30 * time.Second

// Bounds of Close: Browser.close gets closeAsk to be answered, Chromium
// then closeGrace to exit by itself before its process group is killed,
// and its helpers stderrGrace to let go of stderr once killed. Together
// they keep a companion's stop within its 2 s.
const (
	closeAsk    = 500 * time.Millisecond
	closeGrace  = time.Second
	stderrGrace = 500 * time.Millisecond
)

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
	// StartTimeout bounds the wait for Chromium's first answer.
	StartTimeout time.Duration
	// InstanceID is the id Attach presents to the hub, which keeps a
	// browser id per instance. Empty means a new one.
	InstanceID string
}

// Browser is a running dev Chromium and its CDP connection.
type Browser struct {
	log      *slog.Logger
	dir      string
	tempDir  bool
	instance string // the hub's instance id (Attach)
	// sandboxed is whether Chromium runs with its sandbox.
	sandboxed bool

	proc       *process
	stderrDone chan struct{}
	link       *link

	closeOnce sync.Once
	closeErr  error
}

// noUsableSandbox is what Chromium prints when it cannot start its
// sandbox: a container whose seccomp policy refuses user namespaces, say,
// which no file on the host tells.
const noUsableSandbox = "No usable sandbox"

// Launch starts Chromium with a CDP pipe and turns on target discovery. It
// keeps the sandbox where it can work: when the host says it cannot, or
// Chromium says so when it starts, it runs without it and logs why.
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
	log := opts.Logger.With("browser", "dev")
	reason := noSandboxReason(probeHost(opts.Path))
	b, stderr, err := launch(ctx, opts, log, reason == "")
	if err != nil && reason == "" && strings.Contains(stderr, noUsableSandbox) {
		reason = "Chromium could not start its sandbox here: " + stderr
		b, _, err = launch(ctx, opts, log, false)
	}
	if err != nil {
		return nil, err
	}
	if reason != "" {
		log.Warn("dev browser runs without Chromium's sandbox", "reason", reason)
	}
	return b, nil
}

// launch makes one attempt; on failure it returns what Chromium wrote to
// stderr.
func launch(ctx context.Context, opts Options, log *slog.Logger, sandbox bool) (*Browser, string, error) {
	b := &Browser{log: log, dir: opts.UserDataDir, instance: opts.InstanceID, sandboxed: sandbox, stderrDone: make(chan struct{})}
	if b.instance == "" {
		b.instance = NewInstanceID()
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "reins-dev-profile-")
		if err != nil {
			return nil, "", fmt.Errorf("devbrowser: creating profile directory: %w", err)
		}
		b.dir, b.tempDir = dir, true
	}
	tail := &lineTail{max: 20}
	ok := false
	defer func() {
		if !ok {
			if b.link != nil {
				b.link.Close(errors.New("dev browser failed to start"))
				b.link.conn.Wait()
			}
			b.kill()
			b.removeDir()
		}
	}()

	args := []string{
		"--disable-gpu", "--disable-quic", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--password-store=basic",
		"--use-mock-keychain", "--user-data-dir=" + b.dir,
	}
	if !sandbox {
		args = append([]string{"--no-sandbox"}, args...)
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

	// The CDP pipe: Chromium reads commands from childIn and writes
	// answers and events to childOut.
	childIn, ourOut, err := os.Pipe()
	if err != nil {
		return nil, "", fmt.Errorf("devbrowser: cdp pipe: %w", err)
	}
	ourIn, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		ourOut.Close()
		return nil, "", fmt.Errorf("devbrowser: cdp pipe: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{childIn, ourOut, ourIn, childOut} {
			f.Close()
		}
		return nil, "", fmt.Errorf("devbrowser: stderr pipe: %w", err)
	}
	cmd := exec.Command(opts.Path)
	cmd.Args = append(append(cmd.Args, args...), passPipes(cmd, childIn, childOut)...)
	cmd.Args = append(cmd.Args, "about:blank")
	cmd.Stdout = nil
	cmd.Stderr = pw
	cmd.Dir = b.dir
	b.proc, err = startProcess(cmd)
	// The child has its own copies now (or none: it did not start).
	childIn.Close()
	childOut.Close()
	pw.Close()
	if err != nil {
		pr.Close()
		ourIn.Close()
		ourOut.Close()
		return nil, "", fmt.Errorf("devbrowser: starting chromium: %w", err)
	}
	go b.readStderr(pr, tail)

	b.link = newLink(b, jsonrpc.NewPipe(ourIn, ourOut, wire.MaxFrameBytes))
	b.link.winW, b.link.winH = winW, winH
	startCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := b.link.start(startCtx); err != nil {
		// A Chromium that quits closes its pipe before it is reaped: wait
		// for the end of what it wrote, which is the reason (Launch reads
		// it for a sandbox that cannot start).
		select {
		case <-b.stderrDone:
		case <-time.After(stderrGrace):
		}
		select {
		case <-b.proc.exited:
			return nil, tail.String(), fmt.Errorf("devbrowser: chromium exited before it answered: %s", tail.String())
		default:
		}
		return nil, tail.String(), fmt.Errorf("devbrowser: discovering targets: %w (stderr: %s)", err, tail.String())
	}
	ok = true
	b.log.Info("dev browser started", "pid", cmd.Process.Pid, "transport", "pipe", "sandbox", sandbox, "profile", b.dir)
	return b, "", nil
}

func (b *Browser) readStderr(r io.ReadCloser, tail *lineTail) {
	defer close(b.stderrDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		tail.add(line)
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
		InstanceID:       b.instance,
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

// PID is the Chromium process id.
func (b *Browser) PID() int { return b.proc.pid }

// Sandboxed reports whether Chromium runs with its sandbox.
func (b *Browser) Sandboxed() bool { return b.sandboxed }

// Done is closed when the Chromium process has exited.
func (b *Browser) Done() <-chan struct{} { return b.proc.exited }

// Close disconnects the browser from the hub and ends Chromium. A profile
// the caller gave is kept, so Chromium is asked to quit (Browser.close,
// and the pipe closing) and flushes it; what is left after closeGrace is
// killed. A temporary profile is removed right after, so nothing in it
// needs flushing: Chromium is killed at once, which a loaded machine does
// in a fraction of the time a clean exit takes. Close takes at most about
// closeAsk + closeGrace + stderrGrace, and far less with a temporary
// profile.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		start := time.Now()
		if !b.tempDir {
			ctx, cancel := context.WithTimeout(context.Background(), closeAsk)
			_, _ = b.link.send(ctx, "", "Browser.close", nil)
			cancel()
		}
		b.link.detachHub("dev browser closed")
		b.link.Close(errors.New("dev browser closed"))
		b.link.conn.Wait()
		if !b.tempDir {
			select {
			case <-b.proc.exited:
			case <-time.After(closeGrace):
				b.log.Warn("chromium did not quit; killing it", "waited", time.Since(start).Round(time.Millisecond))
			}
		}
		b.kill()
		b.closeErr = b.removeDir()
		b.log.Debug("dev browser closed", "took", time.Since(start).Round(time.Millisecond))
	})
	return b.closeErr
}

func (b *Browser) kill() {
	if b.proc == nil {
		return
	}
	b.proc.kill()
	<-b.proc.exited
	// Helpers that inherited stderr keep the pipe open until they die too.
	select {
	case <-b.stderrDone:
	case <-time.After(stderrGrace):
		b.log.Warn("chromium helpers still hold stderr")
	}
	b.proc.release()
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

// NewInstanceID is an instance id for Options.InstanceID: one per browser
// the hub should know as one across launches.
func NewInstanceID() string { return "dev-" + randomID() }

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
	if strings.Contains(s, "dbus") || strings.TrimSpace(s) == "" {
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
