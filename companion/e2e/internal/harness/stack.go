package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/inspect"
)

// Stack is the whole setup of an end-to-end test: test pages, reins
// headless, and Chromium whose extension is connected to that reins.
type Stack struct {
	Pages  *Pages
	Reins  *Reins
	Chrome *Chromium
	// Watch follows the companion's /changes for the stack's lifetime.
	Watch *inspect.Watch
	// Browser is the extension's browser as it first connected.
	Browser hub.BrowserInfo
}

// StartStack starts everything and returns once the extension's hello has
// reached the companion. On error, whatever started is closed.
func StartStack(ctx context.Context) (s *Stack, err error) {
	s = &Stack{Pages: StartPages()}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if s.Reins, err = StartReins(ctx); err != nil {
		return s, err
	}
	// The watch outlives ctx: it is the tests' view for the whole run.
	if s.Watch, err = s.Reins.Client.Watch(context.WithoutCancel(ctx)); err != nil {
		return s, err
	}
	if s.Chrome, err = StartChromium(ctx); err != nil {
		return s, err
	}
	if err = s.Chrome.UseCompanionPort(ctx, s.Reins.Port); err != nil {
		return s, err
	}
	snap, err := s.Watch.Until(ctx, func(snap inspect.Snapshot) bool { return len(snap.Browsers) > 0 })
	if err != nil {
		return s, fmt.Errorf("the extension never said hello to reins: %w", err)
	}
	if len(snap.Browsers) != 1 {
		return s, fmt.Errorf("%d browsers connected, want 1: %+v", len(snap.Browsers), snap.Browsers)
	}
	s.Browser = snap.Browsers[0]
	return s, nil
}

// Close stops everything: Chromium first (killed), then reins with SIGTERM.
// It returns an error when reins did not exit cleanly.
func (s *Stack) Close() error {
	if s.Watch != nil {
		s.Watch.Close()
	}
	if s.Chrome != nil {
		s.Chrome.Close()
	}
	var err error
	if s.Reins != nil {
		err = s.Reins.Stop(15 * time.Second)
		s.Reins.Close()
	}
	s.Pages.Close()
	return err
}

// Diagnostics is the tail of each process's output, for a failed test.
func (s *Stack) Diagnostics() string {
	var out string
	if s.Reins != nil {
		out += "--- reins output (tail):\n" + Tail(s.Reins.Output(), 60) + "\n"
	}
	if s.Chrome != nil {
		out += "--- chromium output (tail):\n" + Tail(s.Chrome.Output(), 20) + "\n"
	}
	return out
}

// OpenShared opens a test page through the companion (tabs.create, which
// the extension shares) and returns the tab once the page has loaded.
func (s *Stack) OpenShared(ctx context.Context, id string, active bool) (hub.Tab, error) {
	tab, err := s.Reins.Client.CreateTab(ctx, s.Browser.ID, s.Pages.URL(id), active)
	if err != nil {
		return hub.Tab{}, fmt.Errorf("tabs.create: %w", err)
	}
	if _, err := s.Pages.Wait(ctx, id, "load"); err != nil {
		return hub.Tab{}, err
	}
	return tab, nil
}

// WaitTab waits on the change stream for a tab that match accepts.
func (s *Stack) WaitTab(ctx context.Context, match func(hub.Tab) bool) (hub.Tab, error) {
	var found hub.Tab
	_, err := s.Watch.Until(ctx, func(snap inspect.Snapshot) bool {
		for _, t := range snap.Tabs {
			if match(t) {
				found = t
				return true
			}
		}
		return false
	})
	if err != nil {
		return hub.Tab{}, fmt.Errorf("waiting for a tab: %w", err)
	}
	return found, nil
}
