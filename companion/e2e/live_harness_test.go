package e2e

// Helpers of the Live view end-to-end tests and benchmarks: the pages a
// shared tab shows (click and key targets, an animation, a latency probe),
// the viewer page opened in Chromium beside the shared tab, and a viewer
// written in Go that can simply stop reading.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image/color"
	"image/jpeg"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
)

// livePages serves the pages shown in shared tabs and records what they
// report, so a test waits for "the page saw a click" rather than polling.
type livePages struct {
	srv *httptest.Server

	mu      sync.Mutex
	events  []liveEvent
	changed chan struct{}
}

// liveEvent is one report of a page: its id, what happened and the
// details (click coordinates and target, an input's value).
type liveEvent struct {
	Page   string
	Kind   string
	Params url.Values
}

const liveReportJS = `
  const pageId = %q;
  function report(kind, extra) {
    const q = new URLSearchParams(Object.assign({id: pageId, kind}, extra || {}));
    return fetch('/event?' + q, {method: 'POST', cache: 'no-store', keepalive: true});
  }
  addEventListener('load', () => report('load'));
`

// The click and typing target: four elements at places that scale with the
// viewport (and one fixed to the bottom edge), an input, and reports of
// every click (where and on what) and every input change.
const liveTargetHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>
  html, body { margin: 0; height: 100%%; background: #fff; font: 16px sans-serif; overflow: hidden; }
  div, input { position: absolute; box-sizing: border-box; }
  #a { left: 10%%; top: 10%%; width: 20%%; height: 20%%; background: #e11d48; }
  #b { left: 60%%; top: 50%%; width: 30%%; height: 25%%; background: #2563eb; }
  #c { left: 20px; bottom: 20px; width: 120px; height: 50px; background: #16a34a; }
  #in { left: 40%%; top: 15%%; width: 40%%; height: 40px; font-size: 20px; }
</style></head>
<body><div id="a"></div><div id="b"></div><div id="c"></div><input id="in" autocomplete="off">
<script>` + liveReportJS + `
  window.clicks = [];
  document.addEventListener('click', (e) => {
    const target = e.target.id || e.target.tagName;
    window.clicks.push(target);
    report('click', {x: e.clientX, y: e.clientY, target});
  });
  document.getElementById('in').addEventListener('input', (e) => report('input', {value: e.target.value}));
</script></body></html>`

// The animation: every animation frame changes the whole picture, so the
// screencast sends as many frames as the browser paints.
const liveAnimHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>
  html, body { margin: 0; height: 100%%; overflow: hidden; }
  #box { position: absolute; top: 30%%; left: 0; width: 25%%; height: 40%%; background: #111; }
</style></head>
<body><div id="box"></div>
<script>` + liveReportJS + `
  const box = document.getElementById('box');
  function tick(t) {
    box.style.transform = 'translateX(' + ((t / 3) %% innerWidth) + 'px)';
    document.body.style.background = 'hsl(' + ((t / 8) %% 360) + ', 60%%, 75%%)';
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
</script></body></html>`

// Busy: a CSS animation plus a 50 ms timer that rewrites a counter, the
// kind of page that keeps a screencast streaming for as long as it is
// watched (and so walks the quality adaptation up and down).
const liveBusyHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>
  html, body { margin: 0; height: 100%%; overflow: hidden; background: #fafafa; font: 48px sans-serif; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(70vw); } }
  @keyframes hue { from { background: #0ea5e9; } to { background: #f97316; } }
  #box { position: absolute; top: 40%%; left: 0; width: 20vw; height: 20vh;
         animation: slide 1.3s linear infinite alternate, hue 0.7s linear infinite alternate; }
  #n { position: absolute; top: 10%%; left: 10%%; }
</style></head>
<body><div id="box"></div><div id="n">0</div>
<script>` + liveReportJS + `
  const n = document.getElementById('n');
  let i = 0;
  setInterval(() => { n.textContent = String(++i); }, 50);
</script></body></html>`

// Noise: every animation frame repaints a canvas with random pixels, so
// each JPEG is large (hundreds of KiB) and a viewer that stops reading fills
// its socket within a few frames.
const liveNoiseHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>html, body { margin: 0; height: 100%%; overflow: hidden; } canvas { display: block; }</style></head>
<body><canvas id="c"></canvas>
<script>` + liveReportJS + `
  const c = document.getElementById('c');
  c.width = innerWidth; c.height = innerHeight;
  const g = c.getContext('2d');
  let img = g.createImageData(c.width, c.height);
  function tick() {
    if (img.width !== innerWidth || img.height !== innerHeight) {
      c.width = innerWidth; c.height = innerHeight;
      img = g.createImageData(c.width, c.height);
    }
    const words = new Uint32Array(img.data.buffer);
    for (let i = 0; i < words.length; i += 16384) crypto.getRandomValues(words.subarray(i, i + 16384));
    for (let i = 0; i < words.length; i++) words[i] |= 0xff000000;
    g.putImageData(img, 0, 0);
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
</script></body></html>`

// The latency probe: still until pressed; every mousedown flips the whole
// page between black and white.
const liveFlipHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>html, body { margin: 0; height: 100%%; background: #fff; }</style></head>
<body>
<script>` + liveReportJS + `
  let dark = false;
  document.addEventListener('mousedown', () => {
    dark = !dark;
    document.body.style.background = dark ? '#000' : '#fff';
  });
</script></body></html>`

func startLivePages() *livePages {
	p := &livePages{changed: make(chan struct{})}
	mux := http.NewServeMux()
	for path, tmpl := range map[string]string{"/target": liveTargetHTML, "/anim": liveAnimHTML, "/noise": liveNoiseHTML, "/flip": liveFlipHTML, "/busy": liveBusyHTML} {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			id := r.URL.Query().Get("id")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprintf(w, tmpl, html.EscapeString("Live "+id), id)
		})
	}
	mux.HandleFunc("POST /event", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		p.mu.Lock()
		p.events = append(p.events, liveEvent{Page: q.Get("id"), Kind: q.Get("kind"), Params: q})
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	p.srv = httptest.NewServer(mux)
	return p
}

func (p *livePages) url(kind, id string) string {
	return p.srv.URL + "/" + kind + "?id=" + url.QueryEscape(id)
}

func (p *livePages) Close() { p.srv.Close() }

// count is how many events of page and kind arrived so far.
func (p *livePages) count(page, kind string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ev := range p.events {
		if ev.Page == page && ev.Kind == kind {
			n++
		}
	}
	return n
}

// wait returns the first event of page and kind, after the first skip
// such events, that ok accepts (nil accepts any).
func (p *livePages) wait(ctx context.Context, page, kind string, skip int, ok func(liveEvent) bool) (liveEvent, error) {
	for {
		p.mu.Lock()
		seen := 0
		for _, ev := range p.events {
			if ev.Page != page || ev.Kind != kind {
				continue
			}
			seen++
			if seen > skip && (ok == nil || ok(ev)) {
				p.mu.Unlock()
				return ev, nil
			}
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return liveEvent{}, fmt.Errorf("page %s never reported a matching %q: %w", page, kind, ctx.Err())
		}
	}
}

// openLiveTab opens one of the pages in a new shared, active tab (as an
// agent would, with tabs.create) and returns it once loaded.
func openLiveTab(ctx context.Context, s *harness.Stack, p *livePages, kind, id string) (hub.Tab, error) {
	tab, err := s.Reins.Client.CreateTab(ctx, s.Browser.ID, p.url(kind, id), true)
	if err != nil {
		return hub.Tab{}, fmt.Errorf("tabs.create: %w", err)
	}
	if _, err := p.wait(ctx, id, "load", 0, nil); err != nil {
		return hub.Tab{}, err
	}
	return tab, nil
}

// setViewport emulates a viewport size on the shared tab through the
// companion (the extension's debugger session).
func setViewport(ctx context.Context, s *harness.Stack, tab, w, h int) error {
	_, err := s.Reins.Client.CDP(ctx, tab, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false,
	})
	return err
}

// liveURL runs the real `reins live TABID` against the running companion
// and returns the link it prints.
func liveURL(ctx context.Context, s *harness.Stack, tab int) (string, error) {
	bin, err := harness.Binary()
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "live", strconv.Itoa(tab), "--data-dir", s.Reins.DataDir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("reins live %d: %w\n%s", tab, err, stderr.String())
	}
	u := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(u, s.Reins.BaseURL()+"/live/"+strconv.Itoa(tab)+"?ticket=") {
		return "", fmt.Errorf("reins live printed %q", u)
	}
	return u, nil
}

// liveFileURL runs the real `reins live --file TABID` and returns the
// file:// URL it prints: what the tray opens.
func liveFileURL(ctx context.Context, s *harness.Stack, tab int) (string, error) {
	bin, err := harness.Binary()
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "live", "--file", strconv.Itoa(tab), "--data-dir", s.Reins.DataDir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("reins live --file %d: %w\n%s", tab, err, stderr.String())
	}
	u := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(u, "file://") || strings.Contains(u, "ticket") {
		return "", fmt.Errorf("reins live --file printed %q", u)
	}
	return u, nil
}

// liveViewer is the Live view page open in a tab of the test's Chromium
// that the extension does not share, driven through Chromium's own
// DevTools as a person's mouse and keyboard would drive it.
type liveViewer struct {
	c        *harness.Chromium
	targetID string
	sid      string
}

func openViewer(ctx context.Context, s *harness.Stack, link string) (*liveViewer, error) {
	target, sid, err := s.Chrome.OpenPage(ctx, link)
	if err != nil {
		return nil, err
	}
	v := &liveViewer{c: s.Chrome, targetID: target, sid: sid}
	// A background tab of a headless browser has no focus; emulate it so
	// the canvas takes key events as a focused window would.
	if err := v.c.Browser.Call(ctx, sid, "Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true}, nil); err != nil {
		return nil, err
	}
	return v, nil
}

// openViewerAt is openViewer for a URL that moves on by itself (a link
// file, the link it leads to): it returns once the tab has arrived at, and
// loaded, a page whose path matches final.
func openViewerAt(ctx context.Context, s *harness.Stack, link string, final *regexp.Regexp) (*liveViewer, error) {
	var mu sync.Mutex
	at := ""
	arrived := make(chan struct{})
	cancel := s.Chrome.Browser.Subscribe(func(ev harness.CDPEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Method {
		case "Page.frameNavigated":
			var p struct {
				Frame struct {
					ParentID string `json:"parentId"`
					URL      string `json:"url"`
				} `json:"frame"`
			}
			if json.Unmarshal(ev.Params, &p) != nil || p.Frame.ParentID != "" {
				return
			}
			if u, err := url.Parse(p.Frame.URL); err == nil && final.MatchString(u.Path) && at == "" {
				at = ev.SessionID
			}
		case "Page.loadEventFired":
			if at != "" && ev.SessionID == at {
				select {
				case <-arrived:
				default:
					close(arrived)
				}
			}
		}
	})
	defer cancel()
	v, err := openViewer(ctx, s, link)
	if err != nil {
		return nil, err
	}
	select {
	case <-arrived:
		return v, nil
	case <-ctx.Done():
		v.close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%s never arrived at a page matching %s: %w", link, final, ctx.Err())
	}
}

func (v *liveViewer) close(ctx context.Context) error { return v.c.CloseTarget(ctx, v.targetID) }

func (v *liveViewer) eval(ctx context.Context, expr string, out any) error {
	return v.c.Evaluate(ctx, v.sid, expr, out)
}

// liveState mirrors window.__reinsLive.
type liveState struct {
	State         string `json:"state"`
	Held          bool   `json:"held"`
	HeldElsewhere bool   `json:"heldElsewhere"`
	Received      int    `json:"received"`
	Drawn         int    `json:"drawn"`
	LastSeq       int    `json:"lastSeq"`
	FPS           int    `json:"fps"`
	Tab           *struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		URL     string `json:"url"`
		Browser string `json:"browser"`
	} `json:"tab"`
	Metadata *struct {
		Width     float64 `json:"width"`
		Height    float64 `json:"height"`
		Timestamp float64 `json:"timestamp"`
	} `json:"metadata"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Notices []string `json:"notices"`
}

func (v *liveViewer) state(ctx context.Context) (liveState, error) {
	var st liveState
	err := v.eval(ctx, "window.__reinsLive", &st)
	return st, err
}

// until waits, inside the page, for a JavaScript condition over st (the
// page's window.__reinsLive) to hold: it is re-checked on every 'reinslive'
// event the page fires, never on a timer.
func (v *liveViewer) until(ctx context.Context, cond string) (liveState, error) {
	ms := 30000
	if d, ok := ctx.Deadline(); ok {
		ms = int(time.Until(d).Milliseconds())
	}
	expr := fmt.Sprintf(`new Promise((resolve, reject) => {
		const ok = () => { const st = window.__reinsLive; try { return !!st && !!(%s); } catch (e) { return false; } };
		if (ok()) return resolve(true);
		const h = () => { if (ok()) { removeEventListener('reinslive', h); clearTimeout(t); resolve(true); } };
		addEventListener('reinslive', h);
		const t = setTimeout(() => { removeEventListener('reinslive', h); reject(new Error('timed out waiting for ' + %q + ' in ' + JSON.stringify(window.__reinsLive))); }, %d);
	})`, cond, cond, ms)
	if err := v.eval(ctx, expr, nil); err != nil {
		return liveState{}, err
	}
	return v.state(ctx)
}

// canvasRect is where the picture is on the viewer page, in its CSS pixels.
type canvasRect struct{ X, Y, W, H float64 }

func (v *liveViewer) canvas(ctx context.Context) (canvasRect, error) {
	var r canvasRect
	err := v.eval(ctx, `(() => { const r = document.getElementById('screen').getBoundingClientRect(); return {X: r.left, Y: r.top, W: r.width, H: r.height}; })()`, &r)
	return r, err
}

// click presses and releases the left button at (x, y) of the viewer page.
func (v *liveViewer) click(ctx context.Context, x, y float64) error {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p := map[string]any{"type": typ, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1}
		if typ == "mouseMoved" {
			p["button"], p["buttons"] = "none", 0
		}
		if typ == "mouseReleased" {
			p["buttons"] = 0
		}
		if err := v.c.Browser.Call(ctx, v.sid, "Input.dispatchMouseEvent", p, nil); err != nil {
			return err
		}
	}
	return nil
}

// clickPicture clicks the picture at fractions (fx, fy) of its size.
func (v *liveViewer) clickPicture(ctx context.Context, fx, fy float64) error {
	r, err := v.canvas(ctx)
	if err != nil {
		return err
	}
	return v.click(ctx, r.X+fx*r.W, r.Y+fy*r.H)
}

// typeKey sends one key press to the viewer page as a keyboard would.
func (v *liveViewer) typeKey(ctx context.Context, key, code, text string, keyCode int) error {
	down := map[string]any{"type": "rawKeyDown", "key": key, "code": code, "windowsVirtualKeyCode": keyCode}
	if text != "" {
		down["type"], down["text"] = "keyDown", text
	}
	if err := v.c.Browser.Call(ctx, v.sid, "Input.dispatchKeyEvent", down, nil); err != nil {
		return err
	}
	return v.c.Browser.Call(ctx, v.sid, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": keyCode}, nil)
}

// typeText types printable ASCII text key by key.
func (v *liveViewer) typeText(ctx context.Context, text string) error {
	for _, r := range text {
		s := string(r)
		code, kc := "", int(r)
		switch {
		case r >= 'a' && r <= 'z':
			code, kc = "Key"+strings.ToUpper(s), int(r-'a'+'A')
		case r >= 'A' && r <= 'Z':
			code = "Key" + s
		case r >= '0' && r <= '9':
			code = "Digit" + s
		case r == ' ':
			code = "Space"
		}
		if err := v.typeKey(ctx, s, code, s, kc); err != nil {
			return err
		}
	}
	return nil
}

// setTakeover clicks the Take over button until the page holds (or not).
func (v *liveViewer) setTakeover(ctx context.Context, on bool) error {
	var held bool
	if err := v.eval(ctx, "window.__reinsLive.held", &held); err != nil {
		return err
	}
	if held != on {
		if err := v.eval(ctx, "document.getElementById('takeover').click(), true", nil); err != nil {
			return err
		}
	}
	_, err := v.until(ctx, fmt.Sprintf("st.held === %v", on))
	return err
}

// canvasStats samples the picture's pixels: how many distinct colours and
// how many pixels are not white, so a test can tell a drawn page from a
// blank canvas.
type canvasStats struct {
	Width    int `json:"width"`
	Height   int `json:"height"`
	Colours  int `json:"colours"`
	NonWhite int `json:"nonWhite"`
	Samples  int `json:"samples"`
}

func (v *liveViewer) pixels(ctx context.Context) (canvasStats, error) {
	var cs canvasStats
	err := v.eval(ctx, `(() => {
		const c = document.getElementById('screen');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		const seen = new Set();
		let nonWhite = 0, samples = 0;
		for (let i = 0; i < d.length; i += 4 * 97) {
			samples++;
			seen.add((d[i] >> 4) + ',' + (d[i + 1] >> 4) + ',' + (d[i + 2] >> 4) + ',' + d[i + 3]);
			if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) nonWhite++;
		}
		return {width: c.width, height: c.height, colours: seen.size, nonWhite, samples};
	})()`, &cs)
	return cs, err
}

// liveSession is a redeemed link as a browser holds it: its cookies and
// the session's page.
type liveSession struct {
	jar  http.CookieJar
	page string // absolute URL of the session's page
}

// socketURL is the session's socket, beside its page.
func (ls liveSession) socketURL() string {
	return strings.Replace(ls.page[:strings.LastIndexByte(ls.page, '/')], "http://", "ws://", 1) + "/ws"
}

var liveRefreshRE = regexp.MustCompile(`<meta http-equiv="refresh" content="0; url=([^"]+)">`)

// redeem opens a link the way a browser does, keeping the cookies it is
// given, and returns the session and the answer. A refused link returns
// its answer and a session without a page.
func redeem(ctx context.Context, link string) (liveSession, *http.Response, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	resp, err := c.Do(req)
	if err != nil {
		return liveSession{}, nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ls := liveSession{jar: jar}
	if m := liveRefreshRE.FindSubmatch(body); resp.StatusCode == http.StatusOK && m != nil {
		next, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
		if err != nil {
			return ls, resp, err
		}
		ls.page = next.String()
	}
	return ls, resp, nil
}

// liveHeader is what a client sends to the session's socket: the origin
// (none when "") and, when withCookie, the session's cookies.
func liveHeader(ls liveSession, origin string, withCookie bool) http.Header {
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if withCookie && ls.jar != nil {
		u, _ := url.Parse(ls.page)
		for _, c := range ls.jar.Cookies(u) {
			h.Add("Cookie", c.String())
		}
	}
	return h
}

// dialLive opens the session's socket with its cookies and origin (none
// when origin is ""), or without its cookies.
func dialLive(ctx context.Context, ls liveSession, origin string, withCookie bool) (*websocket.Conn, *http.Response, error) {
	conn, resp, err := websocket.Dial(ctx, ls.socketURL(), &websocket.DialOptions{HTTPHeader: liveHeader(ls, origin, withCookie)})
	if conn != nil {
		conn.SetReadLimit(64 << 20)
	}
	return conn, resp, err
}

// dialStalled opens the session's socket like dialLive with the
// companion's origin, on a connection whose receive buffer is a few KiB and
// which nobody reads.
func dialStalled(ctx context.Context, base string, ls liveSession) (*websocket.Conn, error) {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4 << 10)
		}
		return c, nil
	}}
	conn, _, err := websocket.Dial(ctx, ls.socketURL(),
		&websocket.DialOptions{HTTPHeader: liveHeader(ls, base, true), HTTPClient: &http.Client{Transport: tr}})
	return conn, err
}

// liveMsg is a message from a live socket as a Go viewer decodes it.
type liveMsg struct {
	Kind     string `json:"kind"`
	Seq      int64  `json:"seq"`
	Data     string `json:"data"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Held     bool   `json:"held"`
	ByYou    bool   `json:"byYou"`
	Metadata struct {
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	} `json:"metadata"`
}

func readLive(ctx context.Context, conn *websocket.Conn) (liveMsg, error) {
	_, data, err := conn.Read(ctx)
	if err != nil {
		return liveMsg{}, err
	}
	var m liveMsg
	if err := json.Unmarshal(data, &m); err != nil {
		return liveMsg{}, fmt.Errorf("decoding a live message: %w", err)
	}
	return m, nil
}

// centreLuma decodes a frame and returns the brightness at its centre.
func centreLuma(m liveMsg) (uint8, error) {
	raw, err := base64.StdEncoding.DecodeString(m.Data)
	if err != nil {
		return 0, err
	}
	img, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	b := img.Bounds()
	g := color.GrayModel.Convert(img.At(b.Min.X+b.Dx()/2, b.Min.Y+b.Dy()/2)).(color.Gray)
	return g.Y, nil
}

// procTicks reads the user+system CPU time of a process in clock ticks.
func procTicks(pid int) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; fields after the closing paren
	// are fixed: utime is the 14th field, stime the 15th.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat times")
	}
	return u + st, nil
}
