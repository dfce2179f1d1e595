package companion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

// adminRoutes is the admin channel's route table, as its handler lists it:
// a route added later is fuzzed too.
func adminRoutes() []string { return admin.NewHandler(admin.Options{}).Patterns() }

// FuzzAdminRoutes sends fuzzed bodies, and fuzzed path values, to every
// route of a real companion's admin channel (route picks one by index).
// Whatever arrives, the channel answers: a success, or a 4xx whose body is
// a JSON error with a code from the wire table; never a 5xx, never a
// panic. /mcp speaks MCP, whose errors are its own; it must not answer 5xx
// either.
func FuzzAdminRoutes(f *testing.F) {
	dir := companiontest.ShortDir(f)
	tm, err := tokens.Open(dir, tokens.KeyringFile)
	if err != nil {
		f.Fatal(err)
	}
	_, port := companiontest.Start(f, companion.Config{DataDir: dir, Tokens: tm, Inspect: true, ShowDashboard: func() error { return nil }})
	// A browser with a shared tab, so the inspection routes reach one.
	x := dialExt(f, dir, port, "fuzz-profile")
	for _, m := range []string{wire.MethodCDP, wire.MethodTabsList, wire.MethodTabsCreate, wire.MethodTabsClose} {
		x.Handle(m, func(json.RawMessage) (any, error) { return map[string]any{}, nil })
	}
	if err := x.SendTabs([]wire.TabInfo{{ID: 5, URL: "https://a.test/", Title: "A", Shared: true, WindowID: 1}}); err != nil {
		f.Fatal(err)
	}
	tr := admin.Transport(dir)
	f.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	routes := adminRoutes()
	for i := range routes {
		idx := uint16(i)
		for _, body := range []string{``, `{}`, `null`, `[]`, `{"name":"fuzz-agent"}`, `{"on":true}`, `{"paused":false}`,
			`{"tabId":1,"method":"Runtime.evaluate","params":{"expression":"1"}}`, `{"browserId":"b1","method":"tabs.list"}`,
			`{"browserId":"b1","url":"https://example.com/","active":false}`, `{"tabId":1}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`} {
			f.Add(idx, "1", []byte(body))
		}
		f.Add(idx, "../x", []byte(`{"on":"yes"}`))
	}
	f.Fuzz(func(t *testing.T, which uint16, value string, body []byte) {
		route := routes[int(which)%len(routes)]
		method, path, ok := strings.Cut(route, " ")
		if !ok {
			method, path = http.MethodPost, route
		}
		// Every {name} in the pattern takes the fuzzed value.
		for {
			i := strings.Index(path, "{")
			j := strings.Index(path, "}")
			if i < 0 || j < i {
				break
			}
			path = path[:i] + url.PathEscape(value) + path[j+1:]
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, admin.URL+path, bytes.NewReader(body))
		if err != nil {
			return // not a request any client can send: nothing reaches the routes
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s %q: no answer: %v", method, path, body, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 500 {
			data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			t.Fatalf("%s %s %q answered %d: %s", method, path, body, resp.StatusCode, data)
		}
		if resp.StatusCode < 400 || route == "/mcp" {
			return // a success (a stream such as /v1/inspect/changes stays open: not read)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			t.Fatalf("%s %s %q: reading the answer: %v", method, path, body, err)
		}
		var eb struct {
			Error string    `json:"error"`
			Code  wire.Code `json:"code"`
		}
		if err := json.Unmarshal(data, &eb); err != nil || eb.Error == "" || wire.Info(eb.Code).Code != eb.Code {
			t.Fatalf("%s %s %q answered %d with %q: want a JSON error with a code from the wire table", method, path, body, resp.StatusCode, data)
		}
	})
}

// The fuzzer covers every route: the table it reads is the channel's.
func TestAdminFuzzCoversEveryRoute(t *testing.T) {
	routes := adminRoutes()
	for _, want := range []string{"PUT /v1/pause", "POST /v1/tokens", "POST /v1/inspect/cdp", "/mcp"} {
		found := false
		for _, r := range routes {
			found = found || r == want
		}
		if !found {
			t.Errorf("route %s is not fuzzed: %v", want, routes)
		}
	}
}
