// Package agentfiles owns each principal's folders in the data dir: an
// uploads folder the person fills with files an agent may put into a page,
// and a downloads folder where the files an agent's tabs download and the
// PDFs it saves land. A principal ("agent:<token id>", "backend:<id>") maps
// to one directory name that cannot climb out of the root, and every path
// an agent names is resolved, symlinks included, and refused unless it stays
// inside that principal's folder.
package agentfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Dir is the folder of the data dir that holds every principal's folders.
const Dir = "agents"

// The two folders of a principal.
const (
	Uploads   = "uploads"
	Downloads = "downloads"
)

// Sent is the folder of Uploads that keeps the bytes an agent uploaded,
// each file in a folder named after its content, so bytes never replace a
// file the person left under the same name, and new bytes under an old
// name make a new path (a browser ignores a file input given the same path
// again).
const Sent = "sent"

// MaxSent bounds the uploads Sent keeps; the oldest go first.
const MaxSent = 64

// incoming is where a browser Reins drives itself writes downloads before
// they move to their agent's downloads folder.
const incoming = ".incoming"

// MaxName bounds a directory or file name Reins makes (bytes).
const MaxName = 120

// ErrOutside is returned for a path that leaves the principal's folder.
var ErrOutside = errors.New("the path leaves the agent's folder")

// Root is the agents folder of one data dir.
type Root struct {
	dir string
}

// New returns the root under dataDir. Nothing is created until a folder is
// asked for.
func New(dataDir string) *Root { return &Root{dir: filepath.Join(dataDir, Dir)} }

// Path is the root folder itself.
func (r *Root) Path() string { return r.dir }

// SafeName maps a principal to its directory name: the letters, digits, '.',
// '_' and '-' of the principal, ':' as '-', and a hash of the whole when
// anything else had to go, so two principals never share a folder and no
// name is "..", hidden or empty.
func SafeName(principal string) string {
	var b strings.Builder
	changed := false
	for _, c := range principal {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteRune(c)
		case c == ':':
			b.WriteByte('-')
		case c == '.' && b.Len() > 0:
			b.WriteRune(c)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	name := b.String()
	if name == "" || len(name) > MaxName-17 || changed || strings.Trim(name, ".") == "" {
		sum := sha256.Sum256([]byte(principal))
		if len(name) > MaxName-17 {
			name = name[:MaxName-17]
		}
		name = strings.TrimRight(name, ".") + "-" + hex.EncodeToString(sum[:8])
	}
	return name
}

// Folder returns (and makes, 0700) the principal's folder kind (Uploads
// or Downloads).
func (r *Root) Folder(principal, kind string) (string, error) {
	if principal == "" {
		return "", errors.New("no principal")
	}
	if kind != Uploads && kind != Downloads {
		return "", fmt.Errorf("no folder kind %q", kind)
	}
	dir := filepath.Join(r.dir, SafeName(principal), kind)
	if err := mkdirPrivate(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// AgentDir returns (and makes) the principal's folder that holds both.
func (r *Root) AgentDir(principal string) (string, error) {
	if _, err := r.Folder(principal, Uploads); err != nil {
		return "", err
	}
	if _, err := r.Folder(principal, Downloads); err != nil {
		return "", err
	}
	return filepath.Join(r.dir, SafeName(principal)), nil
}

// Incoming returns (and makes) the folder a browser Reins launched itself
// downloads into before files move to their agent.
func (r *Root) Incoming() (string, error) {
	dir := filepath.Join(r.dir, incoming)
	if err := mkdirPrivate(dir); err != nil {
		return "", err
	}
	return dir, nil
}

func mkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making %s: %w", dir, err)
	}
	// MkdirAll leaves an existing folder's mode alone; these hold what
	// agents read and write, so nobody else may list them.
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restricting %s: %w", dir, err)
	}
	return nil
}

// Resolve returns the real path of rel inside the principal's folder kind.
// rel must be relative; it is cleaned, every symlink on the way is
// followed, and the result must still be inside the folder and be a
// regular file. Anything else fails, wrapping ErrOutside when the path
// escapes.
func (r *Root) Resolve(principal, kind, rel string) (string, os.FileInfo, error) {
	dir, err := r.Folder(principal, kind)
	if err != nil {
		return "", nil, err
	}
	if rel == "" || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) {
		return "", nil, fmt.Errorf("%q: give a path relative to the %s folder: %w", rel, kind, ErrOutside)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", nil, fmt.Errorf("%q: %w", rel, ErrOutside)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", nil, fmt.Errorf("resolving the %s folder: %w", kind, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(realDir, clean))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("no file %q in the %s folder: %w", rel, kind, os.ErrNotExist)
		}
		return "", nil, fmt.Errorf("resolving %q: %w", rel, err)
	}
	if !within(realDir, real) {
		return "", nil, fmt.Errorf("%q: %w", rel, ErrOutside)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, fmt.Errorf("reading %q: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%q is not a regular file", rel)
	}
	return real, fi, nil
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// CleanFileName makes a name an agent or a web server gave a file safe to
// create in a folder: its last path element, no control characters or
// separators, not hidden, at most MaxName bytes, never empty.
func CleanFileName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(`<>:"|?*`, c) {
			b.WriteByte('_')
			continue
		}
		b.WriteRune(c)
	}
	name = strings.TrimSpace(strings.TrimLeft(b.String(), ". "))
	if len(name) > MaxName {
		ext := filepath.Ext(name)
		if len(ext) > 16 {
			ext = ""
		}
		cut := MaxName - len(ext)
		for cut > 0 && (name[cut]&0xC0) == 0x80 {
			cut--
		}
		name = name[:cut] + ext
	}
	if name == "" {
		name = "file"
	}
	return name
}

// Write stores data as name in dir, replacing a file of that name. It
// writes a temporary file and renames it over the name, so a symlink
// planted under that name is replaced, never written through.
func Write(dir, name string, data []byte) (string, error) {
	return place(dir, name, true, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// Keep stores data as name under uploads' Sent folder and returns its
// path, dropping the oldest kept files past MaxSent.
func Keep(uploads, name string, data []byte) (string, error) {
	sent := filepath.Join(uploads, Sent)
	sum := sha256.Sum256(append([]byte(CleanFileName(name)+"\x00"), data...))
	dir := filepath.Join(sent, hex.EncodeToString(sum[:8]))
	if err := mkdirPrivate(dir); err != nil {
		return "", err
	}
	p, err := Write(dir, name, data)
	if err != nil {
		return "", err
	}
	now := time.Now()
	os.Chtimes(dir, now, now) //nolint:errcheck // only the pruning order
	prune(sent, MaxSent, filepath.Base(dir))
	return p, nil
}

// prune removes the oldest entries of dir past keep, never except.
func prune(dir string, keep int, except string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) <= keep {
		return
	}
	type aged struct {
		name string
		at   time.Time
	}
	list := make([]aged, 0, len(entries))
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && e.Name() != except {
			list = append(list, aged{e.Name(), fi.ModTime()})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].at.Before(list[j].at) })
	for _, a := range list[:max(len(list)-(keep-1), 0)] {
		os.RemoveAll(filepath.Join(dir, a.name))
	}
}

// Unique returns a name in dir like name that no file has yet
// ("report (2).pdf").
func Unique(dir, name string) string {
	name = CleanFileName(name)
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 1; ; i++ {
		cand := name
		if i > 1 {
			cand = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		if _, err := os.Lstat(filepath.Join(dir, cand)); errors.Is(err, os.ErrNotExist) {
			return cand
		}
	}
}

// Move moves the file at src into dir under a unique name like name and
// returns the new path. It copies when a rename cannot cross file systems.
func Move(src, dir, name string) (string, error) {
	fi, err := os.Lstat(src)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", src)
	}
	name = Unique(dir, name)
	dst := filepath.Join(dir, name)
	if err := os.Rename(src, dst); err == nil {
		return dst, nil
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := place(dir, name, false, func(f *os.File) error {
		_, err := io.Copy(f, in)
		return err
	})
	if err != nil {
		return "", err
	}
	in.Close()
	os.Remove(src)
	return out, nil
}

// Save stores data as a new file like name in dir (never replacing one).
func Save(dir, name string, data []byte) (string, error) {
	return place(dir, Unique(dir, name), false, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

func place(dir, name string, replace bool, fill func(*os.File) error) (string, error) {
	name = CleanFileName(name)
	f, err := os.CreateTemp(dir, ".part-*")
	if err != nil {
		return "", fmt.Errorf("writing into %s: %w", dir, err)
	}
	tmp := f.Name()
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	dst := filepath.Join(dir, name)
	if err == nil && !replace {
		if _, serr := os.Lstat(dst); serr == nil {
			err = fmt.Errorf("%s exists", name)
		}
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return dst, nil
}
