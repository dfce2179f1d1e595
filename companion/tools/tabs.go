package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

type tabsContextArgs struct {
	CreateIfEmpty bool `json:"createIfEmpty,omitempty" jsonschema:"create a tab in your group when you have none"`
}

type tabsCreateArgs struct {
	URL string `json:"url,omitempty" jsonschema:"page to open; the tab starts blank when omitted"`
}

func registerTabs(e *Engine) {
	define(e, Info{
		Name: "tabs_context_mcp",
		Description: "List the tabs you can use: the tabs of your own tab group plus tabs the person shared with Reins by hand. " +
			"Returns public tab ids, URLs, titles and browsers. Call this first; pass createIfEmpty to get a tab when there is none.",
		ReadOnly: true, Batchable: true,
	}, nil, runTabsContext)
	define(e, Info{
		Name:        "tabs_create_mcp",
		Description: "Open a new tab in your tab group (titled \"Reins · <your name>\") in the session's browser (see switch_browser), optionally loading a URL.",
		Batchable:   true,
	}, nil, runTabsCreate)
}

type tabEntry struct {
	TabID       int    `json:"tabId"`
	Title       string `json:"title"`
	URL         string `json:"url"`
	Browser     string `json:"browser"`
	BrowserID   string `json:"browserId"`
	SharedBy    string `json:"sharedBy"` // "you" (your group) or "person"
	Unsupported string `json:"cannotAutomate,omitempty"`
	Dialog      string `json:"dialog,omitempty"` // a dialog waiting for an answer
	OpenedBy    int    `json:"openedBy,omitempty"`
}

// tabsListTimeout bounds each browser's answer to the tabs.list that
// tabs_context_mcp sends to freshen titles. A browser that does not answer
// in time is listed with the tabs it last reported, so one stalled browser
// costs every agent at most this long, not the request timeout.
const tabsListTimeout = 2 * time.Second

// visibleTabs lists the tabs the session may use, refreshing every
// browser's list first, all at once, so titles are current.
func (c *call) visibleTabs(ctx context.Context) []tabEntry {
	var wg sync.WaitGroup
	for _, b := range c.e.hub.Browsers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lctx, cancel := context.WithTimeout(ctx, tabsListTimeout)
			defer cancel()
			if _, err := c.e.hub.TabsList(lctx, b.ID); err != nil {
				c.e.log.Debug("tabs.list failed; using the last known tabs", "browser", b.ID, "agent", c.s.Label, "principal", c.s.Principal, "err", err)
			}
		}()
	}
	wg.Wait()
	var out []tabEntry
	for _, t := range c.e.hub.Tabs() {
		if !visible(t, c.s.Principal) {
			continue
		}
		out = append(out, c.entry(t))
	}
	return out
}

func (c *call) entry(t hub.Tab) tabEntry {
	by := "person"
	if agentTab(t) && t.Owner == c.s.Principal {
		by = "you"
	}
	return tabEntry{TabID: t.ID, Title: t.Title, URL: t.URL, Browser: t.BrowserName, BrowserID: t.BrowserID, SharedBy: by, Unsupported: t.Unsupported,
		Dialog: c.e.dialogEntry(t), OpenedBy: t.Opener}
}

func runTabsContext(ctx context.Context, c *call, in *tabsContextArgs) (*Result, error) {
	tabs := c.visibleTabs(ctx)
	if len(tabs) == 0 && in.CreateIfEmpty {
		t, err := c.createTab(ctx, "")
		if err != nil {
			return nil, err
		}
		tabs = append(tabs, c.entry(t))
	}
	for _, t := range tabs {
		// The listing shows each tab's URL, so it counts as looking at it.
		if t.Unsupported == "" {
			c.observe(t.TabID, t.URL)
		}
	}
	if tabs == nil {
		tabs = []tabEntry{}
	}
	body, _ := json.MarshalIndent(map[string]any{"tabs": tabs, "group": c.s.GroupTitle(), "browser": c.currentBrowserLabel()}, "", " ")
	hint := "Use a tabId with the other tools. Tabs with sharedBy \"person\" were shared by hand and are visible to every agent."
	if len(tabs) == 0 {
		hint = "No tabs yet: call tabs_create_mcp, or tabs_context_mcp with createIfEmpty, or ask the person to share a tab."
	}
	return textResult(string(body), hint), nil
}

func (c *call) currentBrowserLabel() string {
	id, err := c.browserForNewTabs()
	if err != nil {
		return "none connected"
	}
	b, err := c.e.hub.Browser(id)
	if err != nil {
		return id
	}
	return id + " " + b.Name()
}

// browserForNewTabs is the session's chosen browser, or the first connected.
func (c *call) browserForNewTabs() (string, error) {
	if id := c.s.BrowserID(); id != "" {
		if _, err := c.e.hub.Browser(id); err == nil {
			return id, nil
		}
		return "", wire.Errorf(wire.CodeNoSuchBrowser, "browser %s chosen with switch_browser is no longer connected; call switch_browser", id)
	}
	bs := c.e.hub.Browsers()
	if len(bs) == 0 {
		return "", wire.Errorf(wire.CodeNoSuchBrowser, "no browser is connected to Reins")
	}
	return bs[0].ID, nil
}

func (c *call) createTab(ctx context.Context, url string) (hub.Tab, error) {
	bid, err := c.browserForNewTabs()
	if err != nil {
		return hub.Tab{}, err
	}
	// Created active: a hidden tab gets no frames, so screenshots of it stall.
	t, err := c.e.hub.TabsCreate(ctx, bid, "about:blank", true, c.s.GroupTitle(), c.s.Principal)
	if err != nil {
		return hub.Tab{}, fmt.Errorf("creating a tab in %s: %w", bid, err)
	}
	if t.Owner != c.s.Principal {
		// A browser that does not keep owners would hand the tab to
		// nobody; say so rather than leave the agent a tab it cannot see.
		if err := c.e.hub.TabsClose(context.WithoutCancel(ctx), t.ID); err != nil {
			c.e.log.Warn("could not close a tab opened without its owner", "browser", bid, "tab", t.ID, "err", err)
		}
		return hub.Tab{}, wire.Errorf(wire.CodeInternal, "browser %s opened tab %d but did not record it as yours (owner %q); update the Reins extension", bid, t.ID, t.Owner)
	}
	c.tabID = t.ID
	c.observe(t.ID, t.URL)
	return t, nil
}

func runTabsCreate(ctx context.Context, c *call, in *tabsCreateArgs) (*Result, error) {
	var target string
	if in.URL != "" {
		u, err := normalizeURL(in.URL)
		if err != nil {
			return nil, err
		}
		// Refuse before opening a tab that could never load it.
		engine := wire.EngineChromium
		if bid, err := c.browserForNewTabs(); err == nil {
			if b, err := c.e.hub.Browser(bid); err == nil {
				engine = b.Engine()
			}
		}
		if reason := wire.NavigationRefusal(u, engine); reason != "" {
			return nil, wire.Errorf(wire.CodeRestrictedURL, "refusing to open %s: %s", u, reason)
		}
		target = u
	}
	t, err := c.createTab(ctx, target)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("Created tab %d in %q on %s (%s).", t.ID, c.s.GroupTitle(), t.BrowserName, t.BrowserID)
	if target == "" {
		return textResult(head), nil
	}
	res, err := c.navigateTo(ctx, t.ID, target)
	if err != nil {
		return nil, fmt.Errorf("tab %d was created but loading %s failed: %w", t.ID, target, err)
	}
	res.Content[0].Text = head + "\n" + res.Content[0].Text
	return res, nil
}
