package tools_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// frameLog is an entry of the frames page's window.__log: what a frame
// reported to the top page.
type frameLog struct {
	T       string `json:"t"`
	Name    string `json:"name"`
	V       string `json:"v"`
	Trusted bool   `json:"trusted"`
	Origin  string `json:"origin"`
}

// waitFrameLog waits for the frames page to record an entry of kind t from
// frame name: frames report by postMessage, which arrives a task later.
func (r *rig) waitFrameLog(s *tools.Session, tab int, t, name string) frameLog {
	r.tb.Helper()
	raw := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": `new Promise((resolve, reject) => {
		const seen = () => window.__log.find((e) => e.t === ` + jsQuote(t) + ` && e.name === ` + jsQuote(name) + `);
		const check = () => { const e = seen(); if (e) { removeEventListener('message', tick); clearTimeout(timer); resolve(JSON.stringify(e)); } };
		const tick = () => setTimeout(check, 0);
		const timer = setTimeout(() => reject(new Error('no ' + ` + jsQuote(t+" from "+name) + `)), 10000);
		addEventListener('message', tick);
		check();
	})`})
	var e frameLog
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		r.tb.Fatalf("frame log entry %q: %v", raw, err)
	}
	return e
}

func jsQuote(s string) string {
	b, _ := jsonMarshal(s)
	return string(b)
}

func framesURL(r *rig) string {
	site := strings.Replace(r.alt, "127.0.0.1", "localhost", 1)
	return "/frames/top?alt=" + r.alt + "&site=" + site
}

// waitFramesLoaded waits until every frame of the frames page has said it
// is ready, nested ones included.
func (r *rig) waitFramesLoaded(s *tools.Session, tab int) {
	r.tb.Helper()
	for _, name := range []string{"same", "alt", "site", "sandbox", "leaf"} {
		r.waitFrameLog(s, tab, "ready", name)
	}
}

func TestFramesAndShadowDOM(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:frames", "frames")
	tab := r.newTab(s, framesURL(r))
	r.waitFramesLoaded(s, tab)

	tree := r.ok(s, "read_page", map[string]any{"tabId": tab})
	// Same-origin frames and shadow roots are walked with the page: main
	// refs. Frames of other origins, in the page's process or their own,
	// and sandboxed ones, get numbered refs.
	for _, c := range []struct {
		line string
		ref  string
	}{
		{`heading "Child same"`, `^ref_\d+$`},
		{`textbox "Shadow email"`, `^ref_\d+$`},
		{`heading "Child alt"`, `^ref_f\d+_\d+$`},
		{`heading "Child site"`, `^ref_f\d+_\d+$`},
		{`button "Sandboxed button"`, `^ref_f\d+_\d+$`},
		{`button "Leaf button"`, `^ref_f\d+_\d+$`},
	} {
		if ref := refFor(t, tree, c.line); !regexp.MustCompile(c.ref).MatchString(ref) {
			t.Errorf("%s has ref %s, want %s", c.line, ref, c.ref)
		}
	}
	if !strings.Contains(tree, `text "Slotted light text"`) {
		t.Errorf("slotted light DOM text missing:\n%s", tree)
	}
	t.Run("refs are unique across frames", func(t *testing.T) {
		seen := map[string]bool{}
		for _, ref := range anyRefRE.FindAllString(tree, -1) {
			if seen[ref] {
				t.Fatalf("%s appears twice:\n%s", ref, tree)
			}
			seen[ref] = true
		}
		if len(seen) < 20 {
			t.Fatalf("only %d refs:\n%s", len(seen), tree)
		}
	})
	t.Run("frame content sits under its iframe", func(t *testing.T) {
		i, j := strings.Index(tree, `iframe "Alt frame"`), strings.Index(tree, `heading "Child alt"`)
		k := strings.Index(tree, `iframe "Sandboxed"`)
		if i < 0 || j < i || k < j {
			t.Fatalf("alt frame content is not between its iframe and the next:\n%s", tree)
		}
	})
	t.Run("refs stay stable", func(t *testing.T) {
		again := r.ok(s, "read_page", map[string]any{"tabId": tab})
		for _, l := range []string{`heading "Child alt"`, `button "site button"`, `button "Shadow go"`, `button "Leaf button"`} {
			if a, b := refFor(t, tree, l), refFor(t, again, l); a != b {
				t.Errorf("%s: %s, then %s", l, a, b)
			}
		}
	})

	t.Run("clicks by ref land in every frame", func(t *testing.T) {
		for _, c := range []struct{ line, name string }{
			{`button "same button"`, "same"},
			{`button "alt button"`, "alt"},
			{`button "Sandboxed button"`, "sandbox"},
			{`button "site button"`, "site"},
			{`button "Leaf button"`, "leaf"},
			{`button "Shadow go"`, "shadow"},
		} {
			out := r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, c.line)})
			if strings.Contains(out, "covers") {
				t.Errorf("%s: %s", c.line, out)
			}
			if e := r.waitFrameLog(s, tab, "click", c.name); !e.Trusted {
				t.Errorf("%s: the click was not a real one: %+v", c.line, e)
			}
		}
	})

	t.Run("form_input in frames and shadow roots", func(t *testing.T) {
		r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": refFor(t, tree, `textbox "alt field"`), "value": "from the top"})
		if e := r.waitFrameLog(s, tab, "change", "alt"); e.V != "from the top" {
			t.Fatalf("alt frame got %+v", e)
		}
		r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": refFor(t, tree, `textbox "site field"`), "value": "out of process"})
		if e := r.waitFrameLog(s, tab, "change", "site"); e.V != "out of process" {
			t.Fatalf("site frame got %+v", e)
		}
		r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": refFor(t, tree, `textbox "Shadow email"`), "value": "ada@example.test"})
		r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `button "Shadow go"`)})
		var v string
		r.js(s, tab, "window.__log.filter((e) => e.name === 'shadow').pop().v", &v)
		if v != "ada@example.test" {
			t.Fatalf("shadow input holds %q", v)
		}
	})

	t.Run("find looks into frames with their offsets", func(t *testing.T) {
		r.ok(s, "computer", map[string]any{"action": "scroll_to", "tabId": tab, "ref": refFor(t, tree, `button "site button"`)})
		found := r.ok(s, "find", map[string]any{"tabId": tab, "query": "site button"})
		m := regexp.MustCompile(`(ref_f\d+_\d+) button "site button" at \((\d+), (\d+)\)\n?`).FindStringSubmatch(found)
		if m == nil || strings.Contains(m[0], "off screen") {
			t.Fatalf("find:\n%s", found)
		}
		r.clearFrameLog(s, tab)
		// A click at find's coordinate lands on the button inside the
		// out-of-process frame.
		r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{atoi(t, m[2]), atoi(t, m[3])}})
		r.waitFrameLog(s, tab, "click", "site")
	})

	t.Run("page text includes frames", func(t *testing.T) {
		text := r.ok(s, "get_page_text", map[string]any{"tabId": tab})
		for _, want := range []string{"Secret text of same", "Secret text of alt", "Secret text of site", "Sandboxed button", "Leaf button", "Shadow email", "Slotted light text"} {
			if !strings.Contains(text, want) {
				t.Errorf("page text lacks %q:\n%s", want, text)
			}
		}
		if strings.ContainsAny(text, "\ue000\ue001") {
			t.Errorf("frame marks left in the text:\n%q", text)
		}
		if a, b := strings.Index(text, "Secret text of alt"), strings.Index(text, "Sandboxed button"); a < 0 || b < a {
			t.Errorf("frame text out of page order:\n%s", text)
		}
	})

	t.Run("element screenshot in an out-of-process frame", func(t *testing.T) {
		res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab, "ref": refFor(t, tree, `heading "Child site"`)})
		if res.IsError || len(res.Content) != 2 {
			t.Fatalf("element screenshot: %s", text(res))
		}
	})

	t.Run("unknown and stale refs", func(t *testing.T) {
		msg := r.fails(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": "ref_999999"}, wire.CodeBadParams)
		if !strings.Contains(msg, "never issued") {
			t.Errorf("unknown main ref: %s", msg)
		}
		msg = r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": "ref_f999_1", "value": "x"}, wire.CodeBadParams)
		if !strings.Contains(msg, "never issued") {
			t.Errorf("unknown frame: %s", msg)
		}
		altRef := refFor(t, tree, `heading "Child alt"`)
		fkey := regexp.MustCompile(`^ref_(f\d+)_`).FindStringSubmatch(altRef)[1]
		msg = r.fails(s, "computer", map[string]any{"action": "scroll_to", "tabId": tab, "ref": "ref_" + fkey + "_99999"}, wire.CodeBadParams)
		if !strings.Contains(msg, "never issued") {
			t.Errorf("unknown ref of a known frame: %s", msg)
		}
		// The alt frame loads a new document: its old refs are stale, not unknown.
		r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": `new Promise((resolve) => {
			const f = document.getElementById('alt');
			f.addEventListener('load', () => resolve(1), {once: true});
			f.src += '&again=1';
		})`})
		msg = r.fails(s, "computer", map[string]any{"action": "scroll_to", "tabId": tab, "ref": altRef}, wire.CodeBadParams)
		if !strings.Contains(msg, "stale") {
			t.Fatalf("a ref of the frame's old document: %s", msg)
		}
		// The iframe is removed: every ref of its frame is stale.
		r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "document.getElementById('sandboxed').remove(); 0"})
		msg = r.fails(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `button "Sandboxed button"`)}, wire.CodeBadParams)
		if !strings.Contains(msg, "stale") {
			t.Errorf("a ref of a removed frame: %s", msg)
		}
	})
}

func (r *rig) clearFrameLog(s *tools.Session, tab int) {
	r.tb.Helper()
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "window.__log = []; 0"})
}

func atoi(tb testing.TB, s string) int {
	tb.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			tb.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
