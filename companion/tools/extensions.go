package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

// extensions lists, enables and disables the browser's other extensions
// through the wire's extensions.* requests. Two consents stand in front of
// it: the person's switch in Reins' settings (Options.ManageExtensions)
// and the optional management permission granted in the browser, which
// the extension checks itself.

type extensionsArgs struct {
	Action    string `json:"action" jsonschema:"what to do"`
	BrowserID string `json:"browserId,omitempty" jsonschema:"default: where your tabs open"`
	ID        string `json:"id,omitempty" jsonschema:"extension id, from list"`
}

// maxExtensionsListed bounds a list answer.
const maxExtensionsListed = 200

func registerExtensions(e *Engine) {
	define(e, Info{
		Name:        "extensions",
		Description: "List, enable or disable the browser's extensions, e.g. to rule one out as breaking a page; if the person allowed it.",
		Destructive: true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) { enum(s, "action", "list", "enable", "disable") }, runExtensions)
}

type extensionInfo struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Enabled     bool   `json:"enabled"`
	Type        string `json:"type"`
	InstallType string `json:"installType"`
	MayDisable  *bool  `json:"mayDisable"`
}

func (x extensionInfo) String() string {
	state := "disabled"
	if x.Enabled {
		state = "enabled"
	}
	s := fmt.Sprintf("%s  %s %s (%s", x.ID, truncate(x.Name, 80), truncate(x.Version, 30), state)
	if x.Type != "" && x.Type != "extension" {
		s += ", " + x.Type
	}
	if x.InstallType != "" && x.InstallType != "normal" {
		s += ", installed by " + x.InstallType
	}
	if x.MayDisable != nil && !*x.MayDisable {
		s += ", locked by policy"
	}
	return s + ")"
}

func runExtensions(ctx context.Context, c *call, in *extensionsArgs) (*Result, error) {
	if c.e.opts.ManageExtensions == nil || !c.e.opts.ManageExtensions() {
		return nil, wire.Errorf(wire.CodeNotAllowed, "managing extensions is off; the person can allow it in Reins' settings (Agents may manage extensions)")
	}
	bid := in.BrowserID
	if bid == "" {
		var err error
		if bid, err = c.browserForNewTabs(); err != nil {
			return nil, err
		}
	}
	c.browser = bid
	refusal := func(err error) error {
		if errors.Is(err, wire.ErrUnknownMethod) {
			return wire.Errorf(wire.CodeUnsupported, "browser %s cannot manage extensions: a dev browser Reins launched has no extension API", bid)
		}
		return err
	}
	switch in.Action {
	case "list":
		raw, err := c.e.hub.ExtensionsList(ctx, bid, c.s.Label)
		if err != nil {
			return nil, refusal(err)
		}
		var list []extensionInfo
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, wire.Errorf(wire.CodeInternal, "browser %s listed extensions as %s", bid, truncate(string(raw), 200))
		}
		lines := []string{fmt.Sprintf("%d extension(s) in browser %s besides Reins:", len(list), bid)}
		for i, x := range list {
			if i == maxExtensionsListed {
				lines = append(lines, fmt.Sprintf("[%d more not shown]", len(list)-i))
				break
			}
			lines = append(lines, x.String())
		}
		return textResult(lines...), nil
	case "enable", "disable":
		if strings.TrimSpace(in.ID) == "" {
			return nil, wire.Errorf(wire.CodeBadParams, "%s needs the id of an extension (from list)", in.Action)
		}
		raw, err := c.e.hub.ExtensionsSetEnabled(ctx, bid, in.ID, in.Action == "enable", c.s.Label)
		if err != nil {
			return nil, refusal(err)
		}
		var x extensionInfo
		if err := json.Unmarshal(raw, &x); err != nil {
			return nil, wire.Errorf(wire.CodeInternal, "browser %s answered %s", bid, truncate(string(raw), 200))
		}
		return textResult(fmt.Sprintf("%sd %s.", strings.ToUpper(in.Action[:1])+in.Action[1:], x.String())), nil
	}
	return nil, wire.Errorf(wire.CodeBadParams, "action must be list, enable or disable")
}
