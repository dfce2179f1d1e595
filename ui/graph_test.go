package ui

import (
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
)

type drawn struct {
	lines  []*canvas.Line
	texts  []string
	images []*canvas.Image
	boxes  []*canvas.Rectangle
}

func draw(g *GraphView) drawn {
	var d drawn
	for _, o := range test.WidgetRenderer(g).Objects() {
		switch o := o.(type) {
		case *canvas.Line:
			d.lines = append(d.lines, o)
		case *canvas.Text:
			d.texts = append(d.texts, o.Text)
		case *canvas.Image:
			d.images = append(d.images, o)
		case *canvas.Rectangle:
			d.boxes = append(d.boxes, o)
		}
	}
	return d
}

func newTestGraph(t *testing.T, gr Graph, paused bool) *GraphView {
	t.Helper()
	test.NewTempApp(t)
	g := NewGraphView()
	g.now = func() time.Time { return time.Date(2025, 12, 2, 12, 0, 0, 0, time.UTC) }
	g.SetGraph(gr, paused)
	g.Resize(fyne.NewSize(760, 300))
	return g
}

func TestGraphDrawsNodesAndEdges(t *testing.T) {
	gr := sampleState().Graph
	gr.Edges = append(gr.Edges, Edge{AgentID: "ghost", BrowserID: "b1", Tabs: 1}) // stale: no such agent
	g := newTestGraph(t, gr, false)
	d := draw(g)

	if len(d.lines) != 3 {
		t.Errorf("%d lines, want one per valid edge (3)", len(d.lines))
	}
	// One box per node plus one badge per edge.
	if want := len(gr.Agents) + len(gr.Browsers) + 3; len(d.boxes) != want {
		t.Errorf("%d rectangles, want %d", len(d.boxes), want)
	}
	if len(d.images) != len(gr.Browsers) {
		t.Errorf("%d engine glyphs, want %d", len(d.images), len(gr.Browsers))
	}
	for _, want := range []string{
		"AGENTS", "BROWSERS",
		"claude-code", "Acme Copilot", "cursor", "agent", "paired backend", "connected", "last seen 09:30:00",
		"Chrome — Work", "Firefox — Personal", "Chromium (dev)",
		"Chromium · extension", "Firefox · extension", "Chromium · dev browser",
		"2 shared tabs", "1 shared tab · paused", "0 shared tabs",
		"2 tabs", "1 tab", "0 tabs",
	} {
		if !slices.Contains(d.texts, want) {
			t.Errorf("no text %q in %q", want, d.texts)
		}
	}

	// Lines run from the agents' column to the browsers' column.
	for _, l := range d.lines {
		if l.Position1.X >= l.Position2.X {
			t.Errorf("edge runs right to left: %v → %v", l.Position1, l.Position2)
		}
	}

	// Engines are told apart by colour as well as glyph.
	var chromium, firefox int
	for _, b := range d.boxes {
		switch b.StrokeColor {
		case chromiumColor:
			chromium++
		case firefoxColor:
			firefox++
		}
	}
	if chromium != 2 || firefox != 1 {
		t.Errorf("engine outlines: %d chromium, %d firefox", chromium, firefox)
	}
}

func TestGraphRedrawsOnEachState(t *testing.T) {
	g := newTestGraph(t, sampleState().Graph, false)
	g.SetGraph(Graph{
		Agents:   []Node{{ID: "a", Name: "solo", Connected: true}},
		Browsers: []BrowserNode{{ID: "b", Name: "Only browser", Engine: EngineFirefox}},
		Edges:    []Edge{{AgentID: "a", BrowserID: "b", Tabs: 4}},
	}, true)
	d := draw(g)
	if len(d.lines) != 1 || !slices.Contains(d.texts, "4 tabs") || slices.Contains(d.texts, "claude-code") {
		t.Errorf("graph not redrawn: %d lines, texts %q", len(d.lines), d.texts)
	}
	if !slices.Contains(d.texts, "Automation paused: agents' tool calls fail until you resume") {
		t.Errorf("no paused banner in %q", d.texts)
	}
}

func TestGraphEmpty(t *testing.T) {
	d := draw(newTestGraph(t, Graph{}, false))
	if len(d.lines) != 0 || !slices.Contains(d.texts, "Nothing is connected yet") {
		t.Errorf("empty graph: %d lines, texts %q", len(d.lines), d.texts)
	}
	d = draw(newTestGraph(t, Graph{Browsers: []BrowserNode{{ID: "b", Name: "B"}}}, false))
	if !slices.Contains(d.texts, "No agents connected") {
		t.Errorf("no agents placeholder in %q", d.texts)
	}
}

func TestGraphLongNamesFit(t *testing.T) {
	gr := Graph{Agents: []Node{{ID: "a", Name: "an agent with a name far too long to fit in its box at all"}}}
	g := newTestGraph(t, gr, false)
	r := test.WidgetRenderer(g).(*graphRenderer)
	name := r.agents[0].lines[0]
	box := r.agents[0].box
	if name.Position().X+name.MinSize().Width > box.Position().X+box.Size().Width {
		t.Errorf("name %q overflows its box", name.Text)
	}
	if []rune(name.Text)[len([]rune(name.Text))-1] != '…' {
		t.Errorf("a cut name must end with an ellipsis: %q", name.Text)
	}
}

func TestGraphSnapshot(t *testing.T) {
	g := newTestGraph(t, sampleState().Graph, false)
	w := test.NewTempWindow(t, g)
	w.SetPadded(false)
	w.Resize(fyne.NewSize(760, 300))
	test.AssertRendersToMarkup(t, "graph.xml", w.Canvas())
	test.AssertRendersToImage(t, "graph.png", w.Canvas())
}
