package pairing

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

func park(t *testing.T, s *Store, origin string, cfg map[string]any, brand any) (Offer, error) {
	t.Helper()
	raw, _ := json.Marshal(cfg)
	var b json.RawMessage
	if brand != nil {
		b, _ = json.Marshal(brand)
	}
	return s.Park(Relay{BrowserID: "b1", Browser: "Chrome", Profile: "Work"}, wire.PairOffer{Config: raw, Brand: b, Origin: origin})
}

func TestParkValidates(t *testing.T) {
	s := NewStore(nil, nil)
	defer s.Close()
	good := map[string]any{"transport": "sse-http", "serverUrl": "https://app.example/", "token": "t"}
	for _, tc := range []struct {
		name   string
		origin string
		cfg    map[string]any
		want   string
	}{
		{"ok", "https://app.example", good, ""},
		{"ws ok", "https://app.example", map[string]any{"transport": "websocket", "serverUrl": "wss://app.example/ws", "token": "t"}, ""},
		{"no transport", "https://app.example", map[string]any{"serverUrl": "https://a.example", "token": "t"}, "transport is missing"},
		{"bad transport", "https://app.example", map[string]any{"transport": "carrier-pigeon", "serverUrl": "https://a.example", "token": "t"}, "unknown transport"},
		{"relative url", "https://app.example", map[string]any{"transport": "sse-http", "serverUrl": "/x", "token": "t"}, "not an absolute URL"},
		{"javascript url", "https://app.example", map[string]any{"transport": "sse-http", "serverUrl": "javascript://x", "token": "t"}, "must be http(s)"},
		{"ws url for sse", "https://app.example", map[string]any{"transport": "sse-http", "serverUrl": "wss://a.example", "token": "t"}, "needs http(s)"},
		{"credentials in url", "https://app.example", map[string]any{"transport": "sse-http", "serverUrl": "https://u:p@a.example", "token": "t"}, "credentials"},
		{"no token", "https://app.example", map[string]any{"transport": "sse-http", "serverUrl": "https://a.example"}, "token is missing"},
		{"bad path", "https://app.example", map[string]any{"transport": "sse-http", "serverUrl": "https://a.example", "token": "t", "commandPath": "x"}, "must start with /"},
		{"extension origin", "chrome-extension://abc", good, "not a web origin"},
		{"empty origin", "", good, "not a web origin"},
		{"opaque origin", "null", good, "not a web origin"},
		{"plain http page", "http://app.example", good, "must be https"},
		{"plain http on this machine", "http://127.0.0.1:8080", map[string]any{"transport": "sse-http", "serverUrl": "http://127.0.0.1:9000", "token": "t"}, ""},
		{"plain http on localhost", "http://localhost:3000", good, ""},
		{"origin with a path", "https://app.example/connect", good, "not a bare origin"},
		{"origin with credentials", "https://u@app.example", good, "not a bare origin"},
		{"plain http backend", "https://app.example", map[string]any{"transport": "sse-http", "serverUrl": "http://api.example", "token": "t"}, "must use https"},
		{"plain ws backend", "https://app.example", map[string]any{"transport": "websocket", "serverUrl": "ws://api.example/ws", "token": "t"}, "must use wss"},
		{"plain ws backend on this machine", "https://app.example", map[string]any{"transport": "websocket", "serverUrl": "ws://[::1]:9000/ws", "token": "t"}, ""},
		{"backend that only looks local", "https://app.example", map[string]any{"transport": "websocket", "serverUrl": "ws://127.0.0.1.evil.example/ws", "token": "t"}, "must use wss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := park(t, s, tc.origin, tc.cfg, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.ID == "" || o.Expires.Sub(o.Received) != TTL {
					t.Fatalf("offer %+v", o)
				}
				return
			}
			if !errors.Is(err, ErrBadOffer) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLatestOfferPerOriginAndNoTokenInList(t *testing.T) {
	var mu sync.Mutex
	changes := 0
	s := NewStore(nil, func() { mu.Lock(); changes++; mu.Unlock() })
	defer s.Close()
	cfg := map[string]any{"transport": "sse-http", "serverUrl": "https://app.example", "token": "secret-1"}
	first, _ := park(t, s, "https://app.example", cfg, map[string]string{"name": "CRM"})
	cfg["token"] = "secret-2"
	second, _ := park(t, s, "https://APP.example", cfg, map[string]string{"name": "CRM"})
	park(t, s, "https://other.example", cfg, nil)
	list := s.List()
	if len(list) != 2 {
		t.Fatalf("%d offers, want one per origin", len(list))
	}
	for _, o := range list {
		if o.Config.Token != "" {
			t.Fatal("List exposes a token")
		}
		if o.ID == first.ID {
			t.Fatal("the older offer from the same origin survived")
		}
	}
	if _, err := s.Take(first.ID); !errors.Is(err, ErrNoOffer) {
		t.Fatalf("replaced offer still takeable: %v", err)
	}
	got, err := s.Take(second.ID)
	if err != nil || got.Config.Token != "secret-2" {
		t.Fatalf("Take = %+v, %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if changes < 4 {
		t.Fatalf("%d change notifications", changes)
	}
}

func TestDenyLeavesNoTrace(t *testing.T) {
	s := NewStore(nil, nil)
	defer s.Close()
	o, _ := park(t, s, "https://app.example", map[string]any{"transport": "websocket", "serverUrl": "wss://a.example", "token": "t"}, nil)
	if err := s.Deny(o.ID); err != nil {
		t.Fatal(err)
	}
	if len(s.List()) != 0 {
		t.Fatal("denied offer listed")
	}
	if _, err := s.Take(o.ID); !errors.Is(err, ErrNoOffer) {
		t.Fatal("denied offer can still be approved")
	}
}

func TestOffersExpire(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := NewStore(clock, nil)
	defer s.Close()
	o, _ := park(t, s, "https://app.example", map[string]any{"transport": "websocket", "serverUrl": "wss://a.example", "token": "t"}, nil)
	mu.Lock()
	now = now.Add(TTL - time.Second)
	mu.Unlock()
	if len(s.List()) != 1 {
		t.Fatal("offer expired early")
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if len(s.List()) != 0 {
		t.Fatal("offer outlived its ten minutes")
	}
	if _, err := s.Take(o.ID); !errors.Is(err, ErrNoOffer) {
		t.Fatal("expired offer approved")
	}
}

func TestExpiryNotifies(t *testing.T) {
	fired := make(chan struct{}, 4)
	s := NewStore(nil, func() { fired <- struct{}{} })
	defer s.Close()
	park(t, s, "https://app.example", map[string]any{"transport": "websocket", "serverUrl": "wss://a.example", "token": "t"}, nil)
	<-fired // parked
	s.mu.Lock()
	for _, o := range s.byOrigin {
		o.Expires = time.Now().Add(10 * time.Millisecond)
	}
	s.scheduleLocked()
	s.mu.Unlock()
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("no notification when the offer expired")
	}
	if len(s.List()) != 0 {
		t.Fatal("offer still listed")
	}
}

func TestBrandIsPlainShortText(t *testing.T) {
	for in, want := range map[string]string{
		"Example CRM":                     "Example CRM",
		"  Spaced\n\tout  ":               "Spaced out",
		"Bank\u202e evil":                 "Bank evil",
		"Zero\u200bwidth":                 "Zerowidth",
		strings.Repeat("x", 100):          strings.Repeat("x", 47) + "…",
		"https://bank.example — verified": "https://bank.example — verified",
	} {
		raw, _ := json.Marshal(map[string]string{"name": in})
		if got := brandName(raw); got != want {
			t.Errorf("brandName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := brandName(json.RawMessage(`"not an object"`)); got != "" {
		t.Errorf("non-object brand gave %q", got)
	}
}

// fakeClock is a settable clock for the rate limits and expiry.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func offerFrom(s *Store, browserID, origin string) (Offer, error) {
	raw, _ := json.Marshal(map[string]any{"transport": "websocket", "serverUrl": "wss://api.example/ws", "token": "t"})
	return s.Park(Relay{BrowserID: browserID}, wire.PairOffer{Config: raw, Origin: origin})
}

// The attack: a page (or a fake browser) parks offer after offer, each of
// which opens a window in front of the person. Only MaxParked ever wait,
// and a full store never drops a waiting offer to make room.
func TestAtMostAHandfulOfOffersWait(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(clock.Now, nil)
	defer s.Close()
	var first []Offer
	parked := 0
	for i := range 300 {
		// A browser and an origin each: only the cap can stop them. (300 s
		// in all, within the offers' TTL.)
		clock.Advance(time.Second)
		o, err := offerFrom(s, fmt.Sprintf("b%d", i), fmt.Sprintf("https://page-%d.example", i))
		if err == nil {
			parked++
			first = append(first, o)
			continue
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "at most 5") {
			t.Fatalf("offer %d: %v", i, err)
		}
	}
	if parked != MaxParked || len(s.List()) != MaxParked {
		t.Fatalf("%d offers parked, %d listed; want %d", parked, len(s.List()), MaxParked)
	}
	for i, o := range s.List() {
		if o.ID != first[i].ID {
			t.Fatalf("waiting offer %d was displaced", i)
		}
	}
	// A waiting page may still replace its own offer; after a decision a
	// new page fits again.
	if _, err := offerFrom(s, "b0", first[0].Origin); err != nil {
		t.Fatalf("replacing a waiting offer in a full store: %v", err)
	}
	if err := s.Deny(first[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := offerFrom(s, "b1000", "https://late.example"); err != nil {
		t.Fatalf("after a decision: %v", err)
	}
}

func TestOfferRateLimitPerOrigin(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(clock.Now, nil)
	defer s.Close()
	for i := range OriginRate {
		if _, err := offerFrom(s, fmt.Sprintf("b%d", i), "https://app.example"); err != nil {
			t.Fatalf("offer %d: %v", i, err)
		}
		clock.Advance(time.Second)
	}
	// Another browser, the same page: the origin is what is limited.
	_, err := offerFrom(s, "b-other", "https://app.example")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "https://app.example already made 3 offers") {
		t.Fatalf("offer %d from one origin: %v", OriginRate+1, err)
	}
	if _, err := offerFrom(s, "b-other", "https://other.example"); err != nil {
		t.Fatalf("another origin: %v", err)
	}
	clock.Advance(RateWindow - time.Duration(OriginRate)*time.Second)
	if _, err := offerFrom(s, "b-other", "https://app.example"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestOfferRateLimitPerBrowser(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(clock.Now, nil)
	defer s.Close()
	for i := range BrowserRate {
		o, err := offerFrom(s, "b1", fmt.Sprintf("https://page-%d.example", i))
		if err != nil {
			t.Fatalf("offer %d: %v", i, err)
		}
		s.Deny(o.ID) // keep the cap out of the way
	}
	_, err := offerFrom(s, "b1", "https://one-more.example")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "browser b1 already relayed 6 offers") {
		t.Fatalf("offer %d from one browser: %v", BrowserRate+1, err)
	}
	if _, err := offerFrom(s, "b2", "https://one-more.example"); err != nil {
		t.Fatalf("another browser: %v", err)
	}
	clock.Advance(RateWindow)
	if _, err := offerFrom(s, "b1", "https://later.example"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byBrowserRate) != 1 || len(s.byOriginRate) != 1 {
		t.Fatalf("rate maps not pruned: %d browsers, %d origins", len(s.byBrowserRate), len(s.byOriginRate))
	}
}

// The attack: while the person reads a waiting offer, the same page swaps
// it for one with the attacker's backend, and Allow approves that one.
func TestShownOfferIsNeverReplaced(t *testing.T) {
	clock := newFakeClock()
	s := NewStore(clock.Now, nil)
	defer s.Close()
	cfg := map[string]any{"transport": "websocket", "serverUrl": "wss://api.example/ws", "token": "t"}
	shown, err := park(t, s, "https://app.example", cfg, map[string]string{"name": "CRM"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetShown(shown.ID, true); err != nil {
		t.Fatal(err)
	}
	if l := s.List(); len(l) != 1 || !l[0].Shown {
		t.Fatalf("list %+v", l)
	}
	cfg["serverUrl"] = "wss://attacker.example/ws"
	_, err = park(t, s, "https://app.example", cfg, map[string]string{"name": "CRM"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "on screen") {
		t.Fatalf("replacing a shown offer: %v", err)
	}
	got, err := s.Take(shown.ID)
	if err != nil || got.ServerURL != "wss://api.example/ws" {
		t.Fatalf("Take = %+v, %v", got, err)
	}

	// Once the window is gone, the latest offer from the page wins again.
	first, _ := park(t, s, "https://app.example", cfg, nil)
	s.SetShown(first.ID, true)
	s.SetShown(first.ID, false)
	clock.Advance(RateWindow)
	second, err := park(t, s, "https://app.example", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := s.List(); len(l) != 1 || l[0].ID != second.ID {
		t.Fatalf("list %+v, want only the newer offer", l)
	}
	if err := s.SetShown("no-such-offer", true); !errors.Is(err, ErrNoOffer) {
		t.Fatalf("SetShown of an unknown offer: %v", err)
	}
}

// Hosts are kept in ASCII: a look-alike Unicode host is shown as the
// punycode it is, never as the name it imitates.
func TestHostsAreKeptInPunycode(t *testing.T) {
	s := NewStore(nil, nil)
	defer s.Close()
	cfg := map[string]any{"transport": "websocket", "serverUrl": "wss://аpi.bank.example/ws", "token": "t"} // Cyrillic а
	o, err := park(t, s, "https://bаnk.example", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Origin != "https://xn--bnk-6cd.example" {
		t.Errorf("origin = %q", o.Origin)
	}
	if o.ServerURL != "wss://xn--pi-6kc.bank.example/ws" {
		t.Errorf("serverUrl = %q", o.ServerURL)
	}
	if _, err := park(t, s, "https://-bad-.example", cfg, nil); !errors.Is(err, ErrBadOffer) {
		t.Errorf("an invalid host name: %v", err)
	}
}

func TestOfferNamesItsRelay(t *testing.T) {
	s := NewStore(nil, nil)
	defer s.Close()
	raw, _ := json.Marshal(map[string]any{"transport": "websocket", "serverUrl": "wss://api.example/ws", "token": "t"})
	o, err := s.Park(Relay{BrowserID: "b7", Browser: "Chrome", Profile: "Work\u202e\n" + strings.Repeat("x", 80)}, wire.PairOffer{Config: raw, Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	if o.BrowserID != "b7" || o.Browser != "Chrome" || !strings.HasPrefix(o.Profile, "Work xxx") || len([]rune(o.Profile)) != 48 {
		t.Fatalf("relay %q %q %q", o.BrowserID, o.Browser, o.Profile)
	}
}
