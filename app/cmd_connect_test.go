package app

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/app/clients"
	"github.com/reinshq/reins/app/osenv"
	"github.com/reinshq/reins/companion/tokens"
)

// fakeHome points the connect commands at a fresh Linux home with nothing
// on PATH.
func fakeHome(t *testing.T) osenv.Env {
	t.Helper()
	e := osenv.Env{GOOS: "linux", Home: t.TempDir(), Getenv: func(string) string { return "" },
		LookPath: func(string) (string, error) { return "", errors.New("not found") }, Now: time.Now}
	old := systemEnv
	systemEnv = func() (osenv.Env, error) { return e, nil }
	t.Cleanup(func() { systemEnv = old })
	return e
}

func readEntry(t *testing.T, path, key string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc[key]["reins"]
}

func TestHelpFlagPrintsHelp(t *testing.T) {
	_, help, _ := run(t, nil, "help")
	for _, flag := range []string{"--help", "-h"} {
		code, out, errOut := run(t, nil, flag)
		if code != 0 || out != help || errOut != "" {
			t.Errorf("reins %s: exit %d, stdout %q, stderr %q; want what reins help prints", flag, code, out, errOut)
		}
	}
	for _, want := range []string{"connect", "disconnect"} {
		if !strings.Contains(help, "\n  "+want+" ") {
			t.Errorf("help lacks %s:\n%s", want, help)
		}
	}
}

// `reins connect claude-desktop` issues a token and writes a stdio entry
// that starts this binary with --token-name; the token never enters the
// file, and `reins mcp --token-name` reads it from the store.
func TestConnectStdioClient(t *testing.T) {
	e := fakeHome(t)
	dir := dataDir(t)
	c, _ := clients.Find("claude-desktop")
	path := c.ConfigPath(e)
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(`{"mcpServers":{"filesystem":{"command":"npx","args":["x"]}}}`), 0o600)

	code, out, errOut := run(t, nil, "connect", "claude-desktop", "--data-dir", dir, "--keyring", "file")
	if code != 0 {
		t.Fatalf("connect: %d %s %s", code, out, errOut)
	}
	if !strings.Contains(out, `connected Claude Desktop as agent "claude-desktop"`) || !strings.Contains(out, "previous file is kept as") {
		t.Errorf("stdout: %s", out)
	}
	exe, _ := reinsExecutable()
	entry := readEntry(t, path, "mcpServers")
	want := map[string]any{"command": exe, "args": []any{"mcp", "--token-name", "claude-desktop", "--data-dir", dir, "--keyring", "file"}}
	if !reflect.DeepEqual(entry, want) {
		t.Errorf("entry %v, want %v", entry, want)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "rt_") || !strings.Contains(string(data), "filesystem") {
		t.Errorf("config: %s", data)
	}
	// What Claude Desktop will run finds the token.
	tok, err := agentToken(dir, "file", "claude-desktop")
	if err != nil {
		t.Fatalf("reins mcp --token-name claude-desktop cannot read its token: %v", err)
	}
	m, err := tokens.Open(dir, "file")
	if err != nil {
		t.Fatal(err)
	}
	if _, name, ok := m.Verify(tok); !ok || name != "claude-desktop" {
		t.Errorf("the stored token verifies as %q, %v", name, ok)
	}

	// The list shows it connected.
	code, out, _ = run(t, nil, "connect", "--data-dir", dir, "--keyring", "file")
	if code != 0 || !strings.Contains(out, "claude-desktop") || !strings.Contains(out, "connected as claude-desktop") {
		t.Errorf("connect list: %d\n%s", code, out)
	}

	// Disconnect removes the entry and revokes the token.
	code, out, errOut = run(t, nil, "disconnect", "claude-desktop", "--data-dir", dir, "--keyring", "file")
	if code != 0 || !strings.Contains(out, `revoked agent token "claude-desktop"`) {
		t.Fatalf("disconnect: %d %s %s", code, out, errOut)
	}
	if entry := readEntry(t, path, "mcpServers"); entry != nil {
		t.Errorf("entry still there: %v", entry)
	}
	if m, _ := tokens.Open(dir, "file"); m == nil {
		t.Fatal("reopening the store")
	} else if _, _, ok := m.Verify(tok); ok {
		t.Error("the token still verifies after disconnect")
	}
}

// An HTTP client gets the URL and a bearer header; --name names the agent.
func TestConnectHTTPClient(t *testing.T) {
	e := fakeHome(t)
	dir := dataDir(t)
	code, out, errOut := run(t, nil, "connect", "cursor", "--name", "cursor-work", "--data-dir", dir, "--keyring", "file", "--port", "47999")
	if code != 0 {
		t.Fatalf("connect: %d %s %s", code, out, errOut)
	}
	c, _ := clients.Find("cursor")
	entry := readEntry(t, c.ConfigPath(e), "mcpServers")
	if entry["url"] != "http://127.0.0.1:47999/mcp" {
		t.Errorf("entry %v", entry)
	}
	auth, _ := entry["headers"].(map[string]any)["Authorization"].(string)
	m, _ := tokens.Open(dir, "file")
	if _, name, ok := m.Verify(strings.TrimPrefix(auth, "Bearer ")); !ok || name != "cursor-work" {
		t.Errorf("the header's token verifies as %q, %v", name, ok)
	}
	if fi, _ := os.Stat(c.ConfigPath(e)); fi.Mode().Perm() != 0o600 {
		t.Errorf("a config with a token is %v", fi.Mode().Perm())
	}
	code, out, _ = run(t, nil, "disconnect", "cursor", "--data-dir", dir, "--keyring", "file")
	if code != 0 || !strings.Contains(out, `revoked agent token "cursor-work"`) {
		t.Errorf("disconnect: %s", out)
	}
}

// A malformed config is refused before a token is issued, with the path
// and what to do.
func TestConnectMalformedConfig(t *testing.T) {
	e := fakeHome(t)
	dir := dataDir(t)
	c, _ := clients.Find("windsurf")
	path := c.ConfigPath(e)
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(`{"mcpServers": {`), 0o600)
	code, _, errOut := run(t, nil, "connect", "windsurf", "--data-dir", dir, "--keyring", "file")
	if code != 1 || !strings.Contains(errOut, path) || !strings.Contains(errOut, "left the file as it was") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"mcpServers": {` {
		t.Errorf("the malformed file changed: %s", got)
	}
	m, _ := tokens.Open(dir, "file")
	if list, _ := m.List(); len(list) != 0 {
		t.Errorf("a token was issued for a client that could not be connected: %v", list)
	}
	if code, _, errOut := run(t, nil, "connect", "notepad", "--data-dir", dir, "--keyring", "file"); code == 0 || !strings.Contains(errOut, "claude-desktop, cursor") {
		t.Errorf("unknown client: %d %s", code, errOut)
	}
}

// A running Reins keeps tokens in a file, and `reins connect` is run
// without --keyring: the token is issued by the running companion into its
// store, and the entry names the store `reins mcp` can read it back from,
// so the client's first start works.
func TestConnectNamesTheStoreThatHoldsTheToken(t *testing.T) {
	e := fakeHome(t)
	r := startCompanion(t)
	code, out, errOut := run(t, nil, "connect", "claude-code", "--data-dir", r.dir)
	if code != 0 {
		t.Fatalf("connect: %d %s %s", code, out, errOut)
	}
	c, _ := clients.Find("claude-code")
	entry := readEntry(t, c.ConfigPath(e), "mcpServers")
	args, _ := json.Marshal(entry["args"])
	if !strings.Contains(string(args), `"--keyring","file"`) {
		t.Fatalf("the entry does not name the file store: %s", args)
	}
	tok, err := agentToken(r.dir, "file", "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if _, name, ok := r.tokens.Verify(tok); !ok || name != "claude-code" {
		t.Errorf("the running companion does not know the token: %q %v", name, ok)
	}
}
