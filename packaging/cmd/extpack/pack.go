package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinshq/reins/companion/atomicfile"
)

// excludedDirs never ship: tests run in node, not in the browser, and the
// stores reject packages that carry tooling.
var excludedDirs = []string{"test", "tests", "__tests__", "node_modules"}

// excluded reports whether the file at rel (slash-separated, relative to the
// extension folder) stays out of store packages.
func excluded(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		// Dotfiles are editor and tool state (.eslintrc, .DS_Store).
		if strings.HasPrefix(p, ".") {
			return true
		}
	}
	for _, p := range parts[:len(parts)-1] {
		if slices.Contains(excludedDirs, p) {
			return true
		}
	}
	base := parts[len(parts)-1]
	switch {
	case base == "package.json", base == "package-lock.json":
		return true
	case strings.HasSuffix(base, ".md"):
		return true
	case strings.Contains(base, ".test."), strings.Contains(base, ".spec."):
		return true
	// A browser-specific manifest variant checked in beside manifest.json
	// (manifest.firefox.json) would only confuse a reviewer.
	case base != "manifest.json" && strings.HasPrefix(base, "manifest.") && strings.HasSuffix(base, ".json") && len(parts) == 1:
		return true
	}
	return false
}

// packFiles lists the files of dir that ship, slash-separated and sorted so
// that the archive is the same byte for byte on every build.
func packFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if excluded(rel + "/x") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			// A symlink would be followed here and dangle in the store copy.
			return fmt.Errorf("%s: not a regular file; extension packages hold plain files only", rel)
		}
		if !excluded(rel) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// buildTime is the timestamp stamped on every archive entry: the
// SOURCE_DATE_EPOCH convention when set, a fixed date otherwise, so that
// two builds of the same tree give the same bytes.
func buildTime(getenv func(string) string) (time.Time, error) {
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		var sec int64
		if _, err := fmt.Sscan(s, &sec); err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), nil
}

// file is one file of a package: its slash-separated name, and its bytes
// (data, or else the file src of the extension folder).
type file struct {
	name string
	data []byte
	src  string
}

func (f file) read() ([]byte, error) {
	if f.data != nil {
		return f.data, nil
	}
	return os.ReadFile(f.src)
}

// contents lists what a package holds, by name: the shipped files of dir,
// with manifest.json's bytes replaced by manifest (nil: as they are) and
// the extra files (slash-separated names, see firefoxExtras) added. Every
// package writer (zip, folder) writes this list.
func contents(dir string, manifest []byte, extra map[string][]byte) ([]file, error) {
	names, err := packFiles(dir)
	if err != nil {
		return nil, err
	}
	if manifest != nil && !slices.Contains(names, "manifest.json") {
		return nil, fmt.Errorf("%s has no manifest.json", dir)
	}
	files := make([]file, 0, len(names)+len(extra))
	for _, rel := range names {
		f := file{name: rel, src: filepath.Join(dir, filepath.FromSlash(rel))}
		if rel == "manifest.json" && manifest != nil {
			f.data = manifest
		}
		files = append(files, f)
	}
	for name, b := range extra {
		if slices.Contains(names, name) {
			return nil, fmt.Errorf("%s: the extension folder already has a file of that name", name)
		}
		files = append(files, file{name: name, data: b})
	}
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	return files, nil
}

func fileNames(files []file) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return names
}

// writeZip writes a package of dir into out (see contents).
func writeZip(out io.Writer, dir string, manifest []byte, mtime time.Time, extra map[string][]byte) ([]string, error) {
	files, err := contents(dir, manifest, extra)
	if err != nil {
		return nil, err
	}
	zw := zip.NewWriter(out)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		b, err := f.read()
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(b); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return fileNames(files), nil
}

// writeZipFile writes the archive whole or not at all, so a failed build
// never leaves a truncated package behind.
func writeZipFile(dst, dir string, manifest []byte, mtime time.Time, extra map[string][]byte) ([]string, error) {
	var buf bytes.Buffer
	files, err := writeZip(&buf, dir, manifest, mtime, extra)
	if err != nil {
		return nil, err
	}
	return files, writeFileAtomic(dst, buf.Bytes())
}

// writeFileAtomic writes a package file whole, creating its folder.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}

// writeFolder writes files as a folder at dst.
func writeFolder(dst string, files []file) ([]string, error) {
	for _, f := range files {
		to := filepath.Join(dst, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		b, err := f.read()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return nil, err
		}
	}
	return fileNames(files), nil
}

// copyTree copies the shipped files of dir into dst unchanged, manifest
// "key" included: the Linux package installs the folder for "Load
// unpacked", where the key keeps the id the native host manifests allow.
func copyTree(dir, dst string) ([]string, error) {
	files, err := contents(dir, nil, nil)
	if err != nil {
		return nil, err
	}
	return writeFolder(dst, files)
}

// writeFirefoxDir writes the loadable Firefox folder: the shipped files of
// dir, the Firefox manifest and the extra files. dst must not exist yet, so
// a stale file from an earlier build can never ride along.
func writeFirefoxDir(dst, dir string, manifest []byte, extra map[string][]byte) ([]string, error) {
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("%s exists; remove it first", dst)
	}
	files, err := contents(dir, manifest, extra)
	if err != nil {
		return nil, err
	}
	return writeFolder(dst, files)
}
