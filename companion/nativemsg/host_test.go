package nativemsg

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

// fakeApp is the machine as the host sees it: a port file, a companion that
// may be up, and a launcher.
type fakeApp struct {
	mu           sync.Mutex
	port         int
	up           bool
	launches     int
	launchErr    error
	upOnLaunch   bool // launching brings the companion up
	portOnLaunch int  // and it picks this port, if set
	checks       int
}

func (f *fakeApp) Version() string { return "1.2.3" }
func (f *fakeApp) Port() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.port
}
func (f *fakeApp) Running(ctx context.Context) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks++
	return f.port, f.up
}

var fakeKey = []byte("0123456789abcdef0123456789abcdef")

func (f *fakeApp) LinkKey() ([]byte, error) { return fakeKey, nil }
func (f *fakeApp) Launch() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.launches++
	if f.launchErr != nil {
		return f.launchErr
	}
	if f.upOnLaunch {
		f.up = true
		if f.portOnLaunch != 0 {
			f.port = f.portOnLaunch
		}
	}
	return nil
}

// conn runs a Host over io.Pipe, as a browser would over stdio.
type conn struct {
	t    *testing.T
	toH  *io.PipeWriter
	frH  *io.PipeReader
	done chan error
}

func serve(t *testing.T, h *Host) *conn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &conn{t: t, toH: inW, frH: outR, done: make(chan error, 1)}
	go func() {
		err := h.Serve(context.Background(), inR, outW)
		outW.Close()
		inR.Close()
		c.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		c.wait()
	})
	return c
}

func (c *conn) send(v any) {
	c.t.Helper()
	if err := WriteMessage(c.toH, v); err != nil {
		c.t.Fatal(err)
	}
}

func (c *conn) recv() map[string]any {
	c.t.Helper()
	b, err := ReadMessage(c.frH, MaxHostMessage)
	if err != nil {
		c.t.Fatalf("reading reply: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatal(err)
	}
	return m
}

// wait returns Serve's result, failing if it does not end in 10s.
func (c *conn) wait() error {
	select {
	case err := <-c.done:
		c.done <- err // later waits see it too
		return err
	case <-time.After(10 * time.Second):
		c.t.Fatal("Serve did not return within 10s")
		return nil
	}
}

func TestHostHelloStart(t *testing.T) {
	app := &fakeApp{port: 47100, upOnLaunch: true}
	c := serve(t, &Host{Handler: app})

	c.send(map[string]any{"type": "hello", "id": "r1"})
	if got := c.recv(); fmt.Sprint(got) != fmt.Sprint(map[string]any{"type": "hello", "id": "r1", "port": 47100.0, "version": "1.2.3", "running": false, "key": base64.StdEncoding.EncodeToString(fakeKey)}) {
		t.Fatalf("hello = %v", got)
	}
	c.send(map[string]any{"type": "start", "id": 7})
	if got := c.recv(); fmt.Sprint(got) != fmt.Sprint(map[string]any{"type": "start", "id": 7.0, "running": true, "port": 47100.0}) {
		t.Fatalf("start = %v", got)
	}
	// Already running: start answers without launching again.
	c.send(map[string]any{"type": "start"})
	if got := c.recv(); got["running"] != true {
		t.Fatalf("second start = %v", got)
	}
	c.send(map[string]any{"type": "hello"})
	if got := c.recv(); got["running"] != true {
		t.Fatalf("hello after start = %v", got)
	}
	if app.launches != 1 {
		t.Fatalf("launched %d times, want 1", app.launches)
	}
	// Request-level mistakes are answered and the host carries on.
	for _, bad := range []any{
		map[string]any{"type": "reboot", "id": "x"},
		map[string]any{"id": "x"},
		map[string]any{"type": 5},
		[]int{1},
		map[string]any{"type": "hello", "id": map[string]any{"nested": true}},
		map[string]any{"type": "hello", "id": strings.Repeat("i", 200)},
	} {
		c.send(bad)
		got := c.recv()
		if got["type"] != "error" || got["error"] == "" || got["code"] == "" {
			t.Fatalf("reply to %v = %v, want an error with a code", bad, got)
		}
	}
	c.send(map[string]any{"type": "hello"})
	if got := c.recv(); got["type"] != "hello" {
		t.Fatalf("host stopped answering after request errors: %v", got)
	}
	c.toH.Close()
	if err := c.wait(); err != nil {
		t.Fatalf("Serve after EOF = %v, want nil", err)
	}
}

func TestHostStartFollowsNewPort(t *testing.T) {
	app := &fakeApp{port: 47100, upOnLaunch: true, portOnLaunch: 47105}
	c := serve(t, &Host{Handler: app})
	c.send(map[string]any{"type": "start"})
	if got := c.recv(); got["running"] != true || got["port"] != 47105.0 {
		t.Fatalf("start = %v, want running on the port the app wrote", got)
	}
}

func TestHostStartLaunchFails(t *testing.T) {
	app := &fakeApp{port: 47100, launchErr: errors.New("no such file")}
	c := serve(t, &Host{Handler: app})
	c.send(map[string]any{"type": "start", "id": "s"})
	got := c.recv()
	if got["type"] != "error" || got["request"] != "start" || got["code"] != "internal" || !strings.Contains(got["error"].(string), "no such file") || got["id"] != "s" {
		t.Fatalf("start with a failing launch = %v", got)
	}
}

func TestHostStartTimesOut(t *testing.T) {
	app := &fakeApp{port: 47100} // launches, never comes up
	c := serve(t, &Host{Handler: app, StartTimeout: 300 * time.Millisecond})
	start := time.Now()
	c.send(map[string]any{"type": "start"})
	got := c.recv()
	if got["type"] != "error" || got["code"] != "timeout" || !strings.Contains(got["error"].(string), "did not answer within 300ms (it would listen on port 47100)") {
		t.Fatalf("start that never comes up = %v", got)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("timed out after %s, want about 300ms", el)
	}
	app.mu.Lock()
	defer app.mu.Unlock()
	// Backoff, not a spin: a handful of checks in 300ms.
	if app.checks < 3 || app.checks > 20 {
		t.Fatalf("%d health checks in 300ms", app.checks)
	}
}

func TestHostStartHonoursContext(t *testing.T) {
	app := &fakeApp{port: 47100}
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- (&Host{Handler: app, StartTimeout: time.Minute}).Serve(ctx, inR, io.Discard) }()
	if err := WriteMessage(inW, map[string]any{"type": "start"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve ignored a cancelled context during start")
	}
	inW.Close()
	inR.Close()
}

func TestHostBadFrames(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		err  error
	}{
		{"zero length", header(0), ErrEmpty},
		{"oversized", header(MaxExtensionMessage + 1), ErrTooLarge},
		{"bad json", frame(`{"type":"hel`), ErrBadJSON},
		{"bad utf8", frame("{\"type\":\"\xff\"}"), ErrBadJSON},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			c := serve(t, &Host{Handler: &fakeApp{port: 1}})
			// The host may stop reading early; a refused write is fine.
			go func() { _, _ = c.toH.Write(cs.in) }()
			got := c.recv()
			if got["type"] != "error" || got["code"] != "bad_params" || got["error"] == "" {
				t.Fatalf("reply = %v, want one error", got)
			}
			if err := c.wait(); !errors.Is(err, cs.err) {
				t.Fatalf("Serve = %v, want %v", err, cs.err)
			}
			if _, err := ReadMessage(c.frH, 0); err != io.EOF {
				t.Fatalf("more after the error: %v", err)
			}
		})
	}
}

func TestHostTruncated(t *testing.T) {
	// EOF inside a frame: the browser died mid-write. Serve must end, not
	// wait for the rest.
	for _, in := range [][]byte{{1, 0}, frame(`{"type":"hello"}`)[:9]} {
		var out strings.Builder
		err := Serve(context.Background(), strings.NewReader(string(in)), &out, &fakeApp{port: 1})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Serve(%q) = %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
	// And a clean EOF is a clean exit.
	if err := Serve(context.Background(), strings.NewReader(""), io.Discard, &fakeApp{}); err != nil {
		t.Fatalf("Serve(empty) = %v", err)
	}
}

func TestHostWriteFailure(t *testing.T) {
	in := strings.NewReader(string(frame(`{"type":"hello"}`)))
	if err := Serve(context.Background(), in, failWriter{}, &fakeApp{port: 1}); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("Serve with a closed stdout = %v", err)
	}
}

// The running companion is the one on the data dir's admin channel, and its
// port is the one it reports there. A program that answers the health text
// on the recorded port is not the companion (issue 11, H-1).
func TestSystemRunning(t *testing.T) {
	impostor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, wire.HealthText)
	}))
	defer impostor.Close()
	dir := shortDir(t)
	if err := WritePort(dir, portOf(t, impostor)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := &System{DataDir: dir}
	if port, ok := s.Running(ctx); ok {
		t.Fatalf("the program answering on port %d counts as the companion", port)
	}
	stop := serveAdmin(t, dir, 51234)
	if port, ok := s.Running(ctx); !ok || port != 51234 {
		t.Fatalf("Running = %d %v, want the port the companion reports", port, ok)
	}
	stop()
	if _, ok := s.Running(ctx); ok {
		t.Fatal("a stopped companion counts as running")
	}
}

// serveAdmin runs an admin channel for dir that reports port.
func serveAdmin(t *testing.T, dir string, port int) (stop func()) {
	t.Helper()
	ln, err := admin.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := admin.Serve(ln, admin.NewHandler(admin.Options{Status: func() admin.Status { return admin.Status{Port: port} }}), nil)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Close(ctx)
		})
	}
	t.Cleanup(stop)
	return stop
}

// shortDir is a data dir short enough for a Unix socket path.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "rnm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	dir := filepath.Join(d, "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPortFile(t *testing.T) {
	dir := t.TempDir()
	if got := ReadPort(dir); got != DefaultPort {
		t.Fatalf("no port file: %d, want %d", got, DefaultPort)
	}
	if err := WritePort(dir, 51234); err != nil {
		t.Fatal(err)
	}
	if got := ReadPort(dir); got != 51234 {
		t.Fatalf("ReadPort = %d", got)
	}
	for _, bad := range []string{"", "abc", "0", "70000", "-1"} {
		if err := os.WriteFile(dir+"/"+PortFileName, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ReadPort(dir); got != DefaultPort {
			t.Errorf("port file %q: %d, want the default", bad, got)
		}
	}
	if err := WritePort(dir, 0); err == nil {
		t.Error("WritePort(0) accepted")
	}
}

// The real pieces together: the admin channel names the live companion's
// port, and the hello carries the data dir's link key, created on the
// first ask and the same on every later one.
func TestSystemHello(t *testing.T) {
	dir := shortDir(t)
	c := serve(t, &Host{Handler: &System{DataDir: dir, AppVersion: "9.9"}})
	c.send(map[string]any{"type": "hello"})
	got := c.recv()
	if got["running"] != false || got["port"] != float64(DefaultPort) || got["version"] != "9.9" {
		t.Fatalf("hello with no companion = %v", got)
	}
	key, err := linkauth.Load(dir)
	if err != nil {
		t.Fatalf("the host did not create the link key: %v", err)
	}
	if got["key"] != base64.StdEncoding.EncodeToString(key.Bytes()) {
		t.Fatal("the hello does not carry the data dir's link key")
	}
	serveAdmin(t, dir, 51234)
	c.send(map[string]any{"type": "hello"})
	got = c.recv()
	if got["running"] != true || got["port"] != 51234.0 || got["key"] != base64.StdEncoding.EncodeToString(key.Bytes()) {
		t.Fatalf("hello = %v", got)
	}
}

// The host never replaces a key: one that others could read is an error
// until the companion, which replaces it at start, has run.
func TestSystemLinkKeyExposed(t *testing.T) {
	dir := shortDir(t)
	if err := os.WriteFile(filepath.Join(dir, linkauth.KeyFile), make([]byte, linkauth.KeySize), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&System{DataDir: dir}).LinkKey(); !errors.Is(err, linkauth.ErrKeyExposed) {
		t.Fatalf("LinkKey = %v, want ErrKeyExposed", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, linkauth.KeyFile))
	if len(data) != linkauth.KeySize || data[0] != 0 {
		t.Fatal("the host replaced the key")
	}
}

// Launch really starts the binary, with no arguments and (on unix) in a
// session of its own, so it outlives the host.
func TestSystemLaunch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperEnv, ln.Addr().String())
	if err := (&System{Binary: exe}).Launch(); err != nil {
		t.Fatal(err)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
	conn, err := ln.Accept()
	if err != nil {
		t.Fatalf("launched app never called back: %v", err)
	}
	defer conn.Close()
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var pid, sid, nargs int
	if _, err := fmt.Sscanf(line, "pid=%d sid=%d args=%d", &pid, &sid, &nargs); err != nil {
		t.Fatalf("bad report %q: %v", line, err)
	}
	if nargs != 0 {
		t.Errorf("app started with %d args, want none", nargs)
	}
	if runtime.GOOS != "windows" && sid != pid {
		t.Errorf("app is not a session leader (sid %d, pid %d): it would share the host's fate", sid, pid)
	}
	if err := (&System{Binary: "/nonexistent/reins"}).Launch(); err == nil {
		t.Error("launching a missing binary succeeded")
	}
}

func portOf(t *testing.T, s *httptest.Server) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(p, &n)
	return n
}
