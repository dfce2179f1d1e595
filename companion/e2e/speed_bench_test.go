package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	reinsmcp "github.com/reinshq/reins/companion/mcp"
)

// The speed table of issue 15: each op's p50 through the real extension in
// headless Chromium on the 200-element bench page, beside the direct-CDP
// floor for the same op (the page's own DevTools WebSocket, same run) and
// the target. It is a report: a miss is printed, never failed.

const (
	speedSamples = 30 // timed calls per op
	speedWarmup  = 5
	traceSamples = 20 // traced calls per op for the hop table
	agentCount   = 10
	agentCalls   = 50
)

type speedRow struct {
	op     string
	reins  float64 // p50 (ms), or the measured value in unit
	floor  float64 // -1: no floor
	unit   string
	target float64
}

// buildName is which build of reins is under test, from its version line:
// make bench runs the server build.
func buildName(b *testing.B) string {
	bin, err := harness.Binary()
	if err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		b.Fatalf("reins version: %v", err)
	}
	if strings.Contains(string(out), "(server build)") {
		return "server build"
	}
	return "desktop build"
}

// speedDone keeps the table to one run: the testing package calls a
// benchmark again only when the first run was shorter than -benchtime, and
// this one takes far longer.
var speedDone bool

// BenchmarkSpeed prints the target table, the per-hop trace of
// javascript_tool and left_click, and the many-agents run. The tray app's
// idle RSS needs the GUI binary under Xvfb: BenchmarkTrayIdleRSS in
// app/desktoptest.
func BenchmarkSpeed(b *testing.B) {
	if speedDone {
		return
	}
	speedDone = true
	s := newStack(b, harness.WithWindowSize(1280, 800))
	url := startBenchPage(b).URL + "/"
	cs := mcpSession(b, s.Reins, "speed")
	tab := openBenchTab(b, cs, url)
	direct := directPage(b, s, url)
	viewport := sizeViewport(b, cs, tab, 1280, 800)
	find := benchCall(b, cs, "find", map[string]any{"tabId": tab, "query": "Save 3 button"})
	ref := refFor(b, find, `"Save 3"`)
	ctx := within(b, 10*time.Minute)

	js := map[string]any{"tabId": tab, "text": "1 + 1"}
	click := map[string]any{"tabId": tab, "action": "left_click", "ref": ref}
	shot := map[string]any{"tabId": tab, "action": "screenshot"}
	rows := []speedRow{
		{"javascript_tool", p50(b, cs, "javascript_tool", js), direct.p50(b, direct.evaluate), "ms", 4},
		{"computer left_click by ref", p50(b, cs, "computer", click), direct.p50(b, direct.click), "ms", 45},
		{"read_page", p50(b, cs, "read_page", map[string]any{"tabId": tab}), direct.p50(b, direct.tree), "ms", 8},
		{"computer screenshot " + viewport, p50(b, cs, "computer", shot), direct.p50(b, direct.screenshot), "ms", 30},
	}
	// Traced before the navigations below: the click's ref is of this
	// document.
	nav := map[string]any{"tabId": tab, "url": url}
	hops := hopTable(ctx, b, s, cs, []tracedOp{
		{"javascript_tool", "javascript_tool", js}, {"left_click", "computer", click},
		{"screenshot", "computer", shot}, {"navigate", "navigate", nav},
	})
	navRow := speedRow{"navigate to a local page", p50(b, cs, "navigate", nav), direct.p50(b, direct.navigate), "ms", 120}
	// Last: a headless window cannot grow back past its screen.
	small := sizeViewport(b, cs, tab, 780, 437)
	kb, floorKB := shotKB(b, cs, shot), direct.screenshotKB(b)
	rows = append(rows, speedRow{"screenshot size at " + small, kb, floorKB, "KB", 15}, navRow)
	st := procStatusKiB(b, s.Reins.PID())
	rows = append(rows, speedRow{"companion RSS (" + buildName(b) + ")", float64(st["VmRSS"]) / 1024, -1, "MiB", 30})

	var out strings.Builder
	fmt.Fprintf(&out, "\nSpeed (p50 of %d calls through the extension, headless Chromium, the %d-element bench page)\n", speedSamples, benchElements)
	fmt.Fprintf(&out, "%-36s %12s %14s %10s  %s\n", "op", "Reins", "direct CDP", "target", "")
	for _, r := range rows {
		floor := "—"
		if r.floor >= 0 {
			floor = fmtVal(r.floor, r.unit)
		}
		verdict := "pass"
		if r.reins > r.target {
			verdict = "MISS"
		}
		fmt.Fprintf(&out, "%-36s %12s %14s %10s  %s\n", r.op, fmtVal(r.reins, r.unit), floor, "≤ "+fmtVal(r.target, r.unit), verdict)
	}
	fmt.Fprintf(&out, "%-36s %12s %14s %10s  %s\n", "tray app idle RSS", "see below", "—", "≤ 100 MiB", "BenchmarkTrayIdleRSS (app/desktoptest)")

	out.WriteString(hops)
	out.WriteString(agentsTable(ctx, b, s, url))
	fmt.Print(out.String())
}

func fmtVal(v float64, unit string) string {
	switch {
	case unit == "ms" && v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case unit == "ms":
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// benchElements counts the bench page's elements, for the table's title.
var benchElements = strings.Count(benchPage(), "<") - strings.Count(benchPage(), "</")

var tabCreated = regexp.MustCompile(`Created tab (\d+)`)

func openBenchTab(b *testing.B, cs *mcp.ClientSession, url string) int {
	out := benchCall(b, cs, "tabs_create_mcp", map[string]any{"url": url})
	m := tabCreated.FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("tabs_create_mcp answered %s", out)
	}
	tab, _ := strconv.Atoi(m[1])
	return tab
}

var viewportRE = regexp.MustCompile(`viewport is (\d+)×(\d+)`)

// sizeViewport resizes the tab's window until its viewport is w×h CSS px
// (headless windows have no frame, but say so only by measuring) and
// returns "w×h" as reached.
func sizeViewport(b *testing.B, cs *mcp.ClientSession, tab, w, h int) string {
	got := strings.TrimSpace(benchCall(b, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "innerWidth + '×' + innerHeight"}))
	if got == fmt.Sprintf("%d×%d", w, h) {
		return got
	}
	ww, wh := w, h
	for range 3 {
		_, res, err := callMCP(within(b, time.Minute), cs, &mcp.CallToolParams{Name: "resize_window", Arguments: map[string]any{"tabId": tab, "width": ww, "height": wh}})
		if err != nil {
			b.Fatalf("viewport %s, want %d×%d: %v", got, w, h, err)
		}
		out := resultText(res)
		m := viewportRE.FindStringSubmatch(out)
		if m == nil {
			b.Fatalf("resize_window answered %s", out)
		}
		vw, _ := strconv.Atoi(m[1])
		vh, _ := strconv.Atoi(m[2])
		got = m[1] + "×" + m[2]
		if vw == w && vh == h {
			break
		}
		ww, wh = ww+w-vw, wh+h-vh
	}
	return got
}

// callMCP runs one tool call and returns its wall time and result.
func callMCP(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) (time.Duration, *mcp.CallToolResult, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, params)
	d := time.Since(start)
	if err == nil && res.IsError {
		err = fmt.Errorf("%s failed: %s", params.Name, resultText(res))
	}
	return d, res, err
}

func resultText(res *mcp.CallToolResult) string {
	var out strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out.WriteString(t.Text)
		}
	}
	return out.String()
}

// p50 times speedSamples calls of a tool after a warm-up.
func p50(b *testing.B, cs *mcp.ClientSession, tool string, args map[string]any) float64 {
	ctx := within(b, 5*time.Minute)
	var lat []time.Duration
	for i := range speedWarmup + speedSamples {
		d, _, err := callMCP(ctx, cs, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			b.Fatal(err)
		}
		if i >= speedWarmup {
			lat = append(lat, d)
		}
	}
	return pctMS(lat, 50)
}

func pctMS(lat []time.Duration, q int) float64 {
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[(len(s)-1)*q/100].Microseconds()) / 1000
}

func shotKB(b *testing.B, cs *mcp.ClientSession, args map[string]any) float64 {
	_, res, err := callMCP(within(b, time.Minute), cs, &mcp.CallToolParams{Name: "computer", Arguments: args})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			return float64(len(img.Data)) / 1024
		}
	}
	b.Fatalf("screenshot without an image: %s", resultText(res))
	return 0
}

// ---- the direct-CDP floor

// floorPage drives the bench tab over the page's own DevTools WebSocket:
// the same work as each tool with no companion, extension or checks.
type floorPage struct {
	cdp    *harness.CDP
	url    string
	world  int // an isolated world with the page helper, as the tools use
	loaded chan struct{}
}

func directPage(b *testing.B, s *harness.Stack, url string) *floorPage {
	ctx := within(b, time.Minute)
	target, err := s.Chrome.WaitTarget(ctx, func(t harness.TargetInfo) bool { return t.URL == url })
	if err != nil {
		b.Fatalf("no DevTools target for the bench tab: %v", err)
	}
	c, err := harness.DialCDP(ctx, fmt.Sprintf("ws://127.0.0.1:%d/devtools/page/%s", s.Chrome.DevToolsPort, target.TargetID))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	f := &floorPage{cdp: c, url: url, loaded: make(chan struct{}, 1)}
	c.Subscribe(func(ev harness.CDPEvent) {
		if ev.Method == "Page.loadEventFired" {
			select {
			case f.loaded <- struct{}{}:
			default:
			}
		}
	})
	if err := c.Call(ctx, "", "Page.enable", nil, nil); err != nil {
		b.Fatal(err)
	}
	f.install(b)
	return f
}

// install puts the tools' page helper (page.js) into a fresh isolated
// world of the current document.
func (f *floorPage) install(b *testing.B) {
	ctx := within(b, time.Minute)
	root, err := harness.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(root, "companion", "tools", "page.js"))
	if err != nil {
		b.Fatal(err)
	}
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID string `json:"id"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := f.cdp.Call(ctx, "", "Page.getFrameTree", nil, &tree); err != nil {
		b.Fatal(err)
	}
	var world struct {
		ID int `json:"executionContextId"`
	}
	if err := f.cdp.Call(ctx, "", "Page.createIsolatedWorld", map[string]any{"frameId": tree.FrameTree.Frame.ID, "worldName": "reins-floor"}, &world); err != nil {
		b.Fatal(err)
	}
	if err := f.cdp.Call(ctx, "", "Runtime.evaluate", map[string]any{"expression": string(js), "contextId": world.ID}, nil); err != nil {
		b.Fatal(err)
	}
	f.world = world.ID
}

func (f *floorPage) p50(b *testing.B, op func(ctx context.Context) error) float64 {
	ctx := within(b, 5*time.Minute)
	var lat []time.Duration
	for i := range speedWarmup + speedSamples {
		start := time.Now()
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
		if i >= speedWarmup {
			lat = append(lat, time.Since(start))
		}
	}
	return pctMS(lat, 50)
}

// evaluate is the command javascript_tool sends, with its options (REPL
// mode, awaiting, a user gesture and a timeout cost 0.6 ms in the page
// over a bare evaluate).
func (f *floorPage) evaluate(ctx context.Context) error {
	return f.cdp.Call(ctx, "", "Runtime.evaluate", map[string]any{
		"expression": "1 + 1", "awaitPromise": true, "replMode": true, "userGesture": true, "objectGroup": "reins-js", "timeout": 30000,
	}, nil)
}

func (f *floorPage) helper(ctx context.Context, fn string, out any, args ...any) error {
	cargs := make([]map[string]any, len(args))
	for i, a := range args {
		cargs[i] = map[string]any{"value": a}
	}
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	err := f.cdp.Call(ctx, "", "Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": "function(...a){return globalThis.__reins.call(" + strconv.Quote(fn) + ", a)}",
		"executionContextId":  f.world, "arguments": cargs, "returnByValue": true, "awaitPromise": true,
	}, &res)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(res.Result.Value, out)
}

// tree is read_page's page work: the helper's tree of the whole page.
func (f *floorPage) tree(ctx context.Context) error {
	return f.helper(ctx, "tree", nil, map[string]any{"filter": "", "depth": 0, "ref": ""})
}

// click is a click on the Save 3 button: its centre, then the three mouse
// events the tool sends.
func (f *floorPage) click(ctx context.Context) error {
	var res struct {
		Result struct {
			Value []float64 `json:"value"`
		} `json:"result"`
	}
	if err := f.cdp.Call(ctx, "", "Runtime.evaluate", map[string]any{
		"expression":    `(() => { const r = document.getElementById('save3').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`,
		"returnByValue": true,
	}, &res); err != nil {
		return err
	}
	if len(res.Result.Value) != 2 {
		return fmt.Errorf("no centre for #save3: %v", res.Result.Value)
	}
	x, y := res.Result.Value[0], res.Result.Value[1]
	for _, ev := range []map[string]any{
		{"type": "mouseMoved", "x": x, "y": y},
		{"type": "mousePressed", "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1},
		{"type": "mouseReleased", "x": x, "y": y, "button": "left", "buttons": 0, "clickCount": 1},
	} {
		if err := f.cdp.Call(ctx, "", "Input.dispatchMouseEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

func (f *floorPage) capture(ctx context.Context) ([]byte, error) {
	var res struct {
		Data []byte `json:"data"`
	}
	err := f.cdp.Call(ctx, "", "Page.captureScreenshot", map[string]any{"format": "jpeg", "quality": 80, "optimizeForSpeed": true}, &res)
	return res.Data, err
}

func (f *floorPage) screenshot(ctx context.Context) error {
	_, err := f.capture(ctx)
	return err
}

func (f *floorPage) screenshotKB(b *testing.B) float64 {
	data, err := f.capture(within(b, time.Minute))
	if err != nil {
		b.Fatal(err)
	}
	return float64(len(data)) / 1024
}

// navigate loads the page again and waits for its load event.
func (f *floorPage) navigate(ctx context.Context) error {
	select {
	case <-f.loaded:
	default:
	}
	if err := f.cdp.Call(ctx, "", "Page.navigate", map[string]any{"url": f.url}, nil); err != nil {
		return err
	}
	select {
	case <-f.loaded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no load event: %w", ctx.Err())
	}
}

// ---- where the time goes

type tracedOp struct {
	name string
	tool string
	args map[string]any
}

// workerEntry is one record of the extension's opt-in timing: a request
// frame from receipt to answer, or one chrome.debugger command.
type workerEntry struct {
	Kind   string  `json:"kind"`
	Method string  `json:"method"`
	Tab    int     `json:"tab"`
	At     float64 `json:"at"`
	MS     float64 `json:"ms"`
}

// hops splits one traced call: the MCP layer (HTTP, JSON-RPC, the SDK), the
// engine's own work, and per browser request the hub and socket, the
// worker's own work, and chrome.debugger with the page.
type hops struct {
	total, mcp, engine, hubSocket, worker, debugger float64
	requests                                        int
	perMethod                                       map[string]*[4]float64 // count, hub+socket, worker, debugger
}

// workerTrace turns the extension's opt-in timing on for the calls run
// inside fn and returns its records.
func workerTrace(ctx context.Context, b *testing.B, s *harness.Stack, fn func()) []workerEntry {
	var entries []workerEntry
	err := s.Chrome.InWorker(ctx, func(sid string) error {
		if err := s.Chrome.Evaluate(ctx, sid, `globalThis.reinsTrace = []; true`, nil); err != nil {
			return err
		}
		defer s.Chrome.Evaluate(context.WithoutCancel(ctx), sid, `globalThis.reinsTrace = undefined; true`, nil)
		fn()
		var raw string
		if err := s.Chrome.Evaluate(ctx, sid, `JSON.stringify(globalThis.reinsTrace)`, &raw); err != nil {
			return err
		}
		return json.Unmarshal([]byte(raw), &entries)
	})
	if err != nil {
		b.Fatalf("tracing the worker: %v", err)
	}
	return entries
}

// split matches a call's companion-side steps, in order, with the worker's
// frames of the same method, and each frame with the debugger command it
// contains.
func split(total time.Duration, tr reinsmcp.CallTrace, frames, cmds []workerEntry, used map[int]bool) hops {
	h := hops{total: float64(total.Microseconds()) / 1000, perMethod: map[string]*[4]float64{}}
	h.mcp = h.total - tr.EngineMS
	var inSteps float64
	for _, st := range tr.Steps {
		inSteps += st.MS
		h.requests++
		var fr, dbg float64
		for i, f := range frames {
			if !used[i] && f.Method == st.Method {
				used[i] = true
				fr = f.MS
				for _, c := range cmds {
					if c.Tab == f.Tab && c.Method == f.Method && c.At >= f.At && c.At+c.MS <= f.At+f.MS+0.01 {
						dbg = c.MS
						break
					}
				}
				break
			}
		}
		m := h.perMethod[st.Method]
		if m == nil {
			m = &[4]float64{}
			h.perMethod[st.Method] = m
		}
		m[0]++
		m[1] += st.MS - fr
		m[2] += fr - dbg
		m[3] += dbg
		h.hubSocket += st.MS - fr
		h.worker += fr - dbg
		h.debugger += dbg
	}
	h.engine = tr.EngineMS - inSteps
	return h
}

func traceOf(b *testing.B, res *mcp.CallToolResult) reinsmcp.CallTrace {
	var tr reinsmcp.CallTrace
	raw, err := json.Marshal(res.Meta[reinsmcp.TraceMetaKey])
	if err == nil {
		err = json.Unmarshal(raw, &tr)
	}
	if err != nil || tr.EngineMS == 0 {
		b.Fatalf("no trace in the result's _meta: %v %+v", err, res.Meta)
	}
	return tr
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// hopTable runs traceSamples traced calls of each op and prints the median
// of every hop.
func hopTable(ctx context.Context, b *testing.B, s *harness.Stack, cs *mcp.ClientSession, ops []tracedOp) string {
	var out strings.Builder
	fmt.Fprintf(&out, "\nWhere the time goes (median ms of %d traced calls; hub+socket is the companion's hub, the WebSocket and the worker's event loop)\n", traceSamples)
	fmt.Fprintf(&out, "%-22s %7s %7s %7s %5s %11s %7s %15s\n", "op / request", "total", "mcp", "engine", "reqs", "hub+socket", "worker", "debugger+page")
	for _, op := range ops {
		type sample struct {
			d  time.Duration
			tr reinsmcp.CallTrace
		}
		var samples []sample
		entries := workerTrace(ctx, b, s, func() {
			for range traceSamples {
				d, res, err := callMCP(ctx, cs, &mcp.CallToolParams{Name: op.tool, Arguments: op.args, Meta: mcp.Meta{reinsmcp.TraceMetaKey: true}})
				if err != nil {
					b.Fatal(err)
				}
				samples = append(samples, sample{d, traceOf(b, res)})
			}
		})
		var frames, cmds []workerEntry
		for _, e := range entries {
			if e.Kind == "frame" {
				frames = append(frames, e)
			} else {
				cmds = append(cmds, e)
			}
		}
		used := map[int]bool{}
		cols := make([][]float64, 7)
		methods := map[string][][]float64{}
		var order []string
		for _, sm := range samples {
			h := split(sm.d, sm.tr, frames, cmds, used)
			for i, v := range []float64{h.total, h.mcp, h.engine, float64(h.requests), h.hubSocket, h.worker, h.debugger} {
				cols[i] = append(cols[i], v)
			}
			for _, st := range sm.tr.Steps {
				if _, ok := methods[st.Method]; !ok {
					order = append(order, st.Method)
					methods[st.Method] = make([][]float64, 4)
				}
			}
			for m, v := range h.perMethod {
				for i := range 4 {
					methods[m][i] = append(methods[m][i], v[i])
				}
			}
		}
		fmt.Fprintf(&out, "%-22s %7.2f %7.2f %7.2f %5.0f %11.2f %7.2f %15.2f\n", op.name,
			medianOf(cols[0]), medianOf(cols[1]), medianOf(cols[2]), medianOf(cols[3]), medianOf(cols[4]), medianOf(cols[5]), medianOf(cols[6]))
		if len(order) > 1 {
			for _, m := range order {
				v := methods[m]
				if len(v[0]) < len(samples) {
					continue // not in every call
				}
				fmt.Fprintf(&out, "  %-20s %7s %7s %7s %5.0f %11.2f %7.2f %15.2f\n", m, "", "", "", medianOf(v[0]), medianOf(v[1]), medianOf(v[2]), medianOf(v[3]))
			}
		}
	}
	return out.String()
}

// ---- many agents

// agentsTable runs javascript_tool agentCalls times for one agent alone,
// then for agentCount agents at once, each with its own MCP session and
// tab of the one browser, and prints both with the targets' ratios.
func agentsTable(ctx context.Context, b *testing.B, s *harness.Stack, url string) string {
	sessions := make([]*mcp.ClientSession, agentCount)
	tabs := make([]int, agentCount)
	for i := range agentCount {
		sessions[i] = mcpSession(b, s.Reins, "agent-"+strconv.Itoa(i))
		tabs[i] = openBenchTab(b, sessions[i], url)
		// Warm up: the debugger attaches and the tab's domains turn on.
		for range speedWarmup {
			if _, _, err := callMCP(ctx, sessions[i], jsCall(tabs[i], false)); err != nil {
				b.Fatal(err)
			}
		}
	}
	run := func(n int, trace bool) ([]time.Duration, time.Duration, []reinsmcp.CallTrace) {
		var mu sync.Mutex
		var lat []time.Duration
		var traces []reinsmcp.CallTrace
		var wg sync.WaitGroup
		start := time.Now()
		for i := range n {
			wg.Go(func() {
				for range agentCalls {
					d, res, err := callMCP(ctx, sessions[i], jsCall(tabs[i], trace))
					if err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					if trace {
						traces = append(traces, traceOf(b, res))
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return lat, time.Since(start), traces
	}
	one, oneWall, _ := run(1, false)
	cpu0 := procCPU(s.Reins.PID())
	many, manyWall, _ := run(agentCount, false)
	cpu1 := procCPU(s.Reins.PID())
	if b.Failed() {
		return ""
	}
	tput := func(lat []time.Duration, wall time.Duration) float64 { return float64(len(lat)) / wall.Seconds() }
	var out strings.Builder
	fmt.Fprintf(&out, "\nMany agents: javascript_tool, %d calls per agent, each agent its own MCP session and tab\n", agentCalls)
	fmt.Fprintf(&out, "%-10s %9s %9s %12s\n", "agents", "p50", "p95", "calls/s")
	fmt.Fprintf(&out, "%-10d %9s %9s %12.0f\n", 1, fmtVal(pctMS(one, 50), "ms"), fmtVal(pctMS(one, 95), "ms"), tput(one, oneWall))
	fmt.Fprintf(&out, "%-10d %9s %9s %12.0f\n", agentCount, fmtVal(pctMS(many, 50), "ms"), fmtVal(pctMS(many, 95), "ms"), tput(many, manyWall))
	ratio, gain := pctMS(many, 50)/pctMS(one, 50), tput(many, manyWall)/tput(one, oneWall)
	fmt.Fprintf(&out, "p50 ratio %.2f× (target ≤ 2×, %s); throughput %.2f× (target ≥ 4×, %s)\n", ratio, passMiss(ratio <= 2), gain, passMiss(gain >= 4))

	used := cpuByRole(cpu0, cpu1)
	var roles []string
	for r, ticks := range used {
		if ticks > 0 {
			roles = append(roles, r)
		}
	}
	slices.SortFunc(roles, func(a, b string) int { return int(used[b] - used[a]) })
	out.WriteString("CPU per call at 10 agents (ms, from /proc):")
	for _, r := range roles {
		fmt.Fprintf(&out, " %s %.2f;", r, float64(used[r])*10/float64(len(many)))
	}
	out.WriteString("\n")

	// The same load traced: where the extra time under load goes.
	var traces []reinsmcp.CallTrace
	var lat []time.Duration
	entries := workerTrace(ctx, b, s, func() { lat, _, traces = run(agentCount, true) })
	var engine, steps, frames, dbg []float64
	for _, tr := range traces {
		engine = append(engine, tr.EngineMS)
		var sum float64
		for _, st := range tr.Steps {
			sum += st.MS
		}
		steps = append(steps, sum)
	}
	for _, e := range entries {
		if e.Kind == "frame" && e.Method == "Runtime.evaluate" {
			frames = append(frames, e.MS)
		}
		if e.Kind == "debugger" && e.Method == "Runtime.evaluate" {
			dbg = append(dbg, e.MS)
		}
	}
	if len(frames) > 0 && len(dbg) > 0 && len(traces) > 0 {
		fmt.Fprintf(&out, "under load, median ms: total %.2f, engine %.2f, browser requests %.2f, worker frame %.2f, chrome.debugger %.2f\n",
			pctMS(lat, 50), medianOf(engine), medianOf(steps), medianOf(frames), medianOf(dbg))
	}
	return out.String()
}

func jsCall(tab int, trace bool) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: "javascript_tool", Arguments: map[string]any{"tabId": tab, "text": "1 + 1"}}
	if trace {
		p.Meta = mcp.Meta{reinsmcp.TraceMetaKey: true}
	}
	return p
}

func passMiss(ok bool) string {
	if ok {
		return "pass"
	}
	return "MISS"
}
