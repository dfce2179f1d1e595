// Package atomicfile owns writing a file whole: a reader in another process
// sees the old file or the new one, never half of either, and a crash
// leaves no half-written file in its place. Every state file Reins writes
// (tokens, settings, backends, the port file, the link key, native-host
// manifests, MCP clients' configs) goes through it.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Write replaces path with data and mode (the umask does not apply): a
// temporary file in the same folder, synced, then renamed over path. On
// failure path is as it was and the temporary file is gone.
func Write(path string, data []byte, mode fs.FileMode) error {
	tmp, err := writeTemp(path, data, mode)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Create writes path like Write, but only where no file is: an existing
// one is left as it is and Create returns an error wrapping fs.ErrExist.
// Of two processes creating the same file at once, exactly one succeeds.
func Create(path string, data []byte, mode fs.FileMode) error {
	tmp, err := writeTemp(path, data, mode)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Link(tmp, path)
}

func writeTemp(path string, data []byte, mode fs.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return "", err
	}
	// Windows has no mode bits to set.
	err = f.Chmod(mode)
	if runtime.GOOS == "windows" {
		err = nil
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
