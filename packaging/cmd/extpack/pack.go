package main

import (
	"archive/zip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
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

// writeZip writes the shipped files of dir into out, with manifest.json
// replaced by manifest and the extra files (slash-separated names, see
// firefoxExtras) added.
func writeZip(out io.Writer, dir string, manifest []byte, mtime time.Time, extra map[string][]byte) ([]string, error) {
	files, err := packFiles(dir)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(files, "manifest.json") {
		return nil, fmt.Errorf("%s has no manifest.json", dir)
	}
	for name := range extra {
		if slices.Contains(files, name) {
			return nil, fmt.Errorf("%s: the extension folder already has a file of that name", name)
		}
		files = append(files, name)
	}
	slices.Sort(files)
	zw := zip.NewWriter(out)
	for _, rel := range files {
		h := &zip.FileHeader{Name: rel, Method: zip.Deflate, Modified: mtime}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if rel == "manifest.json" {
			if _, err := w.Write(manifest); err != nil {
				return nil, err
			}
			continue
		}
		if b, ok := extra[rel]; ok {
			if _, err := w.Write(b); err != nil {
				return nil, err
			}
			continue
		}
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(w, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return files, nil
}

// writeZipFile writes the archive next to its final name and renames it into
// place, so a failed build never leaves a truncated package behind.
func writeZipFile(dst, dir string, manifest []byte, mtime time.Time, extra map[string][]byte) ([]string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+path.Base(filepath.ToSlash(dst))+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	files, err := writeZip(tmp, dir, manifest, mtime, extra)
	if err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	return files, os.Rename(tmp.Name(), dst)
}

// copyTree copies the shipped files of dir into dst unchanged, manifest
// "key" included: the Linux package installs the folder for "Load
// unpacked", where the key keeps the id the native host manifests allow.
func copyTree(dir, dst string) ([]string, error) {
	files, err := packFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, rel := range files {
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// writeFirefoxDir writes the loadable Firefox folder: the shipped files of
// dir, the Firefox manifest and the extra files. dst must not exist yet, so
// a stale file from an earlier build can never ride along.
func writeFirefoxDir(dst, dir string, manifest []byte, extra map[string][]byte) ([]string, error) {
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("%s exists; remove it first", dst)
	}
	files, err := copyTree(dir, dst)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dst, "manifest.json"), manifest, 0o644); err != nil {
		return nil, err
	}
	for name, b := range extra {
		to := filepath.Join(dst, filepath.FromSlash(name))
		if slices.Contains(files, name) {
			return nil, fmt.Errorf("%s: the extension folder already has a file of that name", name)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	slices.Sort(files)
	return files, nil
}
