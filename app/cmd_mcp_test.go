package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/nativemsg"
)

// impostor listens where a companion would and records every request.
type impostor struct {
	port     int
	requests chan *http.Request
}

func startImpostor(t *testing.T) *impostor {
	t.Helper()
	im := &impostor{requests: make(chan *http.Request, 64)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case im.requests <- r.Clone(context.Background()):
		default:
		}
		// It says what the companion says.
		w.Header().Set("X-Reins-Version", "0.1.0")
		fmt.Fprint(w, "browspark companion")
	}))
	t.Cleanup(srv.Close)
	im.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return im
}

func (im *impostor) seen() []*http.Request {
	var out []*http.Request
	for {
		select {
		case r := <-im.requests:
			out = append(out, r)
		default:
			return out
		}
	}
}

// H-1: `reins mcp` never hands its token to whatever listens on the TCP
// port, not even on GET /. It talks to the companion over the admin
// channel, which only a companion of this user can serve; a program on the
// port the data dir records (or the one --port names) sees nothing.
func TestMCPNeverSendsTheTokenToTheTCPPort(t *testing.T) {
	im := startImpostor(t)

	t.Run("no companion", func(t *testing.T) {
		dir := dataDir(t)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := nativemsg.WritePort(dir, im.port); err != nil {
			t.Fatal(err)
		}
		var errOut strings.Builder
		code := Main(Env{
			Args:  []string{"reins", "mcp", "--data-dir", dir, "--port", strconv.Itoa(im.port), "--wait", "300ms"},
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut,
			Getenv: func(k string) string { return map[string]string{"REINS_TOKEN": "reins_secret-token-value"}[k] },
		})
		if code == 0 || !strings.Contains(errOut.String(), "waiting for it to start") || !strings.Contains(errOut.String(), "reins is not running") {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	})

	t.Run("a companion on the admin channel", func(t *testing.T) {
		r := startCompanion(t)
		tok, err := r.tokens.Issue("desktop")
		if err != nil {
			t.Fatal(err)
		}
		// The port file names the impostor, as if it had been there first.
		if err := nativemsg.WritePort(r.dir, im.port); err != nil {
			t.Fatal(err)
		}
		listToolsThroughMCP(t, []string{"--data-dir", r.dir, "--port", strconv.Itoa(im.port)}, map[string]string{"REINS_TOKEN": tok})
	})

	for _, r := range im.seen() {
		t.Errorf("the program on the port got %s %s (Authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
	}
}

// listToolsThroughMCP runs `reins mcp` with args and env, connects an MCP
// client to its stdio, lists the tools, and closes; the command must then
// exit 0.
func listToolsThroughMCP(t *testing.T, args []string, env map[string]string) {
	t.Helper()
	p := companiontest.NewPipes()
	done := make(chan int, 1)
	var errOut strings.Builder
	go func() {
		code := Main(Env{
			Args:  append([]string{"reins", "mcp"}, args...),
			Stdin: p.BridgeIn, Stdout: p.BridgeOut, Stderr: &errOut,
			Getenv: func(k string) string { return env[k] },
		})
		p.BridgeOut.Close()
		done <- code
	}()
	cl := sdk.NewClient(&sdk.Implementation{Name: "desktop-client", Version: "1"}, nil)
	cs, err := cl.Connect(testCtx(t), p.Client, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %q)", err, errOut.String())
	}
	if _, err := cs.ListTools(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reins mcp did not exit")
	}
}

func TestMCPCommand(t *testing.T) {
	r := startCompanion(t)
	if _, err := r.tokens.Issue("desktop"); err != nil {
		t.Fatal(err)
	}
	t.Run("token from the store", func(t *testing.T) {
		// The companion is found through the data dir's admin channel.
		listToolsThroughMCP(t, []string{"--token-name", "desktop", "--data-dir", r.dir, "--keyring", "file"}, nil)
	})
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no token", []string{"--data-dir", r.dir}, nil, "set REINS_TOKEN or pass --token-name NAME"},
		{"unknown name", []string{"--token-name", "ghost", "--data-dir", r.dir, "--keyring", "file"}, nil, `no agent token named "ghost"`},
		{"refused env token", []string{"--data-dir", r.dir}, map[string]string{"REINS_TOKEN": "reins_nope"}, "refused the agent token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := Main(Env{
				Args: append([]string{"reins", "mcp"}, tt.args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
				Getenv: func(k string) string { return tt.env[k] },
			})
			if code == 0 || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q, want it to contain %q", code, errOut.String(), tt.want)
			}
			if out.Len() != 0 {
				t.Fatalf("stdout %q: it belongs to JSON-RPC", out.String())
			}
		})
	}
}
