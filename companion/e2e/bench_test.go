package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

// evalResult is what Chromium answers to Runtime.evaluate "1+1"; the fake
// extensions answer the same bytes so both paths carry the same payload.
var evalResult = json.RawMessage(`{"result":{"type":"number","value":2,"description":"2"}}`)

var evalParams = json.RawMessage(`{"expression":"1+1"}`)

// BenchmarkHubThroughput measures the hub alone: parallel cdp requests on
// public tab ids of two fake browsers, over real WebSockets, in-process.
// allocs/op counts the whole process, so it includes the fake extensions'
// own decoding and encoding.
func BenchmarkHubThroughput(b *testing.B) {
	changed := make(chan struct{}, 1)
	key := linkauth.NewKey()
	h := hub.New(hub.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Auth:   linkauth.NewServer(key, nil),
		OnChange: func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	var ids []int
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		x, err := hubtest.Dial(ctx, url, wire.Hello{
			Version: 3, ExtensionVersion: "bench", BrowserEngine: wire.EngineChromium,
			InstanceID: fmt.Sprint("bench-", i), BrowserSessionID: "s",
		}, hubtest.Options{Key: key})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		defer x.Kill()
		x.Handle(wire.MethodCDP, func(json.RawMessage) (any, error) { return evalResult, nil })
		if err := x.SendTabs([]wire.TabInfo{{ID: 1, URL: "https://bench.test/", Shared: true}}); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.After(5 * time.Second)
	for len(ids) < 2 {
		select {
		case <-changed:
		case <-deadline:
			b.Fatalf("fake tabs never appeared: %+v", h.Tabs())
		}
		ids = ids[:0]
		for _, t := range h.Tabs() {
			if t.Shared {
				ids = append(ids, t.ID)
			}
		}
	}
	var next atomic.Int64
	// More callers than cores: the hub's job is to keep many requests in
	// flight on each socket.
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		i := int(next.Add(1))
		for pb.Next() {
			i++
			if _, err := h.CDP(ctx, ids[i%2], "Runtime.evaluate", evalParams, "", ""); err != nil {
				b.Error(err)
				return
			}
		}
	})
	wall, cpu := time.Since(start), cpuTime()-cpu0
	b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
	// Wall-clock req/s depends on what else the machine runs; CPU time per
	// request does not, and bounds what the cores could do if idle.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0))*float64(b.N)/cpu.Seconds(), "req/s-at-full-cpu")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchStacks are started once for all runs of the round-trip benchmarks
// (the testing package calls a benchmark several times while it sizes b.N)
// and closed by TestMain.
var bench struct {
	mu   sync.Mutex
	real *realStack
	fake *fakeStack
}

type realStack struct {
	s      *harness.Stack
	tab    hub.Tab
	direct *harness.CDP // the page's own DevTools socket
}

type fakeStack struct {
	reins *harness.Reins
	ext   *hubtest.Ext
	tab   int
}

func closeBenchStacks() {
	bench.mu.Lock()
	defer bench.mu.Unlock()
	if bench.real != nil {
		bench.real.direct.Close()
		if err := bench.real.s.Close(); err != nil {
			fmt.Println("benchmark stack:", err)
		}
	}
	if bench.fake != nil {
		bench.fake.ext.Kill()
		if err := bench.fake.reins.Stop(15 * time.Second); err != nil {
			fmt.Println("benchmark reins:", err)
		}
		bench.fake.reins.Close()
	}
}

func realBenchStack(b *testing.B) *realStack {
	bench.mu.Lock()
	defer bench.mu.Unlock()
	if bench.real != nil {
		return bench.real
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	s, err := harness.StartStack(ctx)
	if err != nil {
		b.Fatalf("starting reins and chromium: %v", err)
	}
	r := &realStack{s: s}
	bench.real = r
	if r.tab, err = s.OpenShared(ctx, "bench", true); err != nil {
		b.Fatal(err)
	}
	targets, err := s.Chrome.Targets(ctx)
	if err != nil {
		b.Fatal(err)
	}
	i := slices.IndexFunc(targets, func(t harness.TargetInfo) bool { return t.URL == s.Pages.URL("bench") })
	if i < 0 {
		b.Fatalf("no DevTools target for the shared page: %+v", targets)
	}
	if r.direct, err = harness.DialCDP(ctx, fmt.Sprintf("ws://127.0.0.1:%d/devtools/page/%s", s.Chrome.DevToolsPort, targets[i].TargetID)); err != nil {
		b.Fatal(err)
	}
	return r
}

func fakeBenchStack(b *testing.B) *fakeStack {
	bench.mu.Lock()
	defer bench.mu.Unlock()
	if bench.fake != nil {
		return bench.fake
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	r, err := harness.StartReins(ctx)
	if err != nil {
		b.Fatal(err)
	}
	f := &fakeStack{reins: r}
	x, err := hubtest.Dial(ctx, r.WSURL(), wire.Hello{
		Version: 3, ExtensionVersion: "bench", Browser: "Fake", BrowserEngine: wire.EngineChromium,
		InstanceID: "bench-fake", BrowserSessionID: "s",
	}, hubtest.Options{Origin: "chrome-extension://" + harness.ExtensionID, DataDir: r.DataDir})
	if err != nil {
		r.Close()
		b.Fatal(err)
	}
	f.ext = x
	bench.fake = f
	x.Handle(wire.MethodCDP, func(json.RawMessage) (any, error) { return evalResult, nil })
	w, err := r.Client.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := x.SendTabs([]wire.TabInfo{{ID: 1, URL: "https://bench.test/", Shared: true}}); err != nil {
		b.Fatal(err)
	}
	snap, err := w.Until(ctx, func(s admin.Snapshot) bool { return len(s.Tabs) == 1 })
	if err != nil {
		b.Fatal(err)
	}
	f.tab = snap.Tabs[0].ID
	return f
}

// measure times op b.N times, one at a time, and reports the median and
// 95th percentile as well as the mean (ns/op).
func measure(b *testing.B, op func(ctx context.Context) error) {
	ctx := context.Background()
	// Warm up: the first calls attach the debugger, fill connection pools
	// and let V8 compile the expression.
	for range 50 {
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(q int) float64 { return float64(lat[(len(lat)-1)*q/100]) / float64(time.Millisecond) }
	b.ReportMetric(ms(50), "p50-ms")
	b.ReportMetric(ms(95), "p95-ms")
}

// inWorker runs b.N timed operations inside the extension's service worker,
// in batches, and reports the percentiles of the times the worker measured
// (performance.now, which may be coarsened to 0.1 ms there).
func inWorker(b *testing.B, r *realStack, batch func(ctx context.Context, sid string, n int) ([]float64, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var lat []float64
	err := r.s.Chrome.InWorker(ctx, func(sid string) error {
		if _, err := batch(ctx, sid, 50); err != nil { // warm up
			return err
		}
		b.ResetTimer()
		for left := b.N; left > 0; {
			n := min(left, 500)
			ms, err := batch(ctx, sid, n)
			if err != nil {
				return err
			}
			lat = append(lat, ms...)
			left -= n
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(lat[(len(lat)-1)*50/100], "p50-ms")
	b.ReportMetric(lat[(len(lat)-1)*95/100], "p95-ms")
}

// BenchmarkRoundTrip compares Runtime.evaluate "1+1" on one page:
//   - direct-cdp: the page's own DevTools WebSocket, the floor;
//   - companion-extension: inspection routes → reins → extension →
//     chrome.debugger and back, the path agents' commands take;
//   - companion-fake-extension: the same through the real binary, but to a
//     Go fake extension that answers at once: the companion's own share;
//   - worker-chrome.debugger, worker-chrome.tabs.get: the two browser calls
//     the extension makes per cdp request, timed inside its worker;
//   - inspect-socket: GET /v1/inspect/browsers on the admin socket, the
//     cost of the measuring hop itself.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("direct-cdp", func(b *testing.B) {
		r := realBenchStack(b)
		measure(b, func(ctx context.Context) error {
			_, err := r.direct.CallRaw(ctx, "", "Runtime.evaluate", evalParams)
			return err
		})
	})
	b.Run("companion-extension", func(b *testing.B) {
		r := realBenchStack(b)
		measure(b, func(ctx context.Context) error {
			_, err := r.s.Reins.Client.CDP(ctx, r.tab.ID, "Runtime.evaluate", evalParams)
			return err
		})
	})
	b.Run("companion-fake-extension", func(b *testing.B) {
		f := fakeBenchStack(b)
		measure(b, func(ctx context.Context) error {
			_, err := f.reins.Client.CDP(ctx, f.tab, "Runtime.evaluate", evalParams)
			return err
		})
	})
	b.Run("worker-chrome.debugger", func(b *testing.B) {
		// The extension's own floor: chrome.debugger.sendCommand timed
		// inside its service worker, without the socket or any checks.
		r := realBenchStack(b)
		inWorker(b, r, func(ctx context.Context, sid string, n int) ([]float64, error) {
			var ms []float64
			err := r.s.Chrome.Evaluate(ctx, sid, fmt.Sprintf(`(async (tabId, n) => {
				const out = [];
				for (let i = 0; i < n; i++) {
					const t0 = performance.now();
					await chrome.debugger.sendCommand({tabId}, 'Runtime.evaluate', {expression: '1+1'});
					out.push(performance.now() - t0);
				}
				return out;
			})(%d, %d)`, r.tab.Native, n), &ms)
			return ms, err
		})
	})
	b.Run("worker-chrome.tabs.get", func(b *testing.B) {
		// The sharing check the extension makes on every cdp request.
		r := realBenchStack(b)
		inWorker(b, r, func(ctx context.Context, sid string, n int) ([]float64, error) {
			var ms []float64
			err := r.s.Chrome.Evaluate(ctx, sid, fmt.Sprintf(`(async (tabId, n) => {
				const out = [];
				for (let i = 0; i < n; i++) {
					const t0 = performance.now();
					await chrome.tabs.get(tabId);
					out.push(performance.now() - t0);
				}
				return out;
			})(%d, %d)`, r.tab.Native, n), &ms)
			return ms, err
		})
	})
	b.Run("inspect-socket", func(b *testing.B) {
		f := fakeBenchStack(b)
		measure(b, func(ctx context.Context) error {
			_, err := f.reins.Client.Browsers(ctx)
			return err
		})
	})
}
