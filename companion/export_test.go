package companion

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/internal/httpbound"
)

// SetHTTPLimits shortens the listener's limits for a test; call it before
// Start.
func SetHTTPLimits(c *Companion, l httpbound.Limits) { c.limits = l }

// StartForTest runs a companion with cfg on a free port of 127.0.0.1 (with
// a logger that discards, unless cfg has one) and stops it when the test
// ends; setup, when not nil, runs between New and Start.
func StartForTest(t testing.TB, cfg Config, setup func(*Companion)) (*Companion, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(c)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Shutdown(ctx)
	})
	return c, cfg.Port
}
