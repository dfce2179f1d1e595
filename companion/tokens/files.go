package tokens

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/atomicfile"
)

// File names inside the data dir.
const (
	IndexFile   = "tokens.json"  // names, kinds and creation times; no secrets
	SecretsFile = "secrets.json" // secrets, only with --keyring file
	lockFile    = "tokens.lock"
)

// ensureDir creates the data dir 0700: it holds the admin socket and, with
// --keyring file, the secrets themselves.
func ensureDir(dir string) error {
	if dir == "" {
		return errors.New("data dir is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	return nil
}

// writeFileAtomic replaces path with data, mode 0600, so a reader in another
// process sees the old file or the new one and never half of either.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Kind tells agent tokens from backend secrets.
type Kind string

const (
	KindAgent   Kind = "agent"
	KindBackend Kind = "backend"
)

// Info describes one secret without revealing it.
type Info struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// ID is an agent token's stable random id, assigned when the token is
	// issued (or, for an index written before ids existed, when a Manager
	// first loads it). The agent is the principal "agent:<ID>"; its name is
	// only a label. Re-issuing a name makes a new token and so a new ID.
	// Backends have none: their Name is their id.
	ID      string    `json:"id,omitempty"`
	Created time.Time `json:"created"`
}

type indexDoc struct {
	Version int    `json:"version"`
	Entries []Info `json:"entries"`
}

func readIndex(dir string) ([]Info, error) {
	b, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read token index: %w", err)
	}
	var doc indexDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read token index %s: %w", filepath.Join(dir, IndexFile), err)
	}
	return doc.Entries, nil
}

func writeIndex(dir string, entries []Info) error {
	sorted := append([]Info(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Kind != sorted[j].Kind {
			return sorted[i].Kind < sorted[j].Kind
		}
		return sorted[i].Name < sorted[j].Name
	})
	if sorted == nil {
		sorted = []Info{}
	}
	b, err := json.MarshalIndent(indexDoc{Version: 1, Entries: sorted}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode token index: %w", err)
	}
	return writeFileAtomic(filepath.Join(dir, IndexFile), append(b, '\n'))
}

// FileStore keeps secrets in a 0600 JSON file, for machines with no keychain.
// The person opts in with --keyring file; nothing falls back to it.
type FileStore struct {
	path string
	mu   sync.Mutex
}

// NewFileStore keeps secrets in dataDir/secrets.json, creating dataDir 0700.
func NewFileStore(dataDir string) (*FileStore, error) {
	if err := ensureDir(dataDir); err != nil {
		return nil, err
	}
	return &FileStore{path: filepath.Join(dataDir, SecretsFile)}, nil
}

type secretsDoc struct {
	Version int               `json:"version"`
	Secrets map[string]string `json:"secrets"`
}

func (f *FileStore) load() (map[string]string, error) {
	st, err := os.Stat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("secrets file: %w", err)
	}
	// Like ssh with its keys: a secrets file others can read is refused, not
	// used, so a bad copy or restore does not go unnoticed.
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secrets file %s is open to other users (mode %04o); run chmod 600 on it: %w", f.path, st.Mode().Perm(), fs.ErrPermission)
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("secrets file: %w", err)
	}
	var doc secretsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", f.path, err)
	}
	if doc.Secrets == nil {
		doc.Secrets = map[string]string{}
	}
	return doc.Secrets, nil
}

func (f *FileStore) save(secrets map[string]string) error {
	b, err := json.MarshalIndent(secretsDoc{Version: 1, Secrets: secrets}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode secrets file: %w", err)
	}
	return writeFileAtomic(f.path, append(b, '\n'))
}

func (f *FileStore) Set(account, secret string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.load()
	if err != nil {
		return err
	}
	s[account] = secret
	return f.save(s)
}

func (f *FileStore) Get(account string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.load()
	if err != nil {
		return "", err
	}
	v, ok := s[account]
	if !ok {
		return "", fmt.Errorf("secrets file: %w", ErrNotFound)
	}
	return v, nil
}

func (f *FileStore) Delete(account string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.load()
	if err != nil {
		return err
	}
	if _, ok := s[account]; !ok {
		return fmt.Errorf("secrets file: %w", ErrNotFound)
	}
	delete(s, account)
	return f.save(s)
}

// sortEvents orders events by kind and name, keeping the order of one
// name's events (an agent's OpRemoved before its successor's OpAdded).
func sortEvents(ev []Event) {
	sort.SliceStable(ev, func(i, j int) bool {
		if ev[i].Kind != ev[j].Kind {
			return ev[i].Kind < ev[j].Kind
		}
		return ev[i].Name < ev[j].Name
	})
}
