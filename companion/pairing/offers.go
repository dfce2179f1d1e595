// Package pairing owns pair-offers from hosted products' pages: it validates
// them, parks at most a handful (the latest per page origin) until the
// person approves or denies one, rate-limits each origin and each browser
// that relays offers, and expires offers after ten minutes. Nothing here
// applies an offer; approval hands it to the operator only through Take.
package pairing

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/net/idna"

	"github.com/reinshq/reins/companion/wire"
)

// TTL is how long an offer waits for the person.
const TTL = 10 * time.Minute

// Limits on offers. Each parked offer opens a window in front of the
// person, so a page (or a flood of pages) must not be able to bury them in
// windows until one Allow is clicked out of fatigue.
const (
	// MaxParked is how many offers wait at once, from every page together.
	// A full store refuses offers from new origins; it never drops a
	// waiting one to make room.
	MaxParked = 5
	// RateWindow is the window of the rate limits below.
	RateWindow = time.Minute
	// OriginRate is how many offers one page origin may park per
	// RateWindow (a replacement counts).
	OriginRate = 3
	// BrowserRate is how many offers one browser profile may relay per
	// RateWindow, whatever their origins.
	BrowserRate = 6
)

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

// Relay is the browser profile that relayed an offer, as it introduced
// itself to the companion.
type Relay struct {
	BrowserID string
	Browser   string // product name ("Chrome", "Firefox")
	Profile   string // the label the person gave the profile, if any
}

// Offer is a parked pair-offer. Origin is the page's real origin as the
// browser reported it, its host in ASCII (punycode); Brand is untrusted
// page text.
type Offer struct {
	ID        string    `json:"id"`
	Origin    string    `json:"origin"`
	Brand     string    `json:"brand"`
	BrowserID string    `json:"browserId"`
	Browser   string    `json:"browser,omitempty"`
	Profile   string    `json:"profile,omitempty"`
	Shown     bool      `json:"shown,omitempty"` // an approval window shows it now
	Config    Config    `json:"-"`
	Transport string    `json:"transport"`
	ServerURL string    `json:"serverUrl"`
	Target    string    `json:"target,omitempty"`
	Received  time.Time `json:"received"`
	Expires   time.Time `json:"expires"`
}

// Errors.
var (
	ErrNoOffer  error = &wire.Error{Code: wire.CodeNoSuchOffer, Message: "no such pairing offer (it may have expired, been denied, or been replaced by a newer offer from the same page)"}
	ErrBadOffer       = errors.New("invalid pairing offer")
	// ErrRefused is a valid offer that the limits turn away: too many
	// waiting, too many from one origin or browser, or one from the same
	// origin on screen.
	ErrRefused = errors.New("pairing offer refused")
)

// Store parks offers, one per page origin, at most MaxParked.
type Store struct {
	now      func() time.Time
	onChange func()

	mu       sync.Mutex
	byOrigin map[string]*Offer
	timer    *time.Timer
	// Times of the offers parked within the last RateWindow, by origin and
	// by browser id; keys whose times all passed are pruned.
	byOriginRate  map[string][]time.Time
	byBrowserRate map[string][]time.Time
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
	return &Store{now: now, onChange: onChange, byOrigin: map[string]*Offer{},
		byOriginRate: map[string][]time.Time{}, byBrowserRate: map[string][]time.Time{}}
}

// Park validates an offer that a browser relayed and keeps it as the latest
// one for its origin, within the limits: at most MaxParked waiting, OriginRate
// per origin and BrowserRate per browser in RateWindow, and never in place
// of an offer from the same origin that an approval window shows.
func (s *Store) Park(from Relay, p wire.PairOffer) (Offer, error) {
	origin, err := normalizeOrigin(p.Origin)
	if err != nil {
		return Offer{}, fmt.Errorf("%w: %w", ErrBadOffer, err)
	}
	var cfg Config
	if err := json.Unmarshal(p.Config, &cfg); err != nil {
		return Offer{}, fmt.Errorf("%w: config is not an object: %w", ErrBadOffer, err)
	}
	if err := cfg.validate(); err != nil {
		return Offer{}, fmt.Errorf("%w: %w", ErrBadOffer, err)
	}
	brand := brandName(p.Brand)
	if brand == "" {
		if u, err := url.Parse(cfg.ServerURL); err == nil {
			brand = u.Hostname()
		}
	}
	now := s.now()
	o := &Offer{
		ID: newID(), Origin: origin, Brand: brand, BrowserID: from.BrowserID,
		Browser: plainText(from.Browser, 48), Profile: plainText(from.Profile, 48), Config: cfg,
		Transport: cfg.Transport, ServerURL: cfg.ServerURL, Target: cfg.Target,
		Received: now, Expires: now.Add(TTL),
	}
	s.mu.Lock()
	s.expireLocked()
	if err := s.admitLocked(o, now); err != nil {
		s.mu.Unlock()
		return Offer{}, err
	}
	s.byOrigin[origin] = o
	s.byOriginRate[origin] = append(s.byOriginRate[origin], now)
	s.byBrowserRate[from.BrowserID] = append(s.byBrowserRate[from.BrowserID], now)
	s.scheduleLocked()
	parked := *o // SetShown may change o once the lock is gone
	s.mu.Unlock()
	s.onChange()
	return parked, nil
}

// admitLocked applies the limits to an offer about to be parked.
func (s *Store) admitLocked(o *Offer, now time.Time) error {
	pruneRates(s.byOriginRate, now)
	pruneRates(s.byBrowserRate, now)
	if n := len(s.byOriginRate[o.Origin]); n >= OriginRate {
		return fmt.Errorf("%w: %s already made %d offers in the last %s (at most %d)", ErrRefused, o.Origin, n, RateWindow, OriginRate)
	}
	if n := len(s.byBrowserRate[o.BrowserID]); n >= BrowserRate {
		return fmt.Errorf("%w: browser %s already relayed %d offers in the last %s (at most %d)", ErrRefused, o.BrowserID, n, RateWindow, BrowserRate)
	}
	if old := s.byOrigin[o.Origin]; old != nil {
		// The person may be reading the waiting offer right now; swapping
		// it under their eyes would make Allow approve what they did not read.
		if old.Shown {
			return fmt.Errorf("%w: the offer from %s is on screen; a newer one must wait until the person decides", ErrRefused, o.Origin)
		}
		return nil // replaces the older offer from the same page
	}
	if len(s.byOrigin) >= MaxParked {
		return fmt.Errorf("%w: %d offers are already waiting (at most %d)", ErrRefused, len(s.byOrigin), MaxParked)
	}
	return nil
}

func pruneRates(m map[string][]time.Time, now time.Time) {
	for k, ts := range m {
		i := 0
		for i < len(ts) && now.Sub(ts[i]) >= RateWindow {
			i++
		}
		if i == len(ts) {
			delete(m, k)
		} else if i > 0 {
			m[k] = ts[i:]
		}
	}
}

// SetShown records whether an approval window shows the offer: while it
// does, no newer offer from the same origin replaces it.
func (s *Store) SetShown(id string, shown bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	for _, o := range s.byOrigin {
		if o.ID == id {
			o.Shown = shown
			return nil
		}
	}
	return ErrNoOffer
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
	s.byOriginRate = map[string][]time.Time{}
	s.byBrowserRate = map[string][]time.Time{}
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
	host, err := asciiHost(u.Host)
	if err != nil {
		return fmt.Errorf("serverUrl %q: %w", c.ServerURL, err)
	}
	// The backend gets the token and then drives the browser: plaintext
	// transports only to this machine.
	if (u.Scheme == "http" || u.Scheme == "ws") && !isLoopback(host) {
		return fmt.Errorf("serverUrl %q must use %s (plain %s only for this machine)", c.ServerURL, secureScheme[u.Scheme], u.Scheme)
	}
	u.Host = host
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

var secureScheme = map[string]string{"http": "https", "ws": "wss"}

// hostNames maps host names as a browser looks them up (lowercase, IDNA
// mapping, bidi rule) to ASCII; like browsers, it lets underscores pass.
var hostNames = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.StrictDomainName(false))

// normalizeOrigin checks the page origin the browser reported: https, or
// http on this machine, and nothing but scheme, host and port. The host is
// returned in ASCII, so a look-alike Unicode host shows as the punycode it is.
func normalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("origin %q is not a web origin", o)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("origin %q is not a bare origin", o)
	}
	host, err := asciiHost(u.Host)
	if err != nil {
		return "", fmt.Errorf("origin %q: %w", o, err)
	}
	if u.Scheme == "http" && !isLoopback(host) {
		return "", fmt.Errorf("origin %q must be https (plain http only for this machine)", o)
	}
	return u.Scheme + "://" + host, nil
}

// asciiHost lowercases host[:port] and converts an internationalised name
// to punycode, refusing what is not a valid host name.
func asciiHost(hostport string) (string, error) {
	host, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.To4() == nil {
			host = "[" + ip.String() + "]"
		} else {
			host = ip.String()
		}
	} else {
		a, err := hostNames.ToASCII(host)
		if err != nil || a == "" {
			return "", fmt.Errorf("host %q is not a valid host name", host)
		}
		host = a
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

// isLoopback reports whether an ASCII host[:port] names this machine.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
	return plainText(b.Name, 48)
}

// plainText keeps s as one line of printable text of at most max runes:
// no controls, no bidi overrides, no zero-width characters.
func plainText(s string, max int) string {
	var sb strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			r = ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\u200b', r == '\u200c', r == '\u200d', r == '\ufeff':
			continue
		}
		sb.WriteRune(r)
	}
	text := strings.Join(strings.Fields(sb.String()), " ")
	if r := []rune(text); len(r) > max {
		text = string(r[:max-1]) + "…"
	}
	return text
}

func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
