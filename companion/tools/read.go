package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

type readPageArgs struct {
	TabID    int    `json:"tabId" jsonschema:"tab id from tabs_context_mcp"`
	Filter   string `json:"filter,omitempty" jsonschema:"\"interactive\" lists only elements you can act on; \"all\" (default) gives the page structure with text"`
	Depth    int    `json:"depth,omitempty" jsonschema:"maximum nesting depth of the tree (default 40)"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"cut the output at this many characters (default 30000)"`
	RefID    string `json:"ref_id,omitempty" jsonschema:"read only the subtree of this element ref"`
}

type findArgs struct {
	Query string `json:"query" jsonschema:"what to look for: visible text, a label, a placeholder or a role, e.g. \"search box\" or \"Add to cart button\""`
	TabID int    `json:"tabId" jsonschema:"tab id from tabs_context_mcp"`
}

type pageTextArgs struct {
	TabID int `json:"tabId" jsonschema:"tab id from tabs_context_mcp"`
}

const (
	defaultMaxChars = 30000
	maxFind         = 20
	maxPageText     = 100000
)

func registerRead(e *Engine) {
	define(e, Info{
		Name: "read_page",
		Description: "Read a tab as a compact accessibility tree: one line per element with its role, name, state and a ref (ref_12). " +
			"Refs stay valid while their element stays on the page; pass them to computer, form_input, upload_image and scroll_to. " +
			"filter \"interactive\" lists only actionable elements.",
		ReadOnly: true, Batchable: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "filter", "interactive", "all")
		bounds(s, "depth", 0, 200)
		bounds(s, "max_chars", 0, 1000000)
	}, runReadPage)
	define(e, Info{
		Name:        "find",
		Description: "Find up to 20 elements matching a description (text, label, placeholder, role). Returns refs and their coordinates in screenshot pixels.",
		ReadOnly:    true, Batchable: true,
	}, nil, runFind)
	define(e, Info{
		Name:        "get_page_text",
		Description: "Get the readable text of a tab, main content first.",
		ReadOnly:    true, Batchable: true,
	}, nil, runPageText)
}

type treeReply struct {
	Lines     []string `json:"lines"`
	Truncated bool     `json:"truncatedWalk"`
	VW        int      `json:"vw"`
	VH        int      `json:"vh"`
	SX        int      `json:"sx"`
	SY        int      `json:"sy"`
	PH        int      `json:"ph"`
}

func runReadPage(ctx context.Context, c *call, in *readPageArgs) (*Result, error) {
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	filter := in.Filter
	if filter == "all" {
		filter = ""
	}
	var tr treeReply
	href, err := ts.helper(ctx, c.s.Label, "tree", &tr, map[string]any{"filter": filter, "depth": in.Depth, "ref": in.RefID})
	if err != nil {
		return nil, err
	}
	c.observe(in.TabID, href)
	max := in.MaxChars
	if max <= 0 {
		max = defaultMaxChars
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nviewport %dx%d, scroll %d,%d of %d\n", href, tr.VW, tr.VH, tr.SX, tr.SY, tr.PH)
	cut := 0
	for i, l := range tr.Lines {
		if b.Len()+len(l)+1 > max {
			cut = len(tr.Lines) - i
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if len(tr.Lines) == 0 {
		b.WriteString("(no visible elements)\n")
	}
	if cut > 0 {
		fmt.Fprintf(&b, "[%d more lines cut at max_chars=%d; use filter=\"interactive\", depth or ref_id to narrow]\n", cut, max)
	} else if tr.Truncated {
		b.WriteString("[the page is very large; only part of it was read. Use ref_id to read a section]\n")
	}
	return textResult(strings.TrimRight(b.String(), "\n")), nil
}

type findReply struct {
	Matches []struct {
		Ref    string   `json:"ref"`
		Role   string   `json:"role"`
		Name   string   `json:"name"`
		Props  []string `json:"props"`
		X      float64  `json:"x"`
		Y      float64  `json:"y"`
		W      float64  `json:"w"`
		H      float64  `json:"h"`
		InView bool     `json:"inView"`
	} `json:"matches"`
	Total   int  `json:"total"`
	Partial bool `json:"partial"`
	VW      int  `json:"vw"`
	VH      int  `json:"vh"`
}

func runFind(ctx context.Context, c *call, in *findArgs) (*Result, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "query is required")
	}
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	var fr findReply
	href, err := ts.helper(ctx, c.s.Label, "find", &fr, in.Query, maxFind)
	if err != nil {
		return nil, err
	}
	c.observe(in.TabID, href)
	v, ok := c.s.view(in.TabID)
	if !ok || v.width != fr.VW || v.height != fr.VH {
		v = viewMap{scale: shotScale(fr.VW, fr.VH), width: fr.VW, height: fr.VH}
		c.s.setView(in.TabID, v)
	}
	if len(fr.Matches) == 0 {
		return textResult(fmt.Sprintf("Nothing on %s matches %q.", href, in.Query)), nil
	}
	var b strings.Builder
	head := fmt.Sprintf("%d match", len(fr.Matches))
	if len(fr.Matches) != 1 {
		head += "es"
	}
	if fr.Total > len(fr.Matches) {
		head += fmt.Sprintf(" (of %d)", fr.Total)
	}
	if fr.Partial {
		head += "; none matched every word, these match some"
	}
	fmt.Fprintf(&b, "%s for %q (coordinates in screenshot pixels):\n", head, in.Query)
	for _, m := range fr.Matches {
		x, y := v.toShot(m.X, m.Y)
		fmt.Fprintf(&b, "%s %s", m.Ref, m.Role)
		if m.Name != "" {
			fmt.Fprintf(&b, " %q", m.Name)
		}
		if len(m.Props) > 0 {
			b.WriteString(" " + strings.Join(m.Props, " "))
		}
		fmt.Fprintf(&b, " at (%d, %d)", x, y)
		if !m.InView {
			b.WriteString(" (off screen: scroll_to it or click it by ref)")
		}
		b.WriteByte('\n')
	}
	return textResult(strings.TrimRight(b.String(), "\n")), nil
}

func runPageText(ctx context.Context, c *call, in *pageTextArgs) (*Result, error) {
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	var tx struct {
		Main  string `json:"main"`
		Rest  string `json:"rest"`
		Title string `json:"title"`
	}
	href, err := ts.helper(ctx, c.s.Label, "text", &tx)
	if err != nil {
		return nil, err
	}
	c.observe(in.TabID, href)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n\n", tx.Title, href)
	if tx.Main != "" {
		b.WriteString(tx.Main)
		if tx.Rest != "" {
			b.WriteString("\n\n--- rest of the page ---\n")
			b.WriteString(tx.Rest)
		}
	} else {
		b.WriteString(tx.Rest)
	}
	out := b.String()
	if len(out) > maxPageText {
		out = truncate(out, maxPageText) + "\n[text cut at 100000 characters]"
	}
	return textResult(out), nil
}
