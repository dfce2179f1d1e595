package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

type planArgs struct {
	Domains  []string `json:"domains" jsonschema:"the sites (domains) the plan will visit"`
	Approach []string `json:"approach" jsonschema:"the steps you intend to take"`
}

type switchBrowserArgs struct {
	BrowserID string `json:"browserId,omitempty" jsonschema:"browser to use for new tabs; omit to list connected browsers"`
}

type gifArgs struct {
	Action string `json:"action,omitempty" jsonschema:"recording action (not available in Reins)"`
	TabID  int    `json:"tabId,omitempty" jsonschema:"tab id"`
}

type shortcutsListArgs struct{}

type shortcutsExecuteArgs struct {
	ShortcutID string `json:"shortcutId,omitempty" jsonschema:"shortcut to run (not available in Reins)"`
	Command    string `json:"command,omitempty" jsonschema:"shortcut command (not available in Reins)"`
}

func registerMisc(e *Engine) {
	define(e, Info{
		Name:        "update_plan",
		Description: "Tell the person your plan: the domains you will visit and your approach. Echoed back; nothing in the browser changes.",
		ReadOnly:    true, Batchable: true,
	}, nil, runPlan)
	define(e, Info{
		Name: "switch_browser",
		Description: "List the browsers and profiles connected to Reins, or with browserId choose the one where your new tabs open. " +
			"Tabs keep their browser; tab ids are unique across browsers.",
		ReadOnly: true, Batchable: true,
	}, nil, runSwitchBrowser)
	define(e, Info{
		Name:        "gif_creator",
		Description: "Reserved: recording GIFs is not available in Reins. Returns an informational message.",
		ReadOnly:    true, Batchable: true,
	}, nil, func(ctx context.Context, c *call, in *gifArgs) (*Result, error) {
		return textResult("GIF recording is not available in Reins. Take screenshots with the computer tool instead; the person can watch live from the Reins tray (Live view)."), nil
	})
	define(e, Info{
		Name:        "shortcuts_list",
		Description: "Reserved: Reins has no saved shortcuts. Returns an informational message.",
		ReadOnly:    true, Batchable: true,
	}, nil, func(ctx context.Context, c *call, in *shortcutsListArgs) (*Result, error) {
		return textResult("Reins has no saved shortcuts. Use browser_batch to run several tool calls in one go."), nil
	})
	define(e, Info{
		Name:        "shortcuts_execute",
		Description: "Reserved: Reins has no saved shortcuts to run. Returns an informational message.",
		ReadOnly:    true, Batchable: true,
	}, nil, func(ctx context.Context, c *call, in *shortcutsExecuteArgs) (*Result, error) {
		return textResult("Reins has no saved shortcuts to run. Use browser_batch to run several tool calls in one go."), nil
	})
}

func runPlan(ctx context.Context, c *call, in *planArgs) (*Result, error) {
	var b strings.Builder
	b.WriteString("Plan recorded.\nDomains:\n")
	for _, d := range in.Domains {
		fmt.Fprintf(&b, "- %s\n", d)
	}
	b.WriteString("Approach:\n")
	for i, s := range in.Approach {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return textResult(strings.TrimRight(b.String(), "\n")), nil
}

func describeBrowser(b hub.BrowserInfo) string {
	kind := "extension"
	count := fmt.Sprintf("%d shared tab(s)", b.SharedTabs)
	if b.Mode == hub.ModeDev {
		kind = "dev browser launched by Reins"
		count = fmt.Sprintf("%d open tab(s)", b.OpenTabs)
	}
	profile := b.Hello.Profile
	if profile == "" {
		profile = "default profile"
	}
	return fmt.Sprintf("%s: %s, %s (%s, %s engine), %s", b.ID, b.Name, profile, kind, b.Engine, count)
}

func runSwitchBrowser(ctx context.Context, c *call, in *switchBrowserArgs) (*Result, error) {
	bs := c.e.hub.Browsers()
	if in.BrowserID != "" {
		if _, err := c.e.hub.Browser(in.BrowserID); err != nil {
			return nil, err
		}
		c.s.setBrowser(in.BrowserID)
	}
	if len(bs) == 0 {
		return nil, wire.Errorf(wire.CodeNoSuchBrowser, "no browser is connected to Reins")
	}
	current, _ := c.browserForNewTabs()
	lines := []string{}
	if in.BrowserID != "" {
		lines = append(lines, fmt.Sprintf("New tabs now open in %s.", in.BrowserID))
	}
	lines = append(lines, "Connected browsers:")
	for _, b := range bs {
		mark := "  "
		if b.ID == current {
			mark = "* "
		}
		lines = append(lines, mark+describeBrowser(b))
	}
	lines = append(lines, "(* = where your new tabs open)")
	return textResult(lines...), nil
}
