package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/hub"
)

// Companion is what every stack has besides its browser: the test pages,
// reins headless, its change stream and the extension that connected.
type Companion struct {
	Pages *Pages
	Reins *Reins
	// Watch follows the companion's /changes for the stack's lifetime.
	Watch *admin.Watch
	// Browser is the extension's browser as it first connected.
	Browser hub.BrowserInfo
}

// start starts reins and its change stream; the stack then starts its
// browser.
func (c *Companion) start(ctx context.Context) (err error) {
	if c.Reins, err = StartReins(ctx); err != nil {
		return err
	}
	// The watch outlives ctx: it is the tests' view for the whole run.
	c.Watch, err = c.Reins.Client.Watch(context.WithoutCancel(ctx))
	return err
}

// ReinsOutput is what reins printed so far.
func (c *Companion) ReinsOutput() string {
	if c.Reins == nil {
		return ""
	}
	return c.Reins.Output()
}

// stop closes the change stream, then the browser (closeBrowser, killed),
// then reins with SIGTERM, then the pages. It returns an error when reins
// did not exit cleanly.
func (c *Companion) stop(closeBrowser func()) error {
	if c.Watch != nil {
		c.Watch.Close()
	}
	closeBrowser()
	var err error
	if c.Reins != nil {
		err = c.Reins.Stop(15 * time.Second)
		c.Reins.Close()
	}
	c.Pages.Close()
	return err
}

// diagnostics is the tail of reins' output and of the browser's, labelled.
func (c *Companion) diagnostics(browserLabel, browserOut string, browserLines int) string {
	var out string
	if c.Reins != nil {
		out += "--- reins output (tail):\n" + Tail(c.Reins.Output(), 60) + "\n"
	}
	if browserOut != "" {
		out += "--- " + browserLabel + " output (tail):\n" + Tail(browserOut, browserLines) + "\n"
	}
	return out
}

// OpenShared opens a test page through the companion (tabs.create, which
// the extension shares) and returns the tab once the page has loaded.
func (c *Companion) OpenShared(ctx context.Context, id string, active bool) (hub.Tab, error) {
	tab, err := c.Reins.Client.CreateTab(ctx, c.Browser.ID, c.Pages.URL(id), active)
	if err != nil {
		return hub.Tab{}, fmt.Errorf("tabs.create: %w", err)
	}
	if _, err := c.Pages.Wait(ctx, id, "load"); err != nil {
		return hub.Tab{}, err
	}
	return tab, nil
}

// Stack is the whole setup of an end-to-end test: test pages, reins
// headless, and Chromium whose extension is connected to that reins.
type Stack struct {
	Companion
	Chrome *Chromium
}

// StartStack starts everything and returns once the extension's hello has
// reached the companion. On error, whatever started is closed.
func StartStack(ctx context.Context, opts ...ChromiumOption) (s *Stack, err error) {
	s = &Stack{Companion: Companion{Pages: StartPages()}}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if err = s.start(ctx); err != nil {
		return s, err
	}
	// The extension finds the port and the key through the native host,
	// as in a real install: the host asks this reins over its admin socket.
	// No port in storage, so the first connection is the one that stays.
	if s.Chrome, err = StartChromium(ctx, append([]ChromiumOption{WithNativeHost(s.Reins.DataDir)}, opts...)...); err != nil {
		return s, err
	}
	snap, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool { return len(snap.Browsers) > 0 })
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
	return s.stop(func() {
		if s.Chrome != nil {
			s.Chrome.Close()
		}
	})
}

// Diagnostics is the tail of each process's output, for a failed test.
func (s *Stack) Diagnostics() string {
	out := ""
	if s.Chrome != nil {
		out = s.Chrome.Output()
	}
	return s.diagnostics("chromium", out, 20)
}

// WaitTab waits on the change stream for a tab that match accepts.
func (s *Stack) WaitTab(ctx context.Context, match func(hub.Tab) bool) (hub.Tab, error) {
	var found hub.Tab
	_, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool {
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
