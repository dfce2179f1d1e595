package desktoptest

import (
	"context"
	"image"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/wire"
)

// TestDashboardScreenshots drives the real binary into a realistic state
// (three browser profiles, two connected agents with tool calls behind
// them, a disabled tool, a pairing offer) and photographs the approval
// window and every dashboard view. Each shot must show content. With
// REINS_SCREENSHOTS=DIR (make screenshots) the PNGs are kept there for the
// README; otherwise they go to a temporary dir.
func TestDashboardScreenshots(t *testing.T) {
	out := os.Getenv("REINS_SCREENSHOTS")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	d := newDesktop(t)
	newPanel(t, d.bus) // the tray takes the icon, so only what is opened is on screen
	dir := shortDir(t)
	port := freePort(t)
	if os.Getenv("REINS_SCREENSHOTS") != "" && portFree(companion.DefaultPort) {
		port = companion.DefaultPort // the README shows the documented port
	}

	// Tokens issued before start, as `reins token issue` does on the store,
	// and a tool the person turned off.
	tok := map[string]string{}
	for _, name := range []string{"claude-code", "cursor", "nightly-report"} {
		code, stdout, stderr := d.runReins(t, []string{"token", "issue", name, "--data-dir", dir, "--keyring", "file"})
		if code != 0 {
			t.Fatalf("token issue %s: %s", name, stderr)
		}
		tok[name] = strings.TrimSpace(stdout)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"version":1,"disabledTools":["javascript_tool","upload_image"]}`), 0o600); err != nil {
		t.Fatal(err)
	}

	p := d.startReins(t, dir, port, []string{"--keyring", "file"})
	p.waitMCP()
	ctx, cancel := context.WithTimeout(context.Background(), 3*Deadline)
	defer cancel()

	work, err := Dial(ctx, port, dir, wire.Hello{Browser: "Chrome", BrowserEngine: wire.EngineChromium, InstanceID: "work", BrowserSessionID: "w1", Profile: "Work"}, []wire.TabInfo{
		{ID: 11, URL: "https://mail.example.com/inbox", Title: "Inbox (3) — Example Mail", Shared: true, Attached: true, WindowID: 1},
		{ID: 12, URL: "https://docs.example.com/d/q3-planning", Title: "Q3 planning — Docs", Shared: true, Attached: true, WindowID: 1},
		{ID: 13, URL: "https://bank.example.com/", Title: "Online banking", WindowID: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer work.Close()
	home, err := Dial(ctx, port, dir, wire.Hello{Browser: "Firefox", BrowserEngine: wire.EngineFirefox, InstanceID: "home", BrowserSessionID: "h1", Profile: "Personal"}, []wire.TabInfo{
		{ID: 21, URL: "https://travel.example.com/flights?to=LIS", Title: "Flights to Lisbon — Travel", Shared: true, Attached: true, WindowID: 1},
		{ID: 22, URL: "https://video.example.com/", Title: "Video", WindowID: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	edge, err := Dial(ctx, port, dir, wire.Hello{Browser: "Edge", BrowserEngine: wire.EngineChromium, InstanceID: "edge", BrowserSessionID: "e1", Profile: "Home"}, []wire.TabInfo{
		{ID: 31, URL: "https://news.example.com/", Title: "News", WindowID: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Close()

	// Two agents at work, one token never used.
	claude := agentSession(t, ctx, port, "claude-code", tok["claude-code"])
	cursor := agentSession(t, ctx, port, "cursor", tok["cursor"])
	call(t, ctx, claude, "tabs_context_mcp", nil)
	created := call(t, ctx, claude, "tabs_create_mcp", nil)
	if created.IsError {
		t.Fatalf("tabs_create_mcp: %+v", created)
	}
	work.UpdateTab(wire.TabInfo{ID: 1001, URL: "https://github.com/reinshq/reins/pulls", Title: "Pull requests · reinshq/reins", Shared: true, Attached: true, WindowID: 1, Agent: true})
	call(t, ctx, claude, "read_page", map[string]any{"tabId": 3}) // the banking tab: not shared
	call(t, ctx, claude, "javascript_tool", map[string]any{"tabId": 1, "action": "javascript_exec", "text": "document.title"})
	call(t, ctx, cursor, "switch_browser", map[string]any{"browserId": "b2"})
	call(t, ctx, cursor, "tabs_create_mcp", nil)
	home.UpdateTab(wire.TabInfo{ID: 1001, URL: "https://maps.example.com/lisbon", Title: "Lisbon — Maps", Shared: true, Attached: true, WindowID: 1, Agent: true})
	call(t, ctx, cursor, "tabs_context_mcp", nil)

	// A hosted product pairs: its page's offer opens an approval window,
	// the person clicks Allow, and the backend connects and works as an
	// agent named after its brand.
	be := operatortest.New("acme-backend-token", "")
	defer be.Close()
	if err := work.Offer("https://crm.acme.example", "Acme CRM Copilot", map[string]any{
		"transport": "sse-http", "serverUrl": be.URL(), "token": "acme-backend-token",
	}); err != nil {
		t.Fatal(err)
	}
	approve(t, d, d.window(t, "pairing request$"), "pairing request$", be)
	id, err := be.Send("tabs_create_mcp", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := be.Await(ctx, id); err != nil || res.Error != "" {
		t.Fatalf("the backend's command: %+v, %v", res, err)
	}
	work.UpdateTab(wire.TabInfo{ID: 1002, URL: "https://crm.acme.example/leads?owner=me", Title: "My leads — Acme CRM", Shared: true, Attached: true, WindowID: 1, Agent: true})

	// Another product asks; this window is the one for the README.
	if err := home.Offer("https://assistant.globex.example", "Globex Assistant", map[string]any{
		"transport": "websocket", "serverUrl": "wss://api.globex.example/operator", "token": "globex-token",
	}); err != nil {
		t.Fatal(err)
	}
	approval := d.window(t, "pairing request$")
	d.screenshot(t, filepath.Join(out, "approval.png"), approval)
	d.x(t, "xdotool", "windowunmap", "--sync", approval) // out of the way; the offer still waits

	// A second launch shows the running app's dashboard.
	if code, _, stderr := d.runReins(t, []string{"--data-dir", dir, "--port", strconv.Itoa(port), "--keyring", "file"}); code != 0 {
		t.Fatalf("second reins: %s", stderr)
	}
	dash := d.window(t, "^Reins$")
	shot := d.screenshot(t, filepath.Join(out, "connections.png"), dash)
	w, _ := geometry(t, d, dash)
	tabs := tabCentres(shot)
	if len(tabs) < 6 {
		t.Fatalf("found %d dashboard tabs in the tab bar, want 6", len(tabs))
	}
	for i, name := range []string{"connections", "tabs", "agents", "backends", "activity", "settings"} {
		if i == 0 {
			continue
		}
		d.x(t, "xdotool", "mousemove", "--window", dash, strconv.Itoa(tabs[i]), "20", "click", "1")
		// Onto the empty end of the tab bar: no hover highlight on a tab,
		// and no scroll bar shown for the view under the pointer.
		d.x(t, "xdotool", "mousemove", "--window", dash, strconv.Itoa(w-20), "20")
		d.screenshotSelected(t, filepath.Join(out, name+".png"), dash, tabs[i])
	}
	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if os.Getenv("REINS_SCREENSHOTS") != "" {
		// A flat UI loses nothing visible in a 256-colour palette, and the
		// README's images shrink by half.
		for _, f := range []string{"approval", "connections", "tabs", "agents", "backends", "activity", "settings"} {
			path := filepath.Join(out, f+".png")
			d.x(t, "convert", path, "-strip", "-colors", "256", "-define", "png:compression-level=9", "PNG8:"+path)
		}
	}
}

// clickAllow presses the approval window's Allow button, at its bottom
// right inside the theme's padding.
func clickAllow(t *testing.T, d *desktop, win string) {
	t.Helper()
	w, h := geometry(t, d, win)
	d.x(t, "xdotool", "mousemove", "--window", win, strconv.Itoa(w-45), strconv.Itoa(h-26), "click", "1")
}

// approve clicks Allow until the backend connects. Allow ignores clicks for
// its first second on screen (against clickjacking) and X has no event for
// a button becoming active, so a click that came too early is made again
// while the window is still there.
func approve(t *testing.T, d *desktop, win, pattern string, be *operatortest.Backend) {
	t.Helper()
	end := time.Now().Add(Deadline)
	for {
		clickAllow(t, d, win)
		if _, err := be.WaitConnected(500 * time.Millisecond); err == nil {
			return
		}
		wins := d.windows(t, pattern)
		if len(wins) == 0 {
			break // answered: the connection is on its way
		}
		if time.Now().After(end) {
			t.Fatal("the approval window never took Allow")
		}
		win = wins[0]
	}
	if _, err := be.WaitConnected(Deadline); err != nil {
		t.Fatalf("the approved backend did not connect: %v", err)
	}
}

func portFree(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// tabCentres finds the dashboard's tab buttons in a screenshot of its
// window: runs of non-background pixels along the tab bar, left to right.
func tabCentres(img image.Image) []int {
	b := img.Bounds()
	bg := img.At(b.Max.X-2, 20)
	ink := func(x int) bool {
		for y := 8; y < 32; y++ {
			if differs(img.At(x, y), bg) {
				return true
			}
		}
		return false
	}
	var centres []int
	start, gap := -1, 0
	for x := b.Min.X; x < b.Max.X; x++ {
		if ink(x) {
			if start < 0 {
				start = x
			}
			gap = 0
			continue
		}
		if start >= 0 {
			gap++
			if gap > 14 { // wider than a word space: the next tab
				centres = append(centres, (start+x-gap)/2)
				start = -1
			}
		}
	}
	return centres
}

func differs(a, b interface{ RGBA() (r, g, b, a uint32) }) bool {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := func(x, y uint32) uint32 {
		if x > y {
			return x - y
		}
		return y - x
	}
	return d(ar, br)+d(ag, bg)+d(ab, bb) > 3*0x1800
}

// screenshotSelected takes a shot of the dashboard once the tab at x is
// selected and the window has stopped changing: the selection underline
// slides over in an animation, and the shot must not catch it halfway.
func (d *desktop) screenshotSelected(t *testing.T, path, window string, x int) image.Image {
	t.Helper()
	var prev image.Image
	deadline := time.Now().Add(Deadline)
	for {
		img := d.screenshot(t, path, window)
		if underlined(img, x) && prev != nil && sameImage(img, prev) {
			return img
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the tab at x=%d never settled as selected", path, x)
		}
		prev = img
	}
}

// underlined reports whether the tab bar's selection underline (the
// theme's primary blue) runs under x.
func underlined(img image.Image, x int) bool {
	for y := 34; y < 46; y++ {
		r, g, b, _ := img.At(x, y).RGBA()
		if b>>8 > 180 && b>>8 > r>>8+80 && b>>8 > g>>8+40 {
			return true
		}
	}
	return false
}

func sameImage(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 3 {
		for x := r.Min.X; x < r.Max.X; x += 3 {
			if differs(a.At(x, y), b.At(x, y)) {
				return false
			}
		}
	}
	return true
}

// agentSession connects an MCP client with an agent token.
func agentSession(t *testing.T, ctx context.Context, port int, name, token string) *sdk.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cl := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp",
		HTTPClient: &http.Client{Transport: companiontest.Bearer{Token: token, Base: tr}},
	}, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}
