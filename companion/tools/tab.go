package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

type tabArgs struct {
	TabID  int    `json:"tabId" jsonschema:"tab id"`
	Action string `json:"action" jsonschema:"activate, close, reload, back or forward"`
}

var tabActions = []string{"activate", "close", "reload", "back", "forward"}

func registerTab(e *Engine) {
	define(e, Info{
		Name:        "tab",
		Description: "Activate, close or reload a tab, or move back or forward in its history. Tabs a page opens from yours are yours too.",
		Destructive: true, Mutating: true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "action", tabActions...)
	}, runTab)
}

func runTab(ctx context.Context, c *call, in *tabArgs) (*Result, error) {
	switch in.Action {
	case "activate":
		// Bringing a tab to the front reads and changes nothing in its page.
		if _, _, err := c.tab(in.TabID, accessRead); err != nil {
			return nil, err
		}
		if err := c.e.hub.TabsActivate(ctx, in.TabID); err != nil {
			return nil, fmt.Errorf("activating tab %d: %w", in.TabID, err)
		}
		return textResult(fmt.Sprintf("Tab %d is now the active tab of its window.", in.TabID)), nil
	case "close":
		if _, _, err := c.tab(in.TabID, accessAct); err != nil {
			return nil, err
		}
		if err := c.e.hub.TabsClose(ctx, in.TabID); err != nil {
			return nil, fmt.Errorf("closing tab %d: %w", in.TabID, err)
		}
		c.s.forgetView(in.TabID)
		return textResult(fmt.Sprintf("Closed tab %d.", in.TabID)), nil
	case "reload":
		return c.reload(ctx, in.TabID)
	case "back", "forward":
		// The same path as navigate's "back" and "forward".
		return c.history(ctx, in.TabID, in.Action == "back")
	}
	return nil, wire.Errorf(wire.CodeBadParams, "unknown action %q; use one of activate, close, reload, back or forward", in.Action)
}

// reload loads the tab's page again and waits for it. It runs the page's
// requests again, so it is guarded like any action on what the agent saw.
func (c *call) reload(ctx context.Context, tabID int) (*Result, error) {
	ts, _, err := c.page(ctx, tabID, accessAct)
	if err != nil {
		return nil, err
	}
	href, err := ts.helper(ctx, c.s.Label, "info", nil)
	if err != nil {
		return nil, err
	}
	if err := c.guard(tabID, href); err != nil {
		return nil, err
	}
	w := ts.watch()
	defer w.stop()
	if err := c.cdp(ctx, tabID, "Page.reload", map[string]any{}, nil); err != nil {
		return nil, err
	}
	n := &navState{mainFrame: ts.frame()}
	loaded, err := w.waitLoad(ctx, n, c.e.opts.NavigationTimeout)
	if err != nil {
		return nil, err
	}
	c.s.forgetView(tabID)
	return c.landed(ctx, ts, tabID, n.committedLoader, loaded, false)
}

// ---- tabs a page opens

// popupWait bounds the wait, after an action, for the tab the page asked
// to open to show up in the browser's listing.
const popupWait = 2 * time.Second

// maxOpened bounds what a tab remembers of the tabs and windows it opened.
const maxOpened = 16

type openedTab struct {
	at  time.Time
	tab hub.Tab
}

type windowOpen struct {
	at  time.Time
	url string
}

// popupState is what a tabState knows of the tabs its page opened, under
// its mu: the shared tabs that appeared from it (hub.TabOpened) and the
// windows the page asked for (Page.windowOpen), newest last.
type popupState struct {
	opened  []openedTab
	windows []windowOpen
	// wake is closed when a tab appears, for an action waiting for it.
	wake chan struct{}
}

func (ts *tabState) tabOpened(t hub.Tab) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, o := range ts.pop.opened {
		if o.tab.ID == t.ID {
			return
		}
	}
	ts.pop.opened = append(ts.pop.opened, openedTab{at: time.Now(), tab: t})
	if len(ts.pop.opened) > maxOpened {
		ts.pop.opened = ts.pop.opened[len(ts.pop.opened)-maxOpened:]
	}
	if ts.pop.wake != nil {
		close(ts.pop.wake)
		ts.pop.wake = nil
	}
}

func (ts *tabState) windowOpened(params json.RawMessage) {
	var p struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.pop.windows = append(ts.pop.windows, windowOpen{at: time.Now(), url: p.URL})
	if len(ts.pop.windows) > maxOpened {
		ts.pop.windows = ts.pop.windows[len(ts.pop.windows)-maxOpened:]
	}
}

// openedSince returns the tabs and the window requests since start, and a
// channel closed when another tab appears.
func (ts *tabState) openedSince(start time.Time) ([]hub.Tab, []string, <-chan struct{}) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var tabs []hub.Tab
	for _, o := range ts.pop.opened {
		if !o.at.Before(start) {
			tabs = append(tabs, o.tab)
		}
	}
	var urls []string
	for _, w := range ts.pop.windows {
		if !w.at.Before(start) {
			urls = append(urls, w.url)
		}
	}
	if ts.pop.wake == nil {
		ts.pop.wake = make(chan struct{})
	}
	return tabs, urls, ts.pop.wake
}

// openedLines says which tabs the call's action opened from ts's page. A
// page's request for a new window comes before the browser lists the tab,
// so when the page asked for more windows than have appeared, it waits for
// them, at most popupWait.
func (c *call) openedLines(ctx context.Context, ts *tabState, start time.Time) []string {
	tabs, urls, wake := ts.openedSince(start)
	if len(urls) > len(tabs) {
		timer := time.NewTimer(popupWait)
		defer timer.Stop()
	wait:
		for len(urls) > len(tabs) {
			select {
			case <-wake:
				tabs, urls, wake = ts.openedSince(start)
			case <-timer.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
	}
	var lines []string
	for i, t := range tabs {
		// Freshen: the listing that announced it may predate its URL.
		if now, _, err := c.e.hub.Tab(t.ID); err == nil {
			t = now
		}
		url := t.URL
		if (url == "" || url == "about:blank") && i < len(urls) && urls[i] != "" {
			url = urls[i]
		}
		if visible(t, c.s.Principal) {
			lines = append(lines, fmt.Sprintf("The page opened a new tab: tab %d, %s. It is yours to use like this one (tabs_context_mcp lists it; tab closes it).", t.ID, url))
		} else {
			lines = append(lines, fmt.Sprintf("The page opened a new tab (tab %d), which is not shared with you.", t.ID))
		}
	}
	for _, u := range urls[min(len(tabs), len(urls)):] {
		lines = append(lines, fmt.Sprintf("The page asked to open %s in a new tab or window, but no such tab appeared (a popup blocker, or a tab Reins does not share).", u))
	}
	return lines
}
