package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/jpeg"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// toolsPageHTML is the page the Firefox tool tests act on: controls at fixed
// places, and a report() that tells the test server what happened, so the
// test waits for the page to say so instead of sleeping.
const toolsPageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Tools page</title>
<style>
  html, body { margin: 0; font: 16px/1.4 sans-serif; }
  #btn { position: absolute; left: 20px; top: 20px; width: 160px; height: 50px; }
  #dbl { position: absolute; left: 200px; top: 20px; width: 160px; height: 50px; background: #ddd; }
  #hov { position: absolute; left: 380px; top: 20px; width: 160px; height: 50px; background: #eee; }
  #drag { position: absolute; left: 560px; top: 20px; width: 60px; height: 60px; background: #36c; }
  #para { position: absolute; left: 20px; top: 90px; width: 500px; }
  #f { position: absolute; left: 20px; top: 140px; width: 600px; }
  #f label { display: block; margin: 4px 0; }
  #far { position: absolute; left: 20px; top: 2600px; }
  #tall { height: 3200px; }
</style></head>
<body>
<button id="btn">Press me</button>
<div id="dbl">Double me</div>
<div id="hov">Hover me</div>
<div id="drag">Drag</div>
<p id="para">alpha beta gamma</p>
<form id="f" action="/submitted" method="get">
  <label>Name <input id="name" name="name"></label>
  <label>Color <select id="color" name="color"><option value="r">Red</option><option value="g">Green</option></select></label>
  <label><input type="checkbox" id="agree" name="agree"> Agree</label>
  <label>Notes <textarea id="notes" name="notes"></textarea></label>
  <button type="submit" id="send">Send</button>
</form>
<div id="far">Far away</div>
<div id="tall"></div>
<script>
  function report(kind, detail) {
    return fetch('/event?kind=' + encodeURIComponent(kind) + '&detail=' + encodeURIComponent(detail || ''), { method: 'POST', keepalive: true });
  }
  let clicks = 0;
  document.getElementById('btn').addEventListener('click', (e) => { clicks++; report('click', String(clicks) + ':' + e.detail); });
  document.getElementById('dbl').addEventListener('dblclick', (e) => report('dblclick', String(e.detail)));
  document.getElementById('hov').addEventListener('mouseover', () => report('hover'));
  document.getElementById('btn').addEventListener('contextmenu', (e) => { e.preventDefault(); report('contextmenu', String(e.button)); });
  const drag = document.getElementById('drag');
  let from = null;
  drag.addEventListener('mousedown', (e) => { from = [e.clientX, e.clientY]; });
  addEventListener('mousemove', (e) => { if (from && e.buttons === 1) { drag.style.left = (560 + e.clientX - from[0]) + 'px'; } });
  addEventListener('mouseup', (e) => { if (from) { report('dragged', String(Math.round(e.clientX - from[0]))); from = null; } });
  addEventListener('keydown', (e) => { if (e.key === 'Escape') report('escape'); });
  console.log('tools page ready');
  console.warn('careful', { n: 1 });
  addEventListener('load', () => report('load'));
</script>
</body></html>`

// toolsServer serves the tools page and records its reports.
type toolsServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	events  []string // "kind detail"
	changed chan struct{}
}

func startToolsServer() *toolsServer {
	ts := &toolsServer{changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tools", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, toolsPageHTML)
	})
	mux.HandleFunc("GET /other", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Other page</title><p>other</p>`)
	})
	mux.HandleFunc("GET /submitted", func(w http.ResponseWriter, r *http.Request) {
		ts.record("submitted " + r.URL.RawQuery)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Submitted</title><p>thanks</p>`)
	})
	mux.HandleFunc("POST /event", func(w http.ResponseWriter, r *http.Request) {
		ts.record(strings.TrimSpace(r.URL.Query().Get("kind") + " " + r.URL.Query().Get("detail")))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	ts.srv = httptest.NewServer(mux)
	return ts
}

func (ts *toolsServer) record(ev string) {
	ts.mu.Lock()
	ts.events = append(ts.events, ev)
	close(ts.changed)
	ts.changed = make(chan struct{})
	ts.mu.Unlock()
}

// wait returns the first event starting with prefix, waiting until ctx ends.
func (ts *toolsServer) wait(ctx context.Context, prefix string) (string, error) {
	for {
		ts.mu.Lock()
		for _, ev := range ts.events {
			if strings.HasPrefix(ev, prefix) {
				ts.mu.Unlock()
				return ev, nil
			}
		}
		ch := ts.changed
		ts.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			ts.mu.Lock()
			defer ts.mu.Unlock()
			return "", fmt.Errorf("no %q event (got %q): %w", prefix, ts.events, ctx.Err())
		}
	}
}

// issueToken issues an agent token through the running reins' admin
// channel, as a person would with `reins token issue`.
func issueToken(t testing.TB, r *harness.Reins, name string) string {
	t.Helper()
	bin, err := harness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "token", "issue", name, "--data-dir", r.DataDir, "--keyring", "file").Output()
	if err != nil {
		t.Fatalf("reins token issue: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// mcpSession connects the real MCP client to /mcp over HTTP with a new
// token for agent.
func mcpSession(t testing.TB, r *harness.Reins, agent string) *mcp.ClientSession {
	t.Helper()
	return mcpConnect(t, r, agent, issueToken(t, r, agent))
}

// mcpConnect connects the real MCP client to /mcp with agent's token tok.
func mcpConnect(t testing.TB, r *harness.Reins, agent, tok string) *mcp.ClientSession {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cl := mcp.NewClient(&mcp.Implementation{Name: "reins-e2e-" + agent, Version: "1"}, nil)
	cs, err := cl.Connect(within(t, 20*time.Second), &mcp.StreamableClientTransport{
		Endpoint:   r.BaseURL() + "/mcp",
		HTTPClient: &http.Client{Transport: companiontest.Bearer{Token: tok, Base: tr}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connecting the MCP client: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type toolOut struct {
	text   string
	images [][]byte
	isErr  bool
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) toolOut {
	t.Helper()
	res, err := cs.CallTool(within(t, 60*time.Second), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out toolOut
	out.isErr = res.IsError
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.text += c.Text + "\n"
		case *mcp.ImageContent:
			out.images = append(out.images, c.Data)
		}
	}
	return out
}

// mustTool calls a tool that must succeed and returns its text.
func mustTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) toolOut {
	t.Helper()
	out := callTool(t, cs, name, args)
	if out.isErr {
		t.Fatalf("%s %v failed: %s", name, args, out.text)
	}
	return out
}

var refRE = regexp.MustCompile(`ref_(?:f\d+_)?\d+`)

// refFor finds the ref of the line of a find/read_page answer mentioning what.
func refFor(t testing.TB, text, what string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, what) {
			if m := refRE.FindString(line); m != "" {
				return m
			}
		}
	}
	t.Fatalf("no ref for %q in:\n%s", what, text)
	return ""
}

// firefoxToolSuite drives Firefox through the real MCP endpoint with the
// tool catalog, as an agent does.
func firefoxToolSuite(t *testing.T, s *harness.FirefoxStack) {
	toolSuite(t, s.Reins, "fox")
}

// toolSuite drives the browser the companion r sees first through the real
// MCP endpoint with the tool catalog, as an agent named agent does. The
// same suite runs against Chromium and Firefox.
func toolSuite(t *testing.T, r *harness.Reins, agent string) {
	pages := startToolsServer()
	t.Cleanup(pages.srv.Close)
	cs := mcpSession(t, r, agent)
	toolsURL := pages.srv.URL + "/tools"

	created := mustTool(t, cs, "tabs_create_mcp", map[string]any{"url": toolsURL})
	m := regexp.MustCompile(`Created tab (\d+)`).FindStringSubmatch(created.text)
	if m == nil {
		t.Fatalf("tabs_create_mcp answered %s", created.text)
	}
	tab, _ := strconv.Atoi(m[1])
	if !strings.Contains(created.text, "Title: Tools page") {
		t.Fatalf("the new tab did not load the page: %s", created.text)
	}
	if _, err := pages.wait(within(t, 30*time.Second), "load"); err != nil {
		t.Fatal(err)
	}
	js := func(t *testing.T, expr string) string {
		t.Helper()
		return strings.TrimSpace(mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": expr}).text)
	}
	computer := func(t *testing.T, args map[string]any) toolOut {
		t.Helper()
		args["tabId"] = tab
		return mustTool(t, cs, "computer", args)
	}

	t.Run("navigate and back", func(t *testing.T) {
		out := mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": pages.srv.URL + "/other"})
		if !strings.Contains(out.text, "Title: Other page") {
			t.Fatalf("navigate answered %s", out.text)
		}
		out = mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": "back"})
		if !strings.Contains(out.text, "Title: Tools page") {
			t.Fatalf("navigate back answered %s", out.text)
		}
		out = mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": "forward"})
		if !strings.Contains(out.text, "Title: Other page") {
			t.Fatalf("navigate forward answered %s", out.text)
		}
		out = mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": toolsURL})
		if !strings.Contains(out.text, "Title: Tools page") {
			t.Fatalf("navigate answered %s", out.text)
		}
	})

	t.Run("read_page", func(t *testing.T) {
		out := mustTool(t, cs, "read_page", map[string]any{"tabId": tab})
		for _, want := range []string{`button "Press me"`, `textbox "Name"`, `combobox "Color"`, `checkbox "Agree"`, "alpha beta gamma"} {
			if !strings.Contains(out.text, want) {
				t.Errorf("read_page lacks %s:\n%s", want, out.text)
			}
		}
		out = mustTool(t, cs, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
		if strings.Contains(out.text, "alpha beta gamma") || !strings.Contains(out.text, `button "Send"`) {
			t.Errorf("interactive read_page:\n%s", out.text)
		}
	})

	t.Run("find and form_input", func(t *testing.T) {
		found := mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Name"})
		name := refFor(t, found.text, `"Name"`)
		mustTool(t, cs, "form_input", map[string]any{"tabId": tab, "ref": name, "value": "Ada"})
		color := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Color"}).text, `"Color"`)
		mustTool(t, cs, "form_input", map[string]any{"tabId": tab, "ref": color, "value": "Green"})
		agree := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Agree checkbox"}).text, `"Agree"`)
		mustTool(t, cs, "form_input", map[string]any{"tabId": tab, "ref": agree, "value": true})
		got := js(t, `[document.getElementById('name').value, document.getElementById('color').value, document.getElementById('agree').checked].join('|')`)
		if got != "Ada|g|true" {
			t.Fatalf("form holds %q, want Ada|g|true", got)
		}
	})

	t.Run("clicks", func(t *testing.T) {
		btn := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Press me button"}).text, `"Press me"`)
		computer(t, map[string]any{"action": "left_click", "ref": btn})
		if _, err := pages.wait(within(t, 10*time.Second), "click 1:1"); err != nil {
			t.Fatal(err)
		}
		computer(t, map[string]any{"action": "right_click", "coordinate": []int{100, 45}})
		if _, err := pages.wait(within(t, 10*time.Second), "contextmenu 2"); err != nil {
			t.Fatal(err)
		}
		computer(t, map[string]any{"action": "double_click", "coordinate": []int{280, 45}})
		if _, err := pages.wait(within(t, 10*time.Second), "dblclick 2"); err != nil {
			t.Fatal(err)
		}
		para := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "alpha beta gamma"}).text, "alpha")
		computer(t, map[string]any{"action": "triple_click", "ref": para})
		if got := js(t, `getSelection().toString().trim()`); got != "alpha beta gamma" {
			t.Fatalf("triple click selected %q", got)
		}
		computer(t, map[string]any{"action": "hover", "coordinate": []int{460, 45}})
		if _, err := pages.wait(within(t, 10*time.Second), "hover"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("type and key", func(t *testing.T) {
		notes := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Notes"}).text, `"Notes"`)
		computer(t, map[string]any{"action": "left_click", "ref": notes})
		computer(t, map[string]any{"action": "type", "text": "hello fox"})
		if got := js(t, `document.getElementById('notes').value`); got != "hello fox" {
			t.Fatalf("textarea holds %q after typing", got)
		}
		computer(t, map[string]any{"action": "key", "text": "BackSpace", "repeat": 4})
		if got := js(t, `document.getElementById('notes').value`); got != "hello" {
			t.Fatalf("textarea holds %q after 4 backspaces", got)
		}
		computer(t, map[string]any{"action": "key", "text": "ctrl+a Delete"})
		if got := js(t, `document.getElementById('notes').value`); got != "" {
			t.Fatalf("textarea holds %q after ctrl+a Delete", got)
		}
		computer(t, map[string]any{"action": "key", "text": "Escape"})
		if _, err := pages.wait(within(t, 10*time.Second), "escape"); err != nil {
			t.Fatal(err)
		}
		// Tab from the name field reaches the color select.
		name := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Name"}).text, `"Name"`)
		computer(t, map[string]any{"action": "left_click", "ref": name})
		computer(t, map[string]any{"action": "key", "text": "Tab"})
		if got := js(t, `document.activeElement.id`); got != "color" {
			t.Fatalf("Tab moved focus to %q, want color", got)
		}
	})

	t.Run("scroll, scroll_to, wait and drag", func(t *testing.T) {
		out := computer(t, map[string]any{"action": "scroll", "scroll_direction": "down", "scroll_amount": 3})
		if !strings.Contains(out.text, "scroll position is now (0, 300)") {
			t.Fatalf("scroll answered %s", out.text)
		}
		far := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Far away"}).text, "Far away")
		computer(t, map[string]any{"action": "scroll_to", "ref": far})
		if y := js(t, `Math.round(document.getElementById('far').getBoundingClientRect().top)`); y == "" || strings.HasPrefix(y, "-") || mustAtoi(t, y) > 800 {
			t.Fatalf("Far away is at %s after scroll_to", y)
		}
		computer(t, map[string]any{"action": "wait", "duration": 0.2})
		js(t, `scrollTo(0, 0), 'top'`)
		computer(t, map[string]any{"action": "left_click_drag", "start_coordinate": []int{590, 50}, "coordinate": []int{690, 50}})
		ev, err := pages.wait(within(t, 10*time.Second), "dragged")
		if err != nil {
			t.Fatal(err)
		}
		if ev != "dragged 100" {
			t.Fatalf("page saw %q, want a 100 px drag", ev)
		}
	})

	t.Run("screenshot and zoom", func(t *testing.T) {
		out := computer(t, map[string]any{"action": "screenshot"})
		if len(out.images) != 1 {
			t.Fatalf("screenshot returned %d images: %s", len(out.images), out.text)
		}
		img, err := jpeg.Decode(bytes.NewReader(out.images[0]))
		if err != nil {
			t.Fatalf("screenshot is not a JPEG: %v", err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Fatalf("screenshot is %v", b)
		}
		// The button is grey-ish, the page white: the picture shows the page.
		r, g, bl, _ := img.At(5, 5).RGBA()
		if r>>8 < 200 || g>>8 < 200 || bl>>8 < 200 {
			t.Errorf("page corner is not white: %d %d %d", r>>8, g>>8, bl>>8)
		}
		out = computer(t, map[string]any{"action": "zoom", "region": []int{20, 20, 180, 70}})
		if len(out.images) != 1 {
			t.Fatalf("zoom returned %d images", len(out.images))
		}
		zoomed, err := jpeg.DecodeConfig(bytes.NewReader(out.images[0]))
		if err != nil || zoomed.Width < 160 {
			t.Fatalf("zoom image %+v, %v", zoomed, err)
		}
	})

	t.Run("javascript_tool", func(t *testing.T) {
		if got := js(t, "1 + 2"); got != "3" {
			t.Fatalf("1 + 2 = %q", got)
		}
		if got := js(t, "({a: [1, 2], b: document.title})"); !strings.Contains(got, `"Tools page"`) || !strings.Contains(got, `"a"`) {
			t.Fatalf("object result %q", got)
		}
		if got := js(t, "await new Promise((r) => setTimeout(() => r('late'), 10))"); got != "late" {
			t.Fatalf("top-level await gave %q", got)
		}
		if got := js(t, "return document.querySelectorAll('label').length"); got != "4" {
			t.Fatalf("top-level return gave %q", got)
		}
		out := callTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "throw new TypeError('boom')"})
		if !out.isErr || !strings.Contains(out.text, "script_error") || !strings.Contains(out.text, "TypeError: boom") {
			t.Fatalf("a throwing script answered %+v", out)
		}
	})

	t.Run("console and network", func(t *testing.T) {
		mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": toolsURL})
		js(t, `console.error('fox error ' + 7), 'logged'`)
		out := mustTool(t, cs, "read_console_messages", map[string]any{"tabId": tab})
		for _, want := range []string{"tools page ready", "careful", "fox error 7"} {
			if !strings.Contains(out.text, want) {
				t.Errorf("console lacks %q:\n%s", want, out.text)
			}
		}
		out = mustTool(t, cs, "read_network_requests", map[string]any{"tabId": tab})
		if !strings.Contains(out.text, "/tools") || !strings.Contains(out.text, "200") {
			t.Errorf("network log:\n%s", out.text)
		}
	})

	t.Run("Enter submits the form", func(t *testing.T) {
		name := refFor(t, mustTool(t, cs, "find", map[string]any{"tabId": tab, "query": "Name"}).text, `"Name"`)
		computer(t, map[string]any{"action": "left_click", "ref": name})
		computer(t, map[string]any{"action": "type", "text": "Grace"})
		out := computer(t, map[string]any{"action": "key", "text": "Return"})
		ev, err := pages.wait(within(t, 20*time.Second), "submitted")
		if err != nil {
			t.Fatalf("%v; key answered %s", err, out.text)
		}
		if !strings.Contains(ev, "name=Grace") {
			t.Fatalf("form sent %q", ev)
		}
		if !strings.Contains(out.text, "Submitted") {
			t.Errorf("key did not report the navigation: %s", out.text)
		}
	})

	// A load the browser refuses fails at once, with the error named as
	// Chromium names it. Firefox commits a refused port and then shows its
	// error page (navigate used to wait out its timeout and report that
	// page as the page), and reports an untrusted certificate failed before
	// it commits its error page (navigate used to answer a number).
	t.Run("navigation errors", func(t *testing.T) {
		tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<!doctype html><title>Untrusted</title>")
		}))
		t.Cleanup(tls.Close)
		for _, c := range []struct{ url, want string }{
			{"http://127.0.0.1:1/", "net::ERR_UNSAFE_PORT"},
			{tls.URL + "/", "net::ERR_CERT_AUTHORITY_INVALID"},
		} {
			start := time.Now()
			out := callTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": c.url})
			t.Logf("navigate to %s answered after %s: %s", c.url, time.Since(start).Round(time.Millisecond), out.text)
			if !out.isErr || !strings.Contains(out.text, "[navigation_failed]") || !strings.Contains(out.text, c.want) {
				t.Fatalf("navigate to %s answered %+v, want navigation_failed naming %s", c.url, out, c.want)
			}
		}
		if out := mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": toolsURL}); !strings.Contains(out.text, "Title: Tools page") {
			t.Fatalf("navigate after the errors answered %s", out.text)
		}
	})
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}
