package pairing

import (
	"encoding/json"
	"errors"
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
	return s.Park("b1", wire.PairOffer{Config: raw, Brand: b, Origin: origin})
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
