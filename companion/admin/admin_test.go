package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type fakeTokens struct {
	mu     sync.Mutex
	tokens map[string]time.Time
	err    error
}

func (f *fakeTokens) Issue(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	if err := tokens.ValidName(name); err != nil {
		return "", err
	}
	if _, ok := f.tokens[name]; ok {
		return "", fmt.Errorf("%w: %q", tokens.ErrNameInUse, name)
	}
	f.tokens[name] = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return "reins_secret_" + name, nil
}

func (f *fakeTokens) List() ([]tokens.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []tokens.Info
	for n, c := range f.tokens {
		out = append(out, tokens.Info{Name: n, Kind: tokens.KindAgent, Created: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *fakeTokens) Revoke(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.tokens[name]; !ok {
		return fmt.Errorf("no agent token named %q: %w", name, tokens.ErrNotFound)
	}
	delete(f.tokens, name)
	return nil
}

// shortDir returns a data dir short enough for a Unix socket path on every
// platform, removed when the test ends.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "radm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "data")
}

func serve(t *testing.T, dir string, opts Options) *Server {
	t.Helper()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	s := Serve(ln, NewHandler(opts), nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestRouteTable(t *testing.T) {
	h := NewHandler(Options{})
	got := h.Patterns()
	if !sort.StringsAreSorted(got) {
		t.Errorf("patterns not sorted: %v", got)
	}
	for _, want := range []string{
		"GET /v1/status", "GET /v1/tokens", "POST /v1/tokens", "DELETE /v1/tokens/{name}",
		"POST /v1/show-dashboard", "GET /v1/pair", "POST /v1/pair/{id}/approve", "POST /v1/pair/{id}/deny",
		"GET /v1/backends", "DELETE /v1/backends/{id}", "POST /v1/live/{tab}",
		"GET /v1/browsers", "POST /v1/browsers/{id}/block", "DELETE /v1/blocked/{instance}",
		"POST /v1/browsers/code", "/mcp",
		"GET /v1/settings", "PUT /v1/settings/manage-extensions", "PUT /v1/settings/developer-agents/{name}",
		"GET /v1/pause", "PUT /v1/pause",
		"GET /v1/inspect/browsers", "GET /v1/inspect/tabs", "GET /v1/inspect/changes", "GET /v1/inspect/events",
		"POST /v1/inspect/request", "POST /v1/inspect/cdp", "POST /v1/inspect/tabs/create", "POST /v1/inspect/tabs/close",
		"GET /v1/inspect/runtime",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("route %q missing from %v", want, got)
		}
	}
}

func TestTokensOverTheChannel(t *testing.T) {
	dir := shortDir(t)
	ft := &fakeTokens{tokens: map[string]time.Time{}}
	serve(t, dir, Options{Tokens: ft, Status: func() Status { return Status{Port: 4711, Version: "test", PID: 7} }})
	c := NewClient(dir)
	defer c.Close()

	st, err := c.Status(ctx(t))
	if err != nil || st.Port != 4711 || st.Version != "test" {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	tok, err := c.IssueToken(ctx(t), "claude")
	if err != nil || tok != "reins_secret_claude" {
		t.Fatalf("IssueToken = %q, %v", tok, err)
	}
	list, err := c.ListTokens(ctx(t))
	if err != nil || len(list) != 1 || list[0].Name != "claude" || list[0].Created.IsZero() {
		t.Fatalf("ListTokens = %+v, %v", list, err)
	}
	if err := c.RevokeToken(ctx(t), "claude"); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	if list, _ := c.ListTokens(ctx(t)); len(list) != 0 {
		t.Fatalf("after revoke: %+v", list)
	}
}

func TestErrorsKeepTheirSentinel(t *testing.T) {
	dir := shortDir(t)
	ft := &fakeTokens{tokens: map[string]time.Time{"dup": {}}}
	serve(t, dir, Options{Tokens: ft})
	c := NewClient(dir)
	defer c.Close()

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"duplicate", func() error { _, err := c.IssueToken(ctx(t), "dup"); return err }, tokens.ErrNameInUse},
		{"invalid", func() error { _, err := c.IssueToken(ctx(t), "no spaces"); return err }, tokens.ErrInvalidName},
		{"unknown revoke", func() error { return c.RevokeToken(ctx(t), "ghost") }, tokens.ErrNotFound},
		{"stub", func() error { return c.do(ctx(t), http.MethodGet, "/v1/pair", nil, nil) }, ErrNotImplemented},
		{"headless dashboard", func() error { return c.ShowDashboard(ctx(t)) }, ErrNotImplemented},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var ae *wire.Error
			if !errors.As(err, &ae) || ae.Message == "" || ae.Message != strings.ToLower(ae.Message[:1])+ae.Message[1:] {
				t.Fatalf("err = %#v, want an *Error with a lowercase message", err)
			}
		})
	}
}

func TestKeychainErrorNamesTheFlag(t *testing.T) {
	dir := shortDir(t)
	ft := &fakeTokens{tokens: map[string]time.Time{}, err: &tokens.UnavailableError{Cause: errors.New("no secret service")}}
	serve(t, dir, Options{Tokens: ft})
	c := NewClient(dir)
	defer c.Close()
	_, err := c.IssueToken(ctx(t), "a")
	if !errors.Is(err, tokens.ErrKeychainUnavailable) || !strings.Contains(err.Error(), "--keyring file") {
		t.Fatalf("err = %v", err)
	}
}

func TestNotRunning(t *testing.T) {
	dir := shortDir(t)
	c := NewClient(dir)
	defer c.Close()
	if _, err := c.Status(ctx(t)); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("no socket: err = %v, want ErrNotRunning", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	// A socket file nobody listens on, as a crashed companion leaves it.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", Address(dir))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := c.Status(ctx(t)); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("stale socket: err = %v, want ErrNotRunning", err)
	}
	// And Listen takes the stale socket over.
	serve(t, dir, Options{})
	if _, err := c.Status(ctx(t)); err != nil {
		t.Fatalf("after taking over the stale socket: %v", err)
	}
}

func TestSecondListenerRefused(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, Options{})
	if _, err := Listen(dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Listen: err = %v, want ErrAlreadyRunning", err)
	}
	// The refused listener must not have removed the live socket.
	c := NewClient(dir)
	defer c.Close()
	if _, err := c.Status(ctx(t)); err != nil {
		t.Fatalf("first companion unreachable after a refused second: %v", err)
	}
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Log("the named pipe's DACL is set by Listen; there are no file modes to check")
		return
	}
	dir := shortDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	serve(t, dir, Options{})
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %v, want 0700", fi.Mode().Perm())
	}
	si, err := os.Lstat(Address(dir))
	if err != nil {
		t.Fatal(err)
	}
	if si.Mode()&os.ModeSocket == 0 || si.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a 0600 socket", si.Mode())
	}
}

func TestCloseRemovesSocket(t *testing.T) {
	if runtime.GOOS == "windows" {
		return
	}
	dir := shortDir(t)
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := Serve(ln, NewHandler(Options{}), nil)
	if err := s.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(Address(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket still there after Close: %v", err)
	}
}

func TestOriginRefused(t *testing.T) {
	dir := shortDir(t)
	serve(t, dir, Options{Tokens: &fakeTokens{tokens: map[string]time.Time{}}})
	c := NewClient(dir)
	defer c.Close()
	req, _ := http.NewRequestWithContext(ctx(t), http.MethodGet, "http://reins-admin/v1/tokens", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status = %d, want 403", resp.StatusCode)
	}
}

// A request no route matches gets the mux's status with a JSON error, like
// every other failure on the channel (found by FuzzAdminRoutes: a path
// value of "." made /v1/pair/./approve, which the mux redirects to
// /v1/pair/approve, answered in plain text).
func TestNoRouteAnswersJSON(t *testing.T) {
	h := NewHandler(Options{})
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/v1/pair/approve", http.StatusNotFound},
		{http.MethodGet, "/v1/nope", http.StatusNotFound},
		{http.MethodDelete, "/v1/status", http.StatusMethodNotAllowed},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, "http://reins-admin"+c.path, nil))
		var eb errorBody
		if rec.Code != c.status || json.Unmarshal(rec.Body.Bytes(), &eb) != nil || eb.Code != wire.CodeUnknownMethod || eb.Error == "" {
			t.Errorf("%s %s answered %d %q, want %d with a JSON error", c.method, c.path, rec.Code, rec.Body, c.status)
		}
	}
}

// The bug: a connection that had not sent its request yet (`reins mcp`
// dialling again as the companion stopped) held Close for the 5 s
// http.Server.Shutdown gives such a connection: the companion's stop took
// longer than its 2 s budget.
func TestCloseIsNotHeldByASilentConnection(t *testing.T) {
	if runtime.GOOS == "windows" {
		return // a pipe, not a socket to dial by hand; the same Close
	}
	dir := shortDir(t)
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := Serve(ln, NewHandler(Options{}), nil)
	silent, err := net.Dial("unix", Address(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// The silent connection was accepted once another is answered.
	_, _ = NewClient(dir).Status(ctx(t))
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Close(c); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Close took %s", took)
	}
}
