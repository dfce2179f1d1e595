package tokens

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// Keyring kinds accepted by Open, matching the --keyring flag.
const (
	KeyringOS   = "os"
	KeyringFile = "file"
)

// TokenPrefix starts every agent token, so a leaked one is recognisable to
// secret scanners and to the person reading a config file.
const TokenPrefix = "reins_"

var (
	// ErrInvalidName reports a token name or backend id outside the allowed
	// characters or length.
	ErrInvalidName error = &wire.Error{Code: wire.CodeInvalidName, Message: "invalid name"}
	// ErrNameInUse reports an Issue for a name that already has a token.
	ErrNameInUse error = &wire.Error{Code: wire.CodeNameInUse, Message: "name already in use"}
)

var (
	nameRE      = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	backendIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
)

// ValidName reports whether name may name an agent token: 1 to 64 characters
// of A-Z, a-z, 0-9, '.', '_' and '-'.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %q: a token name is 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'", ErrInvalidName, name)
	}
	return nil
}

func validBackendID(id string) error {
	if !backendIDRE.MatchString(id) {
		return fmt.Errorf("%w %q: a backend id is 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and '-'", ErrInvalidName, id)
	}
	return nil
}

// Op says what happened to a secret.
type Op string

const (
	OpAdded    Op = "added"    // issued, or a backend paired
	OpRemoved  Op = "removed"  // revoked, or a backend forgotten
	OpReplaced Op = "replaced" // a backend re-paired: same id, new secret
)

// Event tells OnChange listeners which secret changed. It never carries the
// secret.
type Event struct {
	Kind Kind
	Name string
	Op   Op
	// ID is the agent token's id (Info.ID): the new token's for OpAdded, the
	// one that ended for OpRemoved. An agent token is never "replaced": a
	// new token under an old name is a new principal, so it comes as
	// OpRemoved for the old id and OpAdded for the new. Empty for backends.
	ID string
}

type cached struct {
	id      string
	name    string
	created time.Time
	digest  [sha256.Size]byte
}

type key struct {
	kind Kind
	name string
}

// newTokenID returns a fresh random agent token id.
func newTokenID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate token id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Manager issues, verifies and revokes agent tokens and keeps backend
// secrets. It is safe for concurrent use, and several Managers (in one
// process or several) may share a data dir.
type Manager struct {
	dir   string
	store Store
	isKC  bool

	// opMu serialises mutations and reloads in this process; lockDir does the
	// same across processes.
	opMu sync.Mutex

	mu       sync.RWMutex
	agents   []cached     // verified against on every request
	known    map[key]Info // last index seen, to turn reloads into events
	watchers []watcher
	nextW    int

	// compare is subtle.ConstantTimeCompare; a field so tests can prove
	// Verify visits every token whichever one matches.
	compare func(a, b []byte) int
}

type watcher struct {
	id int
	fn func(Event)
}

// Open opens the token store in dataDir. kind is KeyringOS ("os", also "")
// for the OS keychain, which is probed first so a missing or locked keychain
// fails here with advice rather than at the first agent request, or
// KeyringFile ("file") for a 0600 file in dataDir.
func Open(dataDir, kind string) (*Manager, error) {
	var s Store
	switch kind {
	case KeyringOS, "":
		s = NewKeychainStore(SystemKeyring(), 0)
		if err := Check(s); err != nil {
			return nil, asUnavailable(err)
		}
	case KeyringFile:
		fs, err := NewFileStore(dataDir)
		if err != nil {
			return nil, err
		}
		s = fs
	default:
		return nil, fmt.Errorf("unknown keyring %q: use %q or %q", kind, KeyringOS, KeyringFile)
	}
	return New(dataDir, s)
}

// New opens a Manager over an explicit Store, creating dataDir 0700 and
// loading every agent token's digest from s.
func New(dataDir string, s Store) (*Manager, error) {
	if err := ensureDir(dataDir); err != nil {
		return nil, err
	}
	_, isKC := s.(*KeychainStore)
	m := &Manager{dir: dataDir, store: s, isKC: isKC, known: map[key]Info{}, compare: subtle.ConstantTimeCompare}
	if err := m.Reload(); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckKeychain probes the store by writing, reading and deleting a secret.
// A keychain failure says to start with --keyring file.
func (m *Manager) CheckKeychain() error {
	err := Check(m.store)
	if m.isKC {
		return asUnavailable(err)
	}
	return err
}

func asUnavailable(err error) error {
	if err == nil || errors.Is(err, ErrKeychainUnavailable) {
		return err
	}
	return &UnavailableError{Cause: err}
}

// NewToken returns a fresh agent token: TokenPrefix and 32 random bytes in
// unpadded base64url.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Issue creates a token for a new agent name and returns it. The token is
// shown once; only its digest stays in memory. The token gets a new id, so
// re-issuing a revoked name makes a new principal that does not inherit the
// old token's tabs.
func (m *Manager) Issue(name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	id, err := newTokenID()
	if err != nil {
		return "", err
	}
	events, err := m.mutate(func(idx []Info) ([]Info, map[string][sha256.Size]byte, error) {
		if find(idx, KindAgent, name) >= 0 {
			return nil, nil, fmt.Errorf("%w: an agent token named %q exists; revoke it first (reins token revoke %s)", ErrNameInUse, name, name)
		}
		if err := m.store.Set(account(KindAgent, name), tok); err != nil {
			return nil, nil, fmt.Errorf("store token %q: %w", name, err)
		}
		idx = append(idx, Info{Name: name, Kind: KindAgent, ID: id, Created: time.Now().UTC()})
		return idx, map[string][sha256.Size]byte{name: sha256.Sum256([]byte(tok))}, nil
	}, func() { _ = m.store.Delete(account(KindAgent, name)) }, nil)
	if err != nil {
		return "", err
	}
	m.emit(events)
	return tok, nil
}

// Revoke removes an agent's token. The index entry goes first, so the token
// stops verifying even if the keychain then fails to delete the secret.
func (m *Manager) Revoke(name string) error {
	return m.remove(KindAgent, name)
}

func (m *Manager) remove(kind Kind, name string) error {
	var deleteErr error
	events, err := m.mutate(func(idx []Info) ([]Info, map[string][sha256.Size]byte, error) {
		i := find(idx, kind, name)
		if i < 0 {
			if kind == KindAgent {
				return nil, nil, fmt.Errorf("no agent token named %q (reins token list shows them): %w", name, ErrNotFound)
			}
			return nil, nil, fmt.Errorf("no paired backend %q: %w", name, ErrNotFound)
		}
		return append(idx[:i:i], idx[i+1:]...), nil, nil
	}, nil, func() {
		// Still under the lock, so a concurrent Issue of the same name in
		// another process cannot have its new secret deleted here.
		if err := m.store.Delete(account(kind, name)); err != nil && !errors.Is(err, ErrNotFound) {
			deleteErr = fmt.Errorf("%s %q is removed, but its secret could not be deleted: %w", kind, name, err)
		}
	})
	if err != nil {
		return err
	}
	m.emit(events)
	return deleteErr
}

// List returns the agent tokens' names and creation times, sorted by name.
// It reads the index on disk, so it sees changes by other processes.
func (m *Manager) List() ([]Info, error) { return m.list(KindAgent) }

// Backends returns the paired backends' ids and pairing times.
func (m *Manager) Backends() ([]Info, error) { return m.list(KindBackend) }

func (m *Manager) list(kind Kind) ([]Info, error) {
	idx, err := readIndex(m.dir)
	if err != nil {
		return nil, err
	}
	out := []Info{}
	for _, in := range idx {
		if in.Kind == kind {
			out = append(out, in)
		}
	}
	return out, nil
}

// Verify reports which agent a bearer token belongs to: the token's stable
// id (the agent's identity) and its name (a label). It compares the token's
// digest with every cached digest in constant time and never stops early, so
// timing reveals neither whether nor which token matched.
func (m *Manager) Verify(token string) (id, name string, ok bool) {
	d := sha256.Sum256([]byte(token))
	m.mu.RLock()
	defer m.mu.RUnlock()
	found, at := 0, 0
	for i := range m.agents {
		eq := m.compare(d[:], m.agents[i].digest[:])
		at = subtle.ConstantTimeSelect(eq, i, at)
		found |= eq
	}
	if found != 1 {
		return "", "", false
	}
	return m.agents[at].id, m.agents[at].name, true
}

// SetBackend stores a paired backend's token, replacing an earlier one.
func (m *Manager) SetBackend(id, token string) error {
	if err := validBackendID(id); err != nil {
		return err
	}
	if token == "" {
		return fmt.Errorf("backend %q: empty token", id)
	}
	events, err := m.mutate(func(idx []Info) ([]Info, map[string][sha256.Size]byte, error) {
		if err := m.store.Set(account(KindBackend, id), token); err != nil {
			return nil, nil, fmt.Errorf("store backend %q: %w", id, err)
		}
		now := time.Now().UTC()
		if i := find(idx, KindBackend, id); i >= 0 {
			idx[i].Created = now
		} else {
			idx = append(idx, Info{Name: id, Kind: KindBackend, Created: now})
		}
		return idx, nil, nil
	}, nil, nil)
	if err != nil {
		return err
	}
	m.emit(events)
	return nil
}

// Backend returns a paired backend's token. It reads the store each time:
// it is needed once per connection, not per request.
func (m *Manager) Backend(id string) (string, error) {
	if err := validBackendID(id); err != nil {
		return "", err
	}
	idx, err := readIndex(m.dir)
	if err != nil {
		return "", err
	}
	if find(idx, KindBackend, id) < 0 {
		return "", fmt.Errorf("no paired backend %q: %w", id, ErrNotFound)
	}
	tok, err := m.store.Get(account(KindBackend, id))
	if err != nil {
		return "", fmt.Errorf("backend %q: %w", id, err)
	}
	return tok, nil
}

// DeleteBackend forgets a paired backend's token.
func (m *Manager) DeleteBackend(id string) error {
	if err := validBackendID(id); err != nil {
		return err
	}
	return m.remove(KindBackend, id)
}

// OnChange registers fn to run after every change this Manager makes or
// finds on Reload. fn runs synchronously on the changing goroutine with no
// lock held, so it may call the Manager; it must not block for long. The
// returned func unregisters it.
func (m *Manager) OnChange(fn func(Event)) (cancel func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextW++
	id := m.nextW
	m.watchers = append(m.watchers, watcher{id: id, fn: fn})
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for i, w := range m.watchers {
			if w.id == id {
				m.watchers = append(m.watchers[:i:i], m.watchers[i+1:]...)
				return
			}
		}
	}
}

func (m *Manager) emit(events []Event) {
	if len(events) == 0 {
		return
	}
	m.mu.RLock()
	ws := append([]watcher(nil), m.watchers...)
	m.mu.RUnlock()
	for _, e := range events {
		for _, w := range ws {
			w.fn(e)
		}
	}
}

// Reload rereads the index (and the secrets of tokens it has not seen) so
// this Manager picks up changes another process made. Tokens removed from
// the index stop verifying even if reading the store fails. Agent entries
// without an id (an index from before ids, or one an older Reins rewrote)
// get one here, written back to the index.
func (m *Manager) Reload() error {
	m.opMu.Lock()
	idx, err := readIndex(m.dir)
	if err == nil && missingIDs(idx) {
		idx, err = m.assignIDs()
	}
	var events []Event
	if err == nil {
		events, err = m.refresh(idx, nil)
	}
	m.opMu.Unlock()
	m.emit(events)
	return err
}

func missingIDs(idx []Info) bool {
	for _, in := range idx {
		if in.Kind == KindAgent && in.ID == "" {
			return true
		}
	}
	return false
}

// assignIDs gives every agent entry of the on-disk index that has no id a
// fresh one and writes the index back, under the cross-process lock so two
// Managers migrating at once agree on one id per token. Caller holds opMu.
func (m *Manager) assignIDs() ([]Info, error) {
	unlock, err := lockDir(m.dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	idx, err := readIndex(m.dir)
	if err != nil || !missingIDs(idx) {
		return idx, err
	}
	for i := range idx {
		if idx[i].Kind == KindAgent && idx[i].ID == "" {
			if idx[i].ID, err = newTokenID(); err != nil {
				return nil, err
			}
		}
	}
	if err := writeIndex(m.dir, idx); err != nil {
		return nil, fmt.Errorf("giving agent tokens their ids: %w", err)
	}
	return idx, nil
}

// mutate runs change on the current on-disk index under both locks, writes
// the result, and refreshes the cache. undo runs if the index write fails,
// to take back a secret change already made; after runs once the index is
// written, still under the locks.
func (m *Manager) mutate(change func([]Info) ([]Info, map[string][sha256.Size]byte, error), undo, after func()) ([]Event, error) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	unlock, err := lockDir(m.dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	idx, err := readIndex(m.dir)
	if err != nil {
		return nil, err
	}
	next, fresh, err := change(idx)
	if err != nil {
		return nil, err
	}
	if err := writeIndex(m.dir, next); err != nil {
		if undo != nil {
			undo()
		}
		return nil, err
	}
	if after != nil {
		after()
	}
	// The change is durable now; a failure to load some other process's
	// token must not report it as failed. The next Reload reports that.
	events, _ := m.refresh(next, fresh)
	return events, nil
}

// refresh makes the cache match idx. Digests already cached for the same
// (name, id, created) are kept, since a token never changes after it is
// issued; fresh supplies digests just computed; the rest are read from the
// store. An agent entry without an id is not loaded: every token must be
// its own principal. Caller holds opMu.
func (m *Manager) refresh(idx []Info, fresh map[string][sha256.Size]byte) ([]Event, error) {
	m.mu.RLock()
	old := make(map[string]cached, len(m.agents))
	for _, c := range m.agents {
		old[c.name] = c
	}
	oldKnown := m.known
	m.mu.RUnlock()

	var firstErr error
	agents := make([]cached, 0, len(idx))
	known := make(map[key]Info, len(idx))
	for _, in := range idx {
		if in.Kind == KindAgent && in.ID == "" {
			continue
		}
		known[key{in.Kind, in.Name}] = in
		if in.Kind != KindAgent {
			continue
		}
		if c, ok := old[in.Name]; ok && c.id == in.ID && c.created.Equal(in.Created) {
			agents = append(agents, c)
			continue
		}
		if d, ok := fresh[in.Name]; ok {
			agents = append(agents, cached{id: in.ID, name: in.Name, created: in.Created, digest: d})
			continue
		}
		if firstErr != nil {
			continue // the store is failing; don't wait out its timeout per token
		}
		secret, err := m.store.Get(account(KindAgent, in.Name))
		if errors.Is(err, ErrNotFound) {
			continue // revoked while we read, or lost: either way not usable
		}
		if err != nil {
			firstErr = fmt.Errorf("load agent token %q: %w", in.Name, err)
			continue
		}
		agents = append(agents, cached{id: in.ID, name: in.Name, created: in.Created, digest: sha256.Sum256([]byte(secret))})
	}

	var events []Event
	for k, in := range known {
		o, ok := oldKnown[k]
		switch {
		case !ok:
			events = append(events, Event{Kind: k.kind, Name: k.name, Op: OpAdded, ID: in.ID})
		case o.ID != in.ID:
			// Another token under the same name: the old principal ends.
			events = append(events, Event{Kind: k.kind, Name: k.name, Op: OpRemoved, ID: o.ID})
			events = append(events, Event{Kind: k.kind, Name: k.name, Op: OpAdded, ID: in.ID})
		case !o.Created.Equal(in.Created):
			events = append(events, Event{Kind: k.kind, Name: k.name, Op: OpReplaced, ID: in.ID})
		}
	}
	for k, o := range oldKnown {
		if _, ok := known[k]; !ok {
			events = append(events, Event{Kind: k.kind, Name: k.name, Op: OpRemoved, ID: o.ID})
		}
	}
	sortEvents(events)

	m.mu.Lock()
	m.agents = agents
	m.known = known
	m.mu.Unlock()
	return events, firstErr
}

func find(idx []Info, kind Kind, name string) int {
	for i, in := range idx {
		if in.Kind == kind && in.Name == name {
			return i
		}
	}
	return -1
}
