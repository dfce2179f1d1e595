package live

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
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

// secretBytes is the entropy of tickets and session ids.
const secretBytes = 32

type ticket struct {
	secret  []byte
	tab     int
	expires time.Time
}

type session struct {
	secret  []byte
	tabs    map[int]bool
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

func (a *auth) issueTicket(tab int) (string, error) {
	secret, s, err := newSecret()
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	if len(a.tickets) >= maxTickets {
		a.tickets = a.tickets[1:]
	}
	a.tickets = append(a.tickets, &ticket{secret: secret, tab: tab, expires: a.now().Add(TicketTTL)})
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
	a.tickets = append(a.tickets[:found], a.tickets[found+1:]...)
	return true
}

// grant adds tab to the session a valid existing cookie names, or starts a
// new session, and returns the session's cookie value.
func (a *auth) grant(tab int, existing []string) (string, error) {
	a.mu.Lock()
	if s := a.findLocked(existing); s != nil {
		s.tabs[tab] = true
		v := string(s.secret)
		a.mu.Unlock()
		return v, nil
	}
	a.mu.Unlock()
	secret, v, err := newSecret()
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	if len(a.sessions) >= maxSessions {
		a.sessions = a.sessions[1:]
	}
	a.sessions = append(a.sessions, &session{secret: secret, tabs: map[int]bool{tab: true}, expires: a.now().Add(SessionTTL)})
	return v, nil
}

// allowed reports whether one of the cookie values names a live session
// that may view tab.
func (a *auth) allowed(tab int, values []string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked()
	ok := false
	for _, v := range values {
		g := []byte(v)
		for _, s := range a.sessions {
			if subtle.ConstantTimeCompare(s.secret, g) == 1 && s.tabs[tab] {
				ok = true
			}
		}
	}
	return ok
}

func (a *auth) findLocked(values []string) *session {
	a.pruneLocked()
	var found *session
	for _, v := range values {
		g := []byte(v)
		for _, s := range a.sessions {
			if subtle.ConstantTimeCompare(s.secret, g) == 1 {
				found = s
			}
		}
	}
	return found
}

func (a *auth) pruneLocked() {
	now := a.now()
	ts := a.tickets[:0]
	for _, t := range a.tickets {
		if now.Before(t.expires) {
			ts = append(ts, t)
		}
	}
	clear(a.tickets[len(ts):])
	a.tickets = ts
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
// browser may hold stale ones beside the current one.
func cookieValues(r *http.Request) []string {
	var vs []string
	for _, c := range r.Cookies() {
		if c.Name == CookieName && c.Value != "" {
			vs = append(vs, c.Value)
		}
	}
	return vs
}

// sessionCookies are the two cookies that carry one session. Path=/live
// covers the page; the socket lives at /live-ws, which RFC 6265 path
// matching does not put under /live (the next character is "-", not "/"), so
// a twin cookie scoped to /live-ws carries the same value there. Neither has
// a Domain, so both stay host-only on 127.0.0.1; HttpOnly keeps them from
// the page's own script and SameSite=Strict from every other site's
// requests.
func sessionCookies(value string) []*http.Cookie {
	mk := func(path string) *http.Cookie {
		return &http.Cookie{
			Name:     CookieName,
			Value:    value,
			Path:     path,
			MaxAge:   int(SessionTTL / time.Second),
			HttpOnly: true,
			SameSite: http.SameSiteStrictMode,
		}
	}
	return []*http.Cookie{mk("/live"), mk("/live-ws")}
}
