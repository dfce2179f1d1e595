package e2e

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
)

// liveStep bounds one step of a Live view test on a busy 2-core machine.
const liveStep = 45 * time.Second

// TestLiveView runs Live view against real reins headless and real
// Chromium with the real extension: the shared tab is a page the extension
// shares, and the viewer is the Live view page opened in another tab of the
// same browser that the extension does not share, driven through
// Chromium's own DevTools like a person's mouse and keyboard.
func TestLiveView(t *testing.T) {
	s := newStack(t)
	pages := startLivePages()
	t.Cleanup(pages.Close)

	ctx := within(t, liveStep)
	tab, link, v := watch(ctx, t, s, pages, "target", 800, 600)

	t.Run("frames render to the canvas", func(t *testing.T) {
		ctx := within(t, liveStep)
		st, err := v.until(ctx, "st.state === 'live' && st.drawn > 0 && st.metadata && st.metadata.width === 800")
		if err != nil {
			t.Fatal(err)
		}
		if st.Tab == nil || st.Tab.ID != tab.ID || st.Tab.Title != "Live target" || !strings.Contains(st.Tab.URL, "/target?id=target") || st.Tab.Browser == "" {
			t.Fatalf("hello named the tab %+v", st.Tab)
		}
		if st.Metadata.Height != 600 {
			t.Fatalf("frame metadata %+v, want 800×600", st.Metadata)
		}
		px, err := v.pixels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The target page is white with red, blue and green blocks.
		if px.Width == 0 || px.Colours < 3 || px.NonWhite == 0 || px.NonWhite == px.Samples {
			t.Fatalf("canvas looks blank: %+v", px)
		}
		if math.Abs(float64(px.Width)/float64(px.Height)-800.0/600) > 0.02 {
			t.Fatalf("picture %d×%d does not keep the tab's 4:3 aspect", px.Width, px.Height)
		}
		var shown struct{ Title, URL, Browser, Conn string }
		if err := v.eval(ctx, `({Title: document.getElementById('title').textContent, URL: document.getElementById('url').textContent,
			Browser: document.getElementById('browser').textContent, Conn: document.getElementById('conn').textContent})`, &shown); err != nil {
			t.Fatal(err)
		}
		if shown.Title != "Live target" || !strings.Contains(shown.URL, "/target") || shown.Browser == "" || shown.Conn != "live" {
			t.Fatalf("page header shows %+v", shown)
		}
	})

	// clickLands clicks the centre of element id through the picture and
	// checks the shared tab saw the click there, on that element.
	clickLands := func(t *testing.T, id string) {
		t.Helper()
		ctx := within(t, liveStep)
		var r struct{ X, Y, W, H, VW, VH float64 }
		if err := evaluate(ctx, s, tab.ID, `(() => { const r = document.getElementById('`+id+`').getBoundingClientRect();
			return {X: r.left, Y: r.top, W: r.width, H: r.height, VW: innerWidth, VH: innerHeight}; })()`, &r); err != nil {
			t.Fatal(err)
		}
		cx, cy := r.X+r.W/2, r.Y+r.H/2
		skip := pages.count("target", "click")
		if err := v.clickPicture(ctx, cx/r.VW, cy/r.VH); err != nil {
			t.Fatal(err)
		}
		ev, err := pages.wait(ctx, "target", "click", skip, nil)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := strconv.ParseFloat(ev.Params.Get("x"), 64)
		y, _ := strconv.ParseFloat(ev.Params.Get("y"), 64)
		// The picture is shown scaled; a viewer pixel is at most a couple
		// of the tab's pixels.
		if got := ev.Params.Get("target"); got != id || math.Abs(x-cx) > 3 || math.Abs(y-cy) > 3 {
			t.Fatalf("click landed at (%v, %v) on %q, want (%.1f, %.1f) on %q in a %v×%v viewport", x, y, got, cx, cy, id, r.VW, r.VH)
		}
	}

	t.Run("watching never injects input; take over does", func(t *testing.T) {
		ctx := within(t, liveStep)
		var before []string
		if err := evaluate(ctx, s, tab.ID, "window.clicks", &before); err != nil {
			t.Fatal(err)
		}
		// While watching, a click on the picture of element a …
		if err := v.clickPicture(ctx, 0.2, 0.2); err != nil {
			t.Fatal(err)
		}
		// … never reaches the tab: the next click the tab sees is the one
		// made after taking over, on element b.
		if err := v.setTakeover(ctx, true); err != nil {
			t.Fatal(err)
		}
		clickLands(t, "b")
		var after []string
		if err := evaluate(ctx, s, tab.ID, "window.clicks", &after); err != nil {
			t.Fatal(err)
		}
		if got := after[len(before):]; len(got) != 1 || got[0] != "b" {
			t.Fatalf("clicks the tab saw since watching began: %q, want only the take-over click on b", got)
		}
	})

	t.Run("take over: a click lands on the right element at 800x600", func(t *testing.T) {
		ctx := within(t, liveStep)
		if err := v.setTakeover(ctx, true); err != nil {
			t.Fatal(err)
		}
		clickLands(t, "a")
		clickLands(t, "b")
		clickLands(t, "c")
	})

	t.Run("take over: a click lands on the right element at 1280x640", func(t *testing.T) {
		ctx := within(t, liveStep)
		if err := setViewport(ctx, s, tab.ID, 1280, 640); err != nil {
			t.Fatal(err)
		}
		if _, err := v.until(ctx, "st.metadata.width === 1280 && st.metadata.height === 640"); err != nil {
			t.Fatal(err)
		}
		clickLands(t, "a")
		clickLands(t, "b")
		clickLands(t, "c")
	})

	t.Run("typing arrives in a focused input", func(t *testing.T) {
		ctx := within(t, liveStep)
		clickLands(t, "in")
		if err := v.typeText(ctx, "Hi there 42x"); err != nil {
			t.Fatal(err)
		}
		if err := v.typeKey(ctx, "Backspace", "Backspace", "", 8); err != nil {
			t.Fatal(err)
		}
		if _, err := pages.wait(ctx, "target", "input", 0, func(ev liveEvent) bool { return ev.Params.Get("value") == "Hi there 42" }); err != nil {
			var value string
			evaluate(ctx, s, tab.ID, "document.getElementById('in').value", &value)
			t.Fatalf("%v; the input holds %q", err, value)
		}
	})

	t.Run("release ends take-over", func(t *testing.T) {
		ctx := within(t, liveStep)
		if err := v.setTakeover(ctx, false); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the ticket works once only", func(t *testing.T) {
		ctx := within(t, liveStep)
		// The viewer already used the link: a second use is refused.
		_, resp, err := redeem(ctx, link)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("second use of the link: status %d, want 403", resp.StatusCode)
		}
		// And a page opened on it says so.
		again, err := openViewer(ctx, s, link)
		if err != nil {
			t.Fatal(err)
		}
		defer again.close(context.WithoutCancel(ctx))
		var text string
		if err := again.eval(ctx, "document.body.innerText", &text); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, "This link has expired") || !strings.Contains(text, "Reins tray") {
			t.Fatalf("reused link shows %q", text)
		}
		// A fresh link works, once.
		fresh, err := liveURL(ctx, s, tab.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ls, resp, err := redeem(ctx, fresh); err != nil || resp.StatusCode != http.StatusOK || ls.page == "" {
			t.Fatalf("fresh link: %v %v", resp, err)
		}
		if _, resp, err := redeem(ctx, fresh); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("fresh link reused: %v %v", resp, err)
		}
	})

	t.Run("a web origin, a missing cookie and another session's path are refused", func(t *testing.T) {
		ctx := within(t, liveStep)
		mint := func() liveSession {
			fresh, err := liveURL(ctx, s, tab.ID)
			if err != nil {
				t.Fatal(err)
			}
			ls, _, err := redeem(ctx, fresh)
			if err != nil || ls.page == "" {
				t.Fatalf("redeeming a fresh link: %v", err)
			}
			return ls
		}
		ls, other := mint(), mint()
		base := s.Reins.BaseURL()
		for _, c := range []struct {
			name   string
			ls     liveSession
			cookie bool
			origin string
		}{
			{"web origin with a valid cookie", ls, true, "https://evil.example"},
			{"another local origin with a valid cookie", ls, true, pages.srv.URL},
			{"no origin with a valid cookie", ls, true, ""},
			{"own origin without a cookie", ls, false, base},
			{"own origin with another session's cookie", crossed(ls, other), true, base},
		} {
			conn, resp, err := dialLive(ctx, c.ls, c.origin, c.cookie)
			if err == nil {
				conn.CloseNow()
				t.Errorf("%s: accepted", c.name)
				continue
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %v, want 403", c.name, err)
			}
		}
		if conn, _, err := dialLive(ctx, ls, base, true); err != nil {
			t.Fatalf("own origin with the cookie refused: %v", err)
		} else {
			conn.Close(websocket.StatusNormalClosure, "")
		}
		// A page of another origin in the same browser cannot open the
		// socket even at the session's own address: its Origin is refused.
		var outcome string
		err := evaluate(ctx, s, tab.ID, fmt.Sprintf(`new Promise((resolve) => {
			const ws = new WebSocket(%q);
			ws.onopen = () => { ws.close(); resolve('opened'); };
			ws.onerror = () => resolve('refused');
		})`, ls.socketURL()), &outcome)
		if err != nil {
			t.Fatal(err)
		}
		if outcome != "refused" {
			t.Fatalf("a page of %s opened the live socket: %s", pages.srv.URL, outcome)
		}
		// The page without a cookie shows the expired text with 403.
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ls.page, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "This link has expired") {
			t.Fatalf("page without a cookie: %d", resp.StatusCode)
		}
	})

	t.Run("a link file opens the view, then is gone", func(t *testing.T) {
		// What the tray does: it opens a file:// URL that carries no
		// secret; the file leads the browser to a one-time link, and the
		// link to the session's page. The session cookie (SameSite=Strict)
		// must still reach the page after the hop from a file.
		ctx := within(t, liveStep)
		file, err := liveFileURL(ctx, s, tab.ID)
		if err != nil {
			t.Fatal(err)
		}
		page := regexp.MustCompile(`^/live/s/[A-Za-z0-9_-]{43}/` + strconv.Itoa(tab.ID) + `$`)
		fv, err := openViewerAt(ctx, s, file, page)
		if err != nil {
			t.Fatal(err)
		}
		defer fv.close(context.WithoutCancel(ctx))
		if _, err := fv.until(ctx, "st.state === 'live' && st.drawn > 0"); err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(file)
		if _, err := os.Stat(u.Path); !os.IsNotExist(err) {
			t.Fatalf("the link file is still there once used: %v", err)
		}
	})

	t.Run("closing the tab ends the view with a message", func(t *testing.T) {
		ctx := within(t, liveStep)
		if err := s.Reins.Client.CloseTab(ctx, tab.ID); err != nil {
			t.Fatal(err)
		}
		st, err := v.until(ctx, "st.state === 'ended'")
		if err != nil {
			t.Fatal(err)
		}
		if st.Error == nil || st.Error.Code != "no_such_tab" || !strings.Contains(st.Error.Message, "closed") {
			t.Fatalf("view ended with %+v", st.Error)
		}
		var shown struct {
			Hidden  bool
			Message string
			Conn    string
		}
		if err := v.eval(ctx, `({Hidden: document.getElementById('ended').hidden, Message: document.getElementById('ended').innerText, Conn: document.getElementById('conn').textContent})`, &shown); err != nil {
			t.Fatal(err)
		}
		if shown.Hidden || !strings.Contains(shown.Message, "The tab was closed.") || !strings.Contains(shown.Message, "Reins tray") || shown.Conn != "ended" {
			t.Fatalf("the page shows %+v", shown)
		}
	})
}

// TestLiveViewFanOut checks that two viewers share one screencast and that
// a viewer that stops reading does not hold up the other. It measures the
// first viewer's frame rate with and without the stalled one for the log,
// and asserts only that frames keep arriving.
func TestLiveViewFanOut(t *testing.T) {
	s := newStack(t)
	pages := startLivePages()
	t.Cleanup(pages.Close)
	ctx := within(t, 5*liveStep)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("live view log:\n" + liveLog(s))
		}
	})
	tab, err := openLiveTab(ctx, s, pages, "noise", "noise")
	if err != nil {
		t.Fatal(err)
	}
	if err := setViewport(ctx, s, tab.ID, 800, 500); err != nil {
		t.Fatal(err)
	}
	open := func() *liveViewer {
		link, err := liveURL(ctx, s, tab.ID)
		if err != nil {
			t.Fatal(err)
		}
		v, err := openViewer(ctx, s, link)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := open()
	if _, err := first.until(ctx, "st.drawn > 0"); err != nil {
		t.Fatal(err)
	}
	// frames waits until v has drawn n more frames and returns the rate.
	frames := func(v *liveViewer, n int) float64 {
		t.Helper()
		st, err := v.state(ctx)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := v.until(ctx, fmt.Sprintf("st.drawn >= %d", st.Drawn+n)); err != nil {
			t.Fatal(err)
		}
		return float64(n) / time.Since(start).Seconds()
	}
	alone := frames(first, 8)

	second := open()
	if _, err := second.until(ctx, "st.drawn > 3"); err != nil {
		t.Fatalf("the second viewer gets no frames: %v", err)
	}

	// The stalled viewer: a real session that connects and never reads. Its
	// receive buffer is kept tiny so the companion's writes to it block
	// after a few frames, as they would for a frozen tab on a slow link.
	link, err := liveURL(ctx, s, tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	ls, _, err := redeem(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	stalled, err := dialStalled(ctx, s.Reins.BaseURL(), ls)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()

	withStalled := frames(first, 12)
	// Keep going, a few frames at a time, until the companion has seen the
	// stalled viewer stall: only then has the test shown anything.
	for !strings.Contains(s.Reins.Output(), "live viewer is not reading") {
		frames(first, 5)
	}
	afterStall := frames(first, 8)
	if _, err := second.until(ctx, "st.drawn > 20"); err != nil {
		t.Fatalf("the second viewer stopped getting frames: %v", err)
	}
	t.Logf("first viewer: %.1f fps alone, %.1f fps beside a second viewer and a stalled one, %.1f fps once it stalled", alone, withStalled, afterStall)
}

// liveLog is the companion's Live view log lines, for a failure report.
func liveLog(s *harness.Stack) string {
	var out []string
	for _, l := range strings.Split(s.Reins.Output(), "\n") {
		if strings.Contains(l, "component=live") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestLiveViewTakeoverBlocksAgents checks the engine's side of take-over
// through the real MCP endpoint: while the person holds the tab in Live
// view, an agent's click is refused with code paused naming the take-over,
// and its read_page still works; after release the click goes through.
func TestLiveViewTakeoverBlocksAgents(t *testing.T) {
	s := newStack(t)
	pages := startLivePages()
	t.Cleanup(pages.Close)
	cs := mcpSession(t, s.Reins, "live-agent")
	ctx := within(t, 2*liveStep)

	created := mustTool(t, cs, "tabs_create_mcp", map[string]any{"url": pages.url("target", "agent")})
	m := regexp.MustCompile(`Created tab (\d+)`).FindStringSubmatch(created.text)
	if m == nil {
		t.Fatalf("tabs_create_mcp answered %s", created.text)
	}
	tab, _ := strconv.Atoi(m[1])
	if _, err := pages.wait(ctx, "agent", "load", 0, nil); err != nil {
		t.Fatal(err)
	}
	ref := refFor(t, mustTool(t, cs, "read_page", map[string]any{"tabId": tab, "filter": "interactive"}).text, "textbox")

	link, err := liveURL(ctx, s, tab)
	if err != nil {
		t.Fatal(err)
	}
	v, err := openViewer(ctx, s, link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.until(ctx, "st.state === 'live'"); err != nil {
		t.Fatal(err)
	}
	if err := v.setTakeover(ctx, true); err != nil {
		t.Fatal(err)
	}

	out := callTool(t, cs, "computer", map[string]any{"tabId": tab, "action": "left_click", "ref": ref})
	if !out.isErr || !strings.Contains(out.text, "taken over") || !strings.Contains(out.text, "the person") {
		t.Fatalf("an agent's click during take-over answered (isError %v) %s", out.isErr, out.text)
	}
	if n := pages.count("agent", "click"); n != 0 {
		t.Fatalf("the refused click reached the page (%d clicks)", n)
	}
	if page := mustTool(t, cs, "read_page", map[string]any{"tabId": tab}); !strings.Contains(page.text, "textbox") {
		t.Fatalf("read_page during take-over: %s", page.text)
	}

	if err := v.setTakeover(ctx, false); err != nil {
		t.Fatal(err)
	}
	mustTool(t, cs, "computer", map[string]any{"tabId": tab, "action": "left_click", "ref": ref})
	if ev, err := pages.wait(ctx, "agent", "click", 0, nil); err != nil || ev.Params.Get("target") != "in" {
		t.Fatalf("the agent's click after release: %+v %v", ev, err)
	}
}

// liveLongView is how long TestLiveViewLongAnimatedView watches, in the
// tab's own paint time.
const liveLongView = 30 * time.Second

// TestLiveViewLongAnimatedView watches a busy page (a CSS animation plus a
// 50 ms timer) for 30 s of its paint time. Quality adaptation changes the
// screencast's settings along the way; the picture must keep flowing with
// no restart notice to the viewer, and the log must show no failed start
// and no retry loop.
func TestLiveViewLongAnimatedView(t *testing.T) {
	s := newStack(t)
	pages := startLivePages()
	t.Cleanup(pages.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("live view log:\n" + liveLog(s))
		}
	})
	ctx := within(t, liveStep+liveLongView+liveStep)
	_, _, v := watch(ctx, t, s, pages, "busy", 800, 500)
	first, err := v.until(ctx, "st.state === 'live' && st.drawn > 0 && st.metadata && st.metadata.timestamp > 0")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// Wait for a frame the tab painted liveLongView after the first one,
	// or for anything that goes wrong before it: a notice, or the end.
	end := first.Metadata.Timestamp + liveLongView.Seconds()
	last, err := v.until(ctx, fmt.Sprintf("st.notices.length > 0 || st.state !== 'live' || st.metadata.timestamp >= %f", end))
	if err != nil {
		t.Fatal(err)
	}
	if len(last.Notices) > 0 || last.State != "live" {
		t.Fatalf("after %s of watching: state %s, notices %q, error %+v", time.Since(start).Round(time.Millisecond), last.State, last.Notices, last.Error)
	}
	log := liveLog(s)
	for _, bad := range []string{"screencast did not start", "retrying", "already active"} {
		if n := strings.Count(log, bad); n > 0 {
			t.Errorf("the log shows %q %d times", bad, n)
		}
	}
	frames := last.Drawn - first.Drawn
	t.Logf("%d frames drawn over %s (%.1f fps); quality adapted %d times", frames, time.Since(start).Round(time.Millisecond),
		float64(frames)/time.Since(start).Seconds(), strings.Count(log, "screencast quality adapted"))
	if frames < int(liveLongView.Seconds()) {
		t.Fatalf("only %d frames in %s: the picture stalled", frames, liveLongView)
	}
}

// crossed is session b's address with session a's cookie on it, as a
// client that knows a's cookie and b's address would send.
func crossed(a, b liveSession) liveSession {
	jar, _ := cookiejar.New(nil)
	au, _ := url.Parse(a.page)
	bu, _ := url.Parse(b.page)
	var cs []*http.Cookie
	for _, c := range a.jar.Cookies(au) {
		cs = append(cs, &http.Cookie{Name: c.Name, Value: c.Value, Path: "/"})
	}
	jar.SetCookies(bu, cs)
	return liveSession{jar: jar, page: b.page}
}

// watch opens page kind in a shared tab with a w×h viewport, and a Live
// view of it in the test's Chromium through the link the real `reins live`
// prints.
func watch(ctx context.Context, t *testing.T, s *harness.Stack, pages *livePages, kind string, w, h int) (hub.Tab, string, *liveViewer) {
	t.Helper()
	tab, err := openLiveTab(ctx, s, pages, kind, kind)
	if err != nil {
		t.Fatal(err)
	}
	if err := setViewport(ctx, s, tab.ID, w, h); err != nil {
		t.Fatal(err)
	}
	link, err := liveURL(ctx, s, tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := openViewer(ctx, s, link)
	if err != nil {
		t.Fatal(err)
	}
	return tab, link, v
}
