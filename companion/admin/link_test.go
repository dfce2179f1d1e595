package admin

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPairingCodeRoute(t *testing.T) {
	dir := shortDir(t)
	exp := time.Date(2026, 5, 1, 12, 5, 0, 0, time.UTC)
	serve(t, dir, Options{PairingCode: func() (string, time.Time) { return "7K3QH-W2M9X", exp }})
	c := NewClient(dir)
	defer c.Close()
	got, err := c.PairingCode(ctx(t))
	if err != nil || got.Code != "7K3QH-W2M9X" || !got.Expires.Equal(exp) {
		t.Fatalf("PairingCode = %+v, %v", got, err)
	}

	dir2 := shortDir(t)
	serve(t, dir2, Options{})
	c2 := NewClient(dir2)
	defer c2.Close()
	if _, err := c2.PairingCode(ctx(t)); !errors.Is(err, ErrNotImplemented) {
		t.Fatalf("without codes: %v", err)
	}
}

// /mcp on the channel is the companion's handler as it is: the bridge's
// requests and the answers pass unchanged, and a page's Origin is refused
// before it.
func TestMCPOverTheChannel(t *testing.T) {
	dir := shortDir(t)
	var seen http.Header
	serve(t, dir, Options{MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		w.Write(append([]byte("echo:"), body...))
	})})
	hc := &http.Client{Transport: Transport(dir)}
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx(t), http.MethodPost, URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0"}`))
	req.Header.Set("Authorization", "Bearer t0k")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || string(body) != `echo:{"jsonrpc":"2.0"}` || seen.Get("Authorization") != "Bearer t0k" {
		t.Fatalf("%d %q %v", resp.StatusCode, body, seen)
	}

	req, _ = http.NewRequestWithContext(ctx(t), http.MethodPost, URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Origin", "https://evil.example")
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a page's Origin: %d", resp.StatusCode)
	}

	// Without a companion handler the route says so.
	dir2 := shortDir(t)
	serve(t, dir2, Options{})
	hc2 := &http.Client{Transport: Transport(dir2)}
	defer hc2.CloseIdleConnections()
	resp, err = hc2.Post(URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("no MCP: %d", resp.StatusCode)
	}
}
