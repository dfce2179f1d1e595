package tools_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// The test pages record what happened to them in window.__log, so the tests
// check effects in the page rather than trusting the tools' own reports.

const recorder = `<script>
window.__log = [];
const L = (o) => window.__log.push(o);
const M = (t) => (e) => L({t, x: e.clientX, y: e.clientY, b: e.button, n: e.detail, id: e.target.id || '', shift: e.shiftKey, ctrl: e.ctrlKey});
for (const t of ['click', 'dblclick', 'contextmenu', 'mousedown', 'mouseup', 'mouseover']) document.addEventListener(t, M(t), true);
let moves = 0;
document.addEventListener('mousemove', (e) => { if (e.buttons & 1) L({t: 'dragmove', x: e.clientX, y: e.clientY}); }, true);
document.addEventListener('keydown', (e) => L({t: 'keydown', key: e.key, code: e.code, ctrl: e.ctrlKey, shift: e.shiftKey, id: e.target.id || ''}), true);
document.addEventListener('input', (e) => L({t: 'input', id: e.target.id || '', v: e.target.isContentEditable ? e.target.innerText : String(e.target.value)}), true);
document.addEventListener('change', (e) => L({t: 'change', id: e.target.id || '', v: e.target.type === 'checkbox' || e.target.type === 'radio' ? String(e.target.checked) : String(e.target.value)}), true);
document.addEventListener('wheel', (e) => L({t: 'wheel', x: e.clientX, y: e.clientY, dy: e.deltaY}), true);
document.addEventListener('submit', (e) => { e.preventDefault(); L({t: 'submit', id: e.target.id || ''}); }, true);
</script>`

const recordPage = `<!doctype html><html><head><title>Recorder</title>
<style>body{margin:0;font:16px sans-serif} #pad{position:absolute;left:100px;top:100px;width:400px;height:300px;background:#eef}
#btn{position:absolute;left:600px;top:100px;width:120px;height:40px} #name{position:absolute;left:600px;top:200px;width:200px}
#far{position:absolute;left:100px;top:2500px} #tall{height:3000px}
#drag{position:absolute;left:800px;top:400px;width:300px;height:200px;background:#fee}
#drop{position:absolute;left:100px;top:500px;width:300px;height:150px;background:#efe}
#hov{position:absolute;left:600px;top:300px;width:100px;height:40px;background:#ddd}
</style></head><body>` + recorder + `
<div id="tall"></div>
<div id="pad" tabindex="0">pad</div>
<button id="btn" onclick="document.title='clicked'">Press me</button>
<form id="f"><input id="name" aria-label="Your name"></form>
<div id="hov" role="button" aria-label="hover target">hover</div>
<div id="drag">drag area</div>
<div id="drop">drop zone</div>
<input type="file" id="file" aria-label="Upload">
<button id="far">Far away</button>
<script>
const fileIn = document.getElementById('file');
fileIn.addEventListener('change', () => { for (const f of fileIn.files) L({t: 'file', name: f.name, size: f.size, type: f.type}); });
const drop = document.getElementById('drop');
drop.addEventListener('dragover', (e) => e.preventDefault());
drop.addEventListener('drop', (e) => { e.preventDefault(); for (const f of e.dataTransfer.files) L({t: 'drop', name: f.name, size: f.size, type: f.type, x: e.clientX, y: e.clientY}); });
</script>
</body></html>`

const formPage = `<!doctype html><html><head><title>Form</title></head><body>` + recorder + `
<main><h1>Sign up</h1>
<form id="f">
<label>Email <input id="email" type="email" placeholder="you@example.com"></label>
<label>Password <input id="pw" type="password"></label>
<label>Bio <textarea id="bio"></textarea></label>
<label>Country <select id="country"><option value="">Pick one</option><option value="fr">France</option><option value="jp">Japan</option></select></label>
<label>Tags <select id="tags" multiple><option value="a">Alpha</option><option value="b">Beta</option><option value="c">Gamma</option></select></label>
<label><input type="checkbox" id="agree"> I agree</label>
<fieldset><legend>Plan</legend>
<label><input type="radio" name="plan" id="free" value="free" checked> Free</label>
<label><input type="radio" name="plan" id="pro" value="pro"> Pro</label></fieldset>
<div id="notes" contenteditable="true" aria-label="Notes">old notes</div>
<button id="go" type="submit">Create account</button>
</form>
<p id="gone">This paragraph will be removed.</p>
</main>
<footer><a href="/about">About us</a></footer>
</body></html>`

const consolePage = `<!doctype html><html><head><title>Console</title></head><body>
<script>
console.log('hello from the page', 42);
console.warn('careful');
console.error('something broke');
setTimeout(() => { throw new Error('late failure'); }, 0);
const afterThrow = new Promise((r) => setTimeout(r, 0)); // timers run in order: after the throw above
window.__done = Promise.all([afterThrow, fetch('/api/data?x=1').then((r) => r.text()).then((t) => console.log('api said', t))]);
</script><p>console page</p></body></html>`

const textPage = `<!doctype html><html><head><title>Article</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<aside>Sidebar advert</aside>
<main><h1>The headline</h1><p>First paragraph of the story.</p><p>Second paragraph.</p></main>
<footer>Copyright footer</footer></body></html>`

// bigPage has 200 elements: headings, paragraphs, links, inputs, buttons
// and list items, like a typical app page.
func bigPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Big page</title></head><body>` + recorder + `<header><nav>`)
	n := 0
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, `<a href="/section/%d">Section %d</a> `, i, i)
		n++
	}
	b.WriteString(`</nav></header><main><h1>Dashboard</h1>`)
	n += 4
	for i := 1; n < 190; i++ {
		fmt.Fprintf(&b, `<section><h2>Card %d</h2><p>Summary text for card number %d with a few words.</p>`, i, i)
		fmt.Fprintf(&b, `<ul><li>Item %d.1</li><li>Item %d.2</li></ul>`, i, i)
		fmt.Fprintf(&b, `<label>Note %d <input id="note%d"></label><button id="save%d">Save %d</button> <a href="/card/%d">Open</a></section>`, i, i, i, i, i)
		n += 10
	}
	b.WriteString(`</main><footer><p>Footer</p><a href="/help">Help</a></footer></body></html>`)
	return b.String()
}

const navA = `<!doctype html><html><head><title>Page A</title></head><body>` + recorder + `
<a id="toB" href="/nav/b" style="position:absolute;left:50px;top:50px">Go to B</a>
<a id="hash" href="#section" style="position:absolute;left:50px;top:100px">Jump</a>
<button id="stay" style="position:absolute;left:50px;top:150px" onclick="this.textContent='stayed'">Stay</button>
<button id="alert" style="position:absolute;left:50px;top:200px" onclick="alert('Saved!'); this.textContent = 'alerted'">Alert</button>
<button id="confirm" style="position:absolute;left:50px;top:250px" onclick="this.textContent = confirm('Delete everything?') ? 'confirmed' : 'kept'">Confirm</button>
<div id="section" style="margin-top:2000px">section</div></body></html>`

const navB = `<!doctype html><html><head><title>Page B</title></head><body>` + recorder + `<p>B</p>
<button id="stay" style="position:absolute;left:50px;top:150px">Stay</button></body></html>`

const noisePage = `<!doctype html><html><head><title>Noise</title><style>body{margin:0}</style></head><body>
<canvas id="c"></canvas><script>
const c = document.getElementById('c'); c.width = innerWidth; c.height = innerHeight;
const x = c.getContext('2d'); const d = x.createImageData(c.width, c.height);
let s = 12345; for (let i = 0; i < d.data.length; i++) { s = (s * 1103515245 + 12345) & 0x7fffffff; d.data[i] = i % 4 === 3 ? 255 : s >> 16 & 255; }
x.putImageData(d, 0, 0);</script></body></html>`

const manyButtons = `<!doctype html><html><head><title>Many</title></head><body>` +
	`<script>for (let i = 1; i <= 60; i++) { const b = document.createElement('button'); b.textContent = 'Item ' + i; document.body.append(b); }</script>` +
	`<input id="q" placeholder="Search the catalogue"></body></html>`

// slow gates /slowimg for the navigation-wait test.
// hangs maps a key to the channel /hang?k=key tells when it is asked.
var hangs sync.Map

var slow struct {
	mu        sync.Mutex
	requested chan struct{}
	release   chan struct{}
}

// colorsPage has a red box far down a white page, for checking which part
// of the page a (zoomed, scrolled, high-DPI) screenshot shows.
const colorsPage = `<!doctype html><html><head><title>Colors</title><style>body{margin:0;background:#fff;height:4000px}
#red{position:absolute;left:300px;top:1500px;width:200px;height:100px;background:#f00}</style></head><body><div id="red"></div></body></html>`

func pages() http.Handler {
	mux := http.NewServeMux()
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, body)
		}
	}
	tabPages(mux)
	mux.HandleFunc("/record", html(recordPage))
	mux.HandleFunc("/form", html(formPage))
	mux.HandleFunc("/console", html(consolePage))
	mux.HandleFunc("/text", html(textPage))
	mux.HandleFunc("/big", html(bigPage()))
	mux.HandleFunc("/nav/a", html(navA))
	mux.HandleFunc("/nav/b", html(navB))
	mux.HandleFunc("/noise", html(noisePage))
	mux.HandleFunc("/many", html(manyButtons))
	mux.HandleFunc("/colors", html(colorsPage))
	devtoolsPages(mux, html)
	reachPages(mux, html)
	mux.HandleFunc("/api/data", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		// The page's load event waits for this image, which the server
		// holds back: navigate must wait for it.
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><title>Slow</title><img src="/slowimg" onload="document.title='Slow loaded'">`)
	})
	mux.HandleFunc("/slowimg", func(w http.ResponseWriter, r *http.Request) {
		// The image is held back until the test releases it, so the test
		// can see navigate still waiting for the load event.
		slow.mu.Lock()
		requested, release := slow.requested, slow.release
		slow.mu.Unlock()
		if requested != nil {
			close(requested)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "image/gif")
		w.Write([]byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"))
	})
	filesPages(mux)
	mux.HandleFunc("/hung", func(w http.ResponseWriter, r *http.Request) {
		// A page that never finishes loading: its image hangs.
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><title>Hung</title><img src="/hang?k=`+url.QueryEscape(r.URL.Query().Get("k"))+`">`)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		// Tells the test that registered k, then answers nothing until
		// the client goes.
		if ch, ok := hangs.Load(r.URL.Query().Get("k")); ok {
			select {
			case ch.(chan struct{}) <- struct{}{}:
			default:
			}
		}
		<-r.Context().Done()
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `<!doctype html><title>Not here</title><p>404</p>`)
	})
	return mux
}
