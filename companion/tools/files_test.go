package tools_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/agentfiles"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// filesPage shows what its inputs and drop zone received, bytes included,
// so the tests read the page, not the tool's report.
const filesPage = `<!doctype html><html><head><title>Files</title></head><body>
<label>Single file <input type="file" id="one"></label>
<label>Many files <input type="file" id="many" multiple></label>
<div id="dz" role="region" aria-label="Drop here" style="width:300px;height:100px;background:#eef">Drop here</div>
<pre id="out"></pre>
<script>
window.__got = [];
const show = async (how, files) => {
  for (const f of files) {
    const v = await f.text();
    window.__got.push(how + ' ' + f.name + ' ' + f.type + ' ' + v);
    document.getElementById('out').textContent += how + ' ' + f.name + ': ' + v + '\n';
  }
};
for (const id of ['one', 'many']) document.getElementById(id).addEventListener('change', (e) => show(id, e.target.files));
const dz = document.getElementById('dz');
dz.addEventListener('dragover', (e) => e.preventDefault());
dz.addEventListener('drop', (e) => { e.preventDefault(); show('dropped', e.dataTransfer.files); });
</script></body></html>`

// waitPage changes later, by timers and by fetches the page makes.
const waitPage = `<!doctype html><html><head><title>Waits</title></head><body>
<button id="later" onclick="setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Order confirmed'; document.body.append(p); }, 400)">Load later</button>
<button id="route" onclick="setTimeout(() => history.pushState({}, '', '/wait/route/42'), 300)">Go to route</button>
<button id="fetch" onclick="fetch('/wait/slowapi').then((r) => r.text()).then((t) => { document.getElementById('got').textContent = t; })">Fetch</button>
<button id="send" disabled>Send</button>
<div id="spinner">Loading…</div>
<p id="got"></p>
<script>
setTimeout(() => { document.getElementById('send').disabled = false; document.getElementById('spinner').remove(); }, 600);
</script></body></html>`

const downloadPage = `<!doctype html><html><head><title>Reports</title></head><body>
<h1>Quarterly reports</h1>
<p>Confirmation of the figures</p>
<a id="csv" href="/dl/report.csv">Get report</a>
<a id="blob" href="/dl/plain.txt" download="notes.txt">Get notes</a>
</body></html>`

const reportCSV = "name,total\nada,42\n"

func filesPages(mux *http.ServeMux) {
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, body)
		}
	}
	mux.HandleFunc("/files", html(filesPage))
	mux.HandleFunc("/wait", html(waitPage))
	mux.HandleFunc("/wait/route/{n}", html(waitPage))
	mux.HandleFunc("/wait/slowapi", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond): // the server is slow; the test waits for the page, not for this
		case <-r.Context().Done():
		}
		io.WriteString(w, "api answered")
	})
	mux.HandleFunc("/downloads", html(downloadPage))
	mux.HandleFunc("/dl/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		io.WriteString(w, reportCSV)
	})
	mux.HandleFunc("/dl/plain.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "remember the milk")
	})
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func (r *rig) got(s *tools.Session, tab int) []string {
	r.tb.Helper()
	var got []string
	r.js(s, tab, "window.__got", &got)
	return got
}

func TestUploadFile(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:uploader", "uploader")
	tab := r.newTab(s, "/files")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	one, many := refFor(t, tree, `"Single file"`), refFor(t, tree, `"Many files"`)
	dz := regexp.MustCompile(`ref_\d+`).FindString(r.ok(s, "find", map[string]any{"tabId": tab, "query": "Drop here region"}))

	// Bytes: written into the agent's upload folder, then into the page.
	out := r.ok(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"name": "hello.txt", "mimeType": "text/plain", "data": b64("hello world")}}})
	if !strings.Contains(out, "hello.txt") {
		t.Errorf("upload_file answered %q", out)
	}
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "text": "one hello.txt: hello world", "timeout": 5})
	up, err := r.files.Folder("agent:uploader", agentfiles.Uploads)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(up, agentfiles.Sent, "*", "hello.txt")); len(m) != 1 {
		t.Fatalf("the upload folder holds %q", m)
	} else if b, err := os.ReadFile(m[0]); err != nil || string(b) != "hello world" {
		t.Fatalf("the upload folder holds %q, %v", b, err)
	}
	// The person's own file of that name is left alone.
	must(t, os.WriteFile(filepath.Join(up, "hello.txt"), []byte("the person's"), 0o600))
	r.ok(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"name": "hello.txt", "data": b64("hello again")}}})
	if b, _ := os.ReadFile(filepath.Join(up, "hello.txt")); string(b) != "the person's" {
		t.Fatalf("the person's file now holds %q", b)
	}
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "text": "one hello.txt: hello again", "timeout": 5})

	// Paths inside the upload folder, two at once into a multiple input.
	must(t, os.MkdirAll(filepath.Join(up, "notes"), 0o700))
	must(t, os.WriteFile(filepath.Join(up, "notes", "a.csv"), []byte("x,y"), 0o600))
	r.ok(s, "upload_file", map[string]any{"tabId": tab, "ref": many, "files": []map[string]any{{"path": "notes/a.csv"}, {"path": "hello.txt"}}})
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "text": "many hello.txt: the person's", "timeout": 5})
	if got := r.got(s, tab); len(got) != 4 || got[2] != "many a.csv text/csv x,y" || got[3] != "many hello.txt text/plain the person's" {
		t.Fatalf("the page got %q", got)
	}

	// A drop target by ref.
	r.ok(s, "upload_file", map[string]any{"tabId": tab, "ref": dz, "files": []map[string]any{{"name": "b.json", "data": b64(`{"b":1}`)}}})
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "text": `dropped b.json: {"b":1}`, "timeout": 5})

	// Refusals: nothing reaches the page.
	before := len(r.got(s, tab))
	r.fails(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"path": "hello.txt"}, {"path": "notes/a.csv"}}}, wire.CodeBadParams)
	r.fails(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"path": "missing.txt"}}}, wire.CodeBadParams)
	r.fails(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"data": b64("x")}}}, wire.CodeBadParams)
	r.fails(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"name": "x", "data": "not base64!"}}}, wire.CodeBadParams)
	r.fails(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{}}, wire.CodeBadParams)
	big := base64.StdEncoding.EncodeToString(make([]byte, 10<<20+1))
	out = r.fails(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"name": "big.bin", "data": big}}}, wire.CodeBadParams)
	if !strings.Contains(out, "10 MiB") {
		t.Errorf("the size refusal says %q", out)
	}
	if after := len(r.got(s, tab)); after != before {
		t.Fatalf("a refused upload reached the page: %d files, was %d", after, before)
	}
}

// The attack: an agent names a file outside its upload folder, by path
// climbing, by an absolute path, through a symlink it finds in its folder,
// or in another agent's folder. Each is refused, and no byte of the file
// reaches the page.
func TestUploadFileNeverLeavesTheAgentsFolder(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:mallory", "mallory")
	tab := r.newTab(s, "/files")
	one := refFor(t, r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"}), `"Single file"`)
	up, err := r.files.Folder("agent:mallory", agentfiles.Uploads)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Dir(r.files.Path())
	secret := filepath.Join(data, "linkauth.key")
	must(t, os.WriteFile(secret, []byte("the link key"), 0o600))
	other, err := r.files.Folder("agent:alice", agentfiles.Uploads)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(other, "alice.txt"), []byte("alice's"), 0o600))
	paths := []string{"../../../linkauth.key", "../../agent-alice/uploads/alice.txt", secret, "/etc/passwd", "./../uploads/../../../linkauth.key"}
	if runtime.GOOS != "windows" {
		must(t, os.Symlink(secret, filepath.Join(up, "innocent.txt")))
		must(t, os.Symlink(data, filepath.Join(up, "data")))
		paths = append(paths, "innocent.txt", "data/linkauth.key")
	}
	for _, p := range paths {
		out := r.fails(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"path": p}}}, wire.CodeBadParams)
		if strings.Contains(out, "the link key") {
			t.Fatalf("the refusal of %q shows the file: %s", p, out)
		}
	}
	// A name for bytes cannot climb out either: the file lands in the folder.
	r.ok(s, "upload_file", map[string]any{"tabId": tab, "ref": one, "files": []map[string]any{{"name": "../../../linkauth.key", "data": b64("overwritten?")}}})
	if b, _ := os.ReadFile(secret); string(b) != "the link key" {
		t.Fatalf("the link key was overwritten: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(up, agentfiles.Sent, "*", "linkauth.key")); len(m) != 1 {
		t.Fatalf("the bytes are not in the upload folder: %q", m)
	}
	got := r.got(s, tab)
	for _, g := range got {
		if strings.Contains(g, "the link key") || strings.Contains(g, "alice's") || strings.Contains(g, "root:") {
			t.Fatalf("the page received a file from outside the folder: %q", got)
		}
	}
	if len(got) != 1 {
		t.Fatalf("the page got %q, want only the bytes upload", got)
	}
}

func TestWaitFor(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:waiter", "waiter")
	tab := r.newTab(s, "/wait")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	send := refFor(t, tree, `"Send"`)

	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Load later"`)})
	out := r.ok(s, "wait_for", map[string]any{"tabId": tab, "text": "order CONFIRMED"})
	if !strings.Contains(out, "Done waiting") {
		t.Errorf("wait_for answered %q", out)
	}
	var has bool
	r.js(s, tab, "document.body.innerText.includes('Order confirmed')", &has)
	if !has {
		t.Fatal("wait_for returned before the text was there")
	}
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "ref": send, "state": "enabled"})
	r.js(s, tab, "!document.getElementById('send').disabled", &has)
	if !has {
		t.Fatal("wait_for enabled returned while the button was disabled")
	}
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "selector": "#spinner", "state": "gone"})
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "text": "Loading…", "state": "gone"})

	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Go to route"`)})
	out = r.ok(s, "wait_for", map[string]any{"tabId": tab, "url": "*/wait/route/*"})
	if !strings.Contains(out, "/wait/route/42") {
		t.Errorf("wait_for url answered %q", out)
	}

	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Fetch"`)})
	r.ok(s, "wait_for", map[string]any{"tabId": tab, "networkIdle": true})
	var got string
	r.js(s, tab, "document.getElementById('got').textContent", &got)
	if got != "api answered" {
		t.Fatalf("network idle came before the fetch finished: %q", got)
	}

	start := time.Now()
	out = r.fails(s, "wait_for", map[string]any{"tabId": tab, "text": "never on this page", "timeout": 0.5}, wire.CodeTimeout)
	if d := time.Since(start); d < 500*time.Millisecond || d > 5*time.Second {
		t.Errorf("a 0.5 s wait took %s", d)
	}
	if !strings.Contains(out, "never on this page") {
		t.Errorf("the timeout says %q", out)
	}
	r.fails(s, "wait_for", map[string]any{"tabId": tab}, wire.CodeBadParams)
	r.fails(s, "wait_for", map[string]any{"tabId": tab, "text": "a", "url": "b"}, wire.CodeBadParams)
	r.fails(s, "wait_for", map[string]any{"tabId": tab, "selector": "##", "timeout": 1}, wire.CodeBadParams)
	r.fails(s, "wait_for", map[string]any{"tabId": tab, "text": "x", "timeout": 61}, wire.CodeBadParams)
	other := r.e.NewSession("agent:other", "other")
	r.fails(other, "wait_for", map[string]any{"tabId": tab, "text": "x"}, wire.CodeTabNotInSession)
}

var dlIDRE = regexp.MustCompile(`download (dl_\d+)`)

func TestDownloads(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:fetcher", "fetcher")
	tab := r.newTab(s, "/downloads")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	out := r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Get report"`)})
	m := dlIDRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "report.csv") {
		t.Fatalf("the click's result does not name the download: %q", out)
	}
	id := m[1]
	out = r.ok(s, "downloads", map[string]any{"action": "wait", "id": id})
	if !strings.Contains(out, "complete, 18 bytes, text/csv") {
		t.Fatalf("downloads wait answered %q", out)
	}
	dir, err := r.files.Folder("agent:fetcher", agentfiles.Downloads)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.csv")); err != nil || string(b) != reportCSV {
		t.Fatalf("the downloads folder holds %q, %v", b, err)
	}
	out = r.ok(s, "downloads", map[string]any{"action": "read", "id": id})
	if !strings.HasSuffix(out, reportCSV[:len(reportCSV)-1]) && !strings.Contains(out, "ada,42") {
		t.Fatalf("downloads read answered %q", out)
	}
	out = r.ok(s, "downloads", map[string]any{"action": "read", "id": id, "maxChars": 4})
	if !strings.Contains(out, "the first 4 of 18 characters") || strings.Contains(out, "ada") {
		t.Fatalf("a capped read answered %q", out)
	}
	out = r.ok(s, "downloads", map[string]any{"action": "list"})
	if !strings.Contains(out, id+" report.csv: complete") {
		t.Fatalf("downloads list answered %q", out)
	}

	// An <a download> link: no navigation at all.
	out = r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `"Get notes"`)})
	out2 := r.ok(s, "downloads", map[string]any{"action": "wait"})
	if !strings.Contains(out2, "notes.txt: complete, 17 bytes") {
		t.Fatalf("the click answered %q; the wait %q", out, out2)
	}

	// A PDF of the page, read back.
	out = r.ok(s, "downloads", map[string]any{"action": "save_pdf", "tabId": tab})
	m = regexp.MustCompile(`as (dl_\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("save_pdf answered %q", out)
	}
	out = r.ok(s, "downloads", map[string]any{"action": "read", "id": m[1]})
	if !strings.Contains(out, "Quarterly reports") || !strings.Contains(out, "Confirmation of the figures") {
		t.Fatalf("the PDF's text is %q", out)
	}

	// Another agent sees none of it.
	other := r.e.NewSession("agent:other", "other")
	if out := r.ok(other, "downloads", map[string]any{"action": "list"}); !strings.Contains(out, "No downloads") {
		t.Fatalf("another agent lists %q", out)
	}
	r.fails(other, "downloads", map[string]any{"action": "read", "id": id}, wire.CodeBadParams)
	r.fails(other, "downloads", map[string]any{"action": "wait", "timeout": 0.2}, wire.CodeTimeout)
	r.fails(s, "downloads", map[string]any{"action": "save_pdf"}, wire.CodeBadParams)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The new tools follow every rule of the catalog: pause, Reins' own tools
// hidden from a paired backend's session, tabs of other agents refused,
// Activity recorded without arguments.
func TestFilesAndWaitsFollowTheRules(t *testing.T) {
	f := newFake(t, []wire.TabInfo{{ID: 1, URL: "https://shop.example/cart", Title: "Cart", Shared: true, WindowID: 1}})
	s := f.e.NewSession("agent:a", "a")
	calls := map[string]any{
		"upload_file": map[string]any{"tabId": 1, "ref": "ref_1", "files": []map[string]any{{"name": "a.txt", "data": b64("secret bytes")}}},
		"wait_for":    map[string]any{"tabId": 1, "text": "x"},
		"downloads":   map[string]any{"action": "list"},
	}
	f.paused.Store(true)
	for tool, args := range calls {
		wantCode(t, f.call(t, s, tool, args), wire.CodePaused)
	}
	f.paused.Store(false)
	backend := f.e.NewSession("backend:b", "Brand")
	backend.OperatorCatalog = true
	for tool, args := range calls {
		wantCode(t, f.call(t, backend, tool, args), wire.CodeUnknownTool)
	}
	// The bounds of the schemas: at most 20 files a call, waits of at most
	// 60 s (wait_for) and 120 s (downloads wait).
	many := make([]map[string]any, 21)
	for i := range many {
		many[i] = map[string]any{"name": fmt.Sprint("f", i), "data": b64("x")}
	}
	wantCode(t, f.call(t, s, "upload_file", map[string]any{"tabId": 1, "ref": "ref_1", "files": many}), wire.CodeBadParams)
	wantCode(t, f.call(t, s, "downloads", map[string]any{"action": "wait", "timeout": 121}), wire.CodeBadParams)
	wantCode(t, f.call(t, s, "wait_for", map[string]any{"tabId": 1, "text": "x", "timeout": 61}), wire.CodeBadParams)
	wantCode(t, f.call(t, s, "downloads", map[string]any{"action": "read", "maxChars": 50001, "id": "dl_1"}), wire.CodeBadParams)

	var acts []tools.Activity
	off := tools.NewEngine(tools.Options{Hub: f.hub, Logger: quietLogger(),
		Disabled:   func(tool string) error { return wire.Errorf(wire.CodeUnauthorized, "the person turned %s off", tool) },
		OnActivity: func(a tools.Activity) { acts = append(acts, a) }})
	defer off.Close()
	for tool, args := range calls {
		raw, _ := jsonMarshal(args)
		wantCode(t, off.Call(context.Background(), s, tool, raw), wire.CodeUnauthorized)
	}
	if len(acts) != len(calls) {
		t.Fatalf("%d activities for %d calls", len(acts), len(calls))
	}
	for _, a := range acts {
		if line := fmt.Sprintf("%+v", a); strings.Contains(line, "secret bytes") || strings.Contains(line, b64("secret bytes")) {
			t.Fatalf("an activity holds the call's arguments: %s", line)
		}
	}
}
