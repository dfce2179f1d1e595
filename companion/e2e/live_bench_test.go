package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat times; it is 100 on
// every Linux build Reins supports.
const clockTicks = 100

// BenchmarkLiveView measures Live view end to end on real reins headless
// and real Chromium with the real extension:
//
//   - fps/WxH: frames per second a viewer receives from a shared tab whose
//     page changes on every animation frame, at two viewport sizes; page_fps
//     is what a Live view page in the same browser draws meanwhile, and
//     cpu_% the companion's CPU time over wall time (100 = one core).
//   - input-latency: from a mouse press sent on /live-ws (with take-over) to
//     the first frame that shows its effect; p50_ms and p95_ms.
//
// Each iteration is one frame (fps) or one press (latency). The default
// benchtime of 1 s gives only a few frames on a loaded machine; run it as
//
//	go test -run '^$' -bench BenchmarkLiveView -benchtime 10s ./companion/e2e/
func BenchmarkLiveView(b *testing.B) {
	s := newStack(b)
	pages := startLivePages()
	b.Cleanup(pages.Close)
	ctx := within(b, 10*time.Minute)
	st, err := admin.NewClient(s.Reins.DataDir).Status(ctx)
	if err != nil {
		b.Fatal(err)
	}
	pid := st.PID

	anim, err := openLiveTab(ctx, s, pages, "anim", "bench-anim")
	if err != nil {
		b.Fatal(err)
	}
	sizes := [][2]int{{640, 400}, {1280, 800}}

	// The baseline: the same screencast taken straight from Chromium's own
	// DevTools, without the extension or reins, and acked at once. It says
	// how much of the frame rate the machine allows at all.
	for _, size := range sizes {
		b.Run(fmt.Sprintf("direct-fps/%dx%d", size[0], size[1]), func(b *testing.B) {
			if err := setViewport(ctx, s, anim.ID, size[0], size[1]); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(directFPS(b, ctx, s, "Live bench-anim", size), "fps")
		})
	}

	// One Live view page watches throughout, as a person would, beside the
	// Go viewer the benchmark reads.
	link, err := liveURL(ctx, s, anim.ID)
	if err != nil {
		b.Fatal(err)
	}
	page, err := openViewer(ctx, s, link)
	if err != nil {
		b.Fatal(err)
	}
	conn := benchViewer(b, ctx, s.Reins.BaseURL(), mustLiveURL(b, ctx, s, anim.ID))

	for _, size := range sizes {
		b.Run(fmt.Sprintf("fps/%dx%d", size[0], size[1]), func(b *testing.B) {
			if err := setViewport(ctx, s, anim.ID, size[0], size[1]); err != nil {
				b.Fatal(err)
			}
			// Start measuring once frames of the new size flow.
			for {
				m := nextFrame(b, ctx, conn)
				if int(m.Metadata.Width) == size[0] && int(m.Metadata.Height) == size[1] {
					break
				}
			}
			before, err := page.state(ctx)
			if err != nil {
				b.Fatal(err)
			}
			t0, err := procTicks(pid)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for b.Loop() {
				nextFrame(b, ctx, conn)
			}
			elapsed := time.Since(start).Seconds()
			t1, err := procTicks(pid)
			if err != nil {
				b.Fatal(err)
			}
			after, err := page.state(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed, "fps")
			b.ReportMetric(float64(after.Drawn-before.Drawn)/elapsed, "page_fps")
			b.ReportMetric(float64(t1-t0)/clockTicks/elapsed*100, "cpu_%")
		})
	}

	b.Run("input-latency", func(b *testing.B) {
		flip, err := openLiveTab(ctx, s, pages, "flip", "bench-flip")
		if err != nil {
			b.Fatal(err)
		}
		if err := setViewport(ctx, s, flip.ID, 640, 400); err != nil {
			b.Fatal(err)
		}
		c := benchViewer(b, ctx, s.Reins.BaseURL(), mustLiveURL(b, ctx, s, flip.ID))
		send(b, ctx, c, `{"kind":"takeover","on":true}`)
		for {
			m, err := readLive(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			if m.Kind == "takeover" && m.ByYou {
				break
			}
		}
		dark := false
		press := func() time.Duration {
			start := time.Now()
			send(b, ctx, c, `{"kind":"mouse","type":"down","x":0.5,"y":0.5,"button":"left","buttons":1,"clickCount":1}`)
			send(b, ctx, c, `{"kind":"mouse","type":"up","x":0.5,"y":0.5,"button":"left","buttons":0,"clickCount":1}`)
			dark = !dark
			for {
				m := nextFrame(b, ctx, c)
				luma, err := centreLuma(m)
				if err != nil {
					b.Fatal(err)
				}
				if (dark && luma < 64) || (!dark && luma > 192) {
					return time.Since(start)
				}
			}
		}
		press() // the first press also attaches input; not measured
		var lat []time.Duration
		for b.Loop() {
			lat = append(lat, press())
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "p50_ms")
		b.ReportMetric(float64(lat[len(lat)*95/100])/float64(time.Millisecond), "p95_ms")
	})
}

func mustLiveURL(b *testing.B, ctx context.Context, s *harness.Stack, tab int) string {
	b.Helper()
	link, err := liveURL(ctx, s, tab)
	if err != nil {
		b.Fatal(err)
	}
	return link
}

// benchViewer redeems a link and connects a Go viewer that the benchmark
// reads from.
func benchViewer(b *testing.B, ctx context.Context, base, link string) *websocket.Conn {
	b.Helper()
	ls, _, err := redeem(ctx, link)
	if err != nil {
		b.Fatal(err)
	}
	conn, _, err := dialLive(ctx, ls, base, true)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.CloseNow() })
	return conn
}

// nextFrame reads messages until a frame arrives.
func nextFrame(b *testing.B, ctx context.Context, conn *websocket.Conn) liveMsg {
	b.Helper()
	for {
		m, err := readLive(ctx, conn)
		if err != nil {
			b.Fatal(err)
		}
		switch m.Kind {
		case "frame":
			return m
		case "error":
			b.Fatalf("the view ended: %s: %s", m.Code, m.Message)
		}
	}
}

func send(b *testing.B, ctx context.Context, conn *websocket.Conn, msg string) {
	b.Helper()
	if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		b.Fatal(err)
	}
}

// directFPS runs Page.startScreencast on the tab titled title through the
// browser's own DevTools, with the settings Live view starts with, and
// counts frames (one per iteration) while acking each at once.
func directFPS(b *testing.B, ctx context.Context, s *harness.Stack, title string, size [2]int) float64 {
	b.Helper()
	target, err := s.Chrome.WaitTarget(ctx, func(t harness.TargetInfo) bool { return t.Type == "page" && t.Title == title })
	if err != nil {
		b.Fatal(err)
	}
	sid, err := s.Chrome.Attach(ctx, target.TargetID)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Chrome.Detach(context.WithoutCancel(ctx), sid)
	type frame struct {
		ack  int
		w, h int
	}
	frames := make(chan frame, 64)
	cancel := s.Chrome.Browser.Subscribe(func(ev harness.CDPEvent) {
		if ev.SessionID != sid || ev.Method != "Page.screencastFrame" {
			return
		}
		var p struct {
			SessionID int `json:"sessionId"`
			Metadata  struct {
				DeviceWidth  float64 `json:"deviceWidth"`
				DeviceHeight float64 `json:"deviceHeight"`
			} `json:"metadata"`
		}
		if json.Unmarshal(ev.Params, &p) == nil {
			// Ack on the side: the reader goroutine must not wait.
			go s.Chrome.Browser.Call(context.WithoutCancel(ctx), sid, "Page.screencastFrameAck", map[string]any{"sessionId": p.SessionID}, nil)
			select {
			case frames <- frame{p.SessionID, int(p.Metadata.DeviceWidth), int(p.Metadata.DeviceHeight)}:
			default:
			}
		}
	})
	defer cancel()
	lv := map[string]any{"format": "jpeg", "quality": 70, "maxWidth": 1600, "maxHeight": 1000}
	if err := s.Chrome.Browser.Call(ctx, sid, "Page.startScreencast", lv, nil); err != nil {
		b.Fatal(err)
	}
	defer s.Chrome.Browser.Call(context.WithoutCancel(ctx), sid, "Page.stopScreencast", nil, nil)
	next := func() frame {
		select {
		case f := <-frames:
			return f
		case <-ctx.Done():
			b.Fatal("no screencast frame from Chromium")
			return frame{}
		}
	}
	for f := next(); f.w != size[0] || f.h != size[1]; f = next() {
	}
	start := time.Now()
	for b.Loop() {
		next()
	}
	return float64(b.N) / time.Since(start).Seconds()
}
