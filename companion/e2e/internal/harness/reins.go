package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/wire"
)

// Reins is a running `reins headless`.
type Reins struct {
	Port    int
	DataDir string
	// Client reaches the companion's inspection routes over its admin
	// socket in DataDir.
	Client *admin.Inspector

	cmd     *exec.Cmd
	args    []string
	out     *syncBuffer
	exited  chan struct{}
	waitErr error
	dir     string
}

// StartTimeout bounds how long reins may take to answer after it starts.
const StartTimeout = 20 * time.Second

// StartReins starts `reins headless` on a free port with a fresh data dir, a
// file keyring and the inspection routes on its admin socket, and returns
// once GET / answers the health text and the inspection routes answer.
func StartReins(ctx context.Context, extraArgs ...string) (*Reins, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var lastErr error
	// A free port can be taken between asking and binding; try a few.
	for range 3 {
		r, err := startReins(ctx, bin, extraArgs)
		if err == nil {
			return r, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

var errPortTaken = errors.New("port taken")

func startReins(ctx context.Context, bin string, extraArgs []string) (*Reins, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	// Short: Unix socket paths are capped near 108 bytes.
	dir, err := os.MkdirTemp("", "reins-e2e-")
	if err != nil {
		return nil, err
	}
	r := &Reins{
		Port:    port,
		DataDir: filepath.Join(dir, "data"),
		out:     &syncBuffer{},
		exited:  make(chan struct{}),
		dir:     dir,
	}
	// A later --data-dir wins, and the inspection routes are on its admin
	// socket.
	for i, a := range extraArgs {
		if a == "--data-dir" && i+1 < len(extraArgs) {
			r.DataDir = extraArgs[i+1]
		} else if v, ok := strings.CutPrefix(a, "--data-dir="); ok {
			r.DataDir = v
		}
	}
	r.args = append([]string{bin, "headless",
		"--port", strconv.Itoa(port),
		"--data-dir", r.DataDir,
		"--keyring", "file",
		"--inspect",
		"--log-level", "debug",
	}, extraArgs...)
	if err := r.launch(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r.Client = admin.NewClient(r.DataDir).Inspect()
	if err := r.waitReady(ctx); err != nil {
		r.Close()
		if strings.Contains(r.out.String(), "port in use") {
			return nil, fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, fmt.Errorf("%w\nreins output:\n%s", err, Tail(r.out.String(), 30))
	}
	return r, nil
}

func (r *Reins) launch() error {
	r.cmd = exec.Command(r.args[0], r.args[1:]...)
	r.cmd.Stdout = r.out
	r.cmd.Stderr = r.out
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("starting reins: %w", err)
	}
	cmd, exited := r.cmd, r.exited
	go func() {
		err := cmd.Wait()
		r.waitErr = err
		close(exited)
	}()
	return nil
}

// Restart stops reins with SIGTERM, as an update or a relaunch after a
// crash would, and starts it again with the same port, data dir and
// inspection routes; it returns once the new process answers. Output then
// holds the new process's lines only, and change streams must be opened
// anew.
func (r *Reins) Restart(ctx context.Context) error {
	if err := r.Stop(15 * time.Second); err != nil {
		return err
	}
	return r.relaunch(ctx)
}

// relaunch starts the exited process again with the same port, data dir
// and arguments, with fresh output, and waits until it answers.
func (r *Reins) relaunch(ctx context.Context) error {
	r.out = &syncBuffer{}
	r.exited = make(chan struct{})
	r.waitErr = nil
	if err := r.launch(); err != nil {
		return err
	}
	if err := r.waitReady(ctx); err != nil {
		return fmt.Errorf("%w\nreins output:\n%s", err, Tail(r.out.String(), 30))
	}
	return nil
}

// waitReady polls with backoff until GET / answers the health text and the
// inspection routes answer, the process exits, or the deadline passes.
func (r *Reins) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	hc := &http.Client{Timeout: 2 * time.Second}
	next := Backoff()
	var last error
	for {
		if last = r.probe(ctx, hc); last == nil {
			return nil
		}
		select {
		case <-r.exited:
			return fmt.Errorf("reins exited before it was ready: %v", r.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("reins not ready after %s: %w", StartTimeout, last)
		case <-time.After(next()):
		}
	}
}

func (r *Reins) probe(ctx context.Context, hc *http.Client) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.BaseURL()+"/", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != wire.HealthText {
		return fmt.Errorf("GET / answered %q", body)
	}
	_, err = r.Client.Browsers(ctx)
	return err
}

// BaseURL is http://127.0.0.1:PORT.
func (r *Reins) BaseURL() string { return "http://127.0.0.1:" + strconv.Itoa(r.Port) }

// WSURL is the extension socket's URL.
func (r *Reins) WSURL() string { return "ws://127.0.0.1:" + strconv.Itoa(r.Port) + "/" }

// Output is everything reins wrote so far.
func (r *Reins) Output() string { return r.out.String() }

// LogTime is the time of the first log line containing s (millisecond
// precision, as slog writes it).
func (r *Reins) LogTime(s string) (time.Time, bool) {
	for _, line := range strings.Split(r.out.String(), "\n") {
		if !strings.Contains(line, s) {
			continue
		}
		ts, ok := strings.CutPrefix(line, "time=")
		if !ok {
			continue
		}
		ts, _, _ = strings.Cut(ts, " ")
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// WaitLogTime waits until a log line containing s has arrived (the
// process's output trails what it answers on its sockets) and returns its
// time.
func (r *Reins) WaitLogTime(ctx context.Context, s string) (time.Time, error) {
	var t time.Time
	err := r.WaitOutput(ctx, func(string) bool {
		var ok bool
		t, ok = r.LogTime(s)
		return ok
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("no log line %q: %w", s, err)
	}
	return t, nil
}

// WaitOutput waits until the process's output so far satisfies ok.
func (r *Reins) WaitOutput(ctx context.Context, ok func(out string) bool) error {
	next := Backoff()
	for {
		if ok(r.out.String()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(next()):
		}
	}
}

// PID is the reins process id.
func (r *Reins) PID() int { return r.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (r *Reins) Exited() <-chan struct{} { return r.exited }

// Signal sends sig to reins.
func (r *Reins) Signal(sig os.Signal) error { return r.cmd.Process.Signal(sig) }

// Stop sends SIGTERM and waits up to timeout for a clean exit (status 0).
func (r *Reins) Stop(timeout time.Duration) error {
	select {
	case <-r.exited:
	default:
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return fmt.Errorf("signalling reins: %w", err)
		}
	}
	select {
	case <-r.exited:
	case <-time.After(timeout):
		r.cmd.Process.Kill()
		<-r.exited
		return fmt.Errorf("reins did not exit within %s of SIGTERM", timeout)
	}
	if r.waitErr != nil {
		return fmt.Errorf("reins exited uncleanly after SIGTERM: %w", r.waitErr)
	}
	return nil
}

// Close kills reins if it still runs and removes its data dir.
func (r *Reins) Close() {
	if r.Client != nil {
		r.Client.Close()
	}
	select {
	case <-r.exited:
	default:
		r.cmd.Process.Kill()
		<-r.exited
	}
	os.RemoveAll(r.dir)
}

// ExitErr is the process's exit status once Exited is closed.
func (r *Reins) ExitErr() error {
	<-r.exited
	return r.waitErr
}
