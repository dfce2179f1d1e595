package tokens

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// Watch reloads whenever another process rewrites the index (a `reins token`
// command run while no admin channel answered, say), so OnChange listeners
// hear of it at once. It blocks until ctx ends and returns ctx.Err(), or an
// error if the data dir cannot be watched. Reload failures go to onError,
// which may be nil.
func (m *Manager) Watch(ctx context.Context, onError func(error)) error {
	report := func(err error) {
		if err != nil && onError != nil {
			onError(err)
		}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch tokens: %w", err)
	}
	defer w.Close()
	// The dir, not the file: the index is replaced by rename, which a watch
	// on the old file would not follow.
	if err := w.Add(m.dir); err != nil {
		return fmt.Errorf("watch tokens in %s: %w", m.dir, err)
	}
	// Catches whatever changed between Open and the watch starting.
	report(m.Reload())
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Base(ev.Name) == IndexFile && ev.Has(fsnotify.Create|fsnotify.Write) {
				report(m.Reload())
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflow may have hidden an index change.
			report(fmt.Errorf("watch tokens: %w", err))
			report(m.Reload())
		}
	}
}
