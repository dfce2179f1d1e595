//go:build peers

package e2e

// make bench-peers: the same five ops through chrome-devtools-mcp and
// Playwright MCP (npm, pinned versions, installed under .test-tmp/peers by
// the Makefile) and through Reins, on the same bench page in one run, each
// server with a fresh headless Chromium of its own. A benchmark, never run
// by CI or make test (the build tag keeps it out of make bench).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

const peerSamples = 20

// peerOp is one op as a server names it.
type peerOp struct {
	tool string
	args map[string]any
}

type peerRun struct {
	name  string
	p50   map[string]float64
	bytes map[string]int
	rss   float64
	shot  string // the screenshot's pixel size
}

var peerOps = []string{"navigate", "read_page / snapshot", "screenshot", "click by ref", "evaluate"}

func BenchmarkPeers(b *testing.B) {
	dir := os.Getenv("REINS_PEERS_DIR")
	if dir == "" {
		b.Fatal("REINS_PEERS_DIR is not set: run make bench-peers, which installs the pinned peers there")
	}
	bin := func(name string) string { return filepath.Join(dir, "node_modules", ".bin", name) }
	url := startBenchPage(b).URL + "/"
	var runs []peerRun

	// Reins, through the extension.
	{
		s := newStack(b, harness.WithWindowSize(1280, 800))
		cs := mcpSession(b, s.Reins, "peers")
		tab := openBenchTab(b, cs, url)
		sizeViewport(b, cs, tab, 1280, 800)
		runs = append(runs, runPeer(b, "Reins", cs, s.Reins.PID(), map[string]func(string) peerOp{
			"navigate":             func(string) peerOp { return peerOp{"navigate", map[string]any{"tabId": tab, "url": url}} },
			"read_page / snapshot": func(string) peerOp { return peerOp{"read_page", map[string]any{"tabId": tab}} },
			"screenshot":           func(string) peerOp { return peerOp{"computer", map[string]any{"tabId": tab, "action": "screenshot"}} },
			"click by ref": func(ref string) peerOp {
				return peerOp{"computer", map[string]any{"tabId": tab, "action": "left_click", "ref": ref}}
			},
			"evaluate": func(string) peerOp { return peerOp{"javascript_tool", map[string]any{"tabId": tab, "text": "1 + 1"}} },
		}, regexp.MustCompile(`"Save 3".*?\b(ref_\d+)`)))
	}

	cdm := func(name string, args ...string) {
		chrome := startPlainChromium(b)
		cmd := exec.Command("node", append([]string{bin("chrome-devtools-mcp"), "--browserUrl", chrome, "--no-page-id-routing",
			"--usageStatistics=false", "--performanceCrux=false"}, args...)...)
		cmd.Env = append(os.Environ(), "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1", "CI=1")
		cs := peerSession(b, cmd)
		runs = append(runs, runPeer(b, name, cs, cmd.Process.Pid, map[string]func(string) peerOp{
			"navigate":             func(string) peerOp { return peerOp{"navigate_page", map[string]any{"type": "url", "url": url}} },
			"read_page / snapshot": func(string) peerOp { return peerOp{"take_snapshot", map[string]any{}} },
			"screenshot":           func(string) peerOp { return peerOp{"take_screenshot", map[string]any{}} },
			"click by ref":         func(ref string) peerOp { return peerOp{"click", map[string]any{"uid": ref}} },
			"evaluate":             func(string) peerOp { return peerOp{"evaluate_script", map[string]any{"function": "() => 1 + 1"}} },
		}, regexp.MustCompile(`uid=(\S+) button "Save 3"`)))
	}
	pw := func(name string, args ...string) {
		chrome := startPlainChromium(b)
		cmd := exec.Command("node", append([]string{bin("playwright-mcp"), "--cdp-endpoint", chrome, "--viewport-size", "1280x800",
			"--output-dir", b.TempDir()}, args...)...)
		cs := peerSession(b, cmd)
		runs = append(runs, runPeer(b, name, cs, cmd.Process.Pid, map[string]func(string) peerOp{
			"navigate":             func(string) peerOp { return peerOp{"browser_navigate", map[string]any{"url": url}} },
			"read_page / snapshot": func(string) peerOp { return peerOp{"browser_snapshot", map[string]any{}} },
			"screenshot":           func(string) peerOp { return peerOp{"browser_take_screenshot", map[string]any{}} },
			"click by ref": func(ref string) peerOp {
				return peerOp{"browser_click", map[string]any{"target": ref, "element": "Save 3 button"}}
			},
			"evaluate": func(string) peerOp { return peerOp{"browser_evaluate", map[string]any{"function": "() => 1 + 1"}} },
		}, regexp.MustCompile(`button "Save 3" \[ref=(\w+)\]`)))
	}
	cdm("chrome-devtools-mcp 1.11.0")
	pw("Playwright MCP 0.0.83")
	pw("Playwright MCP, settle 0", "--timeout-settle", "0")

	var out strings.Builder
	fmt.Fprintf(&out, "\nPeers: p50 ms of %d calls on the %d-element bench page, one fresh headless Chromium each (result KB in brackets)\n", peerSamples, benchElements)
	fmt.Fprintf(&out, "%-22s", "op")
	for _, r := range runs {
		fmt.Fprintf(&out, " %26s", r.name)
	}
	fmt.Fprintf(&out, " %14s\n", "Reins/best")
	for _, op := range peerOps {
		fmt.Fprintf(&out, "%-22s", op)
		best := 0.0
		for i, r := range runs {
			fmt.Fprintf(&out, " %26s", fmt.Sprintf("%.1f (%.1f KB)", r.p50[op], float64(r.bytes[op])/1024))
			if i > 0 && (best == 0 || r.p50[op] < best) {
				best = r.p50[op]
			}
		}
		fmt.Fprintf(&out, " %13.2f×\n", runs[0].p50[op]/best)
	}
	fmt.Fprintf(&out, "%-22s", "server RSS MiB")
	best := 0.0
	for i, r := range runs {
		fmt.Fprintf(&out, " %26.1f", r.rss)
		if i > 0 && (best == 0 || r.rss < best) {
			best = r.rss
		}
	}
	fmt.Fprintf(&out, " %13.2f×\n", runs[0].rss/best)
	out.WriteString("screenshot pixels:")
	for _, r := range runs {
		fmt.Fprintf(&out, " %s %s;", r.name, r.shot)
	}
	out.WriteString("\nThe end goal: every op's Reins/best at most 0.50×.\n")
	fmt.Print(out.String())
}

// runPeer times every op on one server: navigate first (it also loads the
// page), then the snapshot that yields the click's ref.
func runPeer(b *testing.B, name string, cs *mcp.ClientSession, pid int, ops map[string]func(ref string) peerOp, refRE *regexp.Regexp) peerRun {
	ctx := within(b, 10*time.Minute)
	r := peerRun{name: name, p50: map[string]float64{}, bytes: map[string]int{}}
	ref := ""
	for _, op := range peerOps {
		var lat []time.Duration
		for i := range speedWarmup + peerSamples {
			if op == "click by ref" && i == 0 {
				// The page loaded again since the last snapshot.
				p := ops["read_page / snapshot"]("")
				_, res, err := callMCP(ctx, cs, &mcp.CallToolParams{Name: p.tool, Arguments: p.args})
				if err != nil {
					b.Fatalf("%s: %v", name, err)
				}
				m := refRE.FindStringSubmatch(resultText(res))
				if m == nil {
					b.Fatalf("%s: no ref for Save 3 in:\n%s", name, resultText(res))
				}
				ref = m[1]
			}
			p := ops[op](ref)
			d, res, err := callMCP(ctx, cs, &mcp.CallToolParams{Name: p.tool, Arguments: p.args})
			if err != nil {
				b.Fatalf("%s %s: %v", name, op, err)
			}
			if i >= speedWarmup {
				lat = append(lat, d)
			}
			r.bytes[op] = 0
			for _, c := range res.Content {
				switch c := c.(type) {
				case *mcp.TextContent:
					r.bytes[op] += len(c.Text)
				case *mcp.ImageContent:
					r.bytes[op] += len(c.Data)
					if cfg, _, err := image.DecodeConfig(bytes.NewReader(c.Data)); err == nil {
						r.shot = fmt.Sprintf("%d×%d", cfg.Width, cfg.Height)
					}
				}
			}
		}
		r.p50[op] = pctMS(lat, 50)
	}
	r.rss = float64(procStatusKiB(b, pid)["VmRSS"]) / 1024
	return r
}

// peerSession starts a stdio MCP server.
func peerSession(b *testing.B, cmd *exec.Cmd) *mcp.ClientSession {
	cmd.Stderr = &limitedBuffer{max: 64 << 10}
	cl := mcp.NewClient(&mcp.Implementation{Name: "reins-bench-peers", Version: "1"}, nil)
	cs, err := cl.Connect(within(b, time.Minute), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatalf("starting %s: %v\n%s", cmd.Args[1], err, cmd.Stderr)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

type limitedBuffer struct {
	max int
	b   strings.Builder
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.b.Len() < l.max {
		l.b.Write(p[:min(len(p), l.max-l.b.Len())])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return l.b.String() }

// startPlainChromium starts a fresh headless Chromium without the
// extension, with the harness's flags (names other than the loopback ones
// do not resolve) and a viewport of 1280×800 as Reins's is (a headless
// window's frame takes 143 px of its height), and returns its DevTools HTTP
// endpoint.
func startPlainChromium(b *testing.B) string {
	dir := b.TempDir()
	cmd := exec.Command(harness.ChromiumPath(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-domain-reliability", "--metrics-recording-only",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-port=0", "--window-size=1280,943", "about:blank")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting chromium: %v", err)
	}
	b.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if ws, ok := strings.CutPrefix(sc.Text(), "DevTools listening on "); ok {
				found <- ws
			}
		}
	}()
	ctx := within(b, time.Minute)
	select {
	case ws := <-found:
		checkPlainViewport(ctx, b, ws, 1280, 800)
		// ws://127.0.0.1:PORT/devtools/browser/ID → http://127.0.0.1:PORT
		host := strings.TrimPrefix(ws, "ws://")
		return "http://" + host[:strings.IndexByte(host, '/')]
	case <-ctx.Done():
		b.Fatal("chromium never printed its DevTools endpoint")
	}
	return ""
}

// checkPlainViewport waits until the viewport of the browser's one page is
// w×h CSS px: a screenshot's time grows with its pixels.
func checkPlainViewport(ctx context.Context, b *testing.B, ws string, w, h int) {
	c, err := harness.DialCDP(ctx, ws)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var targets struct {
		Infos []struct {
			ID   string `json:"targetId"`
			Type string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := c.Call(ctx, "", "Target.getTargets", nil, &targets); err != nil {
		b.Fatal(err)
	}
	page := ""
	for _, t := range targets.Infos {
		if t.Type == "page" {
			page = t.ID
		}
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": page, "flatten": true}, &att); err != nil {
		b.Fatalf("no page in the plain Chromium: %v", err)
	}
	expr := fmt.Sprintf(`new Promise((done) => {
		const check = () => { if (innerWidth === %d && innerHeight === %d) done(); };
		addEventListener('resize', check);
		check();
	})`, w, h)
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Call(wait, att.SessionID, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true}, nil); err != nil {
		var got struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		c.Call(ctx, att.SessionID, "Runtime.evaluate", map[string]any{"expression": "innerWidth + '×' + innerHeight", "returnByValue": true}, &got)
		b.Fatalf("the plain Chromium's viewport is %s, not %d×%d: %v", got.Result.Value, w, h, err)
	}
}
