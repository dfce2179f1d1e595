package tools_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

// The page state and DevTools tools in real Chromium, on the dev transport.

const dtConsolePage = `<!doctype html><html><head><title>Console levels</title></head><body><script>
function outer() { inner(); }
function inner() { console.warn('disk almost full', 93); console.error('save failed'); }
console.debug('debug detail');
console.info('starting up');
outer();
window.__done = new Promise((r) => setTimeout(r, 0));
</script></body></html>`

// dtAPIPage fetches JSON with a header of its own, and a big body.
const dtAPIPage = `<!doctype html><html><head><title>API</title></head><body><p id="out">…</p><script>
window.__done = Promise.all([
  fetch('/dt/api?code=K-1234', { headers: { 'X-Reins-Test': 'yes' } }).then((r) => r.json()).then((j) => { document.getElementById('out').textContent = j.greeting; }),
  fetch('/dt/api?size=200000').then((r) => r.text()),
]);
</script></body></html>`

// dtPerfPage has a large heading (the LCP), a block that shifts the
// layout after load, a long task at load, and a button whose click
// handler blocks the main thread for 300 ms.
const dtPerfPage = `<!doctype html><html><head><title>Perf</title><style>body{margin:0;font:16px sans-serif} h1{font-size:64px;margin:0;padding:20px} #late{height:200px;background:#fc0}</style></head><body>
<div id="slot"></div>
<h1>A large headline that paints</h1>
<p>Some text below the headline that moves when the banner arrives.</p>
<button id="slow" style="position:absolute;left:20px;top:600px;width:200px;height:60px" onclick="const t=performance.now(); while (performance.now()-t < 300) {} this.textContent='done'">Slow button</button>
<script>
{ const t = performance.now(); while (performance.now() - t < 120) {} }
requestAnimationFrame(() => setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; d.textContent = 'banner'; document.getElementById('slot').appendChild(d); window.__shifted = true; }, 50));
</script></body></html>`

// dtMediaPage reports what the page sees of its device and network.
const dtMediaPage = `<!doctype html><html><head><title>Media</title><meta name="viewport" content="width=device-width"></head><body><script>
window.__state = () => ({ w: innerWidth, dark: matchMedia('(prefers-color-scheme: dark)').matches, touch: navigator.maxTouchPoints, ua: navigator.userAgent, online: navigator.onLine, mobile: matchMedia('(pointer: coarse)').matches });
</script></body></html>`

// dtHold holds /dt/hold responses until the test releases them.
var dtHold struct {
	mu      sync.Mutex
	release chan struct{}
}

// devtoolsPages adds this file's pages to pages()'s mux; html serves a
// page as pages() does.
func devtoolsPages(mux *http.ServeMux, html func(string) http.HandlerFunc) {
	mux.HandleFunc("/dt/console", html(dtConsolePage))
	mux.HandleFunc("/dt/apipage", html(dtAPIPage))
	mux.HandleFunc("/dt/perf", html(dtPerfPage))
	mux.HandleFunc("/dt/media", html(dtMediaPage))
	mux.HandleFunc("/dt/api", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Served-By", "reins-test")
		if n, err := strconv.Atoi(r.URL.Query().Get("size")); err == nil {
			fmt.Fprintf(w, `{"pad":"%s"}`, strings.Repeat("p", n))
			return
		}
		fmt.Fprintf(w, `{"greeting":"hello","code":%q,"sawHeader":%q}`, r.URL.Query().Get("code"), r.Header.Get("X-Reins-Test"))
	})
	mux.HandleFunc("/dt/hold", func(w http.ResponseWriter, r *http.Request) {
		dtHold.mu.Lock()
		release := dtHold.release
		dtHold.mu.Unlock()
		if release != nil {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"held":"released"}`)
	})
	// /dt/cookies sets a cookie and local storage, and frames a page of
	// the site named by ?frame, as a third-party frame.
	mux.HandleFunc("/dt/cookies", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc123", Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		frame := ""
		if f := r.URL.Query().Get("frame"); f != "" {
			frame = `<iframe src="` + f + `"></iframe>`
		}
		io.WriteString(w, `<!doctype html><title>Cookies</title><script>localStorage.setItem('theme', 'dark'); sessionStorage.setItem('step', '2');</script><p>cookies</p>`+frame)
	})
	mux.HandleFunc("/dt/setcookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: r.URL.Query().Get("name"), Value: r.URL.Query().Get("value"), Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Set</title><p>set</p>`)
	})
	mux.HandleFunc("/dt/echo", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "cookie: "+r.Header.Get("Cookie"))
	})
}

// localhost is the alternate test server under another site name: cookies
// are kept by host, so 127.0.0.1 on another port would share them.
func localhost(r *rig) string { return strings.Replace(r.alt, "127.0.0.1", "localhost", 1) }

// The attack: a page the agent works on frames a third-party site whose
// cookie (here a bank's session) the browser holds. storage reads the
// tab's own cookies only; Network.getCookies without the tab's URL would
// hand over the frame's too.
func TestStorageInChromium(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:baker", "baker")
	other := r.newTab(s, "/text")
	r.ok(s, "navigate", map[string]any{"tabId": other, "url": localhost(r) + "/dt/setcookie?name=bank&value=secret-session"})
	tab := r.newTab(s, "/dt/cookies?frame="+localhost(r)+"/text")

	out := r.ok(s, "storage", map[string]any{"tabId": tab, "action": "get", "area": "cookies"})
	if !strings.Contains(out, "sid=abc123; Domain=127.0.0.1; Path=/") {
		t.Fatalf("the tab's own cookie is missing:\n%s", out)
	}
	if strings.Contains(out, "secret-session") || strings.Contains(out, "bank") {
		t.Fatalf("the third-party frame's cookie leaked:\n%s", out)
	}

	r.ok(s, "storage", map[string]any{"tabId": tab, "action": "set", "area": "cookies", "name": "seed", "value": "v1"})
	echo := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await (await fetch('/dt/echo')).text()"})
	if !strings.Contains(echo, "seed=v1") || !strings.Contains(echo, "sid=abc123") {
		t.Fatalf("the server did not get the cookie set: %s", echo)
	}
	if doc := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "document.cookie"}); !strings.Contains(doc, "seed=v1") {
		t.Fatalf("the page does not see the cookie set: %q", doc)
	}
	out = r.ok(s, "storage", map[string]any{"tabId": tab, "action": "clear", "area": "cookies", "name": "seed"})
	if !strings.Contains(out, "Deleted 1 cookie") {
		t.Fatalf("clear seed: %s", out)
	}
	out = r.ok(s, "storage", map[string]any{"tabId": tab, "action": "clear", "area": "cookies"})
	if !strings.Contains(out, "Deleted 1 cookie") {
		t.Fatalf("clear all: %s", out)
	}
	if echo := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await (await fetch('/dt/echo')).text()"}); strings.TrimSpace(echo) != "cookie:" {
		t.Fatalf("cookies left after clear: %s", echo)
	}
	// The other site's cookie is still there: clear stayed on the tab's site.
	if echo := r.ok(s, "javascript_tool", map[string]any{"tabId": other, "text": "await (await fetch('/dt/echo')).text()"}); !strings.Contains(echo, "bank=secret-session") {
		t.Fatalf("the other site's cookie was cleared: %s", echo)
	}

	out = r.ok(s, "storage", map[string]any{"tabId": tab, "action": "get", "area": "local"})
	if !strings.Contains(out, "theme = dark") || !strings.Contains(out, "localStorage of "+r.url) {
		t.Fatalf("local storage: %s", out)
	}
	if out = r.ok(s, "storage", map[string]any{"tabId": tab, "action": "get", "area": "session", "name": "step"}); !strings.Contains(out, "step = 2") {
		t.Fatalf("session storage: %s", out)
	}
	r.ok(s, "storage", map[string]any{"tabId": tab, "action": "set", "area": "local", "name": "lang", "value": "pt"})
	if v := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "localStorage.getItem('lang')"}); v != "pt" {
		t.Fatalf("the page sees lang=%q", v)
	}
	r.ok(s, "storage", map[string]any{"tabId": tab, "action": "clear", "area": "local"})
	if v := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "localStorage.length"}); v != "0" {
		t.Fatalf("local storage after clear: %s keys", v)
	}
	// A big area comes back bounded: the first 500 keys by name, each value
	// cut at 10,000 characters.
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "for (let i = 0; i < 600; i++) localStorage.setItem('k' + String(i).padStart(3, '0'), 'v' + i); localStorage.setItem('a-long', 'x'.repeat(12000)); 0"})
	out = r.ok(s, "storage", map[string]any{"tabId": tab, "action": "get", "area": "local"})
	if !strings.HasPrefix(out, "601 key(s)") || !strings.Contains(out, "[cut: 12000 characters in all]") || !strings.Contains(out, "[the first 500 keys by name are shown]") || strings.Contains(out, "k500 =") {
		t.Fatalf("a big local storage: %d bytes: %.200s … %s", len(out), out, out[max(0, len(out)-200):])
	}
	if out := r.ok(s, "storage", map[string]any{"tabId": tab, "action": "get", "area": "local", "name": "k599"}); !strings.Contains(out, "k599 = v599") {
		t.Fatalf("one key of a big area: %s", out)
	}
}

func TestDevtoolsConsoleInChromium(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:debugger", "debugger")
	tab := r.newTab(s, "/dt/console")
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await window.__done; 0"})
	out := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "console", "level": "warn"})
	for _, want := range []string{"[warn]", "disk almost full 93", "[error]", "save failed", "at inner (" + r.url + "/dt/console:3:", "at outer (" + r.url + "/dt/console:2:"} {
		if !strings.Contains(out, want) {
			t.Errorf("console at warn lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "starting up") || strings.Contains(out, "debug detail") {
		t.Errorf("console at warn shows lower levels:\n%s", out)
	}
	if out := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "console"}); !strings.Contains(out, "starting up") || strings.Contains(out, "debug detail") {
		t.Errorf("console at the default level (info):\n%s", out)
	}
	if out := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "console", "level": "debug"}); !strings.Contains(out, "debug detail") {
		t.Errorf("console at debug:\n%s", out)
	}
	if out := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "console", "level": "error"}); strings.Contains(out, "disk almost full") || !strings.Contains(out, "save failed") {
		t.Errorf("console at error:\n%s", out)
	}
}

var requestIDRE = regexp.MustCompile(`Request (\S+) of tab`)

func TestDevtoolsRequestInChromium(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:netwatch", "netwatch")
	tab := r.newTab(s, "/dt/apipage")
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await window.__done; 0"})
	out := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "request", "pattern": "code=K-1234"})
	for _, want := range []string{"GET " + r.url + "/dt/api?code=K-1234 → 200 [Fetch] application/json", "Request headers:", "X-Reins-Test: yes", "Response headers:", "X-Served-By: reins-test", `"code":"K-1234"`, `"sawHeader":"yes"`} {
		if !strings.Contains(out, want) {
			t.Errorf("request lacks %q:\n%s", want, out)
		}
	}
	id := requestIDRE.FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no request id in:\n%s", out)
	}
	if again := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "request", "pattern": id[1]}); !strings.Contains(again, "Request "+id[1]+" ") || !strings.Contains(again, "K-1234") {
		t.Errorf("by id:\n%s", again)
	}
	big := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "request", "pattern": "size=200000"})
	if !strings.Contains(big, "Body (200010 bytes)") || !strings.Contains(big, fmt.Sprintf("[cut: %d more bytes]", 200010-(64<<10))) || len(big) > 70<<10 {
		t.Errorf("a 200 kB body: %d bytes, tail %q", len(big), big[max(0, len(big)-120):])
	}
	r.fails(s, "devtools", map[string]any{"tabId": tab, "action": "request", "pattern": "never-requested"}, wire.CodeBadParams)
}

// wait_response returns the response the previous call caused, even when it
// finished before the wait began, and otherwise waits for the next one,
// driven by the tab's network events.
func TestDevtoolsWaitResponseInChromium(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:waiter", "waiter")
	tab := r.newTab(s, "/dt/apipage")
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await window.__done; 0"})
	// The page's own fetches finished before: they are not what a wait
	// now is for.
	r.fails(s, "devtools", map[string]any{"tabId": tab, "action": "wait_response", "pattern": "/dt/api", "timeout": 1}, wire.CodeTimeout)

	// The action's response finished before the wait: it counts.
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await fetch('/dt/api?code=AFTER-CLICK'); 0"})
	out := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "wait_response", "pattern": "/dt/api"})
	if !strings.Contains(out, "AFTER-CLICK") || !strings.Contains(out, "→ 200") {
		t.Fatalf("wait_response after the action:\n%s", out)
	}

	// A response still on its way: the wait ends when it arrives.
	release := make(chan struct{})
	dtHold.mu.Lock()
	dtHold.release = release
	dtHold.mu.Unlock()
	t.Cleanup(func() {
		dtHold.mu.Lock()
		dtHold.release = nil
		dtHold.mu.Unlock()
	})
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "window.__held = fetch('/dt/hold').then((r) => r.text()); 0"})
	done := make(chan string, 1)
	go func() {
		res := r.call(s, "devtools", map[string]any{"tabId": tab, "action": "wait_response", "pattern": "/dt/hold", "timeout": 30})
		done <- text(res)
	}()
	close(release)
	if out := <-done; !strings.Contains(out, `{"held":"released"}`) {
		t.Fatalf("wait for a held response:\n%s", out)
	}
}

var (
	lcpRE  = regexp.MustCompile(`LCP: (\d+) ms \(h1`)
	clsRE  = regexp.MustCompile(`CLS: (0\.\d+) from (\d+) layout shift`)
	inpRE  = regexp.MustCompile(`INP: (\d+) ms \((\w+), worst of (\d+) interaction`)
	taskRE = regexp.MustCompile(`Long tasks: (\d+), longest (\d+) ms`)
)

// A trace across a reload and a slow click: the summary's numbers come
// from the page's own performance timeline.
func TestDevtoolsTraceInChromium(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:perf", "perf")
	tab := r.newTab(s, "/text")
	r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "trace_start"})
	r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/dt/perf"})
	// The banner lands after load; wait for it in the page.
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await new Promise((ok) => { const t = () => window.__shifted ? ok() : requestAnimationFrame(t); t(); }); 0"})
	r.ok(s, "computer", map[string]any{"tabId": tab, "action": "left_click", "coordinate": []int{120, 630}})
	out := r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "trace_stop"})
	t.Logf("trace:\n%s", out)
	if !strings.Contains(out, r.url+"/dt/perf") || !strings.Contains(out, "since the page loaded") {
		t.Errorf("the trace does not say it measured the new page from its start:\n%s", out)
	}
	if m := lcpRE.FindStringSubmatch(out); m == nil {
		t.Errorf("no LCP on the headline:\n%s", out)
	}
	if m := clsRE.FindStringSubmatch(out); m == nil || m[1] == "0.000" {
		t.Errorf("no layout shift measured:\n%s", out)
	}
	if m := inpRE.FindStringSubmatch(out); m == nil {
		t.Errorf("no INP:\n%s", out)
	} else if v, _ := strconv.Atoi(m[1]); v < 300 || !strings.Contains(out, "poor") && v > 500 {
		t.Errorf("INP %d ms for a 300 ms click handler:\n%s", v, out)
	}
	if m := taskRE.FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Errorf("no long task:\n%s", out)
	} else if v, _ := strconv.Atoi(m[2]); v < 300 {
		t.Errorf("the longest task is %d ms; the click alone blocked for 300:\n%s", v, out)
	}

	// Started and stopped on one page, earlier events stay out.
	r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "trace_start"})
	out = r.ok(s, "devtools", map[string]any{"tabId": tab, "action": "trace_stop"})
	if !strings.Contains(out, "since trace_start") || !strings.Contains(out, "painted before the trace started") || !strings.Contains(out, "Long tasks: 0") || !strings.Contains(out, "INP: no interactions") {
		t.Errorf("a trace with nothing in it:\n%s", out)
	}
}

type mediaState struct {
	W      int    `json:"w"`
	Dark   bool   `json:"dark"`
	Touch  int    `json:"touch"`
	UA     string `json:"ua"`
	Online bool   `json:"online"`
	Mobile bool   `json:"mobile"`
}

func TestEmulateInChromium(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:mobile", "mobile")
	tab := r.newTab(s, "/dt/media")
	var before mediaState
	r.js(s, tab, "window.__state()", &before)
	r.ok(s, "emulate", map[string]any{"tabId": tab, "device": "iphone", "colorScheme": "dark"})
	var st mediaState
	r.js(s, tab, "window.__state()", &st)
	if st.W != 393 || !st.Dark || st.Touch == 0 || !strings.Contains(st.UA, "iPhone") || !st.Mobile {
		t.Fatalf("as an iPhone in dark mode the page sees %+v", st)
	}
	r.ok(s, "emulate", map[string]any{"tabId": tab, "network": "offline"})
	if got := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await fetch('/dt/api').then(() => 'fetched', (e) => 'failed: ' + e.name)"}); !strings.HasPrefix(got, "failed") {
		t.Fatalf("offline fetch: %s", got)
	}
	r.ok(s, "emulate", map[string]any{"tabId": tab, "network": "fast-3g", "cpu": 2})
	if got := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await fetch('/dt/api').then(() => 'fetched', (e) => 'failed: ' + e.name)"}); got != "fetched" {
		t.Fatalf("back online: %s", got)
	}
	r.ok(s, "emulate", map[string]any{"tabId": tab, "reset": true})
	var after mediaState
	r.js(s, tab, "window.__state()", &after)
	if after != before {
		t.Fatalf("after reset the page sees %+v, before %+v", after, before)
	}
}

func TestCDPInChromium(t *testing.T) {
	r := newRig(t, rigOptions{developer: func(p string) bool { return p == "agent:dev" }, manageExt: func() bool { return true }})
	dev := r.e.NewSession("agent:dev", "dev")
	tab := r.newTab(dev, "/text")
	out := r.ok(dev, "cdp", map[string]any{"tabId": tab, "method": "Runtime.evaluate", "params": map[string]any{"expression": "document.title", "returnByValue": true}})
	if !strings.Contains(out, `"value": "Article"`) {
		t.Fatalf("Runtime.evaluate: %s", out)
	}
	if out := r.ok(dev, "cdp", map[string]any{"tabId": tab, "method": "DOM.getDocument", "params": map[string]any{"depth": 1}}); !strings.Contains(out, `"nodeName": "#document"`) {
		t.Fatalf("DOM.getDocument: %s", out)
	}
	r.fails(dev, "cdp", map[string]any{"tabId": tab, "method": "Target.getTargets"}, wire.CodeNotAllowed)
	r.fails(dev, "cdp", map[string]any{"tabId": tab, "method": "Network.getAllCookies"}, wire.CodeNotAllowed)
	r.fails(dev, "cdp", map[string]any{"tabId": tab, "method": "Page.navigate", "params": map[string]any{"url": "file:///etc/passwd"}}, wire.CodeRestrictedURL)
	// The browser's own refusal comes back as a result with a code.
	res := r.call(dev, "cdp", map[string]any{"tabId": tab, "method": "DOM.noSuchCommand"})
	if !res.IsError || res.Code == "" {
		t.Fatalf("an unknown command: %+v", res)
	}
	// Another agent is no developer agent.
	other := r.e.NewSession("agent:other", "other")
	otherTab := r.newTab(other, "/text")
	r.fails(other, "cdp", map[string]any{"tabId": otherTab, "method": "DOM.getDocument"}, wire.CodeNotAllowed)
	// A dev browser has no extensions to manage.
	r.fails(dev, "extensions", map[string]any{"action": "list"}, wire.CodeUnsupported)
}
