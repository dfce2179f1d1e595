package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

type readPageArgs struct {
	TabID    int    `json:"tabId" jsonschema:"tab id"`
	Filter   string `json:"filter,omitempty" jsonschema:"interactive: actionable elements only; all (default): structure and text"`
	Depth    int    `json:"depth,omitempty" jsonschema:"tree depth (default 40)"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"output limit in characters (default 30000)"`
	RefID    string `json:"ref_id,omitempty" jsonschema:"read only the subtree of this element ref"`
	FromRef  string `json:"from_ref,omitempty" jsonschema:"continue a cut read from this ref"`
}

type findArgs struct {
	Query string `json:"query" jsonschema:"what to look for: visible text, a label, a placeholder or a role, e.g. \"search box\" or \"Add to cart button\""`
	TabID int    `json:"tabId" jsonschema:"tab id"`
}

type pageTextArgs struct {
	TabID int `json:"tabId" jsonschema:"tab id"`
}

const (
	defaultMaxChars = 30000
	maxFind         = 20
	maxPageText     = 100000
)

func registerRead(e *Engine) {
	define(e, Info{
		Name: "read_page",
		Description: "Read a tab as a compact accessibility tree, frames and shadow DOM included: a line per element with role, name, state and a ref (ref_12) " +
			"that other tools take while the element stays. A cut read ends with a from_ref to continue.",
		ReadOnly: true, Batchable: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "filter", "interactive", "all")
		bounds(s, "depth", 0, 200)
		bounds(s, "max_chars", 0, 1000000)
	}, runReadPage)
	define(e, Info{
		Name:        "find",
		Description: "Find up to 20 elements matching a description (text, label, placeholder, role), in frames too. Returns refs and their coordinates in screenshot pixels.",
		ReadOnly:    true, Batchable: true,
	}, nil, runFind)
	define(e, Info{
		Name:        "get_page_text",
		Description: "Get the readable text of a tab, main content first, frames included.",
		ReadOnly:    true, Batchable: true,
	}, nil, runPageText)
}

type treeReply struct {
	Lines  []string `json:"lines"`
	At     []string `json:"at"`
	Frames []struct {
		opaqueFrame
		Pos   int `json:"pos"`
		Depth int `json:"depth"`
	} `json:"frames"`
	Next    string `json:"next"`
	Cut     string `json:"cut"`
	Started bool   `json:"started"`
	VW      int    `json:"vw"`
	VH      int    `json:"vh"`
	SX      int    `json:"sx"`
	SY      int    `json:"sy"`
	PH      int    `json:"ph"`
}

// treeRender collects one read_page answer across frames.
type treeRender struct {
	filter  string
	depth   int
	budget  int
	used    int
	lines   []string
	stopped bool   // the read was cut
	next    string // where a cut read continues
	walk    bool   // the cut came from the walk limit, not max_chars
	entered int    // frames read
	skipped int    // frames left unread (limits)
	// head is the answer's first lines, made from the first reply of the
	// main frame; budget is set once it is known.
	head  string
	limit int
}

func (r *treeRender) cut() bool { return r.stopped }

// renderTree reads frame f (nil: main) from the given start and splices
// in the frames its helper could not enter, depth first, in page order.
func (c *call) renderTree(ctx context.Context, ts *tabState, f *frameRec, r *treeRender, opts map[string]any, nest int) error {
	opts["filter"], opts["depth"] = r.filter, r.depth
	if r.head == "" {
		opts["budget"] = max(1, r.limit-noteRoom)
	} else {
		opts["budget"] = max(1, r.budget-r.used)
	}
	var tr treeReply
	href, err := ts.callIn(ctx, c.s.Label, f, "tree", &tr, true, opts)
	if err != nil {
		return err
	}
	if r.head == "" {
		// Only the main frame's reply describes the tab.
		r.setHead(href, viewportInfo{W: tr.VW, H: tr.VH, SX: float64(tr.SX), SY: float64(tr.SY), PH: tr.PH})
	}
	fi := 0
	for i := 0; i <= len(tr.Lines); i++ {
		for ; fi < len(tr.Frames) && tr.Frames[fi].Pos <= i; fi++ {
			fr := tr.Frames[fi]
			if r.cut() {
				return nil
			}
			pad := ""
			if r.filter == "" {
				pad = strings.Repeat(" ", fr.Depth)
			}
			if nest >= maxFrameDepth || r.entered >= maxFrames {
				r.skipped++
				continue
			}
			child, err := c.frameFor(ctx, ts, f, fr.opaqueFrame)
			if err == nil {
				r.entered++
				ts.mu.Lock()
				child.depth = fr.Depth
				ts.mu.Unlock()
				err = c.renderTree(ctx, ts, child, r, map[string]any{"indent": fr.Depth}, nest+1)
			}
			if err != nil {
				c.e.log.Debug("frame not read", "tab", ts.id, "agent", c.s.Label, "iframe", fr.Ref, "err", err)
				if !r.add(pad+"(this frame could not be read)", fr.Ref) {
					return nil
				}
			}
		}
		if i == len(tr.Lines) || r.cut() {
			break
		}
		at := ""
		if i < len(tr.At) {
			at = tr.At[i]
		}
		if !r.add(tr.Lines[i], at) {
			return nil
		}
	}
	if tr.Cut != "" && !r.cut() {
		r.stopped, r.next, r.walk = true, tr.Next, tr.Cut == "walk"
	}
	return nil
}

// noteRoom is what read_page keeps of max_chars for its closing notes.
const noteRoom = 250

// setHead writes the answer's first lines, the tab's URL and viewport, and
// sets the budget for the lines that follow.
func (r *treeRender) setHead(href string, vp viewportInfo) {
	r.head = fmt.Sprintf("%s\nviewport %dx%d, scroll %d,%d of %d\n", href, vp.W, vp.H, int(vp.SX), int(vp.SY), vp.PH)
	r.budget = max(1, r.limit-len(r.head)-noteRoom)
}

// add appends a line unless the budget is spent; then the read continues
// from at next time. The first line always goes in, so every read moves on.
func (r *treeRender) add(line, at string) bool {
	if r.used+len(line)+1 > r.budget && len(r.lines) > 0 {
		r.stopped, r.next = true, at
		return false
	}
	r.used += len(line) + 1
	r.lines = append(r.lines, line)
	return true
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
	limit := in.MaxChars
	if limit <= 0 {
		limit = defaultMaxChars
	}
	r := &treeRender{filter: filter, depth: in.Depth, limit: limit}
	root, err := ts.frameOfRef(in.RefID)
	if err != nil {
		return nil, err
	}
	start := root
	if in.FromRef != "" {
		if start, err = ts.frameOfRef(in.FromRef); err != nil {
			return nil, err
		}
	}
	if start != nil {
		// The read starts in a frame: the tab's URL and viewport come from
		// the main frame first.
		var vp viewportInfo
		href, err := ts.helper(ctx, c.s.Label, "viewport", &vp)
		if err != nil {
			return nil, err
		}
		vp.PH = max(vp.PH, vp.H)
		r.setHead(href, vp)
	}
	if in.FromRef == "" {
		opts := map[string]any{}
		if in.RefID != "" {
			opts["ref"] = in.RefID
		}
		if err := c.renderTree(ctx, ts, root, r, opts, 0); err != nil {
			return nil, err
		}
	} else if err := c.readFrom(ctx, ts, root, in.RefID, in.FromRef, r); err != nil {
		return nil, err
	}

	c.observe(in.TabID, strings.SplitN(r.head, "\n", 2)[0])
	var b strings.Builder
	b.WriteString(r.head)
	for _, l := range r.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if len(r.lines) == 0 {
		if in.FromRef != "" {
			fmt.Fprintf(&b, "(nothing shown from %s on: it is hidden now)\n", in.FromRef)
		} else {
			b.WriteString("(no visible elements)\n")
		}
	}
	if r.skipped > 0 {
		fmt.Fprintf(&b, "[%d frame(s) not read: at most %d frames, %d deep, are read at once; read one with ref_id]\n", r.skipped, maxFrames, maxFrameDepth)
	}
	switch {
	case r.cut() && r.walk:
		fmt.Fprintf(&b, "[stopped after %d elements; continue with from_ref=%q]\n", walkLimit, r.next)
	case r.cut():
		fmt.Fprintf(&b, "[cut at max_chars=%d after %d lines; continue with from_ref=%q, or narrow with filter=\"interactive\", depth or ref_id]\n", limit, len(r.lines), r.next)
	}
	return textResult(strings.TrimRight(b.String(), "\n")), nil
}

// walkLimit is page.js's WALK_LIMIT, named in the note of a read it stopped.
const walkLimit = 30000

// readFrom continues a read at from: in from's frame, then in each frame
// around it, right after the iframe it came out of, up to the frame of the
// subtree root (nil and refID "": the whole page).
func (c *call) readFrom(ctx context.Context, ts *tabState, root *frameRec, refID, from string, r *treeRender) error {
	f, err := ts.frameOfRef(from)
	if err != nil {
		return err
	}
	opts := map[string]any{"from": from}
	for hops := 0; ; hops++ {
		if f == nil && root != nil {
			return wire.Errorf(wire.CodeBadParams, "from_ref %s is not inside ref_id %s", from, refID)
		}
		if f == root {
			if refID != "" {
				opts["ref"] = refID
			}
		} else {
			ts.mu.Lock()
			opts["indent"] = f.depth
			ts.mu.Unlock()
		}
		if err := c.renderTree(ctx, ts, f, r, opts, 0); err != nil {
			return err
		}
		if f == root || r.cut() {
			return nil
		}
		if hops > maxFrameDepth {
			return wire.Errorf(wire.CodeInternal, "frames nest too deep")
		}
		parent, owner, err := ts.parentOf(f)
		if err != nil {
			return err
		}
		f, opts = parent, map[string]any{"from": owner, "after": true}
	}
}

type findMatch struct {
	Ref   string   `json:"ref"`
	Role  string   `json:"role"`
	Name  string   `json:"name"`
	Props []string `json:"props"`
	Score int      `json:"score"`
	X     float64  `json:"x"`
	Y     float64  `json:"y"`
	W     float64  `json:"w"`
	H     float64  `json:"h"`
}

type findReply struct {
	Matches []findMatch   `json:"matches"`
	Total   int           `json:"total"`
	Partial bool          `json:"partial"`
	Frames  []opaqueFrame `json:"frames"`
	VW      int           `json:"vw"`
	VH      int           `json:"vh"`
}

// findState gathers matches from every frame.
type findState struct {
	full, partial           []findMatch
	fullTotal, partialTotal int
	entered                 int
}

// findIn searches frame f (nil: main) and the frames inside it; offsets
// move its matches into the tab's viewport.
func (c *call) findIn(ctx context.Context, ts *tabState, f *frameRec, query string, st *findState, nest int) (findReply, string, error) {
	var fr findReply
	href, err := ts.callIn(ctx, c.s.Label, f, "find", &fr, true, query, maxFind)
	if err != nil {
		return fr, href, err
	}
	if f != nil && len(fr.Matches) > 0 {
		dx, dy, _, _, _, err := c.frameOffset(ctx, ts, f, false)
		if err != nil {
			return fr, href, err
		}
		for i := range fr.Matches {
			fr.Matches[i].X += dx
			fr.Matches[i].Y += dy
		}
	}
	if fr.Partial {
		st.partial = append(st.partial, fr.Matches...)
		st.partialTotal += fr.Total
	} else {
		st.full = append(st.full, fr.Matches...)
		st.fullTotal += fr.Total
	}
	for _, of := range fr.Frames {
		if nest >= maxFrameDepth || st.entered >= maxFrames {
			break
		}
		child, err := c.frameFor(ctx, ts, f, of)
		if err == nil {
			st.entered++
			_, _, err = c.findIn(ctx, ts, child, query, st, nest+1)
		}
		if err != nil {
			c.e.log.Debug("frame not searched", "tab", ts.id, "agent", c.s.Label, "iframe", of.Ref, "err", err)
		}
	}
	return fr, href, nil
}

func runFind(ctx context.Context, c *call, in *findArgs) (*Result, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "query is required")
	}
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	st := &findState{}
	top, href, err := c.findIn(ctx, ts, nil, in.Query, st, 0)
	if err != nil {
		return nil, err
	}
	c.observe(in.TabID, href)
	v, ok := c.s.view(in.TabID)
	if !ok || v.width != top.VW || v.height != top.VH {
		v = viewMap{scale: shotScale(top.VW, top.VH), width: top.VW, height: top.VH}
		c.s.setView(in.TabID, v)
	}
	matches, total, partial := st.full, st.fullTotal, false
	if len(matches) == 0 {
		matches, total, partial = st.partial, st.partialTotal, true
	}
	// Frames answer in page order; the best matches come first overall.
	sort.SliceStable(matches, func(i, j int) bool { return matches[i].Score > matches[j].Score })
	if len(matches) > maxFind {
		matches = matches[:maxFind]
	}
	if len(matches) == 0 {
		return textResult(fmt.Sprintf("Nothing on %s matches %q.", href, in.Query)), nil
	}
	var b strings.Builder
	head := fmt.Sprintf("%d match", len(matches))
	if len(matches) != 1 {
		head += "es"
	}
	if total > len(matches) {
		head += fmt.Sprintf(" (of %d)", total)
	}
	if partial {
		head += "; none matched every word, these match some"
	}
	fmt.Fprintf(&b, "%s for %q (coordinates in screenshot pixels):\n", head, in.Query)
	for _, m := range matches {
		x, y := v.toShot(m.X, m.Y)
		fmt.Fprintf(&b, "%s %s", m.Ref, m.Role)
		if m.Name != "" {
			fmt.Fprintf(&b, " %q", m.Name)
		}
		if len(m.Props) > 0 {
			b.WriteString(" " + strings.Join(m.Props, " "))
		}
		fmt.Fprintf(&b, " at (%d, %d)", x, y)
		inView := m.W > 0 && m.X >= 0 && m.Y >= 0 && m.X < float64(top.VW) && m.Y < float64(top.VH)
		if !inView {
			b.WriteString(" (off screen: scroll_to it or click it by ref)")
		}
		b.WriteByte('\n')
	}
	return textResult(strings.TrimRight(b.String(), "\n")), nil
}

type textReply struct {
	Main   string        `json:"main"`
	Rest   string        `json:"rest"`
	Title  string        `json:"title"`
	Frames []opaqueFrame `json:"frames"`
}

// frameMark is where the helper left the text of a frame it cannot read.
func frameMark(ref string) string { return "\ue000" + ref + "\ue001" }

// textIn reads frame f's text (nil: main) with the text of the frames
// inside it put where they are.
func (c *call) textIn(ctx context.Context, ts *tabState, f *frameRec, entered *int, nest int) (textReply, string, error) {
	var tx textReply
	href, err := ts.callIn(ctx, c.s.Label, f, "text", &tx, true)
	if err != nil {
		return tx, href, err
	}
	for _, of := range tx.Frames {
		inner := ""
		if nest < maxFrameDepth && *entered < maxFrames {
			child, err := c.frameFor(ctx, ts, f, of)
			if err == nil {
				*entered++
				var ct textReply
				if ct, _, err = c.textIn(ctx, ts, child, entered, nest+1); err == nil {
					inner = strings.TrimSpace(ct.Main + "\n\n" + ct.Rest)
				}
			}
			if err != nil {
				c.e.log.Debug("frame text not read", "tab", ts.id, "agent", c.s.Label, "iframe", of.Ref, "err", err)
			}
		}
		mark := frameMark(of.Ref)
		tx.Main = strings.Replace(tx.Main, mark, inner, 1)
		tx.Rest = strings.Replace(tx.Rest, mark, inner, 1)
	}
	return tx, href, nil
}

// stripMarks removes frame marks a page wrote into its own text.
var stripMarks = strings.NewReplacer("\ue000", "", "\ue001", "")

func runPageText(ctx context.Context, c *call, in *pageTextArgs) (*Result, error) {
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	entered := 0
	tx, href, err := c.textIn(ctx, ts, nil, &entered, 0)
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
	out := stripMarks.Replace(b.String())
	if len(out) > maxPageText {
		out = truncate(out, maxPageText) + "\n[text cut at 100000 characters]"
	}
	return textResult(out), nil
}
