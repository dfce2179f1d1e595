// Package live owns Live view: the page at /live/:tabId and the WebSocket at
// /live-ws that let the person watch any shared tab and take it over. It owns
// the one-time tickets and the viewer session cookie, the per-tab screencast
// shared by every viewer of a tab (Page.startScreencast, frame acks, adaptive
// quality), the bounded per-viewer frame queues, the mapping of the page's
// mouse and key messages onto Input.dispatch* commands, and the take-over
// state the tool engine consults before every mutating agent call.
//
// Wire summary (JSON text frames, each an object whose "kind" names it):
//
//	out: hello {tab:{id,title,url,browser}, viewport:{width,height}}
//	     frame {seq, metadata:{width,height,pageScaleFactor,scrollOffsetX,scrollOffsetY,timestamp}, data: base64 JPEG}
//	     takeover {held, byYou}   tab {tab:{…}}   notice {message}
//	     error {code, message}    (always the last message; a normal close follows)
//	in:  mouse {type: move|down|up|wheel, x, y (0..1 of the picture), button, buttons, clickCount, deltaX, deltaY, modifiers}
//	     key {type: down|up|char, key, code, text, modifiers, keyCode}
//	     takeover {on}
//
// Links and sessions: a link is /live/{tab}?ticket=T, a one-time ticket
// valid for TicketTTL. Redeeming it starts a new session for that one tab:
// a random path /live/s/{session}/ where the page ({tab}) and its socket
// (ws) live, and a cookie scoped to that path that expires with the session
// (SessionTTL). The tray never puts a ticket on a command line, where other
// users of the machine can read it: it opens a 0600 file in the data dir
// that leads the browser to the link (OpenURL).
package live

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Hub is what live view needs from the browser hub; *hub.Hub satisfies it.
type Hub interface {
	CDP(ctx context.Context, publicID int, method string, params any, sessionID, client string) (json.RawMessage, error)
	SubscribeTab(publicID int, fn func(hub.TabEvent)) (cancel func())
	Tab(publicID int) (hub.Tab, *hub.Browser, error)
	TabsHold(ctx context.Context, publicID int, hold bool) error
}

// Client is the name live view's CDP calls carry, so the extension's activity
// log tells the person's own input apart from agents'.
const Client = "Live view"

// TicketTTL is how long a Live view link works before it is opened.
const TicketTTL = 60 * time.Second

// SessionTTL bounds a viewer session: a browser that redeemed a ticket can
// reload the page or reconnect for this long. A view already open goes on.
const SessionTTL = time.Hour

// Options configure a Server.
type Options struct {
	Hub Hub
	// BaseURL is the companion's own origin, http://127.0.0.1:PORT.
	BaseURL string
	// LinkDir is where OpenURL writes its link files: a directory only the
	// person can read (the data dir's "live"). Empty turns OpenURL off.
	LinkDir string
	Logger  *slog.Logger
	// Now is the clock for ticket and session expiry; tests inject one.
	Now func() time.Time
	// OnChange is called, without locks held, when take-over starts or
	// ends, so the tray can show it. It must not block.
	OnChange func()
	// WriteTimeout bounds one write to a viewer; a viewer that cannot take
	// a frame for this long is closed (default 10 s).
	WriteTimeout time.Duration
	// CallTimeout bounds each CDP command live view sends (default 10 s).
	CallTimeout time.Duration
}

// Server serves Live view for one companion.
type Server struct {
	opts Options
	log  *slog.Logger
	auth *auth

	// shuttingDown is set by Close: views end quickly, without waiting
	// for viewers.
	shuttingDown atomic.Bool

	mu       sync.Mutex
	janitor  *time.Timer // removes link files whose tickets expired
	casts    map[int]*caster
	holders  map[int]*viewer // take-over holder per tab
	viewers  map[*viewer]struct{}
	conns    map[*websocket.Conn]struct{} // every open viewer socket
	closed   bool
	handlers sync.WaitGroup // socket handlers in flight
}

// New builds a Server.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Second
	}
	removeStaleLinks(opts.LinkDir)
	return &Server{
		opts:    opts,
		log:     opts.Logger.With("component", "live"),
		auth:    newAuth(opts.Now),
		casts:   map[int]*caster{},
		holders: map[int]*viewer{},
		viewers: map[*viewer]struct{}{},
		conns:   map[*websocket.Conn]struct{}{},
	}
}

// ViewURL returns a Live view link for a shared tab, carrying a one-time
// ticket valid for TicketTTL.
func (s *Server) ViewURL(tabID int) (string, error) {
	if err := s.checkShared(tabID); err != nil {
		return "", err
	}
	ticket, err := s.auth.issueTicket(tabID, "", nil)
	if err != nil {
		return "", fmt.Errorf("live view of tab %d: %w", tabID, err)
	}
	s.log.Info("live view link issued", "tab", tabID)
	return s.linkURL(tabID, ticket), nil
}

func (s *Server) linkURL(tabID int, ticket string) string {
	return fmt.Sprintf("%s/live/%d?ticket=%s", s.opts.BaseURL, tabID, ticket)
}

func (s *Server) checkShared(tabID int) error {
	t, _, err := s.opts.Hub.Tab(tabID)
	if err != nil {
		return fmt.Errorf("live view of tab %d: %w", tabID, err)
	}
	if !t.Shared {
		return fmt.Errorf("live view of tab %d: %w", tabID, wire.Errorf(wire.CodeNotShared, "tab %d is not shared with Reins; share it from the extension first", tabID))
	}
	return nil
}

// TakenOverBy is who holds a tab in Live view, as TakenOver names them.
const TakenOverBy = "the person"

// TakenOver names who holds the tab in Live view, or returns "" when agents
// may act on it. The tool engine puts the name in its refusal: "tab 7 is
// taken over by the person in live view; wait until they hand it back".
func (s *Server) TakenOver(tabID int) string {
	s.mu.Lock()
	v := s.holders[tabID]
	s.mu.Unlock()
	if v == nil {
		return ""
	}
	return TakenOverBy
}

// Close ends every view with an error message and waits for the viewers'
// goroutines and the screencasts to stop.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.shuttingDown.Store(true)
	if s.janitor != nil {
		s.janitor.Stop()
	}
	casts := make([]*caster, 0, len(s.casts))
	for _, c := range s.casts {
		casts = append(casts, c)
	}
	s.mu.Unlock()
	for _, c := range casts {
		c.end(wire.CodeShuttingDown, "Reins is shutting down; open Live view again from the Reins tray once it runs")
	}
	// Viewers have until shutdownGrace to take their last message. A
	// viewer still stuck in an earlier write (a frame to a viewer that
	// stopped reading, which may take the whole WriteTimeout) then has its
	// connection closed under it.
	handled := make(chan struct{})
	go func() {
		s.handlers.Wait()
		close(handled)
	}()
	select {
	case <-handled:
	case <-time.After(shutdownGrace):
		s.mu.Lock()
		conns := make([]*websocket.Conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		for _, c := range conns {
			c.CloseNow()
		}
		<-handled
	}
	for _, c := range casts {
		<-c.done
	}
	s.auth.close()
}

func (s *Server) changed() {
	if s.opts.OnChange != nil {
		s.opts.OnChange()
	}
}

func (s *Server) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.CallTimeout)
}
