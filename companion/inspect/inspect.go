// Package inspect serves the hub's Go API as JSON over a local Unix socket,
// for end-to-end tests and diagnostics. It is never mounted on the
// browser-reachable port: only processes of the same user that can open the
// socket in the data dir reach it.
package inspect

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/reinshq/reins/companion/hub"
)

// Handler returns the inspection API for h.
func Handler(h *hub.Hub) http.Handler {
	mux := http.NewServeMux()
	_ = h
	return mux
}

// Serve listens on the Unix socket at path (mode 0600) until ctx ends.
func Serve(ctx context.Context, path string, h *hub.Hub, log *slog.Logger) error {
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: Handler(h)}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
