package desktoptest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/companiontest"
)

// reinsBin is the binary under test: $REINS_BIN (the Makefile builds it
// first) or one `go build` per test run.
var reinsBin string

func TestMain(m *testing.M) {
	code, err := runTests(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "desktoptest:", err)
		code = 1
	}
	os.Exit(code)
}

func runTests(m *testing.M) (int, error) {
	reinsBin = os.Getenv("REINS_BIN")
	if reinsBin == "" {
		dir, err := os.MkdirTemp("", "reins-bin")
		if err != nil {
			return 1, err
		}
		defer os.RemoveAll(dir)
		reinsBin = filepath.Join(dir, "reins")
		// The inherited environment keeps GOCACHE where it is; the
		// children below get their own XDG_CACHE_HOME, never this build.
		build := exec.Command("go", "build", "-o", reinsBin, "github.com/reinshq/reins/cmd/reins")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return 1, fmt.Errorf("building reins: %w", err)
		}
	} else if _, err := os.Stat(reinsBin); err != nil {
		return 1, fmt.Errorf("REINS_BIN: %w", err)
	}
	return m.Run(), nil
}

// desktop is one private graphical session: an Xvfb display and a session
// D-Bus, with a home directory of its own so nothing the app writes
// (autostart entry, Fyne preferences, Mesa's shader cache) lands in the
// real one.
type desktop struct {
	display string // ":N"
	bus     string // DBUS_SESSION_BUS_ADDRESS
	home    string
}

// newDesktop starts Xvfb and a session bus. Xvfb picks a free display
// number itself and writes it to -displayfd once it accepts connections,
// so there is no number to guess and nothing to poll.
func newDesktop(t testing.TB) *desktop {
	t.Helper()
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		t.Fatalf("Xvfb is required for the tray app tests (apt install xvfb): %v", err)
	}
	d := &desktop{home: t.TempDir()}
	out := startWithFD(t, xvfb, "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-nolisten", "unix-abstract")
	d.display = ":" + strings.TrimSpace(out)
	if _, err := os.Stat("/tmp/.X11-unix/X" + strings.TrimPrefix(d.display, ":")); err != nil {
		t.Fatalf("Xvfb reported display %s but has no socket: %v", d.display, err)
	}
	d.bus = newBus(t)
	return d
}

// newBus starts a private session bus, as dbus-run-session does, but keeps
// its address so the test can join it and play the desktop panel.
func newBus(t testing.TB) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Fatalf("dbus-daemon is required for the tray app tests (apt install dbus): %v", err)
	}
	return strings.TrimSpace(startWithFD(t, daemon, "--session", "--nofork", "--nopidfile", "--print-address=3"))
}

// startWithFD runs a helper that reports readiness by writing one line to
// fd 3, waits for that line with a deadline, and stops the helper when the
// test ends.
func startWithFD(t testing.TB, name string, args ...string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(name, args...)
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	w.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if strings.TrimSpace(s) == "" {
			<-done
			t.Fatalf("%s exited before it was ready: %s", name, stderr.String())
		}
		return s
	case <-time.After(Deadline):
		t.Fatalf("%s did not report readiness within %v: %s", name, Deadline, stderr.String())
	}
	return ""
}

// env is the environment of a reins started on this desktop.
func (d *desktop) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "HOME", "XDG_CONFIG_HOME",
			"XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_CURRENT_DESKTOP", "LANG", "LC_ALL":
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"DISPLAY="+d.display,
		"DBUS_SESSION_BUS_ADDRESS="+d.bus,
		"HOME="+d.home,
		"XDG_CONFIG_HOME="+filepath.Join(d.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(d.home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(d.home, ".local", "share"),
		"LANG=en_US.UTF-8",
		// Software GL: Xvfb has no GPU.
		"LIBGL_ALWAYS_SOFTWARE=1",
	)
	return append(env, extra...)
}

// proc is a running reins.
type proc struct {
	t       testing.TB
	cmd     *exec.Cmd
	started time.Time
	port    int
	dataDir string

	mu    sync.Mutex
	lines []string
	added chan struct{} // closed and replaced on every new log line
	done  chan struct{}
	err   error // Wait's result, once done is closed
}

// freePort returns a 127.0.0.1 port nothing listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// shortDir is a data dir whose admin socket path fits the Unix limit.
func shortDir(t testing.TB) string { return companiontest.ShortDir(t) }

// startSetUp runs the tray app on a fresh data dir and port with an agent
// token already issued, so the first-run guide stays closed.
func (d *desktop) startSetUp(t testing.TB) (p *proc, dataDir string, port int) {
	t.Helper()
	dataDir, port = shortDir(t), freePort(t)
	if code, _, stderr := d.runReins(t, []string{"token", "issue", "agent", "--data-dir", dataDir, "--keyring", "file"}); code != 0 {
		t.Fatalf("token issue: %s", stderr)
	}
	return d.startReins(t, dataDir, port, []string{"--keyring", "file"}), dataDir, port
}

// startReins runs `reins` with the desktop's environment. env adds or
// overrides variables.
func (d *desktop) startReins(t testing.TB, dataDir string, port int, args []string, env ...string) *proc {
	t.Helper()
	full := append([]string{"--data-dir", dataDir, "--port", strconv.Itoa(port)}, args...)
	cmd := exec.Command(reinsBin, full...)
	cmd.Env = d.env(env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, port: port, dataDir: dataDir, added: make(chan struct{}), done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.added)
			p.added = make(chan struct{})
			p.mu.Unlock()
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-p.done
			t.Errorf("reins did not exit on SIGTERM; log:\n%s", p.log())
		}
	})
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// waitLog waits for a log line containing s.
func (p *proc) waitLog(s string) string {
	p.t.Helper()
	deadline := time.After(Deadline)
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if strings.Contains(l, s) {
				p.mu.Unlock()
				return l
			}
		}
		added := p.added
		p.mu.Unlock()
		select {
		case <-added:
		case <-p.done:
			// The last lines may have arrived with the exit.
			p.mu.Lock()
			for _, l := range p.lines {
				if strings.Contains(l, s) {
					p.mu.Unlock()
					return l
				}
			}
			p.mu.Unlock()
			p.t.Fatalf("reins exited (%v) before logging %q; log:\n%s", p.err, s, p.log())
		case <-deadline:
			p.t.Fatalf("reins did not log %q within %v; log:\n%s", s, Deadline, p.log())
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(Deadline):
		p.t.Fatalf("reins did not exit within %v; log:\n%s", Deadline, p.log())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatalf("reins: %v", p.err)
	}
	return 0
}

// stop sends SIGTERM and returns the exit code.
func (p *proc) stop() int {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait()
}

// waitMCP waits until /mcp answers 401 to a request without a token, which
// means the companion serves agents, and returns the time since launch. It
// waits for the companion's "listening" log line (written once the socket
// is bound), then asks: an event, not a polling loop.
func (p *proc) waitMCP() time.Duration {
	p.t.Helper()
	p.waitLog("companion listening")
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(p.port)+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		p.t.Fatalf("/mcp: %v; log:\n%s", err, p.log())
	}
	resp.Body.Close()
	took := time.Since(p.started)
	if resp.StatusCode != http.StatusUnauthorized {
		p.t.Fatalf("/mcp without a token answered %s", resp.Status)
	}
	return took
}

// rssKiB reads the process's resident set from /proc.
func (p *proc) rssKiB() int {
	p.t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				p.t.Fatalf("VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	p.t.Fatal("no VmRSS in /proc status")
	return 0
}

// memory splits the resident set by where it comes from: once a window has
// been shown, Mesa's software GL (libLLVM, the DRI driver and the C heap it
// fills) is most of it under Xvfb, and the rest is Reins itself.
func (p *proc) memory() map[string]int {
	p.t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatal(err)
	}
	kib := map[string]int{}
	name := ""
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			name = ""
			if len(f) >= 6 {
				name = f[5]
			}
		case len(f) == 3 && f[0] == "Rss:":
			n, _ := strconv.Atoi(f[1])
			switch {
			case strings.Contains(name, "libLLVM"):
				kib["llvm"] += n
			case strings.Contains(name, "/dri/"):
				kib["dri"] += n
			case name == "[heap]":
				kib["c_heap"] += n
			case name == reinsBin:
				kib["reins_binary"] += n
			case name == "":
				kib["anonymous"] += n
			default:
				kib["other_libs"] += n
			}
		}
	}
	return kib
}

// get fetches a companion URL.
func (p *proc) get(path string) (int, string) {
	p.t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://127.0.0.1:" + strconv.Itoa(p.port) + path)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// runReins runs a short-lived reins to completion.
func (d *desktop) runReins(t testing.TB, args []string, env ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, reinsBin, args...)
	cmd.Env = d.env(env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("reins %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// x runs an X client (xdotool, xwininfo, import) on the display.
func (d *desktop) x(t testing.TB, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = d.env()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %v: %v %s", name, args, err, stderr)
	}
	return string(out)
}

// window waits until a visible window whose name matches the regular
// expression pattern is mapped and returns its id. xdotool --sync waits on
// X events; the context bounds it.
func (d *desktop) window(t testing.TB, pattern string) string {
	t.Helper()
	ids := strings.Fields(d.x(t, "xdotool", "search", "--sync", "--onlyvisible", "--name", pattern))
	if len(ids) == 0 {
		t.Fatalf("no window matches %q", pattern)
	}
	return ids[0]
}

// windows lists the visible windows whose name matches pattern, now.
func (d *desktop) windows(t testing.TB, pattern string) []string {
	t.Helper()
	cmd := exec.Command("xdotool", "search", "--onlyvisible", "--name", pattern)
	cmd.Env = d.env()
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return nil // nothing matched
	}
	if err != nil {
		t.Fatalf("xdotool search: %v", err)
	}
	return strings.Fields(string(out))
}

// waitNoWindow waits until no visible window's name matches pattern. X has
// no event a client can wait on for another client's window going away, so
// it asks every 20 ms, bounded by Deadline.
func (d *desktop) waitNoWindow(t testing.TB, pattern string) {
	t.Helper()
	deadline := time.Now().Add(Deadline)
	for len(d.windows(t, pattern)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a window matching %q is still on screen after %v", pattern, Deadline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// screenshot saves a PNG of the root window (or of one window) once it
// shows something: a window is mapped before its first frame is drawn, and
// X has no event for "painted", so it takes shots until one has content,
// bounded by the deadline. A blank result fails the test.
func (d *desktop) screenshot(t testing.TB, path, window string) image.Image {
	t.Helper()
	target := "root"
	if window != "" {
		target = window
	}
	deadline := time.Now().Add(Deadline)
	for {
		d.x(t, "import", "-window", target, "-strip", path)
		img, err := decodePNG(path)
		if err != nil {
			t.Fatalf("screenshot %s: %v", path, err)
		}
		n := colours(img)
		if n >= 16 {
			return img
		}
		if time.Now().After(deadline) {
			t.Fatalf("screenshot %s stayed blank for %v: %d colours", path, Deadline, n)
		}
	}
}

func decodePNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

// colours counts distinct colours, up to a few hundred.
func colours(img image.Image) int {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if len(seen) > 500 {
				return len(seen)
			}
		}
	}
	return len(seen)
}
