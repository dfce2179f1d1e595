package desktoptest

import (
	"context"
	"encoding/json"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/wire"
)

// TestFirstRunGuide is a new person's first run, with the real binary:
// a fresh HOME where Claude Desktop is installed, Reins started from the
// menu, the guide opening by itself, a browser's extension connecting,
// Connect clicked for Claude Desktop (which writes its config), Claude
// Desktop starting what that config names, a demo tab, and the agent's
// first call. Each step must turn green on screen; with
// REINS_SCREENSHOTS=DIR the shots are kept for the README.
func TestFirstRunGuide(t *testing.T) {
	out := os.Getenv("REINS_SCREENSHOTS")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	d := newDesktop(t)
	pnl := newPanel(t, d.bus)
	dir := shortDir(t)
	port := freePort(t)
	// Claude Desktop is installed: its settings folder exists, as its
	// first start leaves it.
	claudeDir := filepath.Join(d.home, ".config", "Claude")
	if err := os.MkdirAll(claudeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(claudeDir, "claude_desktop_config.json")

	notes := pnl.serveNotifications(t)
	p := d.startReins(t, dir, port, []string{"--keyring", "file"})
	p.waitMCP()
	icon := pnl.waitItem(t).sender
	// The first notification says where Reins lives and what it does.
	select {
	case n := <-notes:
		if n.Summary != "Reins is running" || !strings.Contains(n.Body, "lives in your tray") {
			t.Errorf("first notification %+v", n)
		}
	case <-time.After(Deadline):
		t.Fatal("no notification at first run")
	}
	win := d.window(t, "^Set up Reins$")
	shot := func(n int, name string, greens int) int {
		t.Helper()
		return d.guideShot(t, filepath.Join(out, "guide-"+strconv.Itoa(n)+"-"+name+".png"), win, greens)
	}
	// Step 1 is green at once: this machine has Chromium and Firefox.
	g1 := shot(1, "browsers", 1)

	// The tray says what Reins is doing, and has Set up….
	if tip := pnl.tooltip(t, icon); tip != "Reins is running, waiting for a browser: Set up… shows how" {
		t.Errorf("tooltip %q", tip)
	}
	pnl.waitMenu(t, icon, "Set up…", func(m menuItem) bool { _, ok := m.find("Set up…"); return ok })

	// The extension's hello: steps 2 and 3 turn green.
	ctx, cancel := context.WithTimeout(context.Background(), 3*Deadline)
	defer cancel()
	br, err := Dial(ctx, port, dir, wire.Hello{Browser: "Chrome", BrowserEngine: wire.EngineChromium, InstanceID: "work", BrowserSessionID: "w1", Profile: "Work"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	g2 := shot(2, "connected", g1+1)

	// Connect for Claude Desktop: the lowest primary button in the window.
	written := watchFile(t, config)
	d.clickLowestPrimary(t, win)
	select {
	case <-written:
	case <-time.After(Deadline):
		t.Fatalf("clicking Connect wrote no %s; log:\n%s", config, p.log())
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	data, _ := os.ReadFile(config)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the written config: %v\n%s", err, data)
	}
	entry, ok := doc.MCPServers["reins"]
	if !ok || entry.Command != reinsBin || !strings.Contains(strings.Join(entry.Args, " "), "mcp --token-name claude-desktop") || strings.Contains(string(data), "rt_") {
		t.Fatalf("Claude Desktop's config: %s", data)
	}
	g3 := shot(3, "agent-set-up", g2)

	// Claude Desktop starts what its config names: the agent connects
	// through `reins mcp`, with the token from the store.
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = d.env()
	cl := sdk.NewClient(&sdk.Implementation{Name: "claude-desktop", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("the agent's stdio bridge: %v; log:\n%s", err, p.log())
	}
	defer cs.Close()
	call(t, ctx, cs, "tabs_context_mcp", nil)
	g4 := shot(4, "agent-connected", g3+1)

	// Try it: the demo tab opens in the browser, the agent's first call
	// after it shows up. The last step is below the fold.
	w, h := geometry(t, d, win)
	d.x(t, "xdotool", "mousemove", "--window", win, strconv.Itoa(w/2), strconv.Itoa(h/2), "click", "--repeat", "20", "5")
	d.clickLowestPrimary(t, win)
	demo, err := br.WaitCreated(ctx)
	if err != nil {
		t.Fatalf("clicking Open a demo tab: %v", err)
	}
	if !strings.HasPrefix(demo, "http://127.0.0.1:") {
		t.Errorf("demo tab at %s", demo)
	}
	call(t, ctx, cs, "tabs_context_mcp", nil)
	// The first call's line lands under the button; bring it into view
	// once the step has turned green.
	shot(5, "first-call", g4+1)
	d.x(t, "xdotool", "mousemove", "--window", win, strconv.Itoa(w/2), strconv.Itoa(h/2), "click", "--repeat", "20", "5")
	shot(5, "first-call", g4) // the first step has scrolled out of view

	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d; log:\n%s", code, p.log())
	}
	if os.Getenv("REINS_SCREENSHOTS") != "" {
		for i, f := range []string{"browsers", "connected", "agent-set-up", "agent-connected", "first-call"} {
			path := filepath.Join(out, "guide-"+strconv.Itoa(i+1)+"-"+f+".png")
			d.x(t, "convert", path, "-strip", "-colors", "256", "-define", "png:compression-level=9", "PNG8:"+path)
		}
	}
}

// watchFile reports when path is written (created or replaced by rename).
func watchFile(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.Add(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for ev := range w.Events {
			if ev.Name == path && ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Rename) != 0 {
				if _, err := os.Stat(path); err == nil {
					close(done)
					return
				}
			}
		}
	}()
	return done
}

// guideShot takes shots of the guide until it shows at least greens green
// step marks and has stopped changing, and returns how many it shows.
func (d *desktop) guideShot(t *testing.T, path, win string, greens int) int {
	t.Helper()
	var prev image.Image
	deadline := time.Now().Add(Deadline)
	for {
		img := d.screenshot(t, path, win)
		n := greenMarks(img)
		if n >= greens && prev != nil && sameImage(img, prev) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the guide shows %d green steps, want %d", path, n, greens)
		}
		prev = img
	}
}

// greenMarks counts the guide's green step marks: a step turns green by
// drawing a check in the theme's success colour at the left edge of its
// card, so green runs in a narrow column there are the marks.
func greenMarks(img image.Image) int {
	b := img.Bounds()
	var rows []int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Min.X+60 && x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if g>>8 > 170 && r>>8 < 140 && bl>>8 < 140 {
				rows = append(rows, y)
				break
			}
		}
	}
	// Group rows into marks: a gap of more than a few pixels starts a new
	// one. The card's green border adds a line above and below each mark,
	// which merges into it or stands alone; only groups of the icon's
	// height count.
	marks, start, last := 0, -10, -10
	flush := func() {
		if last-start >= 8 {
			marks++
		}
	}
	for _, y := range rows {
		if y-last > 3 {
			if start >= 0 {
				flush()
			}
			start = y
		}
		last = y
	}
	if start >= 0 {
		flush()
	}
	return marks
}

// clickLowestPrimary clicks the lowest button drawn in the theme's primary
// colour: in the guide, the next thing to do.
func (d *desktop) clickLowestPrimary(t *testing.T, win string) {
	t.Helper()
	img := d.screenshot(t, filepath.Join(t.TempDir(), "click.png"), win)
	b := img.Bounds()
	type run struct{ y, x0, x1 int }
	var runs []run
	for y := b.Min.Y; y < b.Max.Y; y++ {
		x0 := -1
		for x := b.Min.X; x <= b.Max.X; x++ {
			blue := false
			if x < b.Max.X {
				r, g, bl, _ := img.At(x, y).RGBA()
				blue = bl>>8 > 180 && bl>>8 > r>>8+80 && bl>>8 > g>>8+40
			}
			switch {
			case blue && x0 < 0:
				x0 = x
			case !blue && x0 >= 0:
				if x-x0 > 40 { // a button, not text or an underline
					runs = append(runs, run{y, x0, x})
				}
				x0 = -1
			}
		}
	}
	if len(runs) == 0 {
		t.Fatal("no primary button in the window")
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].y < runs[j].y })
	lowest := runs[len(runs)-1]
	// The middle of that button: go up through its rows.
	top := lowest.y
	for i := len(runs) - 2; i >= 0 && runs[i].y >= top-1 && runs[i].x0 <= lowest.x1 && runs[i].x1 >= lowest.x0; i-- {
		top = runs[i].y
	}
	x, y := (lowest.x0+lowest.x1)/2, (top+lowest.y)/2
	d.x(t, "xdotool", "mousemove", "--window", win, strconv.Itoa(x), strconv.Itoa(y), "click", "1")
}
