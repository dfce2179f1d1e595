package live

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// CookieName is the viewer session cookie.
const CookieName = "reins_live"

// Caps keep a page that keeps asking for links from growing memory; the
// oldest entry goes first.
const (
	maxTickets  = 256
	maxSessions = 256
)

// secretBytes is the entropy of tickets, session paths and session cookies.
const secretBytes = 32

// sessionPrefix is where every session's page and socket live:
// /live/s/<session path>/<tab> and /live/s/<session path>/ws.
const sessionPrefix = "/live/s/"

type ticket struct {
	secret  []byte
	tab     int
	expires time.Time
	// file is the 0600 link file that carries this ticket to the browser
	// (OpenURL), removed once the ticket is used or expires; "" for none.
	file string
}

// session is what one redeemed ticket turns into: a random path under
// sessionPrefix and a cookie scoped to that path. Both are secrets, and
// both must match.
//
// Cookies ignore ports: every server on 127.0.0.1 receives the cookies a
// browser keeps for 127.0.0.1 whose path matches the request. Scoping the
// cookie to a path that only this companion knows (and that only the
// person's browser was sent to) keeps it from every other port, and the
// socket accepts the cookie only on that same path.
type session struct {
	path    []byte
	secret  []byte
	tab     int
	expires time.Time
}

// auth holds one-time tickets and the sessions they turn into. Secrets are
// found by comparing against every entry with subtle.ConstantTimeCompare and
// never by a map lookup or an early exit, so the time a wrong guess takes
// says nothing about how close it was.
type auth struct {
	now func() time.Time

	mu       sync.Mutex
	tickets  []*ticket
	sessions []*session
}

func newAuth(now func() time.Time) *auth { return &auth{now: now} }

func newSecret() ([]byte, string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return nil, "", fmt.Errorf("reading random bytes: %w", err)
	}
	s := base64.RawURLEncoding.EncodeToString(b)
	return []byte(s), s, nil
}

// issueTicket makes a ticket for tab. file, when not "", is a link file that
// write fills with the ticket; it is removed with the ticket.
func (a *auth) issueTicket(tab int, file string, write func(ticket string) error) (string, error) {
	secret, s, err := newSecret()
	if err != nil {
		return "", err
	}
	if write != nil {
		if err := write(s); err != nil {
			return "", err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	if len(a.tickets) >= maxTickets {
		a.dropTicketLocked(0)
	}
	a.tickets = append(a.tickets, &ticket{secret: secret, tab: tab, expires: a.now().Add(TicketTTL), file: file})
	return s, nil
}

// redeem consumes a ticket for tab. It succeeds at most once per ticket, and
// only before the ticket expires.
func (a *auth) redeem(tab int, given string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	found := -1
	g := []byte(given)
	for i, t := range a.tickets {
		if subtle.ConstantTimeCompare(t.secret, g) == 1 && t.tab == tab {
			found = i
		}
	}
	if found < 0 {
		return false
	}
	a.dropTicketLocked(found)
	return true
}

// newSession starts a session for tab. It never reuses a session the
// browser already holds: a cookie planted in the browser by someone who
// knows its value (session fixation) must not gain the new tab.
func (a *auth) newSession(tab int) (path, cookie string, err error) {
	p, path, err := newSecret()
	if err != nil {
		return "", "", err
	}
	c, cookie, err := newSecret()
	if err != nil {
		return "", "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	if len(a.sessions) >= maxSessions {
		clear(a.sessions[:1])
		a.sessions = a.sessions[1:]
	}
	a.sessions = append(a.sessions, &session{path: p, secret: c, tab: tab, expires: a.now().Add(SessionTTL)})
	return path, cookie, nil
}

// session returns the tab of the live session whose path is path and whose
// cookie is among values.
func (a *auth) session(path string, values []string) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	tab, ok := 0, false
	p := []byte(path)
	for _, s := range a.sessions {
		pathOK := subtle.ConstantTimeCompare(s.path, p)
		for _, v := range values {
			if pathOK&subtle.ConstantTimeCompare(s.secret, []byte(v)) == 1 {
				tab, ok = s.tab, true
			}
		}
	}
	return tab, ok
}

// close drops every ticket, removing their link files.
func (a *auth) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.tickets) > 0 {
		a.dropTicketLocked(0)
	}
	clear(a.sessions)
	a.sessions = nil
}

// prune drops expired tickets and sessions.
func (a *auth) prune() {
	a.mu.Lock()
	a.pruneLocked()
	a.mu.Unlock()
}

// nextExpiry is when the oldest ticket with a link file expires.
func (a *auth) nextExpiry() (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.tickets {
		if t.file != "" {
			return t.expires, true
		}
	}
	return time.Time{}, false
}

func (a *auth) dropTicketLocked(i int) {
	if f := a.tickets[i].file; f != "" {
		// The file holds the ticket in clear; it must not outlive it.
		os.Remove(f)
	}
	copy(a.tickets[i:], a.tickets[i+1:])
	a.tickets[len(a.tickets)-1] = nil
	a.tickets = a.tickets[:len(a.tickets)-1]
}

func (a *auth) pruneLocked() {
	now := a.now()
	for i := 0; i < len(a.tickets); {
		if now.Before(a.tickets[i].expires) {
			i++
			continue
		}
		a.dropTicketLocked(i)
	}
	ss := a.sessions[:0]
	for _, s := range a.sessions {
		if now.Before(s.expires) {
			ss = append(ss, s)
		}
	}
	clear(a.sessions[len(ss):])
	a.sessions = ss
}

// cookieValues collects every reins_live cookie the request carries: a
// browser may hold stale ones beside the current one, or one planted by
// another local origin (cookies ignore ports).
func cookieValues(r *http.Request) []string {
	var vs []string
	for _, c := range r.Cookies() {
		if c.Name == CookieName && c.Value != "" {
			vs = append(vs, c.Value)
		}
	}
	return vs
}

// sessionCookie carries one session. Its Path is the session's own prefix,
// which covers the page and the socket and nothing else on any port. It has
// no Domain, so it stays host-only on 127.0.0.1; HttpOnly keeps it from the
// page's own script and SameSite=Strict from every other site's requests.
func sessionCookie(path, value string) *http.Cookie {
	return &http.Cookie{
		Name:     CookieName,
		Value:    value,
		Path:     sessionPrefix + path,
		MaxAge:   int(SessionTTL / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	}
}
