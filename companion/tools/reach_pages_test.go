package tools_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Pages for frames, shadow DOM, big pages, pointer and keyboard depth, and
// screenshots. Frames report to the top page by postMessage, so the top
// page's window.__log shows what happened inside any of them.

const framesTop = `<!doctype html><html><head><title>Frames</title><style>
body{margin:0;font:16px sans-serif} iframe{border:2px solid #888;padding:3px;width:420px;height:170px;display:block;margin:10px 20px}
</style></head><body>
<script>window.__log = []; addEventListener('message', (e) => window.__log.push(Object.assign({origin: e.origin}, e.data)));</script>
<h1>Frames</h1>
<iframe id="same" title="Same-origin form" src="/frames/child?name=same"></iframe>
<div id="host"><p>Slotted light text</p></div>
<iframe id="alt" title="Alt frame"></iframe>
<iframe id="sandboxed" title="Sandboxed" sandbox="allow-scripts" srcdoc="<button onclick=&quot;parent.postMessage({t:'click',name:'sandbox',trusted:event.isTrusted},'*')&quot;>Sandboxed button</button><script>parent.postMessage({t:'ready',name:'sandbox'},'*')</script>"></iframe>
<div style="height:1400px"></div>
<iframe id="site" title="Site frame"></iframe>
<script>
const q = new URLSearchParams(location.search);
document.getElementById('alt').src = q.get('alt') + '/frames/child?name=alt';
document.getElementById('site').src = q.get('site') + '/frames/child?name=site&nest=' + encodeURIComponent(q.get('alt') || '');
const root = document.getElementById('host').attachShadow({mode: 'open'});
root.innerHTML = '<section aria-label="Shadow panel"><label>Shadow email <input id="se"></label> <button id="sb">Shadow go</button> <slot></slot></section>';
root.getElementById('sb').addEventListener('click', (e) => window.__log.push({t: 'click', name: 'shadow', v: root.getElementById('se').value, trusted: e.isTrusted}));
</script>
</body></html>`

const framesChild = `<!doctype html><html><head><title>Child</title><style>body{margin:0;font:16px sans-serif}</style></head><body>
<h2 id="h"></h2><p id="secret"></p>
<label><span id="lt"></span> <input id="f"></label> <button id="b"></button>
<script>
const q = new URLSearchParams(location.search);
const name = q.get('name');
document.getElementById('h').textContent = 'Child ' + name;
document.getElementById('secret').textContent = 'Secret text of ' + name;
document.getElementById('lt').textContent = name + ' field';
document.getElementById('b').textContent = name + ' button';
const send = (o) => parent.postMessage(Object.assign({name}, o), '*');
document.getElementById('b').addEventListener('click', (e) => send({t: 'click', trusted: e.isTrusted}));
document.getElementById('f').addEventListener('change', (e) => send({t: 'change', v: e.target.value}));
if (q.get('nest')) {
  const f = document.createElement('iframe');
  f.title = 'Nested frame';
  f.style.cssText = 'width:300px;height:60px;border:0';
  f.src = q.get('nest') + '/frames/leaf';
  document.body.append(f);
}
send({t: 'ready'});
</script></body></html>`

// framesLeaf sits in the site frame: a frame of another site inside an
// out-of-process frame.
const framesLeaf = `<!doctype html><html><head><title>Leaf</title></head><body style="margin:0">
<button id="leaf" onclick="top.postMessage({t:'click',name:'leaf',trusted:event.isTrusted},'*')">Leaf button</button>
<script>top.postMessage({t:'ready',name:'leaf'},'*')</script></body></html>`

// rowsPage has 1000 orders, each with an Open button, as a long admin list.
func rowsPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Orders</title></head><body>` + recorder + `<main><h1>Orders</h1><table><thead><tr><th>Order</th><th>Customer</th><th>Status</th><th></th></tr></thead><tbody>`)
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, `<tr><td>Order #%d</td><td>Customer %d</td><td>%s</td><td><button id="open%d" aria-label="Open order %d">Open</button></td></tr>`, i, i, []string{"paid", "shipped", "refunded"}[i%3], i, i)
	}
	b.WriteString(`</tbody></table></main></body></html>`)
	return b.String()
}

// manySpans has more elements than one read walks.
func manySpans(n int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Spans</title></head><body><main>`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<span>s%d</span>`, i)
	}
	b.WriteString(`</main></body></html>`)
	return b.String()
}

const dndPage = `<!doctype html><html><head><title>Board</title><style>
body{margin:0;font:16px sans-serif} .col{display:inline-block;vertical-align:top;width:260px;min-height:300px;margin:20px;background:#eee;padding:10px}
.card{background:#fff;border:1px solid #999;padding:10px;margin:6px 0;cursor:grab}
#slider{position:absolute;left:20px;top:420px;width:400px;height:20px;background:#ccc} #knob{position:absolute;left:0;top:-5px;width:30px;height:30px;background:#36c}
</style></head><body>` + recorder + `
<section class="col" id="todo" aria-label="To do"><h2>To do</h2><div class="card" draggable="true" id="c1">Write report</div><div class="card" draggable="true" id="c2">Call Ada</div></section>
<section class="col" id="done" aria-label="Done"><h2>Done</h2></section>
<div id="slider" aria-label="Volume"><div id="knob" role="slider" aria-label="Volume knob" tabindex="0"></div></div>
<script>
if (location.search.includes('far')) document.getElementById('done').style.cssText = 'display:block;margin-top:2200px';
for (const col of document.querySelectorAll('.col')) {
  col.addEventListener('dragover', (e) => { e.preventDefault(); e.dataTransfer.dropEffect = 'move'; });
  col.addEventListener('drop', (e) => {
    e.preventDefault();
    const id = e.dataTransfer.getData('text/plain');
    const card = document.getElementById(id);
    if (card) { col.append(card); L({t: 'drop', id, v: col.id}); }
  });
}
for (const card of document.querySelectorAll('.card')) card.addEventListener('dragstart', (e) => { e.dataTransfer.setData('text/plain', card.id); e.dataTransfer.effectAllowed = 'move'; });
// A pointer-driven slider: no HTML5 drag, only mouse events.
const knob = document.getElementById('knob');
let grab = null;
knob.addEventListener('mousedown', (e) => { grab = e.clientX - knob.offsetLeft; e.preventDefault(); });
addEventListener('mousemove', (e) => { if (grab !== null) knob.style.left = Math.max(0, Math.min(370, e.clientX - grab)) + 'px'; });
addEventListener('mouseup', () => { if (grab !== null) { grab = null; L({t: 'slid', x: knob.offsetLeft}); } });
</script></body></html>`

const hoverPage = `<!doctype html><html><head><title>Menu</title><style>
body{margin:0;font:16px sans-serif} nav ul{list-style:none;margin:0;padding:0} nav>ul>li{display:inline-block;position:relative;padding:10px 20px;background:#ddd}
nav li ul{display:none;position:absolute;left:0;top:100%;background:#fff;border:1px solid #999;min-width:160px}
nav li:hover > ul{display:block} nav li ul li{padding:8px}
</style></head><body>` + recorder + `
<nav aria-label="Main"><ul><li id="prod">Products<ul><li><a href="#laptops" onclick="L({t:'menu',v:'laptops'})">Laptops</a></li></ul></li>
<li id="acct">Account<ul><li><a href="#settings" id="settings" onclick="L({t:'menu',v:'settings'})">Settings</a></li><li><a href="#logout">Log out</a></li></ul></li></ul></nav>
<p style="margin-top:200px">Body text</p></body></html>`

// editorPage is a rich-text editor that keeps its own model: it handles
// beforeinput itself and renders the model, as modern editors do, so
// setting the DOM's text does not reach it.
const editorPage = `<!doctype html><html><head><title>Editor</title></head><body>` + recorder + `
<h1>Notes</h1><div id="ed" contenteditable="true" role="textbox" aria-label="Note editor" style="border:1px solid #999;min-height:80px;padding:6px"><p>Draft</p></div>
<script>
const ed = document.getElementById('ed');
window.model = ['Draft'];
const render = () => {
  ed.replaceChildren(...window.model.map((t) => { const p = document.createElement('p'); p.textContent = t || '\u200b'; return p; }));
  const last = ed.lastChild; const r = document.createRange(); r.selectNodeContents(last); r.collapse(false);
  const s = getSelection(); s.removeAllRanges(); s.addRange(r);
};
const clean = (t) => t.replace(/\u200b/g, '').trim();
const selectedAll = () => { const s = getSelection(); return s.rangeCount > 0 && clean(s.toString()) !== '' && clean(s.toString()) === clean(ed.innerText); };
ed.addEventListener('beforeinput', (e) => {
  e.preventDefault();
  if (selectedAll() && (e.inputType.startsWith('insert') || e.inputType.startsWith('delete'))) { window.model = ['']; if (e.inputType.startsWith('delete')) { render(); return; } }
  if (e.inputType === 'insertText' || e.inputType === 'insertReplacementText') window.model[window.model.length - 1] += e.data;
  else if (e.inputType === 'insertParagraph') window.model.push('');
  else if (e.inputType === 'deleteContentBackward') { const i = window.model.length - 1; window.model[i] = window.model[i].slice(0, -1); }
  L({t: 'model', v: JSON.stringify(window.model)});
  render();
});
</script></body></html>`

const keysPage = `<!doctype html><html><head><title>Keys</title></head><body>` + recorder + `
<input id="a" aria-label="First"> <input id="b" aria-label="Second"> <input id="c" aria-label="Third">
<div id="palette" role="dialog" aria-label="Command palette" hidden><input id="cmd" aria-label="Command"></div>
<script>
addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key === 'k') {
    e.preventDefault();
    document.getElementById('palette').hidden = false;
    document.getElementById('cmd').focus();
    L({t: 'palette'});
  }
});
</script></body></html>`

const multiPage = `<!doctype html><html><head><title>Toppings</title></head><body>` + recorder + `
<label>Toppings <select id="top" multiple size="5"><option value="ch">Cheese</option><option value="mu">Mushrooms</option>
<option value="ol">Olives</option><option value="an" disabled>Anchovies (sold out)</option><option value="pe">Peppers</option></select></label>
<label>Size <select id="size"><option value="s">Small</option><option value="m">Medium</option><option value="l">Large</option></select></label>
</body></html>`

// tallNoise is a page of random pixels several screens tall: the worst
// case for a full-page JPEG's size.
const tallNoise = `<!doctype html><html><head><title>Tall noise</title><style>body{margin:0}</style></head><body>
<canvas id="c"></canvas><script>
const c = document.getElementById('c'); c.width = innerWidth; c.height = 6000;
const x = c.getContext('2d'); const d = x.createImageData(c.width, c.height);
let s = 987; for (let i = 0; i < d.data.length; i++) { s = (s * 1103515245 + 12345) & 0x7fffffff; d.data[i] = i % 4 === 3 ? 255 : s >> 16 & 255; }
x.putImageData(d, 0, 0);</script></body></html>`

// manyFrames has n sandboxed frames, each a document of its own.
func manyFrames(n int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Many frames</title></head><body>`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<iframe sandbox title="Frame %d" srcdoc="<p>Inside frame %d</p>" style="width:80px;height:40px"></iframe>`, i, i)
	}
	b.WriteString(`</body></html>`)
	return b.String()
}

func reachPages(mux *http.ServeMux, html func(string) http.HandlerFunc) {
	mux.HandleFunc("/frames/top", html(framesTop))
	mux.HandleFunc("/frames/child", html(framesChild))
	mux.HandleFunc("/frames/leaf", html(framesLeaf))
	mux.HandleFunc("/rows", html(rowsPage()))
	mux.HandleFunc("/spans", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, manySpans(n))
	})
	mux.HandleFunc("/dnd", html(dndPage))
	mux.HandleFunc("/hover", html(hoverPage))
	mux.HandleFunc("/editor", html(editorPage))
	mux.HandleFunc("/keys", html(keysPage))
	mux.HandleFunc("/multi", html(multiPage))
	mux.HandleFunc("/tallnoise", html(tallNoise))
	mux.HandleFunc("/manyframes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, manyFrames(n))
	})
}
