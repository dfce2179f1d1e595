package ui

import (
	"image/color"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/reinshq/reins/assets"
)

// Engine colours identify a browser family at a glance next to its glyph.
// They are brand colours, so they do not change with the theme.
var (
	chromiumColor = color.NRGBA{0x42, 0x85, 0xf4, 0xff}
	firefoxColor  = color.NRGBA{0xff, 0x71, 0x39, 0xff}
)

// Geometry of the picture, in Fyne units.
const (
	graphPad     = 12
	graphHeader  = 30
	nodeHeight   = 66
	nodeGap      = 16
	nodeMinWidth = 170
	nodeMaxWidth = 270
	edgeMinRun   = 110 // horizontal room the edges need between the columns
	glyphSize    = 30
)

// GraphView draws who is connected to what: agents and backends on the left,
// browsers on the right, a line per agent–browser pair labelled with the
// number of tabs shared. It is a picture made of canvas primitives, redrawn
// from scratch on every SetGraph: graphs are small and a rebuild is simpler
// than diffing.
type GraphView struct {
	widget.BaseWidget
	graph  Graph
	paused bool
	now    func() time.Time
}

// NewGraphView returns an empty graph.
func NewGraphView() *GraphView {
	g := &GraphView{now: time.Now}
	g.ExtendBaseWidget(g)
	return g
}

// SetGraph replaces the picture. paused is the global pause, which dims every
// edge and shows a banner.
func (g *GraphView) SetGraph(gr Graph, paused bool) {
	g.graph, g.paused = gr, paused
	g.Refresh()
}

func (g *GraphView) CreateRenderer() fyne.WidgetRenderer {
	r := &graphRenderer{g: g}
	r.rebuild()
	return r
}

type nodeShape struct {
	box   *canvas.Rectangle
	dot   *canvas.Circle // agents: connected or not
	glyph *canvas.Image  // browsers: engine
	lines []*canvas.Text // name, then details
	full  []string       // untruncated lines, so a wider layout can show more
}

type edgeShape struct {
	from, to *nodeShape
	line     *canvas.Line
	badge    *canvas.Rectangle
	label    *canvas.Text
}

type graphRenderer struct {
	g        *GraphView
	objects  []fyne.CanvasObject
	agents   []*nodeShape
	browsers []*nodeShape
	edges    []*edgeShape
	headers  [2]*canvas.Text
	notes    []*canvas.Text // banner and empty-state text, laid out centred
	noteAt   []func(fyne.Size) fyne.Position
}

func (r *graphRenderer) color(name fyne.ThemeColorName) color.Color {
	return r.g.Theme().Color(name, fyne.CurrentApp().Settings().ThemeVariant())
}

func (r *graphRenderer) text(s string, size fyne.ThemeSizeName, col fyne.ThemeColorName, bold bool) *canvas.Text {
	t := canvas.NewText(s, r.color(col))
	t.TextSize = r.g.Theme().Size(size)
	t.TextStyle = fyne.TextStyle{Bold: bold}
	return t
}

// rebuild recreates every object from the graph.
func (r *graphRenderer) rebuild() {
	gr := r.g.graph
	r.agents, r.browsers, r.edges, r.notes, r.noteAt = nil, nil, nil, nil, nil

	byID := map[string]*nodeShape{}
	for _, n := range gr.Agents {
		s := r.agentShape(n)
		r.agents = append(r.agents, s)
		byID["a:"+n.ID] = s
	}
	for _, b := range gr.Browsers {
		s := r.browserShape(b, r.g.paused)
		r.browsers = append(r.browsers, s)
		byID["b:"+b.ID] = s
	}

	edgeColor := r.color(theme.ColorNamePrimary)
	if r.g.paused {
		edgeColor = r.color(theme.ColorNameDisabled)
	}
	for _, e := range gr.Edges {
		from, to := byID["a:"+e.AgentID], byID["b:"+e.BrowserID]
		if from == nil || to == nil {
			continue // a stale edge must not draw a line to nowhere
		}
		line := canvas.NewLine(edgeColor)
		line.StrokeWidth = 2
		label := r.text(plural(e.Tabs, "tab"), theme.SizeNameCaptionText, theme.ColorNameForeground, true)
		badge := canvas.NewRectangle(r.color(theme.ColorNameBackground))
		badge.StrokeColor = edgeColor
		badge.StrokeWidth = 1
		badge.CornerRadius = 9
		r.edges = append(r.edges, &edgeShape{from: from, to: to, line: line, badge: badge, label: label})
	}

	r.headers[0] = r.text("AGENTS", theme.SizeNameCaptionText, theme.ColorNamePlaceHolder, true)
	r.headers[1] = r.text("BROWSERS", theme.SizeNameCaptionText, theme.ColorNamePlaceHolder, true)

	switch {
	case len(gr.Agents) == 0 && len(gr.Browsers) == 0:
		r.note(r.text("Nothing is connected yet", theme.SizeNameSubHeadingText, theme.ColorNameForeground, true), 0, -14)
		r.note(r.text("Install the Reins extension in a browser, then connect an agent from the Agents tab.",
			theme.SizeNameText, theme.ColorNamePlaceHolder, false), 0, 14)
	case len(gr.Agents) == 0:
		r.note(r.text("No agents connected", theme.SizeNameText, theme.ColorNamePlaceHolder, false), -1, 0)
	case len(gr.Browsers) == 0:
		r.note(r.text("No browsers connected", theme.SizeNameText, theme.ColorNamePlaceHolder, false), 1, 0)
	}
	if r.g.paused {
		banner := r.text("Automation paused: agents' tool calls fail until you resume",
			theme.SizeNameText, theme.ColorNameWarning, true)
		r.notes = append(r.notes, banner)
		r.noteAt = append(r.noteAt, func(s fyne.Size) fyne.Position {
			return fyne.NewPos((s.Width-banner.MinSize().Width)/2, graphPad)
		})
	}

	// Paint order: lines under boxes, tab badges over everything. Column
	// headers over an empty picture would only add noise to the hint.
	var objs []fyne.CanvasObject
	if len(gr.Agents)+len(gr.Browsers) > 0 {
		objs = append(objs, r.headers[0], r.headers[1])
	}
	for _, e := range r.edges {
		objs = append(objs, e.line)
	}
	for _, s := range append(append([]*nodeShape{}, r.agents...), r.browsers...) {
		objs = append(objs, s.box)
		if s.dot != nil {
			objs = append(objs, s.dot)
		}
		if s.glyph != nil {
			objs = append(objs, s.glyph)
		}
		for _, t := range s.lines {
			objs = append(objs, t)
		}
	}
	for _, e := range r.edges {
		objs = append(objs, e.badge, e.label)
	}
	for _, t := range r.notes {
		objs = append(objs, t)
	}
	r.objects = objs
}

// note places a centred text: column -1 is the agents side, 1 the browsers
// side, 0 the whole picture; dy shifts it from the vertical middle.
func (r *graphRenderer) note(t *canvas.Text, column int, dy float32) {
	r.notes = append(r.notes, t)
	r.noteAt = append(r.noteAt, func(s fyne.Size) fyne.Position {
		w := t.MinSize()
		cx := s.Width / 2
		switch column {
		case -1:
			cx = graphPad + nodeWidth(s)/2
		case 1:
			cx = s.Width - graphPad - nodeWidth(s)/2
		}
		return fyne.NewPos(cx-w.Width/2, (s.Height+graphHeader)/2+dy-w.Height/2)
	})
}

func (r *graphRenderer) agentShape(n Node) *nodeShape {
	box := canvas.NewRectangle(r.color(theme.ColorNameInputBackground))
	box.CornerRadius = 10
	box.StrokeWidth = 2
	dot := canvas.NewCircle(r.color(theme.ColorNameDisabled))
	box.StrokeColor = r.color(theme.ColorNameDisabled)
	if n.Connected {
		dot.FillColor = r.color(theme.ColorNameSuccess)
		box.StrokeColor = r.color(theme.ColorNamePrimary)
	}
	kind := "agent"
	if n.Kind == KindBackend {
		kind = "paired backend"
	}
	return &nodeShape{box: box, dot: dot, lines: []*canvas.Text{
		r.text(untrusted(n.Name, 40), theme.SizeNameText, theme.ColorNameForeground, true),
		r.text(kind, theme.SizeNameCaptionText, theme.ColorNamePlaceHolder, false),
		r.text(lastSeen(n.Connected, n.LastSeen, r.g.now()), theme.SizeNameCaptionText, theme.ColorNamePlaceHolder, false),
	}}
}

func (r *graphRenderer) browserShape(b BrowserNode, allPaused bool) *nodeShape {
	box := canvas.NewRectangle(r.color(theme.ColorNameInputBackground))
	box.CornerRadius = 10
	box.StrokeWidth = 2
	glyph := assets.Chromium
	box.StrokeColor = chromiumColor
	if b.Engine == EngineFirefox {
		glyph = assets.Firefox
		box.StrokeColor = firefoxColor
	}
	img := canvas.NewImageFromResource(glyph)
	img.FillMode = canvas.ImageFillContain

	mode := "extension"
	if b.Mode == ModeDev {
		mode = "dev browser"
	}
	status := plural(b.SharedTabs, "shared tab")
	statusColor := theme.ColorNamePlaceHolder
	if b.Paused || allPaused {
		status += " · paused"
		statusColor = theme.ColorNameWarning
	}
	return &nodeShape{box: box, glyph: img, lines: []*canvas.Text{
		r.text(untrusted(b.Name, 40), theme.SizeNameText, theme.ColorNameForeground, true),
		r.text(engineName(b.Engine)+" · "+mode, theme.SizeNameCaptionText, theme.ColorNamePlaceHolder, false),
		r.text(status, theme.SizeNameCaptionText, statusColor, false),
	}}
}

func nodeWidth(s fyne.Size) float32 {
	w := (s.Width - 2*graphPad - edgeMinRun) / 2
	return max(nodeMinWidth, min(nodeMaxWidth, w))
}

func (r *graphRenderer) Layout(s fyne.Size) {
	w := nodeWidth(s)
	top := float32(graphPad + graphHeader)
	if r.g.paused {
		top += 8 // room for the banner
	}
	r.headers[0].Move(fyne.NewPos(graphPad, top-18))
	r.headers[1].Move(fyne.NewPos(s.Width-graphPad-w, top-18))

	column := func(nodes []*nodeShape, x float32) {
		n := float32(len(nodes))
		used := n*nodeHeight + max(n-1, 0)*nodeGap
		y := top + max((s.Height-top-graphPad-used)/2, 0)
		for _, nd := range nodes {
			r.placeNode(nd, fyne.NewPos(x, y), w)
			y += nodeHeight + nodeGap
		}
	}
	column(r.agents, graphPad)
	column(r.browsers, s.Width-graphPad-w)

	var placed []fyne.Position // badge centres so far
	for _, e := range r.edges {
		a := e.from.box.Position().Add(fyne.NewPos(w, nodeHeight/2))
		b := e.to.box.Position().Add(fyne.NewPos(0, nodeHeight/2))
		e.line.Position1, e.line.Position2 = a, b

		ls := e.label.MinSize()
		bs := fyne.NewSize(ls.Width+16, ls.Height+4)
		// Crossing edges would stack their badges; slide a badge along its
		// own line until it is clear of the ones already placed.
		var mid fyne.Position
		for _, t := range []float32{0.62, 0.78, 0.46, 0.88, 0.34} {
			mid = fyne.NewPos(a.X+(b.X-a.X)*t, a.Y+(b.Y-a.Y)*t)
			if !overlaps(mid, bs, placed) {
				break
			}
		}
		placed = append(placed, mid)
		e.badge.Resize(bs)
		e.badge.Move(mid.SubtractXY(bs.Width/2, bs.Height/2))
		e.label.Move(mid.SubtractXY(ls.Width/2, ls.Height/2))
	}
	for i, t := range r.notes {
		t.Move(r.noteAt[i](s))
	}
}

func overlaps(c fyne.Position, s fyne.Size, others []fyne.Position) bool {
	for _, o := range others {
		if abs(c.X-o.X) < s.Width && abs(c.Y-o.Y) < s.Height+2 {
			return true
		}
	}
	return false
}

func abs(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}

func (r *graphRenderer) placeNode(nd *nodeShape, at fyne.Position, w float32) {
	nd.box.Move(at)
	nd.box.Resize(fyne.NewSize(w, nodeHeight))
	textX := at.X + 14
	if nd.dot != nil {
		nd.dot.Move(at.AddXY(14, 14))
		nd.dot.Resize(fyne.NewSize(10, 10))
		textX = at.X + 32
	}
	if nd.glyph != nil {
		nd.glyph.Move(at.AddXY(12, (nodeHeight-glyphSize)/2))
		nd.glyph.Resize(fyne.NewSize(glyphSize, glyphSize))
		textX = at.X + 12 + glyphSize + 10
	}
	if nd.full == nil {
		for _, t := range nd.lines {
			nd.full = append(nd.full, t.Text)
		}
	}
	y := at.Y + 7
	for i, t := range nd.lines {
		t.Text = nd.full[i]
		fit(t, at.X+w-10-textX)
		t.Move(fyne.NewPos(textX, y))
		if i == 0 {
			y += t.MinSize().Height + 1
		} else {
			y += t.MinSize().Height - 1
		}
	}
}

// fit shortens a text with an ellipsis until it fits width.
func fit(t *canvas.Text, width float32) {
	full := t.Text
	if full == "" || t.MinSize().Width <= width {
		return
	}
	runes := []rune(full)
	for n := len(runes) - 1; n > 0; n-- {
		t.Text = string(runes[:n]) + "…"
		if fyne.MeasureText(t.Text, t.TextSize, t.TextStyle).Width <= width {
			return
		}
	}
}

func (r *graphRenderer) MinSize() fyne.Size {
	n := max(len(r.agents), len(r.browsers), 1)
	h := graphPad*2 + graphHeader + float32(n)*nodeHeight + float32(n-1)*nodeGap + 8
	if len(r.agents) == 0 && len(r.browsers) == 0 {
		h += 40
	}
	w := float32(2*graphPad + 2*nodeMinWidth + edgeMinRun)
	for _, t := range r.notes {
		w = max(w, t.MinSize().Width+2*graphPad)
	}
	return fyne.NewSize(w, h)
}

func (r *graphRenderer) Refresh() {
	r.rebuild()
	r.Layout(r.g.Size())
	for _, o := range r.objects {
		o.Refresh()
	}
}

func (r *graphRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *graphRenderer) Destroy()                     {}
