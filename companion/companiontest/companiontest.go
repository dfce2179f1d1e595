// Package companiontest starts real companions for the tests of the
// packages built on them, and connects agents to them over MCP the way
// agents connect, so each test package does not carry its own copy.
package companiontest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

// ShortDir returns a fresh data dir whose admin socket path fits the
// platforms' limit (t.TempDir's may not), removed when the test ends.
func ShortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "rct")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "data")
}

// Start runs a companion configured by cfg on a free 127.0.0.1 port (which
// replaces cfg.Port), quiet unless cfg.Logger is set, and shuts it down
// when the test ends. It returns the companion and its port.
func Start(t testing.TB, cfg companion.Config, setup ...func(*companion.Companion)) (*companion.Companion, int) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		c, err := companion.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range setup {
			f(c)
		}
		if err := c.Start(); err != nil {
			if errors.Is(err, companion.ErrPortInUse) && attempt < 5 {
				continue // another test took the port between Close and Start
			}
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.Shutdown(ctx)
		})
		return c, cfg.Port
	}
}

// Bearer sends Token as the bearer token of every request.
type Bearer struct {
	Token string
	Base  http.RoundTripper
}

// RoundTrip adds the Authorization header to a copy of r.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return b.Base.RoundTrip(r)
}

// Connect opens an MCP session with the official client over real HTTP to
// the companion at port, with token as the agent's bearer token. The
// session and its connections end with the test.
func Connect(t testing.TB, port int, token string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "reins-test", Version: "1"}, opts).Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp",
		HTTPClient: &http.Client{Transport: Bearer{Token: token, Base: tr}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

// RecordGraphs turns Graph on for the fake extension x, as the person does
// in the extension's settings, and returns the graph.state snapshots the
// companion sends it.
func RecordGraphs(t testing.TB, x *hubtest.Ext) <-chan wire.ConnectionGraph {
	t.Helper()
	graphs := make(chan wire.ConnectionGraph, 64)
	x.Handle(wire.MethodGraphState, func(p json.RawMessage) (any, error) {
		var g wire.ConnectionGraph
		if err := json.Unmarshal(p, &g); err != nil {
			return nil, err
		}
		graphs <- g
		return wire.GraphReceipt{Received: true}, nil
	})
	on := true
	if err := x.Send(wire.EventToolsPolicy, wire.ToolsPolicy{Disabled: []string{}, Graph: &on}); err != nil {
		t.Fatal(err)
	}
	return graphs
}

// Pipes connects an in-process MCP client to a stdio bridge (mcp.Bridge,
// `reins mcp`): the bridge reads what the client writes from BridgeIn and
// writes what the client reads to BridgeOut.
type Pipes struct {
	BridgeIn  *io.PipeReader
	BridgeOut *io.PipeWriter
	// Client is the MCP client's transport.
	Client *sdk.IOTransport
}

// NewPipes returns connected pipes.
func NewPipes() *Pipes {
	p := &Pipes{}
	var clientIn *io.PipeReader
	var clientOut *io.PipeWriter
	p.BridgeIn, clientOut = io.Pipe()
	clientIn, p.BridgeOut = io.Pipe()
	p.Client = &sdk.IOTransport{Reader: clientIn, Writer: clientOut}
	return p
}
