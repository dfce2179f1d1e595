// Package httpbound owns the time limits Reins' HTTP servers (the
// companion's port and the admin channel) put on their peers, without
// breaking the long-lived WebSockets and server-sent-event streams they
// serve. http.Server's ReadTimeout cannot be used for that: it stays on the
// connection while a response streams, and when it fires the server cancels
// the request's context.
package httpbound

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// The limits, for a peer on the same machine.
const (
	// ReadHeaderTimeout bounds the request line and headers.
	ReadHeaderTimeout = 10 * time.Second
	// BodyTimeout bounds a request body, from the end of the headers to
	// its last byte; a peer that sends it slower loses the connection.
	BodyTimeout = 30 * time.Second
	// IdleTimeout closes a keep-alive connection with no request.
	IdleTimeout = 2 * time.Minute
)

// Limits are the bounds of one server; tests shorten them.
type Limits struct {
	ReadHeader, Body, Idle time.Duration
}

// Default is ReadHeaderTimeout, BodyTimeout and IdleTimeout.
var Default = Limits{ReadHeader: ReadHeaderTimeout, Body: BodyTimeout, Idle: IdleTimeout}

// Server returns an http.Server for h with the limits applied.
func (l Limits) Server(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           BodyDeadline(h, l.Body),
		ReadHeaderTimeout: l.ReadHeader,
		IdleTimeout:       l.Idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// BodyDeadline gives each request body d to arrive in full. The deadline is
// lifted as soon as the whole body has been read, so the response may then
// stream for as long as it needs; requests without a body (GETs, WebSocket
// upgrades) get none. A body that is not read to its end keeps the
// deadline, which also bounds the server's own draining of it.
func BodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			h.ServeHTTP(w, r)
			return
		}
		r.Body = &liftingBody{ReadCloser: r.Body, left: r.ContentLength, lift: func() { rc.SetReadDeadline(time.Time{}) }}
		h.ServeHTTP(w, r)
	})
}

// liftingBody lifts the read deadline once the body has arrived in full:
// at its declared length, or at EOF for a chunked body. net/http starts its
// background read of the connection at that moment, and that read must not
// inherit the deadline.
type liftingBody struct {
	io.ReadCloser
	left int64 // bytes still to come; negative when the length is unknown
	once sync.Once
	lift func()
}

func (b *liftingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	if err == io.EOF || b.left == 0 {
		b.once.Do(b.lift)
	}
	return n, err
}

// DrainTimeout bounds the wait for requests in flight when a server stops,
// so that a companion stops within 2 s of being asked.
const DrainTimeout = 500 * time.Millisecond

// Stop shuts srv down: requests in flight get DrainTimeout (less if ctx
// ends sooner) to finish, then their connections close under them, as does
// a connection that never sent a request, which http.Server.Shutdown alone
// would wait 5 s for. cut says some were closed that way.
func Stop(ctx context.Context, srv *http.Server) (cut bool, err error) {
	dctx, cancel := context.WithTimeout(ctx, DrainTimeout)
	err = srv.Shutdown(dctx)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return true, srv.Close()
	}
	return false, err
}
