package live

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/edge"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait is the deadline for anything a test waits on.
const wait = 10 * time.Second

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// clock is an injectable clock for ticket and session expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// call is one CDP command (or tabs.hold) the fake extension received.
type call struct {
	Method string
	Params json.RawMessage
}

// recorder keeps the commands the fake extension received and lets a test
// wait for one, woken by each new call rather than polling.
type recorder struct {
	mu    sync.Mutex
	calls []call
	woke  chan struct{}
}

func newRecorder() *recorder { return &recorder{woke: make(chan struct{})} }

func (r *recorder) add(c call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	close(r.woke)
	r.woke = make(chan struct{})
	r.mu.Unlock()
}

// count returns how many calls of method have been seen.
func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

func (r *recorder) all(method string) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []call
	for _, c := range r.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// waitFor waits until cond holds over the calls seen so far.
func (r *recorder) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		woke := r.woke
		r.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-woke:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitN waits until at least n calls of method have been seen and returns
// the nth.
func (r *recorder) waitN(t testing.TB, method string, n int) call {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		seen := 0
		for _, c := range r.calls {
			if c.Method == method {
				seen++
				if seen == n {
					r.mu.Unlock()
					return c
				}
			}
		}
		woke := r.woke
		r.mu.Unlock()
		select {
		case <-woke:
		case <-deadline:
			t.Fatalf("timed out waiting for call %d of %s (saw %d)", n, method, seen)
		}
	}
}

type env struct {
	t     *testing.T
	hub   *hub.Hub
	live  *Server
	srv   *httptest.Server
	base  string
	clock *clock
	rec   *recorder
	ext   *hubtest.Ext
	tab   int // public id of the shared tab
	// changes counts take-over change notifications.
	changes chan struct{}
	// hubChanged is signalled whenever the hub's browsers or tabs change.
	hubChanged chan struct{}
}

// waitHub waits until cond holds, re-checking on every hub change.
func (e *env) waitHub(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wait)
	for !cond() {
		select {
		case <-e.hubChanged:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

const nativeTab = 100

func newEnv(t *testing.T, tune ...func(*Options)) *env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	hubChanged := make(chan struct{}, 1)
	// The link handshake, as in the companion: the fake extension proves key.
	key := linkauth.NewKey()
	h := hub.New(hub.Options{Logger: log, Auth: linkauth.NewServer(key, nil), OnChange: func() {
		select {
		case hubChanged <- struct{}{}:
		default:
		}
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	e := &env{t: t, hub: h, clock: &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, rec: newRecorder(), changes: make(chan struct{}, 64), hubChanged: hubChanged}
	e.base = "http://127.0.0.1:" + strconv.Itoa(port)
	opts := Options{Hub: h, BaseURL: e.base, LinkDir: t.TempDir(), Logger: log, Now: e.clock.Now, OnChange: func() {
		select {
		case e.changes <- struct{}{}:
		default:
		}
	}}
	for _, f := range tune {
		f(&opts)
	}
	e.live = New(opts)
	// The same entries the companion's route table has for Live view.
	routes := map[string]edge.Route{
		"/{$}":                        {Origins: edge.ExtensionOrigin, Handler: h},
		"GET /live/{tab}":             {Origins: edge.SelfOrigin, Handler: http.HandlerFunc(e.live.ServeLink)},
		"GET /live/s/{session}/{tab}": {Origins: edge.SelfOrigin, Handler: http.HandlerFunc(e.live.ServePage)},
		"GET /live/s/{session}/ws":    {Origins: edge.SelfOrigin, Handler: http.HandlerFunc(e.live.ServeSocket)},
	}
	srv := httptest.NewUnstartedServer(edge.New(edge.Config{Port: port}, routes))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	e.srv = srv
	t.Cleanup(func() {
		e.live.Close()
		h.Close()
		srv.Close()
	})

	x, err := hubtest.Dial(ctxT(t), "ws://127.0.0.1:"+strconv.Itoa(port)+"/", wire.Hello{
		Version: 3, ExtensionVersion: "0.1.0", Browser: "Chromium", BrowserEngine: wire.EngineChromium,
		InstanceID: "inst", BrowserSessionID: "sess",
	}, hubtest.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Kill)
	e.ext = x
	// Like Chromium, the fake refuses a second screencast while one runs.
	var castMu sync.Mutex
	casting := false
	x.Handle(wire.MethodCDP, func(params json.RawMessage) (any, error) {
		var p wire.CDPParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		e.rec.add(call{Method: p.Method, Params: p.Params})
		switch p.Method {
		case "Page.getLayoutMetrics":
			return map[string]any{"cssVisualViewport": map[string]any{"clientWidth": 800, "clientHeight": 600}}, nil
		case "Page.startScreencast":
			castMu.Lock()
			defer castMu.Unlock()
			if casting {
				return nil, wire.Errorf(wire.CodeInternal, "Screencast is already active")
			}
			casting = true
			return map[string]any{}, nil
		case "Page.stopScreencast":
			castMu.Lock()
			casting = false
			castMu.Unlock()
			return map[string]any{}, nil
		case "Page.screencastFrameAck", "Input.dispatchMouseEvent", "Input.dispatchKeyEvent":
			return map[string]any{}, nil
		}
		return nil, wire.Errorf(wire.CodeInternal, "fake extension does not know %s", p.Method)
	})
	x.Handle(wire.MethodTabsHold, func(params json.RawMessage) (any, error) {
		e.rec.add(call{Method: wire.MethodTabsHold, Params: params})
		return map[string]any{}, nil
	})
	e.setTabs(t, []wire.TabInfo{{ID: nativeTab, URL: "https://example.com/page", Title: "Example page", Shared: true, WindowID: 1}})
	e.waitHub(t, "the fake extension's tab", func() bool {
		for _, tb := range h.Tabs() {
			if tb.Native == nativeTab {
				e.tab = tb.ID
			}
		}
		return e.tab != 0
	})
	return e
}

func (e *env) setTabs(t *testing.T, tabs []wire.TabInfo) {
	t.Helper()
	if err := e.ext.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
}

// testJPEG is a small real JPEG with a marker colour.
func testJPEG(t testing.TB, w, h int, c color.RGBA) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// sendFrame sends a Page.screencastFrame cdp.event as the extension would.
// ts marks the frame so a viewer can tell which one it got.
func (e *env) sendFrame(t testing.TB, data string, ackID int, w, h, ts float64) {
	t.Helper()
	params, _ := json.Marshal(map[string]any{
		"data":      data,
		"sessionId": ackID,
		"metadata": map[string]any{
			"offsetTop": 0, "pageScaleFactor": 1, "deviceWidth": w, "deviceHeight": h,
			"scrollOffsetX": 0, "scrollOffsetY": 12, "timestamp": ts,
		},
	})
	if err := e.ext.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: nativeTab, Method: "Page.screencastFrame", Params: params}); err != nil {
		t.Fatal(err)
	}
}

// viewSession is a redeemed link as a browser holds it: the cookie jar and
// the session's page.
type viewSession struct {
	jar  http.CookieJar
	page string // absolute URL of the session's page
}

// socketURL is the session's socket, beside its page.
func (v viewSession) socketURL() string {
	return strings.Replace(v.page[:strings.LastIndexByte(v.page, '/')], "http://", "ws://", 1) + "/ws"
}

var refreshRE = regexp.MustCompile(`<meta http-equiv="refresh" content="0; url=([^"]+)">`)

// follow opens link as a browser does: it keeps the cookies it is given
// and moves on where the page's meta refresh points, until a page stays.
// It returns the last answer, its body and the URL it came from.
func follow(t testing.TB, jar http.CookieJar, link string) (*http.Response, string, string) {
	t.Helper()
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for range 4 {
		resp, err := c.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := refreshRE.FindStringSubmatch(string(body))
		if resp.StatusCode != http.StatusOK || m == nil {
			return resp, string(body), link
		}
		next, err := resp.Request.URL.Parse(html.UnescapeString(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		link = next.String()
	}
	t.Fatalf("%s refreshes without end", link)
	return nil, "", ""
}

// open redeems a fresh link in a cookie jar, as a browser would, and
// returns the session it opened.
func (e *env) open(t testing.TB, tab int) viewSession {
	t.Helper()
	link, err := e.live.ViewURL(tab)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	resp, _, page := follow(t, jar, link)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(page, e.base+"/live/s/") {
		t.Fatalf("opening the link: status %d at %s", resp.StatusCode, page)
	}
	return viewSession{jar: jar, page: page}
}

type dialOpts struct {
	origin   string // "" means the companion's own; "-" means none
	noCookie bool
	// tinyBuffer gives the connection a receive buffer of a few KiB, so a
	// viewer that never reads stalls the companion's writes sooner.
	tinyBuffer bool
}

// dial opens the session's socket with its cookie.
func (e *env) dial(t testing.TB, vs viewSession, o dialOpts) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	return e.dialURL(t, vs.socketURL(), vs.jar, o)
}

// dialURL opens a live socket at u with the cookies jar holds for it.
func (e *env) dialURL(t testing.TB, u string, jar http.CookieJar, o dialOpts) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	switch o.origin {
	case "":
		h.Set("Origin", e.base)
	case "-":
	default:
		h.Set("Origin", o.origin)
	}
	if jar != nil && !o.noCookie {
		pu, _ := url.Parse(strings.Replace(u, "ws://", "http://", 1))
		for _, c := range jar.Cookies(pu) {
			h.Add("Cookie", c.String())
		}
	}
	do := &websocket.DialOptions{HTTPHeader: h}
	if o.tinyBuffer {
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetReadBuffer(4 << 10)
			}
			return c, err
		}}
		t.Cleanup(tr.CloseIdleConnections)
		do.HTTPClient = &http.Client{Transport: tr}
	}
	conn, resp, err := websocket.Dial(ctxT(t), u, do)
	if err == nil {
		conn.SetReadLimit(wire.MaxFrameBytes)
		t.Cleanup(func() { conn.CloseNow() })
	}
	return conn, resp, err
}

// view opens a link and connects a viewer that reads in the background.
func (e *env) view(t testing.TB) *client {
	t.Helper()
	conn, _, err := e.dial(t, e.open(t, e.tab), dialOpts{})
	if err != nil {
		t.Fatal(err)
	}
	return startClient(t, conn)
}

// client reads a viewer's messages in the background.
type client struct {
	conn *websocket.Conn
	mu   sync.Mutex
	msgs []map[string]any
	woke chan struct{}
	err  error
	done chan struct{}
}

func startClient(t testing.TB, conn *websocket.Conn) *client {
	c := &client{conn: conn, woke: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			_, data, err := conn.Read(context.Background())
			c.mu.Lock()
			if err != nil {
				c.err = err
				close(c.woke)
				c.mu.Unlock()
				return
			}
			var m map[string]any
			if json.Unmarshal(data, &m) == nil {
				c.msgs = append(c.msgs, m)
			}
			close(c.woke)
			c.woke = make(chan struct{})
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		conn.CloseNow()
		<-c.done
	})
	return c
}

// waitMsg waits for the first message after index from that satisfies ok
// and returns it and its index.
func (c *client) waitMsg(t testing.TB, from int, what string, ok func(map[string]any) bool) (map[string]any, int) {
	t.Helper()
	deadline := time.After(wait)
	for {
		c.mu.Lock()
		for i := from; i < len(c.msgs); i++ {
			if ok(c.msgs[i]) {
				m := c.msgs[i]
				c.mu.Unlock()
				return m, i
			}
		}
		woke, err := c.woke, c.err
		c.mu.Unlock()
		if err != nil {
			t.Fatalf("connection ended (%v) before %s", err, what)
		}
		select {
		case <-woke:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (c *client) waitKind(t testing.TB, from int, kind string) (map[string]any, int) {
	t.Helper()
	return c.waitMsg(t, from, "a "+kind+" message", func(m map[string]any) bool { return m["kind"] == kind })
}

// waitEnd waits for the connection to end and returns how.
func (c *client) waitEnd(t testing.TB) error {
	t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(wait):
		t.Fatal("timed out waiting for the view to end")
		return nil
	}
}

func (c *client) send(t testing.TB, v any) {
	t.Helper()
	data, _ := json.Marshal(v)
	if err := c.conn.Write(ctxT(t), websocket.MessageText, data); err != nil {
		t.Fatal(err)
	}
}

func (c *client) count(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.msgs {
		if m["kind"] == kind {
			n++
		}
	}
	return n
}

func frameTS(m map[string]any) float64 {
	md, _ := m["metadata"].(map[string]any)
	f, _ := md["timestamp"].(float64)
	return f
}

func errorOf(err error) string {
	if err == nil {
		return "<nil>"
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("close %d %q", ce.Code, ce.Reason)
	}
	return err.Error()
}
