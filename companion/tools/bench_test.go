package tools_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/tools"
)

// Benchmarks run the engine on the dev transport against the local
// 200-element page at a 1280×800 viewport, and report p50/p95 latency.
// Targets: javascript_tool ≤ 10 ms, a click that navigates nowhere ≤ 60 ms,
// read_page ≤ 20 ms and ≤ 4,500 chars, screenshot ≤ 60 ms.

type benchRig struct {
	r   *rig
	s   *tools.Session
	tab int
}

func newBench(b *testing.B) *benchRig {
	r := newRig(b)
	s := r.e.NewSession("agent:bench", "bench")
	tab := r.newTab(s, "/big")
	r.ok(s, "resize_window", map[string]any{"tabId": tab, "width": 1280, "height": 800})
	r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
	return &benchRig{r: r, s: s, tab: tab}
}

// run times each iteration of tool(args) and reports percentiles.
func (br *benchRig) run(b *testing.B, tool string, args func(i int) any, each func(*tools.Result)) {
	raws := make([]json.RawMessage, 0, 16)
	for i := 0; i < 16; i++ {
		raw, _ := json.Marshal(args(i))
		raws = append(raws, raw)
	}
	ctx := ctxFor(b)
	// One warm-up call so the first iteration does not pay for attaching.
	if res := br.r.e.Call(ctx, br.s, tool, raws[0]); res.IsError {
		b.Fatal(text(res))
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res := br.r.e.Call(ctx, br.s, tool, raws[i%len(raws)])
		times = append(times, time.Since(start))
		if res.IsError {
			b.Fatal(text(res))
		}
		if each != nil {
			each(res)
		}
	}
	b.StopTimer()
	slices.Sort(times)
	pct := func(p float64) float64 {
		return float64(times[min(len(times)-1, int(float64(len(times))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

func BenchmarkNavigate(b *testing.B) {
	br := newBench(b)
	br.run(b, "navigate", func(i int) any {
		return map[string]any{"tabId": br.tab, "url": fmt.Sprintf("%s/big?i=%d", br.r.url, i)}
	}, nil)
}

func BenchmarkReadPage(b *testing.B) {
	br := newBench(b)
	chars := 0
	br.run(b, "read_page", func(int) any { return map[string]any{"tabId": br.tab} }, func(res *tools.Result) {
		chars = len(text(res))
	})
	b.ReportMetric(float64(chars), "chars")
}

func BenchmarkScreenshot(b *testing.B) {
	br := newBench(b)
	bytes := 0
	br.run(b, "computer", func(int) any { return map[string]any{"action": "screenshot", "tabId": br.tab} }, func(res *tools.Result) {
		for _, c := range res.Content {
			if c.Type == "image" {
				bytes = len(c.Data) * 3 / 4
			}
		}
	})
	b.ReportMetric(float64(bytes), "jpeg-bytes")
}

func BenchmarkLeftClickRef(b *testing.B) {
	br := newBench(b)
	tree := br.r.ok(br.s, "read_page", map[string]any{"tabId": br.tab, "filter": "interactive"})
	ref := refFor(b, tree, `button "Save 1"`)
	br.run(b, "computer", func(int) any { return map[string]any{"action": "left_click", "tabId": br.tab, "ref": ref} }, nil)
}

func BenchmarkJavaScript(b *testing.B) {
	br := newBench(b)
	br.run(b, "javascript_tool", func(int) any {
		return map[string]any{"tabId": br.tab, "text": "document.querySelectorAll('button').length"}
	}, nil)
}
