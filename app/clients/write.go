package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/reinshq/reins/companion/atomicfile"
)

// MaxBackups is how many backups of one config file Reins keeps; older
// ones are deleted when a new one is made.
const MaxBackups = 5

// backupInfix marks Reins' backups: FILE.reins-backup-20060102T150405Z.
const backupInfix = ".reins-backup-"

// MaxConfigSize caps the config files Reins reads. Claude Code's
// ~/.claude.json holds its history and can grow large; nothing a person
// edits by hand comes near this.
const MaxConfigSize = 16 << 20

var (
	// ErrMalformed: the file is not what its client reads; Reins never
	// overwrites it.
	ErrMalformed = errors.New("malformed config file")
	// ErrReadOnly: the file (or its folder) may not be written.
	ErrReadOnly = errors.New("config file is read-only")
	// ErrTooLarge: the file is over MaxConfigSize.
	ErrTooLarge = errors.New("config file too large")
)

// FileError is a failure tied to one config file: the UI offers to show it.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// State is what Reins knows of one client on this machine.
type State struct {
	Client    Client
	Installed bool
	Path      string // its config file
	// Connected: Reins' entry is in the config.
	Connected bool
	// Entry is the entry as the file has it (nil when not connected).
	Entry any
	// Problem is why the file cannot be read (malformed, too large); the
	// client cannot be connected until the person fixes it.
	Problem error
}

// Status reads one client's state. It never writes.
func Status(e Env, c Client) State {
	st := State{Client: c, Installed: c.Installed(e), Path: c.ConfigPath(e)}
	data, err := readConfig(st.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st
	case err != nil:
		st.Problem = err
		return st
	}
	doc, err := parseDoc(data, c.JSONC)
	if err != nil {
		st.Problem = &FileError{st.Path, fmt.Errorf("%w: %w", ErrMalformed, err)}
		return st
	}
	v, ok, err := getMember(&doc, c.Path, EntryName)
	if err != nil {
		st.Problem = &FileError{st.Path, fmt.Errorf("%w: %w", ErrMalformed, err)}
		return st
	}
	st.Connected, st.Entry = ok, v
	return st
}

// Detect reads every client's state.
func Detect(e Env) []State {
	out := make([]State, 0, len(All))
	for _, c := range All {
		out = append(out, Status(e, c))
	}
	return out
}

// Result says what a Connect or Disconnect did.
type Result struct {
	Path   string
	Backup string // "" when there was no file to back up
	// Via names the client's own command when it made the change.
	Via     string
	Changed bool
}

// Connect writes Reins' entry for s into c's config, replacing an older
// Reins entry and nothing else.
func Connect(ctx context.Context, e Env, c Client, s Server) (Result, error) {
	if c.cli != "" {
		if bin, ok := e.OnPath(c.cli); ok && e.Run != nil {
			return connectCLI(ctx, e, c, bin, s)
		}
	}
	return edit(e, c, func(doc *docEdit) error {
		return setMember(&doc.v, doc.data, c.Path, EntryName, c.entry(s))
	})
}

// Disconnect removes Reins' entry from c's config. A config without one is
// left untouched.
func Disconnect(ctx context.Context, e Env, c Client) (Result, error) {
	if c.cli != "" {
		if bin, ok := e.OnPath(c.cli); ok && e.Run != nil {
			return disconnectCLI(ctx, e, c, bin)
		}
	}
	return edit(e, c, func(doc *docEdit) error {
		removed, err := removeMember(&doc.v, c.Path, EntryName)
		if err == nil && !removed {
			return errUnchanged
		}
		return err
	})
}

var errUnchanged = errors.New("unchanged")

func readConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &FileError{path, err}
	}
	if !st.Mode().IsRegular() {
		return nil, &FileError{path, fmt.Errorf("%w: not a regular file", ErrMalformed)}
	}
	if st.Size() > MaxConfigSize {
		return nil, &FileError{path, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, st.Size(), MaxConfigSize)}
	}
	data := make([]byte, st.Size())
	if _, err := readFull(f, data); err != nil {
		return nil, &FileError{path, err}
	}
	return data, nil
}

func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

type docEdit struct {
	data []byte
	v    hujson.Value
}

// edit runs change on the parsed config and, when it changed something,
// backs the old file up and replaces it atomically.
func edit(e Env, c Client, change func(*docEdit) error) (Result, error) {
	path := c.ConfigPath(e)
	// A config kept elsewhere and linked here (dotfiles) is edited where
	// it lives; replacing the link with a file would cut it off.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	res := Result{Path: path}
	data, err := readConfig(path)
	existed := err == nil
	var mode fs.FileMode = 0o600
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return res, err
	default:
		st, err := os.Stat(path)
		if err != nil {
			return res, &FileError{path, err}
		}
		mode = st.Mode().Perm()
	}
	v, err := parseDoc(data, c.JSONC)
	if err != nil {
		return res, &FileError{path, fmt.Errorf("%w: %w", ErrMalformed, err)}
	}
	doc := &docEdit{data: data, v: v}
	if err := change(doc); errors.Is(err, errUnchanged) {
		return res, nil
	} else if err != nil {
		return res, &FileError{path, fmt.Errorf("%w: %w", ErrMalformed, err)}
	}
	if existed {
		if err := writable(path); err != nil {
			return res, &FileError{path, fmt.Errorf("%w: %w", ErrReadOnly, err)}
		}
	}
	out := doc.v.Pack()
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	before := data
	if len(bytes.TrimSpace(before)) == 0 {
		before = []byte("{}")
	}
	if err := onlyEntryChanged(before, out, c.Path, EntryName); err != nil {
		return res, &FileError{path, err}
	}
	if !c.JSONC && !json.Valid(out) {
		return res, &FileError{path, errors.New("the edit would not be valid JSON")}
	}
	if c.Transport == HTTP {
		// The entry carries a bearer token: only its owner may read it.
		mode &^= 0o077
	}
	if existed {
		now := time.Now
		if e.Now != nil {
			now = e.Now
		}
		b, err := backup(path, data, now())
		if err != nil {
			return res, &FileError{path, fmt.Errorf("backing up: %w", err)}
		}
		res.Backup = b
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return res, &FileError{path, err}
	}
	if err := atomicfile.Write(path, out, mode); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			err = fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return res, &FileError{path, err}
	}
	res.Changed = true
	return res, nil
}

// backup copies the old file to FILE.reins-backup-TIME (0600: it may hold
// tokens) and keeps the newest MaxBackups.
func backup(path string, data []byte, now time.Time) (string, error) {
	// Fixed width, so names sort by time; nanoseconds, so two edits in
	// one second never share a backup.
	name := path + backupInfix + now.UTC().Format("20060102T150405.000000000Z")
	if err := atomicfile.Write(name, data, 0o600); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(globEscape(path) + backupInfix + "*")
	sort.Strings(old) // the timestamp sorts oldest first
	for len(old) > MaxBackups {
		os.Remove(old[0])
		old = old[1:]
	}
	return name, nil
}

func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
