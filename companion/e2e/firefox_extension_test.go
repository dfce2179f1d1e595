package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/wire"
)

// newFirefoxStack starts reins, Firefox ESR (headless, the extension loaded
// through web-ext) and the pages for one test and stops them when it ends.
func newFirefoxStack(t testing.TB) *harness.FirefoxStack {
	t.Helper()
	return startFor(t, "firefox", setupTimeout+harness.FirefoxHelloTimeout, harness.StartFirefoxStack)
}

// TestFirefoxExtension runs against one reins and one Firefox ESR: the
// extension's side of the protocol, then the tool catalog through MCP. It
// is not parallel: a Firefox start on a busy 2-core machine is heavy enough
// without the Chromium tests starting browsers at the same moment.
func TestFirefoxExtension(t *testing.T) {
	s := newFirefoxStack(t)

	t.Run("hello says firefox", func(t *testing.T) {
		checkHello(t, s.Reins, "Firefox", wire.EngineFirefox, "Firefox/")
	})
	t.Run("restricted Mozilla pages are refused before navigating", func(t *testing.T) {
		firefoxRestricted(t, s)
	})

	t.Run("exceptions map to exceptionDetails", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "throw", false)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "(function f() { throw new RangeError('too far'); })()", "returnByValue": true})
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			ExceptionDetails *struct {
				Text      string `json:"text"`
				Exception struct {
					ClassName   string `json:"className"`
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if err := json.Unmarshal(raw, &res); err != nil || res.ExceptionDetails == nil {
			t.Fatalf("no exceptionDetails in %s (%v)", raw, err)
		}
		d := res.ExceptionDetails
		if d.Text != "Uncaught" || d.Exception.ClassName != "RangeError" || !strings.HasPrefix(d.Exception.Description, "RangeError: too far\n    at f (") {
			t.Fatalf("exceptionDetails %+v", d)
		}
		raw, err = s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "Promise.reject(new Error('later'))", "awaitPromise": true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "Error: later") {
			t.Fatalf("awaited rejection: %s", raw)
		}
		// Without awaitPromise the promise stays in the page, by id, until
		// Runtime.awaitPromise asks for what it settles to.
		raw, err = s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "new Promise((r) => setTimeout(() => r(6 * 7), 50))", "objectGroup": "e2e"})
		if err != nil {
			t.Fatal(err)
		}
		var held struct {
			Result struct {
				Subtype  string `json:"subtype"`
				ObjectID string `json:"objectId"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &held); err != nil || held.Result.Subtype != "promise" || held.Result.ObjectID == "" {
			t.Fatalf("a promise not awaited: %s (%v)", raw, err)
		}
		raw, err = s.Reins.Client.CDP(ctx, tab.ID, "Runtime.awaitPromise", map[string]any{"promiseObjectId": held.Result.ObjectID, "returnByValue": true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), `"value":42`) {
			t.Fatalf("Runtime.awaitPromise: %s", raw)
		}
	})

	t.Run("input, screenshot and metrics through raw cdp", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "fxclick", true)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
			p := map[string]any{"type": typ, "x": 140, "y": 100}
			if typ != "mouseMoved" {
				p["button"], p["clickCount"] = "left", 1
			}
			if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Input.dispatchMouseEvent", p); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
		}
		if ev, err := s.Pages.Wait(ctx, "fxclick", "click"); err != nil || ev.Count != 1 {
			t.Fatalf("click: %+v, %v", ev, err)
		}
		raw, err := s.Reins.Client.CDP(ctx, tab.ID, "Page.captureScreenshot", map[string]any{"format": "png", "clip": map[string]any{"x": 40, "y": 60, "width": 200, "height": 80, "scale": 2}})
		if err != nil {
			t.Fatal(err)
		}
		if b := decodePNGShot(t, raw).Bounds(); b.Dx() != 400 || b.Dy() != 160 {
			t.Fatalf("a 200×80 clip at scale 2 is %v", b)
		}
		raw, err = s.Reins.Client.CDP(ctx, tab.ID, "Page.getLayoutMetrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			CSSVisual struct {
				ClientWidth  float64 `json:"clientWidth"`
				ClientHeight float64 `json:"clientHeight"`
			} `json:"cssVisualViewport"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || m.CSSVisual.ClientWidth < 300 || m.CSSVisual.ClientHeight < 200 {
			t.Fatalf("layout metrics %s (%v)", raw, err)
		}
	})

	t.Run("unsupported methods name themselves", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "unknown", false)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Reins.Client.CDP(ctx, tab.ID, "DOM.getDocument", nil)
		if !errors.Is(err, wire.ErrUnknownMethod) || !strings.Contains(err.Error(), "Firefox adapter does not support DOM.getDocument") {
			t.Fatalf("DOM.getDocument: %v", err)
		}
	})

	t.Run("MCP tools", func(t *testing.T) {
		firefoxToolSuite(t, s)
	})

	t.Run("screencast", func(t *testing.T) {
		fps := firefoxScreencastFPS(t, s)
		t.Logf("Firefox screencast: %.1f frames per second on an animated page", fps)
		if fps < 2 {
			t.Fatalf("screencast ran at %.1f fps", fps)
		}
	})

	t.Run("page calls on an error page", func(t *testing.T) {
		firefoxErrorPage(t, s)
	})

	t.Run("a crashed tab", func(t *testing.T) {
		firefoxCrash(t, s)
	})
}

// animatedPage changes every animation frame, so every capture differs.
const animatedPage = `<!doctype html><title>Animated</title>
<body style="margin:0"><div id="n" style="font:bold 120px sans-serif">0</div>
<script>let i = 0; const n = document.getElementById('n');
function step() { i++; n.textContent = String(i); document.body.style.background = 'hsl(' + (i * 7 % 360) + ',60%,70%)'; requestAnimationFrame(step); }
requestAnimationFrame(step);</script></body>`

// firefoxScreencastFPS runs Page.startScreencast on an animated page for a
// few seconds, acknowledging every frame as the live view does, and returns
// the frame rate.
func firefoxScreencastFPS(t *testing.T, s *harness.FirefoxStack) float64 {
	ctx := within(t, 60*time.Second)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, animatedPage)
	}))
	defer srv.Close()
	tab, err := s.Reins.Client.CreateTab(ctx, s.Browser.ID, srv.URL+"/anim", true)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.Reins.Client.Events(ctx, tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Page.startScreencast", map[string]any{"format": "jpeg", "quality": 60, "maxWidth": 1280, "maxHeight": 720, "everyNthFrame": 1}); err != nil {
		t.Fatal(err)
	}
	defer s.Reins.Client.CDP(context.WithoutCancel(ctx), tab.ID, "Page.stopScreencast", nil)
	const measure = 4 * time.Second
	var first time.Time
	frames := 0
	var size image.Point
	for {
		var ev admin.Event
		var ok bool
		select {
		case ev, ok = <-events.C:
		case <-ctx.Done():
			t.Fatalf("screencast: %d frames before the deadline", frames)
		}
		if !ok {
			t.Fatalf("event stream ended: %v", events.Err())
		}
		if ev.Kind != admin.KindCDPEvent || ev.Method != "Page.screencastFrame" {
			continue
		}
		var f struct {
			Data      string `json:"data"`
			SessionID int    `json:"sessionId"`
			Metadata  struct {
				DeviceWidth float64 `json:"deviceWidth"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(ev.Params, &f); err != nil {
			t.Fatal(err)
		}
		if frames == 0 {
			data, err := base64.StdEncoding.DecodeString(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
			if err != nil || format != "jpeg" || f.Metadata.DeviceWidth <= 0 {
				t.Fatalf("first frame: %s %v, metadata %+v", format, err, f.Metadata)
			}
			size = image.Pt(cfg.Width, cfg.Height)
			first = time.Now()
		}
		frames++
		if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Page.screencastFrameAck", map[string]any{"sessionId": f.SessionID}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(first); d >= measure {
			t.Logf("%d frames of %v in %s", frames-1, size, d.Round(time.Millisecond))
			return float64(frames-1) / d.Seconds()
		}
	}
}

// firefoxErrorPage: Firefox runs no extension script in its error page, so
// a page call on a tab that shows one says so, with the error, rather than
// failing as an internal error (Chromium's calls run in its error page).
func firefoxErrorPage(t *testing.T, s *harness.FirefoxStack) {
	cs := mcpSession(t, s.Reins, "errorpage")
	tab := openTab(t, cs, s.Pages.URL("errorpage"))
	if out := callTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": "http://127.0.0.1:1/"}); !out.isErr || !strings.Contains(out.text, "net::ERR_UNSAFE_PORT") {
		t.Fatalf("navigate to a blocked port answered %+v", out)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"read_page", map[string]any{"tabId": tab}},
		{"javascript_tool", map[string]any{"tabId": tab, "text": "1+1"}},
		{"find", map[string]any{"tabId": tab, "query": "Try again button"}},
	} {
		out := callTool(t, cs, call.tool, call.args)
		if !out.isErr || !strings.Contains(out.text, "[navigation_failed]") || !strings.Contains(out.text, "error page for net::ERR_UNSAFE_PORT") {
			t.Fatalf("%s on Firefox's error page answered %+v, want navigation_failed naming the error page", call.tool, out)
		}
	}
	if out := mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": s.Pages.URL("errorpage")}); !strings.Contains(out.text, harness.TestPageTitle("errorpage")) {
		t.Fatalf("navigate away from the error page answered %s", out.text)
	}
	if got := mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "1+1"}); strings.TrimSpace(got.text) != "2" {
		t.Fatalf("javascript_tool after the error page answered %s", got.text)
	}
}
