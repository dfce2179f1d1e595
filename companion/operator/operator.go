// Package operator owns paired hosted backends: it persists their configs
// (never their tokens, which live in the keychain), keeps one client per
// backend connected over SSE+HTTP or WebSocket as the Browser Operator
// Protocol describes, and runs each command through the tool engine as the
// principal "backend:<id>", labelled with the backend's brand. The brand is
// chosen by the page that offered the pairing, so it only ever names.
package operator

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/atomicfile"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// Secrets keeps backend tokens; the token store's keychain implements it.
type Secrets interface {
	SetBackend(id, token string) error
	Backend(id string) (string, error)
	DeleteBackend(id string) error
}

// Record is a paired backend as persisted in backends.json.
type Record struct {
	ID          string    `json:"id"`
	Brand       string    `json:"brand"`
	Origin      string    `json:"origin"`
	Transport   string    `json:"transport"`
	ServerURL   string    `json:"serverUrl"`
	CommandPath string    `json:"commandPath,omitempty"`
	ResultPath  string    `json:"resultPath,omitempty"`
	Target      string    `json:"target,omitempty"`
	Created     time.Time `json:"created"`
	Revoked     bool      `json:"revoked,omitempty"`
	// Stopped is set when the backend told us to disconnect.
	Stopped bool `json:"stopped,omitempty"`
}

// State is a backend with its live connection state.
type State struct {
	Record
	// Principal is who the backend's commands run as (PrincipalID); Agent
	// is its label (AgentName).
	Principal string    `json:"principal"`
	Agent     string    `json:"agent"`
	Connected bool      `json:"connected"`
	LastError string    `json:"lastError,omitempty"`
	LastSeen  time.Time `json:"lastSeen,omitempty"`
	InFlight  int       `json:"inFlight"`
}

// Options configure a Manager.
type Options struct {
	DataDir  string
	Secrets  Secrets
	Runner   tools.Runner
	Logger   *slog.Logger
	OnChange func()
	// Backoff bounds reconnect delays (default 1 s to 30 s).
	MinBackoff, MaxBackoff time.Duration
}

// Manager runs every paired backend.
type Manager struct {
	opts Options
	log  *slog.Logger
	path string

	mu      sync.Mutex
	clients map[string]*client
	closed  bool
}

// ErrNoBackend is returned for an unknown backend id.
var ErrNoBackend error = &wire.Error{Code: wire.CodeNoSuchBackend, Message: "no such backend"}

// New loads persisted backends; Start connects them.
func New(opts Options) (*Manager, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.OnChange == nil {
		opts.OnChange = func() {}
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	m := &Manager{opts: opts, log: opts.Logger, path: filepath.Join(opts.DataDir, "backends.json"), clients: map[string]*client{}}
	recs, err := m.load()
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		m.clients[r.ID] = newClient(m, r)
	}
	return m, nil
}

// Start connects every backend that is neither revoked nor stopped.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.clients {
		if !c.rec.Revoked && !c.rec.Stopped {
			c.start()
		}
	}
}

// Approve stores an approved offer's token in the keychain, persists its
// config and connects. It is the only way a backend comes to exist.
func (m *Manager) Approve(o pairing.Offer) (State, error) {
	rec := Record{
		ID: newID(), Brand: o.Brand, Origin: o.Origin, Transport: o.Config.Transport,
		ServerURL: o.Config.ServerURL, CommandPath: o.Config.CommandPath, ResultPath: o.Config.ResultPath,
		Target: o.Config.Target, Created: time.Now().UTC(),
	}
	if err := m.opts.Secrets.SetBackend(rec.ID, o.Config.Token); err != nil {
		return State{}, fmt.Errorf("storing the backend token: %w", err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.opts.Secrets.DeleteBackend(rec.ID)
		return State{}, errors.New("companion is shutting down")
	}
	c := newClient(m, rec)
	m.clients[rec.ID] = c
	err := m.saveLocked()
	if err == nil {
		c.start()
	}
	m.mu.Unlock()
	if err != nil {
		m.mu.Lock()
		delete(m.clients, rec.ID)
		m.mu.Unlock()
		m.opts.Secrets.DeleteBackend(rec.ID)
		return State{}, err
	}
	m.log.Info("backend paired", "backend", rec.ID, "brand", rec.Brand, "origin", rec.Origin, "transport", rec.Transport)
	m.opts.OnChange()
	return c.state(), nil
}

// List returns every paired backend with its state, oldest first.
func (m *Manager) List() []State {
	m.mu.Lock()
	out := make([]State, 0, len(m.clients))
	for _, c := range m.clients {
		out = append(out, c.state())
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out
}

// Get returns one backend's state.
func (m *Manager) Get(id string) (State, error) {
	m.mu.Lock()
	c := m.clients[id]
	m.mu.Unlock()
	if c == nil {
		return State{}, fmt.Errorf("%w %q", ErrNoBackend, id)
	}
	return c.state(), nil
}

// Forget disconnects a backend, deletes its keychain entry and its record.
func (m *Manager) Forget(id string) error {
	m.mu.Lock()
	c := m.clients[id]
	if c == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w %q", ErrNoBackend, id)
	}
	delete(m.clients, id)
	err := m.saveLocked()
	m.mu.Unlock()
	c.stop()
	if derr := m.opts.Secrets.DeleteBackend(id); derr != nil {
		m.log.Warn("deleting backend token", "backend", id, "err", derr)
	}
	m.log.Info("backend forgotten", "backend", id)
	m.opts.OnChange()
	return err
}

// Close disconnects every backend; records and tokens stay.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	cs := make([]*client, 0, len(m.clients))
	for _, c := range m.clients {
		cs = append(cs, c)
	}
	m.mu.Unlock()
	for _, c := range cs {
		c.stop()
	}
}

// revoke is called by a client whose backend refused its token or told it
// to disconnect: the token leaves the keychain and the client stops.
func (m *Manager) revoke(c *client, revoked bool, why string) {
	if err := m.opts.Secrets.DeleteBackend(c.rec.ID); err != nil {
		m.log.Warn("deleting backend token", "backend", c.rec.ID, "err", err)
	}
	m.mu.Lock()
	c.mu.Lock()
	if revoked {
		c.rec.Revoked = true
	} else {
		c.rec.Stopped = true
	}
	c.connected = false
	c.lastErr = why
	c.mu.Unlock()
	if err := m.saveLocked(); err != nil {
		m.log.Warn("saving backends", "err", err)
	}
	m.mu.Unlock()
	m.log.Info("backend stopped", "backend", c.rec.ID, "revoked", revoked, "reason", why)
	m.opts.OnChange()
}

func (m *Manager) load() ([]Record, error) {
	data, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading backends: %w", err)
	}
	var doc struct {
		Backends []Record `json:"backends"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("reading %s: %w", m.path, err)
	}
	return doc.Backends, nil
}

func (m *Manager) saveLocked() error {
	recs := make([]Record, 0, len(m.clients))
	for _, c := range m.clients {
		c.mu.Lock()
		recs = append(recs, c.rec)
		c.mu.Unlock()
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Created.Before(recs[j].Created) })
	data, err := json.MarshalIndent(map[string]any{"backends": recs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(m.path, data, 0o600); err != nil {
		return fmt.Errorf("saving backends: %w", err)
	}
	return nil
}

// PrincipalID is the principal a backend's commands run as. It owns the
// backend's tabs; the backend's brand never does.
func PrincipalID(id string) string { return "backend:" + id }

// AgentName is the label a backend's commands show under: its brand, or its
// server's host when the page gave none.
func AgentName(r Record) string {
	if r.Brand != "" {
		return r.Brand
	}
	if u, err := url.Parse(r.ServerURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "backend " + r.ID
}

func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// command is a Browser Operator command.
type command struct {
	ID   string          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// resultMsg is a Browser Operator result.
type resultMsg struct {
	CommandID string         `json:"commandId"`
	Result    *resultContent `json:"result,omitempty"`
	Error     string         `json:"error,omitempty"`
}

type resultContent struct {
	Content []tools.Content `json:"content"`
}

func toResult(id string, r *tools.Result) resultMsg {
	if r == nil {
		return resultMsg{CommandID: id, Error: "no result"}
	}
	if r.IsError {
		msg := ""
		for _, c := range r.Content {
			if c.Type == "text" {
				if msg != "" {
					msg += "\n"
				}
				msg += c.Text
			}
		}
		if msg == "" {
			msg = string(r.Code)
		}
		return resultMsg{CommandID: id, Error: msg}
	}
	content := r.Content
	if content == nil {
		content = []tools.Content{}
	}
	return resultMsg{CommandID: id, Result: &resultContent{Content: content}}
}
