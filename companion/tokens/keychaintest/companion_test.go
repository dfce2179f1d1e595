package keychaintest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCompanion runs a real companion whose tokens live in the real
// keychain.
func startCompanion(t *testing.T, dir string, port int) *companion.Companion {
	t.Helper()
	c, err := companion.New(companion.Config{Port: port, DataDir: dir, Version: "test", Tokens: open(t, dir), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

func stop(t *testing.T, c *companion.Companion) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// mcpStatus sends an MCP initialize with the bearer token and returns the
// HTTP status: 200 for a known agent, 401 otherwise.
func mcpStatus(t *testing.T, port int, token string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"keychain-test","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestTokenSurvivesCompanionRestartAndRevokeLeavesTheKeychain(t *testing.T) {
	requireKeychain(t)
	dir := t.TempDir()
	port := freePort(t)
	name := unique(t, "agent")

	c := startCompanion(t, dir, port)
	tok, err := c.Tokens().Issue(name)
	if err != nil {
		t.Fatal(err)
	}
	if got := mcpStatus(t, port, tok); got != http.StatusOK {
		t.Fatalf("fresh token: HTTP %d", got)
	}
	stop(t, c)

	c = startCompanion(t, dir, port)
	defer stop(t, c)
	if got := mcpStatus(t, port, tok); got != http.StatusOK {
		t.Fatalf("after a restart: HTTP %d", got)
	}
	if secret, err := keyring.Get(tokens.Service, "agent:"+name); err != nil || secret == "" {
		t.Fatalf("the token is not in the keychain: %v", err)
	}
	if err := c.Tokens().Revoke(name); err != nil {
		t.Fatal(err)
	}
	if got := mcpStatus(t, port, tok); got != http.StatusUnauthorized {
		t.Fatalf("revoked token: HTTP %d", got)
	}
	if _, err := keyring.Get(tokens.Service, "agent:"+name); !errors.Is(err, keyring.ErrNotFound) {
		t.Fatalf("the revoked token is still in the keychain: %v", err)
	}
}

type echoRunner struct{}

func (echoRunner) Catalog() []tools.Info { return nil }
func (echoRunner) NewSession(principal, label string) *tools.Session {
	return &tools.Session{Principal: principal, Label: label}
}
func (echoRunner) Call(_ context.Context, s *tools.Session, tool string, _ json.RawMessage) *tools.Result {
	return &tools.Result{Content: []tools.Content{{Type: "text", Text: tool}}}
}

// A backend that refuses its token (close 4001, or 401 on the SSE stream)
// must take the token out of the real keychain.
func TestBackendRevocationRemovesTheKeychainEntry(t *testing.T) {
	requireKeychain(t)
	for _, transport := range []string{"websocket", "sse-http"} {
		t.Run(transport, func(t *testing.T) {
			dir := t.TempDir()
			m := open(t, dir)
			be := operatortest.New("backend-secret", "")
			defer be.Close()
			var mu sync.Mutex
			changed := make(chan struct{}, 1)
			ops, err := operator.New(operator.Options{
				DataDir: dir, Secrets: m, Runner: echoRunner{}, Logger: quiet(),
				OnChange: func() {
					mu.Lock()
					defer mu.Unlock()
					select {
					case changed <- struct{}{}:
					default:
					}
				},
				MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer ops.Close()
			url := be.URL()
			if transport == "websocket" {
				url += "/ws"
			}
			store := pairing.NewStore(nil, nil)
			defer store.Close()
			raw, _ := json.Marshal(map[string]any{"transport": transport, "serverUrl": url, "token": "backend-secret"})
			o, err := store.Park(pairing.Relay{BrowserID: "b1"}, wire.PairOffer{Config: raw, Origin: "https://crm.example"})
			if err != nil {
				t.Fatal(err)
			}
			full, _ := store.Take(o.ID)
			st, err := ops.Approve(full)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = keyring.Delete(tokens.Service, "backend:"+st.ID) })
			if secret, err := keyring.Get(tokens.Service, "backend:"+st.ID); err != nil || secret != "backend-secret" {
				t.Fatalf("the approved token is not in the keychain: %q %v", secret, err)
			}
			if _, err := be.WaitConnected(20 * time.Second); err != nil {
				t.Fatal(err)
			}
			be.Revoke()
			deadline := time.After(30 * time.Second)
			for {
				s, _ := ops.Get(st.ID)
				if s.Revoked {
					break
				}
				select {
				case <-changed:
				case <-deadline:
					t.Fatalf("backend not revoked: %+v", s)
				}
			}
			if _, err := keyring.Get(tokens.Service, "backend:"+st.ID); !errors.Is(err, keyring.ErrNotFound) {
				t.Fatalf("the revoked backend's token is still in the keychain: %v", err)
			}
		})
	}
}
