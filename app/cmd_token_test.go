package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/tools"
)

// The Fyne driver the tray app links starts its main-thread queue when the
// package initializes; it lives as long as the process, by design.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("fyne.io/fyne/v2/internal/async.(*UnboundedChan[...]).processing"))
}

// run runs the reins command line in-process.
func run(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	code = Main(Env{
		Args: append([]string{"reins"}, args...), Stdin: stdin, Stdout: &out, Stderr: &errOut,
		Getenv: func(string) string { return "" },
	})
	return code, out.String(), errOut.String()
}

// dataDir is short enough for the admin socket's path limit.
func dataDir(t *testing.T) string { return companiontest.ShortDir(t) }

func TestTokenIssueListRevokeOnTheStore(t *testing.T) {
	dir := dataDir(t)
	code, out, errOut := run(t, nil, "token", "issue", "claude", "--data-dir", dir, "--keyring", "file")
	if code != 0 {
		t.Fatalf("issue: exit %d, stderr %q", code, errOut)
	}
	tok := strings.TrimSuffix(out, "\n")
	if strings.ContainsAny(tok, " \n\t") || !strings.HasPrefix(tok, tokens.TokenPrefix) {
		t.Fatalf("stdout must be the token alone, got %q", out)
	}
	// 32 random bytes in unpadded base64url: 256 bits, well over 128.
	if n := len(tok) - len(tokens.TokenPrefix); n < 43 {
		t.Fatalf("token has %d characters of entropy encoding, want ≥ 43", n)
	}
	if strings.Contains(errOut, tok) {
		t.Error("the token was repeated on stderr")
	}

	// Flags before the positional arguments work too.
	code, out, errOut = run(t, nil, "token", "--keyring", "file", "--data-dir", dir, "list")
	if code != 0 {
		t.Fatalf("list: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "CREATED") || !strings.Contains(out, "claude") {
		t.Fatalf("list output %q", out)
	}
	if strings.Contains(out+errOut, tok) || strings.Contains(out+errOut, tokens.TokenPrefix) {
		t.Fatalf("list printed a token: %q %q", out, errOut)
	}
	line := strings.Split(strings.TrimSpace(out), "\n")[1]
	if _, err := time.ParseInLocation(time.DateTime, strings.TrimSpace(strings.TrimPrefix(line, "claude")), time.Local); err != nil {
		t.Errorf("creation time in %q: %v", line, err)
	}

	code, out, errOut = run(t, nil, "token", "revoke", "claude", "--data-dir", dir, "--keyring", "file")
	if code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = run(t, nil, "token", "list", "--data-dir", dir, "--keyring", "file")
	if code != 0 || strings.Contains(out, "claude") || !strings.Contains(errOut, "no agent tokens") {
		t.Fatalf("list after revoke: exit %d, %q %q", code, out, errOut)
	}
}

func TestTokenErrors(t *testing.T) {
	dir := dataDir(t)
	if code, _, errOut := run(t, nil, "token", "issue", "claude", "--data-dir", dir, "--keyring", "file"); code != 0 {
		t.Fatalf("issue: %s", errOut)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"duplicate", []string{"issue", "claude"}, "already"},
		{"invalid name", []string{"issue", "no spaces"}, "invalid name"},
		{"too long", []string{"issue", strings.Repeat("a", 65)}, "invalid name"},
		{"unknown revoke", []string{"revoke", "ghost"}, `no agent token named "ghost"`},
		{"missing name", []string{"issue"}, "usage: reins token"},
		{"extra argument", []string{"list", "x"}, "usage: reins token"},
		{"no verb", []string{}, "usage: reins token"},
		{"unknown verb", []string{"rotate", "claude"}, `unknown token command "rotate"`},
		{"bad keyring", []string{"list", "--keyring", "vault"}, "--keyring must be os or file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"token"}, tt.args...)
			args = append(args, "--data-dir", dir)
			if !strings.Contains(strings.Join(tt.args, " "), "--keyring") {
				args = append(args, "--keyring", "file")
			}
			code, out, errOut := run(t, nil, args...)
			if code == 0 {
				t.Fatalf("exit 0, stdout %q", out)
			}
			if out != "" {
				t.Errorf("stdout %q on failure", out)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Fatalf("stderr %q, want it to contain %q", errOut, tt.want)
			}
		})
	}
}

// noKeychain makes the token store behave as on a machine whose keychain
// cannot be reached.
func noKeychain(t *testing.T) {
	t.Helper()
	orig := openTokens
	openTokens = func(dir, kind string) (*tokens.Manager, error) {
		if kind == tokens.KeyringFile {
			return orig(dir, kind)
		}
		return nil, &tokens.UnavailableError{Cause: errors.New("org.freedesktop.secrets was not provided by any service files")}
	}
	t.Cleanup(func() { openTokens = orig })
}

// unreachableBus points the real keychain client at a D-Bus session bus
// that does not exist, as on a headless server.
func unreachableBus(t *testing.T) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	return true
}

func TestKeychainUnavailableNamesKeyringFile(t *testing.T) {
	check := func(t *testing.T) {
		dir := dataDir(t)
		for _, args := range [][]string{
			{"token", "issue", "claude", "--data-dir", dir},
			{"token", "list", "--data-dir", dir, "--keyring", "os"},
			{"headless", "--data-dir", dir, "--port", "1"},
		} {
			code, out, errOut := run(t, nil, args...)
			if code == 0 {
				t.Fatalf("%v: exit 0, stdout %q", args, out)
			}
			if !strings.Contains(errOut, "keychain") || !strings.Contains(errOut, "--keyring file") {
				t.Fatalf("%v: stderr %q, want it to say the keychain is unreachable and name --keyring file", args, errOut)
			}
		}
	}
	t.Run("fake", func(t *testing.T) { noKeychain(t); check(t) })
	if unreachableBus(t) {
		t.Run("no session bus", check)
	}
}

type fakeRunner struct{}

func (fakeRunner) Catalog() []tools.Info {
	return []tools.Info{{Name: "browser_tabs", Description: "List shared tabs.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`), ReadOnly: true}}
}

func (fakeRunner) NewSession(principal, label string) *tools.Session {
	return &tools.Session{Principal: principal, Label: label}
}

func (fakeRunner) Call(_ context.Context, s *tools.Session, tool string, _ json.RawMessage) *tools.Result {
	return &tools.Result{Content: []tools.Content{{Type: "text", Text: tool + " for " + s.Label}}}
}

type running struct {
	c      *companion.Companion
	tokens *tokens.Manager
	dir    string
	port   int
}

// startCompanion runs a real companion with its admin channel on a free
// 127.0.0.1 port.
func startCompanion(t *testing.T) *running {
	t.Helper()
	dir := dataDir(t)
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, Version: "test", Tokens: tm, Tools: fakeRunner{}})
	return &running{c: c, tokens: tm, dir: dir, port: port}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestTokenCommandsGoThroughTheRunningCompanion(t *testing.T) {
	r := startCompanion(t)
	// --keyring os would fail here without a keychain; the running
	// companion's own store answers instead, so it does not matter.
	noKeychain(t)
	code, out, errOut := run(t, nil, "token", "issue", "claude", "--data-dir", r.dir, "--keyring", "os")
	if code != 0 {
		t.Fatalf("issue through the companion: exit %d, %q", code, errOut)
	}
	tok := strings.TrimSpace(out)
	if _, name, ok := r.tokens.Verify(tok); !ok || name != "claude" {
		t.Fatal("the running companion does not know the token it just issued")
	}
	code, out, _ = run(t, nil, "token", "list", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "claude") || strings.Contains(out, tok) {
		t.Fatalf("list through the companion: %q", out)
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cs, err := companiontest.Connect(t, r.port, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(testCtx(t), &sdk.CallToolParams{Name: "browser_tabs"}); err != nil || res.IsError {
		t.Fatalf("call before revoke: %+v, %v", res, err)
	}

	code, _, errOut = run(t, nil, "token", "revoke", "claude", "--data-dir", r.dir, "--keyring", "os")
	if code != 0 {
		t.Fatalf("revoke: %q", errOut)
	}
	// Seen at once: the very next request is refused.
	if _, err := cs.CallTool(testCtx(t), &sdk.CallToolParams{Name: "browser_tabs"}); err == nil {
		t.Fatal("a revoked agent's next call succeeded")
	}
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(r.port)+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked token: status %d, want 401", resp.StatusCode)
	}
}

func TestTokenChangesMadeWithoutTheChannelReachTheCompanion(t *testing.T) {
	// A companion whose admin channel is off stands for one that could not
	// open it: the CLI falls back to the store, and the companion follows
	// the store's index.
	dir := dataDir(t)
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c, err := companion.New(companion.Config{Port: port, DataDir: dir, Tokens: tm, NoAdmin: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Shutdown(context.Background())
	changes, stop := c.Changes()
	defer stop()

	code, out, errOut := run(t, nil, "token", "issue", "cursor", "--data-dir", dir, "--keyring", "file")
	if code != 0 {
		t.Fatalf("issue: %q", errOut)
	}
	tok := strings.TrimSpace(out)
	deadline := time.After(10 * time.Second)
	for {
		if _, name, ok := tm.Verify(tok); ok && name == "cursor" {
			break
		}
		select {
		case <-changes:
		case <-deadline:
			t.Fatal("the companion never learned of a token issued on the store")
		}
	}
}
