//go:build disttest

package disttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// run runs a command and fails the test with its output when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// stdout is run's standard output alone: what a script reading the command
// gets (stderr may carry library noise, such as Fyne's locale warnings).
func stdout(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, _ := runEnv(t, nil, nil, name, args...)
	return string(out)
}

// runEnv is run with extra environment and stdin.
func runEnv(t *testing.T, env []string, stdin []byte, name string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, e.String())
	}
	return o.Bytes(), e.Bytes()
}

// proc is a background process whose combined output is kept and watched.
type proc struct {
	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    bytes.Buffer
	notify chan struct{} // closed and replaced on every write
	exited chan struct{}
	err    error
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Write(b)
	close(p.notify)
	p.notify = make(chan struct{})
	return len(b), nil
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs a command in its own process group, so that stopping it
// reaches every child (Chromium's zygotes and renderers), and stops it when
// the test ends.
func start(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, notify: make(chan struct{}), exited: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that outlives the process (a Wine helper, a Chromium zygote)
	// may hold the output pipe; exiting is what counts.
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		if errors.Is(p.err, exec.ErrWaitDelay) {
			p.err = nil
		}
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends SIGTERM to the group and waits, then SIGKILL after a grace
// period; the companion shuts down cleanly on SIGTERM well within it.
func (p *proc) stop(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		t.Errorf("%s did not stop within 15s of SIGTERM; killing it", p.name)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
	// Helpers that outlived the leader (Chromium's) go too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// waitOutput waits until the output holds want, the process exits, or the
// deadline passes.
func (p *proc) waitOutput(t *testing.T, want string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		p.mu.Lock()
		found := strings.Contains(p.out.String(), want)
		notify := p.notify
		p.mu.Unlock()
		if found {
			return
		}
		select {
		case <-notify:
		case <-p.exited:
			if !strings.Contains(p.output(), want) {
				t.Fatalf("%s exited (%v) before printing %q:\n%s", p.name, p.err, want, tail(p.output(), 40))
			}
			return
		case <-deadline:
			t.Fatalf("%s did not print %q within %s:\n%s", p.name, want, within, tail(p.output(), 40))
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort is a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// portFree reports whether nothing listens on the loopback port.
func portFree(port int) bool {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

var loopback = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// waitHealthy polls GET / on the companion, which answers the protocol's
// health text, until it does or the deadline passes. The poll interval is
// short and the total bounded: it waits for an event, it does not guess a
// duration.
func waitHealthy(t *testing.T, p *proc, port int, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := loopback.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.TrimSpace(string(body)) == wire.HealthText {
				return
			}
			err = fmt.Errorf("GET / answered %d %q", resp.StatusCode, body)
		}
		last = err
		select {
		case <-tick.C:
		case <-p.exited:
			t.Fatalf("%s exited (%v) before answering on port %d:\n%s", p.name, p.err, port, tail(p.output(), 40))
		case <-ctx.Done():
			t.Fatalf("%s did not answer %q on port %d within %s: %v\n%s", p.name, wire.HealthText, port, within, errors.Join(last, ctx.Err()), tail(p.output(), 40))
		}
	}
}
