package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// benchPage is a local page of about 200 elements: navigation, cards with
// headings, text, lists, inputs and buttons.
func benchPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Bench page</title></head><body><header><nav>`)
	n := 0
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, `<a href="#s%d">Section %d</a> `, i, i)
		n++
	}
	b.WriteString(`</nav></header><main><h1>Dashboard</h1>`)
	for i := 1; n < 190; i++ {
		fmt.Fprintf(&b, `<section><h2>Card %d</h2><p>Summary text for card %d.</p><ul><li>Item %d.1</li><li>Item %d.2</li></ul>`, i, i, i, i)
		fmt.Fprintf(&b, `<label>Note %d <input id="note%d"></label><button id="save%d" onclick="this.dataset.n=(+this.dataset.n||0)+1">Save %d</button></section>`, i, i, i, i)
		n += 10
	}
	b.WriteString(`</main></body></html>`)
	return b.String()
}

func startBenchPage(b *testing.B) *httptest.Server {
	page := benchPage()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	}))
	b.Cleanup(srv.Close)
	return srv
}

var benchTab = regexp.MustCompile(`Created tab (\d+)`)

// BenchmarkMCPTools times tools through the real MCP endpoint of real reins
// headless, on the extension relay and on the dev transport, against the
// 200-element page at 1280×800, reporting p50/p95 in ms.
func BenchmarkMCPTools(b *testing.B) {
	for _, transport := range []string{"extension", "dev"} {
		b.Run(transport, func(b *testing.B) {
			var r *harness.Reins
			if transport == "dev" {
				r = startDevReins(b)
			} else {
				r = newStack(b).Reins
			}
			page := startBenchPage(b)
			cs := mcpSession(b, r, "bench-"+transport)
			out := benchCall(b, cs, "tabs_create_mcp", map[string]any{"url": page.URL})
			m := benchTab.FindStringSubmatch(out)
			if m == nil {
				b.Fatalf("tabs_create_mcp answered %s", out)
			}
			tab, _ := strconv.Atoi(m[1])
			find := benchCall(b, cs, "find", map[string]any{"tabId": tab, "query": "Save 3 button"})
			ref := refFor(b, find, `"Save 3"`)
			cases := []struct {
				name string
				tool string
				args map[string]any
			}{
				{"javascript_tool", "javascript_tool", map[string]any{"tabId": tab, "text": "1 + 1"}},
				{"read_page", "read_page", map[string]any{"tabId": tab}},
				{"left_click_ref", "computer", map[string]any{"tabId": tab, "action": "left_click", "ref": ref}},
				{"screenshot", "computer", map[string]any{"tabId": tab, "action": "screenshot"}},
				{"navigate", "navigate", map[string]any{"tabId": tab, "url": page.URL}},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					times := make([]time.Duration, 0, b.N)
					var size int
					for i := 0; i < b.N; i++ {
						start := time.Now()
						res, err := cs.CallTool(within(b, 60*time.Second), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
						times = append(times, time.Since(start))
						if err != nil || res.IsError {
							b.Fatalf("%s: %v %+v", c.name, err, res)
						}
						size = 0
						for _, ct := range res.Content {
							switch ct := ct.(type) {
							case *mcp.TextContent:
								size += len(ct.Text)
							case *mcp.ImageContent:
								size += len(ct.Data)
							}
						}
					}
					slices.Sort(times)
					pct := func(p float64) float64 {
						return float64(times[min(len(times)-1, int(float64(len(times))*p))].Microseconds()) / 1000
					}
					b.ReportMetric(pct(0.5), "p50-ms")
					b.ReportMetric(pct(0.95), "p95-ms")
					b.ReportMetric(float64(size), "result-bytes")
				})
			}
			// The companion's own memory after the runs above.
			b.Run("companion_rss", func(b *testing.B) {
				for range b.N {
				}
				st := procStatusKiB(b, r.PID())
				b.ReportMetric(float64(st["VmRSS"])/1024, "rss-MiB")
				b.ReportMetric(float64(st["RssAnon"])/1024, "anon-MiB")
				b.ReportMetric(float64(st["RssFile"])/1024, "file-MiB")
			})
		})
	}
}

// procStatusKiB reads the kB fields of /proc/PID/status: VmRSS, and its
// parts RssAnon (heap, stacks), RssFile (the binary and its libraries) and
// RssShmem.
func procStatusKiB(tb testing.TB, pid int) map[string]int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(v, "kB") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		if err == nil {
			out[k] = n
		}
	}
	if _, ok := out["VmRSS"]; !ok {
		tb.Fatal("no VmRSS")
	}
	return out
}

func benchCall(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) string {
	b.Helper()
	res, err := cs.CallTool(within(b, 60*time.Second), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", name, err, res)
	}
	var out strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out.WriteString(t.Text + "\n")
		}
	}
	return out.String()
}

// BenchmarkCompanionRSS reports the companion's resident memory with two
// browsers (an extension profile and a dev browser) and two agents that
// each opened and read a tab.
func BenchmarkCompanionRSS(b *testing.B) {
	r := startDevReins(b)
	ctx := within(b, setupTimeout)
	chrome, err := harness.StartChromium(ctx, harness.WithNativeHost(r.DataDir))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(chrome.Close)
	// The native host tells the extension the port and the key.
	w, err := r.Client.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	snap, err := w.Until(ctx, func(s admin.Snapshot) bool { return len(s.Browsers) == 2 })
	if err != nil {
		b.Fatalf("two browsers never connected: %v", err)
	}
	page := startBenchPage(b)
	for i, br := range snap.Browsers {
		cs := mcpSession(b, r, "agent-"+strconv.Itoa(i))
		benchCall(b, cs, "switch_browser", map[string]any{"browserId": br.ID})
		out := benchCall(b, cs, "tabs_create_mcp", map[string]any{"url": page.URL})
		m := benchTab.FindStringSubmatch(out)
		if m == nil {
			b.Fatalf("tabs_create_mcp answered %s", out)
		}
		tab, _ := strconv.Atoi(m[1])
		benchCall(b, cs, "read_page", map[string]any{"tabId": tab})
		benchCall(b, cs, "computer", map[string]any{"tabId": tab, "action": "screenshot"})
	}
	for range b.N {
	}
	st := procStatusKiB(b, r.PID())
	b.ReportMetric(float64(st["VmRSS"])/1024, "rss-MiB")
	b.ReportMetric(float64(st["RssAnon"])/1024, "anon-MiB")
	b.ReportMetric(float64(st["RssFile"])/1024, "file-MiB")
}
