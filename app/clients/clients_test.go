package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	stdioServer = Server{Command: "/usr/bin/reins", Args: []string{"mcp", "--token-name", "agent"}, URL: "http://127.0.0.1:47100/mcp", Token: "rt_secret"}
	clock       = time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)
)

// testEnv is a Linux user with a fresh home and nothing on PATH.
func testEnv(t *testing.T) Env {
	home := t.TempDir()
	return Env{
		GOOS: "linux", Home: home,
		Getenv:   func(string) string { return "" },
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Now:      func() time.Time { return clock },
	}
}

func mustFind(t *testing.T, id string) Client {
	t.Helper()
	c, err := Find(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// Realistic files of each client, as the client or a person leaves them.
var samples = map[string]string{
	"claude-desktop": `{
  "globalShortcut": "Alt+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/Desktop"]
    }
  }
}
`,
	"cursor": `{
    "mcpServers": {
        "github": {
            "url": "https://api.githubcopilot.com/mcp/",
            "headers": {"Authorization": "Bearer ghp_x"}
        }
    }
}`,
	"vscode": `// Place your MCP servers here. See https://code.visualstudio.com/docs/copilot/chat/mcp-servers
{
	"servers": {
		/* The team's search server */
		"search": {
			"type": "stdio",
			"command": "search-mcp", // installed with pipx
		},
	},
	"inputs": [
		{"type": "promptString", "id": "api-key", "password": true},
	],
}
`,
	"windsurf": `{"mcpServers":{"context7":{"serverUrl":"https://mcp.context7.com/mcp"}}}`,
	"claude-code": `{
  "numStartups": 42,
  "projects": {"/home/me/src": {"allowedTools": [], "mcpServers": {"local": {"command": "x"}}}},
  "mcpServers": {}
}
`,
}

// Connect and Disconnect on every kind of file a client may have.
func TestConnectDisconnectFiles(t *testing.T) {
	for _, c := range All {
		for _, tc := range []struct {
			name    string
			file    *string // nil: missing
			mode    os.FileMode
			wantErr error
		}{
			{name: "missing"},
			{name: "empty", file: ptr("")},
			{name: "blank", file: ptr("\n  \n")},
			{name: "empty object", file: ptr("{}")},
			{name: "other servers", file: ptr(samples[c.ID])},
			{name: "malformed", file: ptr(`{"mcpServers": {"x": {"command": "y"}`), wantErr: ErrMalformed},
			{name: "top level array", file: ptr(`[1, 2]`), wantErr: ErrMalformed},
			{name: "servers not an object", file: ptr(`{"mcpServers": [], "servers": []}`), wantErr: ErrMalformed},
			{name: "read-only", file: ptr(samples[c.ID]), mode: 0o444, wantErr: ErrReadOnly},
		} {
			t.Run(c.ID+"/"+tc.name, func(t *testing.T) {
				e := testEnv(t)
				path := c.ConfigPath(e)
				var before []byte
				if tc.file != nil {
					mode := tc.mode
					if mode == 0 {
						mode = 0o644
					}
					write(t, path, *tc.file, mode)
					before = []byte(*tc.file)
				}
				res, err := Connect(context.Background(), e, c, stdioServer)
				if tc.wantErr != nil {
					var fe *FileError
					if !errors.Is(err, tc.wantErr) || !errors.As(err, &fe) || fe.Path != path {
						t.Fatalf("Connect: %v, want %v naming %s", err, tc.wantErr, path)
					}
					after, _ := os.ReadFile(path)
					if string(after) != string(before) {
						t.Fatalf("a refused file was changed:\n%s", after)
					}
					if backups, _ := filepath.Glob(path + backupInfix + "*"); len(backups) != 0 {
						t.Errorf("backups made for a refused edit: %v", backups)
					}
					if st := Status(e, c); tc.wantErr == ErrMalformed && !errors.Is(st.Problem, ErrMalformed) {
						t.Errorf("Status does not report the problem: %v", st.Problem)
					}
					return
				}
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !c.JSONC && !json.Valid(after) {
					t.Fatalf("not valid JSON:\n%s", after)
				}
				st := Status(e, c)
				if !st.Connected || st.Problem != nil {
					t.Fatalf("Status after Connect: %+v", st)
				}
				wantEntry := roundTrip(t, c.Entry(stdioServer))
				if !reflect.DeepEqual(st.Entry, wantEntry) {
					t.Errorf("entry = %v, want %v", st.Entry, wantEntry)
				}
				if tc.file != nil && len(strings.TrimSpace(*tc.file)) > 0 {
					if err := onlyEntryChanged(before, after, c.Path, EntryName); err != nil {
						t.Errorf("%v:\n%s", err, after)
					}
				}
				if tc.file != nil {
					if res.Backup == "" {
						t.Fatal("no backup of an existing file")
					}
					if b, err := os.ReadFile(res.Backup); err != nil || string(b) != string(before) {
						t.Errorf("backup %s holds %q, %v", res.Backup, b, err)
					}
				} else if res.Backup != "" {
					t.Errorf("a backup of a missing file: %s", res.Backup)
				}
				if fi, _ := os.Stat(path); c.Transport == HTTP && fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("a config holding a token is %v", fi.Mode().Perm())
				}

				// Running it again replaces Reins' entry and nothing else.
				other := stdioServer
				other.Args = []string{"mcp", "--token-name", "second"}
				other.Token = "rt_second"
				if _, err := Connect(context.Background(), e, c, other); err != nil {
					t.Fatal(err)
				}
				again, _ := os.ReadFile(path)
				if err := onlyEntryChanged(after, again, c.Path, EntryName); err != nil {
					t.Errorf("second connect: %v", err)
				}
				if st := Status(e, c); !reflect.DeepEqual(st.Entry, roundTrip(t, c.Entry(other))) {
					t.Errorf("second connect left %v", st.Entry)
				}
				if n := strings.Count(string(again), `"`+EntryName+`"`); n != 1 {
					t.Errorf("%d reins entries after connecting twice:\n%s", n, again)
				}

				// Disconnect takes it out again.
				if _, err := Disconnect(context.Background(), e, c); err != nil {
					t.Fatal(err)
				}
				gone, _ := os.ReadFile(path)
				if st := Status(e, c); st.Connected || st.Problem != nil {
					t.Fatalf("still connected after Disconnect: %+v\n%s", st, gone)
				}
				if !c.JSONC && !json.Valid(gone) {
					t.Fatalf("not valid JSON after Disconnect:\n%s", gone)
				}
				if tc.file != nil && len(strings.TrimSpace(*tc.file)) > 0 {
					if err := onlyEntryChanged(before, gone, c.Path, EntryName); err != nil {
						t.Errorf("disconnect: %v", err)
					}
				}
				// A second Disconnect has nothing to do and writes nothing.
				res, err = Disconnect(context.Background(), e, c)
				if err != nil || res.Changed || res.Backup != "" {
					t.Errorf("Disconnect of a disconnected client: %+v, %v", res, err)
				}
			})
		}
	}
}

func ptr(s string) *string { return &s }

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// VS Code's JSONC keeps every comment and its trailing-comma style; the
// new entry is indented like its siblings, with the file's tabs.
func TestVSCodeKeepsComments(t *testing.T) {
	e := testEnv(t)
	c := mustFind(t, "vscode")
	path := c.ConfigPath(e)
	write(t, path, samples["vscode"], 0o644)
	if _, err := Connect(context.Background(), e, c, stdioServer); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	for _, comment := range []string{
		"// Place your MCP servers here.", "/* The team's search server */", "// installed with pipx",
	} {
		if !strings.Contains(string(got), comment) {
			t.Errorf("comment %q lost:\n%s", comment, got)
		}
	}
	want := "\t\t\"reins\": {\n\t\t\t\"type\": \"http\",\n\t\t\t\"url\": \"http://127.0.0.1:47100/mcp\",\n"
	if !strings.Contains(string(got), want) {
		t.Errorf("the entry is not indented like its siblings:\n%s", got)
	}
	if _, err := Disconnect(context.Background(), e, c); err != nil {
		t.Fatal(err)
	}
	back, _ := os.ReadFile(path)
	if string(back) != samples["vscode"] {
		t.Errorf("connect then disconnect did not give back the file byte for byte:\n%s\nwant:\n%s", back, samples["vscode"])
	}
}

// A strict JSON client's file gets the entry without changing a byte of
// the rest, and Disconnect gives the original back. (A one-line object
// keeps a line break before its closing brace; the data is the same, as
// TestConnectDisconnectFiles checks for every sample.)
func TestStrictFileRoundTrip(t *testing.T) {
	for _, id := range []string{"claude-desktop", "cursor"} {
		e := testEnv(t)
		c := mustFind(t, id)
		path := c.ConfigPath(e)
		write(t, path, samples[id], 0o600)
		if _, err := Connect(context.Background(), e, c, stdioServer); err != nil {
			t.Fatal(err)
		}
		if _, err := Disconnect(context.Background(), e, c); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		want := samples[id]
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if string(got) != want {
			t.Errorf("%s: round trip changed the file:\n%s\nwant:\n%s", id, got, want)
		}
	}
}

// Comments are not JSON: a strict client would not read such a file, so
// Reins does not treat it as valid either.
func TestStrictClientRefusesComments(t *testing.T) {
	e := testEnv(t)
	c := mustFind(t, "claude-desktop")
	write(t, c.ConfigPath(e), "{\n  // mine\n  \"mcpServers\": {}\n}\n", 0o644)
	if _, err := Connect(context.Background(), e, c, stdioServer); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Connect: %v, want ErrMalformed", err)
	}
}

// A read-only file is refused even for root, who could replace it; and
// a Disconnect with nothing to remove writes nothing, so it works there.
func TestReadOnlyFile(t *testing.T) {
	e := testEnv(t)
	c := mustFind(t, "cursor")
	path := c.ConfigPath(e)
	write(t, path, samples["cursor"], 0o444)
	if _, err := Connect(context.Background(), e, c, stdioServer); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Connect on a read-only file: %v", err)
	}
	if _, err := Disconnect(context.Background(), e, c); err != nil {
		t.Fatalf("Disconnect of a file without the entry must not need to write: %v", err)
	}
}

// A linked config is edited where it lives; the link stays a link.
func TestSymlinkedConfig(t *testing.T) {
	e := testEnv(t)
	c := mustFind(t, "cursor")
	real := filepath.Join(e.Home, "dotfiles", "cursor-mcp.json")
	write(t, real, samples["cursor"], 0o600)
	link := c.ConfigPath(e)
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(context.Background(), e, c, stdioServer); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if st := Status(e, c); !st.Connected {
		t.Error("not connected through the link")
	}
}

// Only the newest MaxBackups backups are kept.
func TestBackupsAreBounded(t *testing.T) {
	e := testEnv(t)
	c := mustFind(t, "windsurf")
	path := c.ConfigPath(e)
	write(t, path, samples["windsurf"], 0o600)
	now := clock
	e.Now = func() time.Time { now = now.Add(time.Second); return now }
	for i := 0; i < MaxBackups+3; i++ {
		s := stdioServer
		s.Token = fmt.Sprintf("rt_%d", i)
		if _, err := Connect(context.Background(), e, c, s); err != nil {
			t.Fatal(err)
		}
	}
	backups, _ := filepath.Glob(path + backupInfix + "*")
	if len(backups) != MaxBackups {
		t.Fatalf("%d backups, want %d: %v", len(backups), MaxBackups, backups)
	}
	slices.Sort(backups)
	newest, _ := os.ReadFile(backups[len(backups)-1])
	if !strings.Contains(string(newest), fmt.Sprintf("rt_%d", MaxBackups+1)) {
		t.Errorf("the newest backup is not the file before the last edit:\n%s", newest)
	}
	for _, b := range backups {
		if fi, _ := os.Stat(b); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v; backups may hold tokens", b, fi.Mode().Perm())
		}
	}
}

func TestTooLarge(t *testing.T) {
	e := testEnv(t)
	c := mustFind(t, "claude-code")
	path := c.ConfigPath(e)
	write(t, path, `{"x":"`+strings.Repeat("a", MaxConfigSize)+`"}`, 0o600)
	if _, err := Connect(context.Background(), e, c, stdioServer); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Connect: %v, want ErrTooLarge", err)
	}
}

// Where each client keeps its config, per system.
func TestConfigPaths(t *testing.T) {
	env := func(goos, home string, vars map[string]string) Env {
		return Env{GOOS: goos, Home: home, Getenv: func(k string) string { return vars[k] }}
	}
	lin := env("linux", "/home/me", nil)
	linXDG := env("linux", "/home/me", map[string]string{"XDG_CONFIG_HOME": "/home/me/cfg"})
	mac := env("darwin", "/Users/me", nil)
	win := env("windows", `C:\Users\me`, map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`})
	winNoVar := env("windows", `C:\Users\me`, nil)
	for _, tc := range []struct {
		id   string
		e    Env
		want string
	}{
		{"claude-desktop", lin, "/home/me/.config/Claude/claude_desktop_config.json"},
		{"claude-desktop", linXDG, "/home/me/cfg/Claude/claude_desktop_config.json"},
		{"claude-desktop", mac, "/Users/me/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", win, `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`},
		{"claude-desktop", winNoVar, `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`},
		{"cursor", lin, "/home/me/.cursor/mcp.json"},
		{"cursor", mac, "/Users/me/.cursor/mcp.json"},
		{"cursor", win, `C:\Users\me\.cursor\mcp.json`},
		{"vscode", lin, "/home/me/.config/Code/User/mcp.json"},
		{"vscode", mac, "/Users/me/Library/Application Support/Code/User/mcp.json"},
		{"vscode", win, `C:\Users\me\AppData\Roaming\Code\User\mcp.json`},
		{"windsurf", lin, "/home/me/.codeium/windsurf/mcp_config.json"},
		{"windsurf", mac, "/Users/me/.codeium/windsurf/mcp_config.json"},
		{"windsurf", win, `C:\Users\me\.codeium\windsurf\mcp_config.json`},
		{"claude-code", lin, "/home/me/.claude.json"},
		{"claude-code", mac, "/Users/me/.claude.json"},
		{"claude-code", win, `C:\Users\me\.claude.json`},
	} {
		if got := mustFind(t, tc.id).ConfigPath(tc.e); got != tc.want {
			t.Errorf("%s on %s: %s, want %s", tc.id, tc.e.GOOS, got, tc.want)
		}
	}
}

// A client is installed when its settings folder, its app or its command
// is there, and not otherwise.
func TestInstalled(t *testing.T) {
	e := testEnv(t)
	for _, st := range Detect(e) {
		if st.Installed || st.Connected {
			t.Errorf("%s detected in an empty home", st.Client.ID)
		}
	}
	os.MkdirAll(filepath.Join(e.Home, ".config", "Claude"), 0o700)
	os.MkdirAll(filepath.Join(e.Home, ".config", "Code"), 0o700)
	os.MkdirAll(filepath.Join(e.Home, ".codeium", "windsurf"), 0o700)
	e.LookPath = func(cmd string) (string, error) {
		if cmd == "cursor" {
			return "/usr/bin/cursor", nil
		}
		return "", errors.New("not found")
	}
	var got []string
	for _, st := range Detect(e) {
		if st.Installed {
			got = append(got, st.Client.ID)
		}
	}
	if want := []string{"claude-desktop", "cursor", "vscode", "windsurf"}; !slices.Equal(got, want) {
		t.Errorf("installed %v, want %v", got, want)
	}
}

// With the claude CLI on PATH, Claude Code is configured through it: an
// old entry is removed, then `claude mcp add` runs with the stdio command,
// so no token is ever on its command line.
func TestClaudeCodeThroughCLI(t *testing.T) {
	e := testEnv(t)
	c := mustFind(t, "claude-code")
	write(t, c.ConfigPath(e), `{"mcpServers":{"reins":{"type":"stdio","command":"old"}}}`, 0o600)
	var runs [][]string
	e.LookPath = func(cmd string) (string, error) {
		if cmd == "claude" {
			return "/home/me/.local/bin/claude", nil
		}
		return "", errors.New("not found")
	}
	e.Run = func(_ context.Context, name string, args ...string) ([]byte, error) {
		runs = append(runs, append([]string{name}, args...))
		return []byte("ok"), nil
	}
	res, err := Connect(context.Background(), e, c, stdioServer)
	if err != nil || res.Via != "claude" {
		t.Fatalf("Connect: %+v, %v", res, err)
	}
	want := [][]string{
		{"/home/me/.local/bin/claude", "mcp", "remove", "--scope", "user", "reins"},
		{"/home/me/.local/bin/claude", "mcp", "add", "--scope", "user", "reins", "--", "/usr/bin/reins", "mcp", "--token-name", "agent"},
	}
	if !reflect.DeepEqual(runs, want) {
		t.Fatalf("runs:\n%q\nwant:\n%q", runs, want)
	}
	for _, r := range runs {
		if strings.Contains(strings.Join(r, " "), stdioServer.Token) {
			t.Errorf("the token is on a command line: %q", r)
		}
	}
	// A failing CLI is reported with what it said.
	e.Run = func(context.Context, string, ...string) ([]byte, error) {
		return []byte("Error: config locked"), errors.New("exit status 1")
	}
	if _, err := Disconnect(context.Background(), e, c); err == nil || !strings.Contains(err.Error(), "config locked") {
		t.Errorf("Disconnect with a failing CLI: %v", err)
	}
}

func TestFindUnknown(t *testing.T) {
	if _, err := Find("notepad"); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("Find: %v", err)
	}
	if got := IDs(); !slices.Equal(got, []string{"claude-desktop", "cursor", "vscode", "windsurf", "claude-code"}) {
		t.Errorf("IDs = %v", got)
	}
}
