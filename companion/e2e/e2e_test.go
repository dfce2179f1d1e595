package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/png"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// evaluate runs Runtime.evaluate through the companion and decodes the value.
func evaluate(ctx context.Context, s *harness.Stack, tabID int, expr string, out any) error {
	raw, err := s.Reins.Client.CDP(ctx, tabID, "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true,
	})
	if err != nil {
		return err
	}
	return decodeEvaluate(raw, out)
}

func decodeEvaluate(raw json.RawMessage, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("decoding %s: %w", raw, err)
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("page threw: %s (%s)", res.ExceptionDetails.Text, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

var uuidish = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// decodePNGShot decodes a Page.captureScreenshot answer, which must be a PNG.
func decodePNGShot(t *testing.T, raw json.RawMessage) image.Image {
	t.Helper()
	var shot struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatalf("screenshot is not base64: %v", err)
	}
	img, format, err := image.Decode(bytes.NewReader(png))
	if err != nil || format != "png" {
		t.Fatalf("screenshot does not decode as a PNG: %s %v", format, err)
	}
	return img
}

// checkHello checks the hello of the one browser connected to r, as the
// extension sends it in browser (of engine, whose user agent has ua).
func checkHello(t *testing.T, r *harness.Reins, browser string, engine wire.Engine, ua string) {
	t.Helper()
	want, err := harness.ExtensionVersion()
	if err != nil {
		t.Fatal(err)
	}
	bs, err := r.Client.Browsers(within(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 {
		t.Fatalf("%d browsers, want 1: %+v", len(bs), bs)
	}
	b := bs[0]
	h := b.Hello
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"version 3", h.Version == wire.ProtocolVersion},
		{"extensionVersion " + want + " from manifest.json", h.ExtensionVersion == want},
		{"browser " + browser, h.Browser == browser},
		{"browserEngine " + string(engine), h.BrowserEngine == engine && b.Engine == engine},
		{"a UUID instanceId", uuidish.MatchString(h.InstanceID)},
		{"a UUID browserSessionId", uuidish.MatchString(h.BrowserSessionID) && h.BrowserSessionID != h.InstanceID},
		{"a user agent with " + ua, strings.Contains(h.UserAgent, ua)},
		{"extension mode", b.Mode == hub.ModeExtension},
	} {
		if !c.ok {
			t.Errorf("hello lacks %s: %+v", c.what, h)
		}
	}
}

// TestExtension runs against one reins and one Chromium; the subtests that
// break their stack (a killed browser, a stopped companion) start their own.
// It is parallel with TestIdleWorkerStaysConnected so that test's 90 s of
// waiting overlaps this work.
func TestExtension(t *testing.T) {
	t.Parallel()
	s := newStack(t)

	t.Run("hello", func(t *testing.T) {
		checkHello(t, s.Reins, "Chromium", wire.EngineChromium, "Chrome/")
	})

	t.Run("tabs.create shares a page", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.Reins.Client.CreateTab(ctx, s.Browser.ID, s.Pages.URL("create"), false)
		if err != nil {
			t.Fatal(err)
		}
		if tab.ID <= 0 || !tab.Shared || !tab.Agent || tab.BrowserID != s.Browser.ID {
			t.Fatalf("tabs.create answered %+v", tab)
		}
		// The extension's own tabs event must agree: shared, same public id.
		got, err := s.WaitTab(ctx, func(t hub.Tab) bool {
			return t.ID == tab.ID && t.Shared && t.URL == s.Pages.URL("create")
		})
		if err != nil {
			t.Fatalf("%v; tabs now %+v", err, s.Watch.Last().Tabs)
		}
		if got.Native != tab.Native || got.Unsupported != "" {
			t.Fatalf("tab in /tabs %+v, created %+v", got, tab)
		}
	})

	t.Run("cdp Runtime.evaluate reads the title", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "title", false)
		if err != nil {
			t.Fatal(err)
		}
		var title string
		if err := evaluate(ctx, s, tab.ID, "document.title", &title); err != nil {
			t.Fatal(err)
		}
		if title != harness.TestPageTitle("title") {
			t.Fatalf("title %q, want %q", title, harness.TestPageTitle("title"))
		}
	})

	t.Run("Page.captureScreenshot is an image", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "shot", true)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := s.Reins.Client.CDP(ctx, tab.ID, "Page.captureScreenshot", map[string]any{"format": "png"})
		if err != nil {
			t.Fatal(err)
		}
		if b := decodePNGShot(t, raw).Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Fatalf("screenshot %v", b)
		}
	})

	t.Run("Input.dispatchMouseEvent click changes the page", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "click", true)
		if err != nil {
			t.Fatal(err)
		}
		var at struct{ X, Y float64 }
		if err := evaluate(ctx, s, tab.ID, `(() => { const r = document.getElementById('btn').getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, &at); err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Input.dispatchMouseEvent", map[string]any{
				"type": typ, "x": at.X, "y": at.Y, "button": "left", "buttons": 1, "clickCount": 1,
			}); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
		}
		ev, err := s.Pages.Wait(ctx, "click", "click")
		if err != nil {
			t.Fatal(err)
		}
		if ev.Count != 1 {
			t.Fatalf("page counted %d clicks, want 1", ev.Count)
		}
		var title string
		if err := evaluate(ctx, s, tab.ID, "document.title", &title); err != nil {
			t.Fatal(err)
		}
		if title != "clicked 1" {
			t.Fatalf("title after click %q", title)
		}
	})

	t.Run("closing a tab sends a tabs event", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "close", false)
		if err != nil {
			t.Fatal(err)
		}
		events, err := s.Reins.Client.Events(ctx, tab.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer events.Close()
		if err := s.Reins.Client.CloseTab(ctx, tab.ID); err != nil {
			t.Fatal(err)
		}
		// The tab leaves /tabs only through the extension's tabs event.
		if _, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool {
			for _, t := range snap.Tabs {
				if t.ID == tab.ID {
					return false
				}
			}
			return true
		}); err != nil {
			t.Fatalf("closed tab stayed in /tabs: %v", err)
		}
		for {
			select {
			case ev, ok := <-events.C:
				if !ok {
					t.Fatalf("event stream ended: %v", events.Err())
				}
				if ev.Kind != admin.KindClosed {
					continue // a detach or page events may come first
				}
			case <-ctx.Done():
				t.Fatal("no closed event for the tab")
			}
			break
		}
		if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "1"}); !errors.Is(err, wire.ErrNoSuchTab) {
			t.Fatalf("cdp on a closed tab: %v, want no_such_tab", err)
		}
	})

	t.Run("an unshared tab is refused", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		// Opened by the browser's own DevTools: the extension never shares it.
		target, _, err := s.Chrome.OpenPage(ctx, s.Pages.URL("unshared"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Chrome.CloseTarget(context.Background(), target)
		tab, err := s.WaitTab(ctx, func(t hub.Tab) bool { return t.URL == s.Pages.URL("unshared") })
		if err != nil {
			t.Fatal(err)
		}
		if tab.Shared {
			t.Fatalf("a tab the extension did not open is shared: %+v", tab)
		}
		// The companion refuses first…
		if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "document.title"}); !errors.Is(err, wire.ErrNotShared) {
			t.Fatalf("cdp: %v (code %s), want not_shared", err, wire.CodeOf(err))
		}
		// …and the extension refuses again when asked directly.
		_, err = s.Reins.Client.Request(ctx, s.Browser.ID, wire.MethodCDP, wire.CDPParams{
			TabID: tab.Native, Method: "Runtime.evaluate", Params: json.RawMessage(`{"expression":"document.title"}`),
		})
		if !errors.Is(err, wire.ErrNotShared) {
			t.Fatalf("raw cdp request: %v (code %s), want not_shared from the extension", err, wire.CodeOf(err))
		}
	})

	t.Run("a chrome:// URL is refused", func(t *testing.T) {
		ctx := within(t, 30*time.Second)
		if _, err := s.Reins.Client.CreateTab(ctx, s.Browser.ID, "chrome://version/", false); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Fatalf("tabs.create chrome://version: %v (code %s), want restricted_url", err, wire.CodeOf(err))
		}
		// A shared tab that went to a chrome:// page: the companion refuses
		// on the URL the extension reports, and the extension refuses too.
		tab, err := s.OpenShared(ctx, "restricted", false)
		if err != nil {
			t.Fatal(err)
		}
		targets, err := s.Chrome.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var target string
		for _, tg := range targets {
			if tg.URL == s.Pages.URL("restricted") {
				target = tg.TargetID
			}
		}
		if target == "" {
			t.Fatalf("no target for the shared page in %+v", targets)
		}
		sid, err := s.Chrome.Attach(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Chrome.Browser.Call(ctx, sid, "Page.navigate", map[string]any{"url": "chrome://version/"}, nil); err != nil {
			t.Fatal(err)
		}
		s.Chrome.Detach(ctx, sid)
		got, err := s.WaitTab(ctx, func(t hub.Tab) bool { return t.ID == tab.ID && strings.HasPrefix(t.URL, "chrome://version") })
		if err != nil {
			t.Fatal(err)
		}
		if got.Unsupported == "" {
			t.Fatalf("chrome:// tab not marked unsupported: %+v", got)
		}
		if _, err := s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "1"}); !errors.Is(err, wire.ErrRestrictedURL) {
			t.Fatalf("cdp: %v (code %s), want restricted_url", err, wire.CodeOf(err))
		}
		_, err = s.Reins.Client.Request(ctx, s.Browser.ID, wire.MethodCDP, wire.CDPParams{
			TabID: tab.Native, Method: "Runtime.evaluate", Params: json.RawMessage(`{"expression":"1"}`),
		})
		if !errors.Is(err, wire.ErrRestrictedURL) {
			t.Fatalf("raw cdp request: %v (code %s), want restricted_url from the extension", err, wire.CodeOf(err))
		}
	})

	for _, kill := range []struct {
		name string
		kill func(*harness.Chromium) error
	}{
		{"main process", (*harness.Chromium).KillMain},
		{"all processes", (*harness.Chromium).Kill},
	} {
		t.Run("a killed browser fails the pending request within 1 s/"+kill.name, func(t *testing.T) {
			s := newStack(t)
			ctx := within(t, 30*time.Second)
			tab, err := s.OpenShared(ctx, "kill", false)
			if err != nil {
				t.Fatal(err)
			}
			errc := pendingEvaluate(s, tab.ID, "kill")
			if _, err := s.Pages.Wait(ctx, "kill", "pending"); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			if err := kill.kill(s.Chrome); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errc:
				took := time.Since(killed)
				if !errors.Is(err, wire.ErrNoSuchBrowser) {
					t.Fatalf("pending request: %v (code %s), want no_such_browser", err, wire.CodeOf(err))
				}
				t.Logf("the error arrived %s after SIGKILL: %v", took.Round(time.Microsecond), err)
			case <-time.After(time.Second - time.Since(killed)):
				t.Errorf("no error within 1 s of killing the browser")
			}
			if _, err := s.Watch.Until(ctx, func(snap admin.Snapshot) bool { return len(snap.Browsers) == 0 }); err != nil {
				t.Fatalf("the killed browser stayed in /browsers: %v", err)
			}
			// Where the time went: the kernel tearing the browser down, reins
			// noticing, the answer reaching us.
			since := func(at time.Time) string { return at.Sub(killed).Round(time.Millisecond).String() }
			reaped := "not within 10 s"
			select {
			case <-s.Chrome.Exited():
				reaped = since(s.Chrome.ExitedAt())
			case <-time.After(10 * time.Second):
			}
			seen := "not logged"
			if at, ok := s.Reins.LogTime("browser disconnected"); ok {
				seen = since(at)
			}
			t.Logf("after SIGKILL: reins logged the disconnect at +%s (ms precision), the main process was reaped at +%s", seen, reaped)
		})
	}

	t.Run("SIGTERM closes the extension and fails the pending request", func(t *testing.T) {
		s := newStack(t)
		ctx := within(t, 30*time.Second)
		tab, err := s.OpenShared(ctx, "term", false)
		if err != nil {
			t.Fatal(err)
		}
		// Record, in the worker, how its socket to reins closes.
		err = s.Chrome.InWorker(ctx, func(sid string) error {
			return hookSocketClose(ctx, s.Chrome, sid)
		})
		if err != nil {
			t.Fatal(err)
		}
		errc := pendingEvaluate(s, tab.ID, "term")
		if _, err := s.Pages.Wait(ctx, "term", "pending"); err != nil {
			t.Fatal(err)
		}
		if err := s.Reins.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, wire.ErrNoSuchBrowser) || !strings.Contains(err.Error(), "shutting down") {
				t.Fatalf("pending request: %v (code %s), want no_such_browser saying the companion is shutting down", err, wire.CodeOf(err))
			}
			t.Logf("pending request failed with: %v", err)
		case <-ctx.Done():
			t.Fatal("the pending request got no answer")
		}
		select {
		case <-s.Reins.Exited():
			if err := s.Reins.ExitErr(); err != nil {
				t.Fatalf("reins exit: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("reins did not exit after SIGTERM")
		}
		var closed struct {
			Code     int    `json:"code"`
			Reason   string `json:"reason"`
			WasClean bool   `json:"wasClean"`
		}
		err = s.Chrome.InWorker(ctx, func(sid string) error {
			return s.Chrome.Evaluate(ctx, sid, `globalThis.__e2eSocketClose ?? null`, &closed)
		})
		if err != nil {
			t.Fatal(err)
		}
		// 1001 going away, with a clean closing handshake: a close frame,
		// not a dropped connection (1006).
		if closed.Code != 1001 || !closed.WasClean || !strings.Contains(closed.Reason, "shutting down") {
			t.Fatalf("the extension's socket closed with %+v, want a clean 1001 close frame saying the companion is shutting down", closed)
		}
	})
}

// pendingEvaluate starts a cdp call that never finishes on its own: the page
// reports "pending" from inside it, so the caller knows it is in flight.
func pendingEvaluate(s *harness.Stack, tabID int, page string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := s.Reins.Client.CDP(context.Background(), tabID, "Runtime.evaluate", map[string]any{
			"expression":   `report('pending'); new Promise(() => {})`,
			"awaitPromise": true,
		})
		errc <- err
	}()
	return errc
}

// hookSocketClose finds the worker's open WebSockets through the heap (the
// extension keeps its socket in module scope, out of reach of a global
// lookup) and records the first close event of each in a global.
func hookSocketClose(ctx context.Context, c *harness.Chromium, sid string) error {
	var proto struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	if err := c.Browser.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "WebSocket.prototype"}, &proto); err != nil {
		return err
	}
	var objs struct {
		Objects struct {
			ObjectID string `json:"objectId"`
		} `json:"objects"`
	}
	if err := c.Browser.Call(ctx, sid, "Runtime.queryObjects", map[string]any{"prototypeObjectId": proto.Result.ObjectID}, &objs); err != nil {
		return err
	}
	var hooked struct {
		Result struct {
			Value int `json:"value"`
		} `json:"result"`
	}
	err := c.Browser.Call(ctx, sid, "Runtime.callFunctionOn", map[string]any{
		"objectId": objs.Objects.ObjectID,
		"functionDeclaration": `function () {
			let n = 0;
			for (const ws of this) {
				if (ws.readyState !== WebSocket.OPEN) continue;
				n++;
				ws.addEventListener('close', (e) => {
					globalThis.__e2eSocketClose ??= { code: e.code, reason: e.reason, wasClean: e.wasClean };
				});
			}
			return n;
		}`,
		"returnByValue": true,
	}, &hooked)
	if err != nil {
		return err
	}
	if hooked.Result.Value != 1 {
		return fmt.Errorf("the worker has %d open sockets, want 1", hooked.Result.Value)
	}
	return nil
}

// TestIdleWorkerStaysConnected leaves the extension alone for 90 s, three
// times Chromium's 30 s service-worker idle timeout: only the extension's
// 20 s pings keep the worker, and so its socket, alive. Any disconnect or
// reconnect ends the wait at once and fails the test.
func TestIdleWorkerStaysConnected(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ctx := within(t, 30*time.Second)
	tab, err := s.OpenShared(ctx, "idle", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := evaluate(ctx, s, tab.ID, "1+1", nil); err != nil {
		t.Fatal(err)
	}
	first := s.Browser
	const idle = 90 * time.Second
	start := time.Now()
	idleCtx, cancel := context.WithTimeout(context.Background(), idle)
	defer cancel()
	// A reconnect keeps the browser id but is a new connection with a new
	// Since, so both are compared.
	snap, err := s.Watch.Until(idleCtx, func(snap admin.Snapshot) bool {
		for _, b := range snap.Browsers {
			if b.ID == first.ID && b.Since.Equal(first.Since) {
				return false
			}
		}
		return true
	})
	switch {
	case err == nil:
		t.Fatalf("the extension's connection changed after %s idle: browsers %+v", time.Since(start).Round(time.Second), snap.Browsers)
	case !errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("watching for %s: %v", idle, err)
	}
	var two int
	if err := evaluate(within(t, 30*time.Second), s, tab.ID, "1+1", &two); err != nil || two != 2 {
		t.Fatalf("after %s idle: 1+1 = %d, %v", idle, two, err)
	}
	bs, err := s.Reins.Client.Browsers(within(t, 10*time.Second))
	if err != nil || len(bs) != 1 || bs[0].ID != first.ID || !bs[0].Since.Equal(first.Since) {
		t.Fatalf("after %s idle: browsers %+v (%v), want the first connection %s since %s", idle, bs, err, first.ID, first.Since)
	}
}
