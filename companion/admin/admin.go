// Package admin owns the local admin channel between the reins command line
// and a running companion: HTTP over a Unix socket in the data dir (Linux,
// macOS) or over a named pipe only the user can open (Windows), never over
// the browser-reachable port. It holds the channel's one route table, the
// inspection routes that end-to-end tests and benchmarks drive the hub with
// (off unless the companion turns them on), and the one client of both.
// Errors carry the codes and HTTP statuses of wire's error table. This is
// Tailscale's LocalAPI shape: whoever can open the socket is the person, so
// there is no token.
package admin

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"

	"github.com/reinshq/reins/companion/internal/httpbound"
)

// ErrNotRunning means no companion answers on the admin channel of a data
// dir. Only a failure to connect maps to it, so a caller may fall back to
// doing the work itself without risking doing it twice.
var ErrNotRunning = errors.New("reins is not running")

// ErrAlreadyRunning means another companion already serves the admin
// channel of this data dir.
var ErrAlreadyRunning = errors.New("another reins companion is running with this data dir")

// Server serves a route table on an admin listener.
type Server struct {
	h    *Handler
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Serve answers admin requests on ln in the background until Close.
func Serve(ln net.Listener, h *Handler, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		h:  h,
		ln: ln,
		// The peer is a local CLI; a stuck one must not hold a connection
		// forever, and `reins mcp`'s event stream must live as long as it.
		srv:  httpbound.Default.Server(h, log),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin channel stopped", "err", err)
		}
	}()
	return s
}

// Close stops the channel and removes the socket file. Requests in flight
// get httpbound.DrainTimeout to finish (inspection streams end first, so
// they do not hold it); then their connections close under them.
func (s *Server) Close(ctx context.Context) error {
	s.h.stop()
	_, err := httpbound.Stop(ctx, s.srv)
	<-s.done
	cleanup(s.ln)
	return err
}
