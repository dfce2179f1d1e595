// Package pairing owns pair-offers from hosted products' pages: it validates
// and parks the latest offer per page origin until the person approves or
// denies it, and expires offers after ten minutes. Nothing here applies an
// offer; approval hands it to the operator only through Take.
package pairing

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/reinshq/reins/companion/wire"
)

// TTL is how long an offer waits for the person.
const TTL = 10 * time.Minute

// Transports of the Browser Operator Protocol.
const (
	TransportSSE       = "sse-http"
	TransportWebSocket = "websocket"
)

// Default SSE paths when the offer leaves them out.
const (
	DefaultCommandPath = "/browser/events"
	DefaultResultPath  = "/browser/result"
)

// Config is a backend connection config as the page offered it.
type Config struct {
	Transport   string `json:"transport"`
	ServerURL   string `json:"serverUrl"`
	Token       string `json:"token"`
	CommandPath string `json:"commandPath,omitempty"`
	ResultPath  string `json:"resultPath,omitempty"`
	Target      string `json:"target,omitempty"`
}

// Offer is a parked pair-offer. Origin is the page's real origin as the
// browser reported it; Brand is untrusted page text.
type Offer struct {
	ID        string    `json:"id"`
	Origin    string    `json:"origin"`
	Brand     string    `json:"brand"`
	BrowserID string    `json:"browserId"`
	Config    Config    `json:"-"`
	Transport string    `json:"transport"`
	ServerURL string    `json:"serverUrl"`
	Target    string    `json:"target,omitempty"`
	Received  time.Time `json:"received"`
	Expires   time.Time `json:"expires"`
}

// Errors.
var (
	ErrNoOffer  = errors.New("no such pairing offer (it may have expired, been denied, or been replaced by a newer offer from the same page)")
	ErrBadOffer = errors.New("invalid pairing offer")
)

// Store parks offers, one per page origin.
type Store struct {
	now      func() time.Time
	onChange func()

	mu       sync.Mutex
	byOrigin map[string]*Offer
	timer    *time.Timer
}

// NewStore returns an empty store. now defaults to time.Now; onChange is
// called (without locks) whenever the set of offers changes.
func NewStore(now func() time.Time, onChange func()) *Store {
	if now == nil {
		now = time.Now
	}
	if onChange == nil {
		onChange = func() {}
	}
	return &Store{now: now, onChange: onChange, byOrigin: map[string]*Offer{}}
}

// Park validates an offer from the extension and keeps it as the latest one
// for its origin.
func (s *Store) Park(browserID string, p wire.PairOffer) (Offer, error) {
	origin, err := normalizeOrigin(p.Origin)
	if err != nil {
		return Offer{}, fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	var cfg Config
	if err := json.Unmarshal(p.Config, &cfg); err != nil {
		return Offer{}, fmt.Errorf("%w: config is not an object: %v", ErrBadOffer, err)
	}
	if err := cfg.validate(); err != nil {
		return Offer{}, fmt.Errorf("%w: %v", ErrBadOffer, err)
	}
	brand := brandName(p.Brand)
	if brand == "" {
		if u, err := url.Parse(cfg.ServerURL); err == nil {
			brand = u.Hostname()
		}
	}
	now := s.now()
	o := &Offer{
		ID: newID(), Origin: origin, Brand: brand, BrowserID: browserID, Config: cfg,
		Transport: cfg.Transport, ServerURL: cfg.ServerURL, Target: cfg.Target,
		Received: now, Expires: now.Add(TTL),
	}
	s.mu.Lock()
	s.byOrigin[origin] = o
	s.scheduleLocked()
	s.mu.Unlock()
	s.onChange()
	return *o, nil
}

// List returns the waiting offers, oldest first, without tokens.
func (s *Store) List() []Offer {
	s.mu.Lock()
	s.expireLocked()
	out := make([]Offer, 0, len(s.byOrigin))
	for _, o := range s.byOrigin {
		c := *o
		c.Config.Token = ""
		out = append(out, c)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out
}

// Take removes an offer for approval and returns it with its token.
func (s *Store) Take(id string) (Offer, error) {
	s.mu.Lock()
	s.expireLocked()
	for origin, o := range s.byOrigin {
		if o.ID == id {
			delete(s.byOrigin, origin)
			s.mu.Unlock()
			s.onChange()
			return *o, nil
		}
	}
	s.mu.Unlock()
	return Offer{}, ErrNoOffer
}

// Deny drops an offer; nothing of it is kept.
func (s *Store) Deny(id string) error {
	o, err := s.Take(id)
	if err != nil {
		return err
	}
	o.Config.Token = ""
	return nil
}

// Close stops the expiry timer.
func (s *Store) Close() {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.byOrigin = map[string]*Offer{}
	s.mu.Unlock()
}

func (s *Store) expireLocked() bool {
	now := s.now()
	expired := false
	for origin, o := range s.byOrigin {
		if !now.Before(o.Expires) {
			delete(s.byOrigin, origin)
			expired = true
		}
	}
	return expired
}

// scheduleLocked arms one timer for the next expiry so that the UI hears of
// an expired offer without polling.
func (s *Store) scheduleLocked() {
	var next time.Time
	for _, o := range s.byOrigin {
		if next.IsZero() || o.Expires.Before(next) {
			next = o.Expires
		}
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if next.IsZero() {
		return
	}
	d := next.Sub(s.now())
	if d < 0 {
		d = 0
	}
	s.timer = time.AfterFunc(d, func() {
		s.mu.Lock()
		expired := s.expireLocked()
		s.scheduleLocked()
		s.mu.Unlock()
		if expired {
			s.onChange()
		}
	})
}

func (c *Config) validate() error {
	switch c.Transport {
	case TransportSSE, TransportWebSocket:
	case "":
		return errors.New("transport is missing (sse-http or websocket)")
	default:
		return fmt.Errorf("unknown transport %q (sse-http or websocket)", c.Transport)
	}
	u, err := url.Parse(c.ServerURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("serverUrl %q is not an absolute URL", c.ServerURL)
	}
	switch u.Scheme {
	case "https", "http":
	case "wss", "ws":
		if c.Transport != TransportWebSocket {
			return fmt.Errorf("serverUrl %q: %s needs http(s)", c.ServerURL, c.Transport)
		}
	default:
		return fmt.Errorf("serverUrl %q must be http(s) or ws(s)", c.ServerURL)
	}
	if u.User != nil {
		return errors.New("serverUrl must not carry credentials")
	}
	c.ServerURL = strings.TrimRight(u.String(), "/")
	if strings.TrimSpace(c.Token) == "" {
		return errors.New("token is missing")
	}
	if len(c.Token) > 4096 {
		return errors.New("token is longer than 4096 bytes")
	}
	if c.Transport == TransportSSE {
		if c.CommandPath == "" {
			c.CommandPath = DefaultCommandPath
		}
		if c.ResultPath == "" {
			c.ResultPath = DefaultResultPath
		}
		for _, p := range []string{c.CommandPath, c.ResultPath} {
			if !strings.HasPrefix(p, "/") {
				return fmt.Errorf("path %q must start with /", p)
			}
		}
	}
	if len(c.Target) > 256 {
		return errors.New("target is longer than 256 bytes")
	}
	return nil
}

func normalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("origin %q is not a web origin", o)
	}
	return u.Scheme + "://" + strings.ToLower(u.Host), nil
}

// brandName extracts brand.name as plain, short, printable text. It is the
// page's claim, never a trust signal.
func brandName(raw json.RawMessage) string {
	var b struct {
		Name string `json:"name"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &b) != nil {
		return ""
	}
	var sb strings.Builder
	for _, r := range b.Name {
		switch {
		case unicode.IsSpace(r):
			r = ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\u200b', r == '\u200c', r == '\u200d', r == '\ufeff':
			continue
		}
		sb.WriteRune(r)
	}
	name := strings.Join(strings.Fields(sb.String()), " ")
	if r := []rune(name); len(r) > 48 {
		name = string(r[:47]) + "…"
	}
	return name
}

func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
