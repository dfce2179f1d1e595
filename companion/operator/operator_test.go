package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type memSecrets struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memSecrets) SetBackend(id, tok string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = tok
	return nil
}
func (s *memSecrets) Backend(id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[id]
	if !ok {
		return "", errors.New("not found")
	}
	return t, nil
}
func (s *memSecrets) DeleteBackend(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}
func (s *memSecrets) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[id]
	return ok
}

// fakeRunner answers "echo" with its args, blocks "block" until ctx ends,
// and fails everything while paused.
type fakeRunner struct {
	mu      sync.Mutex
	agents  []string
	paused  bool
	started chan string

	// "hold" runs until release closes, counting how many hold at once.
	held             chan struct{}
	release          chan struct{}
	holding, maxHeld int
}

func (f *fakeRunner) Catalog() []tools.Info { return nil }
func (f *fakeRunner) NewSession(principal, label string) *tools.Session {
	f.mu.Lock()
	f.agents = append(f.agents, label)
	f.mu.Unlock()
	return &tools.Session{Principal: principal, Label: label}
}
func (f *fakeRunner) Call(ctx context.Context, s *tools.Session, tool string, args json.RawMessage) *tools.Result {
	f.mu.Lock()
	paused := f.paused
	f.mu.Unlock()
	if paused {
		return &tools.Result{IsError: true, Code: wire.CodePaused, Content: []tools.Content{{Type: "text", Text: "[paused] automation is paused"}}}
	}
	switch tool {
	case "echo":
		return &tools.Result{Content: []tools.Content{{Type: "text", Text: s.Principal + " " + s.Label + ":" + string(args)}}}
	case "hold":
		f.mu.Lock()
		f.holding++
		f.maxHeld = max(f.maxHeld, f.holding)
		f.mu.Unlock()
		f.held <- struct{}{}
		select {
		case <-f.release:
		case <-ctx.Done():
		}
		f.mu.Lock()
		f.holding--
		f.mu.Unlock()
		return &tools.Result{Content: []tools.Content{{Type: "text", Text: "held"}}}
	case "block":
		if f.started != nil {
			f.started <- tool
		}
		<-ctx.Done()
		return &tools.Result{IsError: true, Code: wire.CodeTimeout, Content: []tools.Content{{Type: "text", Text: "[timeout] stopped"}}}
	}
	return &tools.Result{IsError: true, Code: wire.CodeUnknownTool, Content: []tools.Content{{Type: "text", Text: "Unknown tool: " + tool}}}
}

type fixture struct {
	m       *operator.Manager
	secrets *memSecrets
	runner  *fakeRunner
	changed chan struct{}
	dir     string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{secrets: &memSecrets{m: map[string]string{}}, runner: &fakeRunner{started: make(chan string, 4)}, changed: make(chan struct{}, 1), dir: t.TempDir()}
	m, err := operator.New(operator.Options{
		DataDir: f.dir, Secrets: f.secrets, Runner: f.runner,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnChange: func() {
			select {
			case f.changed <- struct{}{}:
			default:
			}
		},
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	t.Cleanup(m.Close)
	return f
}

func (f *fixture) waitState(t *testing.T, id string, what string, cond func(operator.State) bool) operator.State {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		st, err := f.m.Get(id)
		if err == nil && cond(st) {
			return st
		}
		select {
		case <-f.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for backend %s: %s (state %+v, err %v)", id, what, st, err)
		}
	}
}

func offer(t *testing.T, cfg map[string]any, brand string) pairing.Offer {
	t.Helper()
	s := pairing.NewStore(nil, nil)
	defer s.Close()
	raw, _ := json.Marshal(cfg)
	var b json.RawMessage
	if brand != "" {
		b, _ = json.Marshal(map[string]string{"name": brand})
	}
	o, err := s.Park(pairing.Relay{BrowserID: "b1"}, wire.PairOffer{Config: raw, Brand: b, Origin: "https://crm.example"})
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Take(o.ID)
	if err != nil {
		t.Fatal(err)
	}
	return full
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestWebSocketBackendRunsCommands(t *testing.T) {
	be := operatortest.New("tok-1", "chan-7")
	defer be.Close()
	f := newFixture(t)
	st, err := f.m.Approve(offer(t, map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "tok-1", "target": "chan-7"}, "Example CRM"))
	if err != nil {
		t.Fatal(err)
	}
	// The page chose the brand, so it is only the label: the backend runs
	// as its own principal.
	if st.Agent != "Example CRM" || st.Principal != "backend:"+st.ID || operator.PrincipalID(st.ID) != st.Principal {
		t.Fatalf("agent %q, principal %q (backend %s)", st.Agent, st.Principal, st.ID)
	}
	if _, err := be.WaitConnected(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	f.waitState(t, st.ID, "connected", func(s operator.State) bool { return s.Connected })
	if a := be.AuthFrames(); len(a) != 1 || a[0]["token"] != "tok-1" || a[0]["target"] != "chan-7" {
		t.Fatalf("auth frames %v", a)
	}
	id, err := be.Send("echo", map[string]int{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := be.Await(ctx10(t), id)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Content()
	if r.Error != "" || len(c) != 1 || c[0]["text"] != "backend:"+st.ID+` Example CRM:{"x":1}` {
		t.Fatalf("result %+v", r)
	}
	id, _ = be.Send("nope", nil)
	r, _ = be.Await(ctx10(t), id)
	if r.Error != "Unknown tool: nope" {
		t.Fatalf("unknown tool result %+v", r)
	}
}

func TestSSEBackendWithTarget(t *testing.T) {
	be := operatortest.New("tok-2", "room-42")
	defer be.Close()
	f := newFixture(t)
	st, err := f.m.Approve(offer(t, map[string]any{"transport": "sse-http", "serverUrl": be.URL(), "token": "tok-2",
		"commandPath": "/t/{target}/events", "resultPath": "/t/{target}/result", "target": "room-42"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.Agent, "127.0.0.1") {
		t.Fatalf("agent without brand should be the server host, got %q", st.Agent)
	}
	if _, err := be.WaitConnected(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	id, _ := be.Send("echo", map[string]string{"a": "b"})
	r, err := be.Await(ctx10(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Content(); len(c) != 1 || !strings.HasSuffix(c[0]["text"].(string), `{"a":"b"}`) {
		t.Fatalf("result %+v", r)
	}
}

func TestRevocationDropsToken(t *testing.T) {
	for _, transport := range []string{"websocket", "sse-http"} {
		t.Run(transport, func(t *testing.T) {
			be := operatortest.New("tok", "")
			defer be.Close()
			f := newFixture(t)
			url := be.URL()
			if transport == "websocket" {
				url += "/ws"
			}
			st, err := f.m.Approve(offer(t, map[string]any{"transport": transport, "serverUrl": url, "token": "tok"}, "CRM"))
			if err != nil {
				t.Fatal(err)
			}
			be.WaitConnected(10 * time.Second)
			be.Revoke()
			got := f.waitState(t, st.ID, "revoked", func(s operator.State) bool { return s.Revoked && !s.Connected })
			if f.secrets.has(st.ID) {
				t.Fatal("revoked backend's token is still stored")
			}
			if got.LastError == "" {
				t.Fatal("no reason recorded")
			}
			// A restart does not reconnect a revoked backend.
			m2, err := operator.New(operator.Options{DataDir: f.dir, Secrets: f.secrets, Runner: f.runner, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			m2.Start()
			defer m2.Close()
			if s, _ := m2.Get(st.ID); !s.Revoked {
				t.Fatalf("revocation not persisted: %+v", s)
			}
		})
	}
}

func TestSSEDisconnectEventStops(t *testing.T) {
	be := operatortest.New("tok", "")
	defer be.Close()
	f := newFixture(t)
	st, _ := f.m.Approve(offer(t, map[string]any{"transport": "sse-http", "serverUrl": be.URL(), "token": "tok"}, "CRM"))
	be.WaitConnected(10 * time.Second)
	if be.Disconnect() != 1 {
		t.Fatal("no stream to disconnect")
	}
	f.waitState(t, st.ID, "stopped", func(s operator.State) bool { return s.Stopped && !s.Connected })
	if f.secrets.has(st.ID) {
		t.Fatal("credentials kept after disconnect")
	}
}

func TestNetworkDeathMidCommandFailsCleanlyAndReconnects(t *testing.T) {
	for _, transport := range []string{"websocket", "sse-http"} {
		t.Run(transport, func(t *testing.T) {
			be := operatortest.New("tok", "")
			defer be.Close()
			f := newFixture(t)
			url := be.URL()
			if transport == "websocket" {
				url += "/ws"
			}
			st, _ := f.m.Approve(offer(t, map[string]any{"transport": transport, "serverUrl": url, "token": "tok"}, "CRM"))
			be.WaitConnected(10 * time.Second)
			id, _ := be.Send("block", nil)
			<-f.runner.started
			be.DropNetwork()
			f.waitState(t, st.ID, "command finished", func(s operator.State) bool { return s.InFlight == 0 })
			// The backend comes back; the failed command's result is delivered, not lost.
			if _, err := be.WaitConnected(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			r, err := be.Await(ctx10(t), id)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.Error, "connection to the backend was lost") {
				t.Fatalf("result %+v", r)
			}
			f.waitState(t, st.ID, "reconnected", func(s operator.State) bool { return s.Connected })
		})
	}
}

func TestPausedCommandsFail(t *testing.T) {
	be := operatortest.New("tok", "")
	defer be.Close()
	f := newFixture(t)
	f.runner.paused = true
	f.m.Approve(offer(t, map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "tok"}, "CRM"))
	be.WaitConnected(10 * time.Second)
	id, _ := be.Send("echo", nil)
	r, _ := be.Await(ctx10(t), id)
	if !strings.Contains(r.Error, "paused") {
		t.Fatalf("result %+v", r)
	}
}

func TestForgetDeletesTokenAndRecord(t *testing.T) {
	be := operatortest.New("tok", "")
	defer be.Close()
	f := newFixture(t)
	st, _ := f.m.Approve(offer(t, map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "tok"}, "CRM"))
	be.WaitConnected(10 * time.Second)
	if err := f.m.Forget(st.ID); err != nil {
		t.Fatal(err)
	}
	if f.secrets.has(st.ID) || len(f.m.List()) != 0 {
		t.Fatal("forgotten backend left a trace")
	}
	if err := f.m.Forget(st.ID); !errors.Is(err, operator.ErrNoBackend) {
		t.Fatalf("second forget: %v", err)
	}
}

// The attack: a paired backend sends commands as fast as it can, each one
// a tool call in the person's browser. At most operator.MaxRunning run at
// once, operator.MaxWaiting more wait, and the rest are answered at once
// with the code busy: never run, never dropped in silence.
func TestBackendConcurrencyIsCapped(t *testing.T) {
	for _, transport := range []string{"websocket", "sse-http"} {
		t.Run(transport, func(t *testing.T) {
			be := operatortest.New("tok", "")
			defer be.Close()
			f := newFixture(t)
			f.runner.held = make(chan struct{}, 64)
			f.runner.release = make(chan struct{})
			url := be.URL()
			if transport == "websocket" {
				url += "/ws"
			}
			st, err := f.m.Approve(offer(t, map[string]any{"transport": transport, "serverUrl": url, "token": "tok"}, "CRM"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := be.WaitConnected(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			const extra = 5
			var ids []string
			for range operator.MaxRunning + operator.MaxWaiting + extra {
				id, err := be.Send("hold", nil)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			ctx := ctx10(t)
			results := map[string]operatortest.Result{}
			collect := func(want func() bool) {
				t.Helper()
				for !want() {
					select {
					case r := <-be.Results():
						results[r.CommandID] = r
					case <-ctx.Done():
						t.Fatalf("waiting for results: have %d", len(results))
					}
				}
			}
			// Commands are read in order: the ones past the limits are refused.
			refused := ids[operator.MaxRunning+operator.MaxWaiting:]
			collect(func() bool {
				for _, id := range refused {
					if _, ok := results[id]; !ok {
						return false
					}
				}
				return true
			})
			for _, id := range refused {
				if r := results[id]; !strings.HasPrefix(r.Error, "[busy] ") || r.Result != nil {
					t.Fatalf("command past the limit: %+v", r)
				}
			}
			for range operator.MaxRunning {
				select {
				case <-f.runner.held:
				case <-ctx.Done():
					t.Fatal("the first commands never ran")
				}
			}
			f.waitState(t, st.ID, "every accepted command in flight", func(s operator.State) bool {
				return s.InFlight == operator.MaxRunning+operator.MaxWaiting
			})
			if len(results) != extra {
				t.Fatalf("%d results before any command finished, want only the %d refusals", len(results), extra)
			}
			close(f.runner.release)
			collect(func() bool { return len(results) == len(ids) })
			for _, id := range ids[:operator.MaxRunning+operator.MaxWaiting] {
				if r := results[id]; r.Error != "" {
					t.Fatalf("accepted command %s: %+v", id, r)
				}
			}
			f.runner.mu.Lock()
			maxHeld := f.runner.maxHeld
			f.runner.mu.Unlock()
			if maxHeld != operator.MaxRunning {
				t.Fatalf("%d commands ran at once, want at most (and, here, exactly) %d", maxHeld, operator.MaxRunning)
			}
			f.waitState(t, st.ID, "nothing in flight", func(s operator.State) bool { return s.InFlight == 0 })
		})
	}
}
