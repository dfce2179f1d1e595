package tools_test

import (
	"bytes"
	"encoding/base64"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestDragAndDropByRef(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:dragger", "dragger")
	tab := r.newTab(s, "/dnd")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab})

	// An HTML5 drag: Chromium hands it over and the engine drops it.
	out := r.ok(s, "computer", map[string]any{"action": "left_click_drag", "tabId": tab, "ref": refFor(t, tree, `"Write report"`), "target_ref": refFor(t, tree, `region "Done"`)})
	drops := only(r.log(s, tab), "drop")
	if len(drops) != 1 || drops[0].ID != "c1" || drops[0].Value != "done" {
		t.Fatalf("drops %+v after: %s", drops, out)
	}
	var parent string
	r.js(s, tab, "document.getElementById('c1').parentElement.id", &parent)
	if parent != "done" {
		t.Fatalf("the card is in %q", parent)
	}

	// A pointer-driven slider has no HTML5 drag: the mouse moves it.
	r.clearLog(s, tab)
	r.ok(s, "computer", map[string]any{"action": "left_click_drag", "tabId": tab, "ref": refFor(t, tree, `slider "Volume knob"`), "coordinate": []int{300, 435}})
	slid := only(r.log(s, tab), "slid")
	if len(slid) != 1 || slid[0].X < 200 {
		t.Fatalf("slider moves: %+v", slid)
	}
	if drops := only(r.log(s, tab), "drop"); len(drops) != 0 {
		t.Fatalf("a mouse drag dropped: %+v", drops)
	}

	// A target two screens below: the drag starts where the card is, and
	// the page scrolls to the column while the drag is held.
	far := r.newTab(s, "/dnd?far")
	ftree := r.ok(s, "read_page", map[string]any{"tabId": far})
	r.ok(s, "computer", map[string]any{"action": "left_click_drag", "tabId": far, "ref": refFor(t, ftree, `"Call Ada"`), "target_ref": refFor(t, ftree, `region "Done"`)})
	if drops := only(r.log(s, far), "drop"); len(drops) != 1 || drops[0].ID != "c2" || drops[0].Value != "done" {
		t.Fatalf("drops on the far column: %+v", drops)
	}

	r.fails(s, "computer", map[string]any{"action": "left_click_drag", "tabId": tab, "ref": refFor(t, tree, `"Call Ada"`)}, wire.CodeBadParams)
	r.fails(s, "computer", map[string]any{"action": "left_click_drag", "tabId": tab, "target_ref": refFor(t, tree, `region "Done"`)}, wire.CodeBadParams)
}

func TestHoverRevealsACSSMenu(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:hover", "hover")
	tab := r.newTab(s, "/hover")
	if found := r.ok(s, "find", map[string]any{"tabId": tab, "query": "Settings link"}); strings.Contains(found, `link "Settings"`) {
		t.Fatalf("the menu shows before any hover:\n%s", found)
	}
	acct := refFor(t, r.ok(s, "find", map[string]any{"tabId": tab, "query": "Account"}), `"Account`)
	r.ok(s, "computer", map[string]any{"action": "hover", "tabId": tab, "ref": acct})
	found := r.ok(s, "find", map[string]any{"tabId": tab, "query": "Settings link"})
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, found, `link "Settings"`)})
	if m := only(r.log(s, tab), "menu"); len(m) != 1 || m[0].Value != "settings" {
		t.Fatalf("menu clicks: %+v", m)
	}
}

func TestTypingKeepsTheEditorsOwnHandling(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:editor", "editor")
	tab := r.newTab(s, "/editor")
	ed := refFor(t, r.ok(s, "read_page", map[string]any{"tabId": tab}), `textbox "Note editor"`)
	model := func() string {
		var m []string
		r.js(s, tab, "window.model", &m)
		return strings.Join(m, "|")
	}
	out := r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": ed, "value": "Buy milk"})
	if got := model(); got != "Buy milk" {
		t.Fatalf("after form_input (%s) the editor's model is %q", out, got)
	}
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": ed})
	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "End"})
	r.ok(s, "computer", map[string]any{"action": "type", "tabId": tab, "text": " and eggs\nCall Ada"})
	if got := model(); got != "Buy milk and eggs|Call Ada" {
		t.Fatalf("after typing the model is %q", got)
	}
	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "BackSpace"})
	if got := model(); got != "Buy milk and eggs|Call Ad" {
		t.Fatalf("after a backspace the model is %q", got)
	}
}

func TestKeyChords(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:keys", "keys")
	tab := r.newTab(s, "/keys")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab})
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": refFor(t, tree, `textbox "Third"`)})
	active := func() string {
		var id string
		r.js(s, tab, "document.activeElement.id", &id)
		return id
	}
	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "Shift+Tab"})
	if a := active(); a != "b" {
		t.Fatalf("Shift+Tab moved focus to %q", a)
	}
	r.ok(s, "computer", map[string]any{"action": "key", "tabId": tab, "text": "Ctrl+K"})
	if p := only(r.log(s, tab), "palette"); len(p) != 1 || active() != "cmd" {
		t.Fatalf("Ctrl+K: palette %v, focus %q", p, active())
	}
	r.ok(s, "computer", map[string]any{"action": "type", "tabId": tab, "text": "deploy"})
	var v string
	r.js(s, tab, "document.getElementById('cmd').value", &v)
	if v != "deploy" {
		t.Fatalf("the palette holds %q", v)
	}
	keys := only(r.log(s, tab), "keydown")
	var k event
	for _, e := range keys {
		if e.Key == "k" {
			k = e
		}
	}
	if !k.Ctrl || k.Shift || k.Code != "KeyK" {
		t.Fatalf("Ctrl+K reached the page as %+v", k)
	}
}

func TestSelectByVisibleText(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:selects", "selects")
	tab := r.newTab(s, "/multi")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab})
	tops, size := refFor(t, tree, `listbox "Toppings"`), refFor(t, tree, `combobox "Size"`)
	selected := func() string {
		var v []string
		r.js(s, tab, "[...document.getElementById('top').selectedOptions].map((o) => o.value)", &v)
		return strings.Join(v, ",")
	}
	r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": tops, "value": "Cheese, Olives"})
	if got := selected(); got != "ch,ol" {
		t.Fatalf("toppings %q", got)
	}
	r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": tops, "value": []string{"Peppers", "mushrooms"}})
	if got := selected(); got != "mu,pe" {
		t.Fatalf("toppings %q", got)
	}
	msg := r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": tops, "value": []string{"Anchovies (sold out)"}}, wire.CodeBadParams)
	if !strings.Contains(msg, "disabled") || selected() != "mu,pe" {
		t.Fatalf("a disabled option: %s; selection %q", msg, selected())
	}
	r.ok(s, "form_input", map[string]any{"tabId": tab, "ref": size, "value": "Large"})
	r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": size, "value": []string{"Small", "Large"}}, wire.CodeBadParams)
	var got string
	r.js(s, tab, "document.getElementById('size').value", &got)
	if got != "l" {
		t.Fatalf("size %q", got)
	}
}

func jpegSize(t *testing.T, data string) (w, h int, size int) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height, len(data)
}

func TestFullPageAndElementScreenshots(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:shots", "shots")

	t.Run("full page shows the red box far down", func(t *testing.T) {
		tab := r.newTab(s, "/colors")
		res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab, "fullPage": true})
		if res.IsError || len(res.Content) != 2 {
			t.Fatalf("full page: %s", text(res))
		}
		raw, _ := base64.StdEncoding.DecodeString(res.Content[1].Data)
		img, err := jpeg.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		// The page is 4000 CSS px tall with the box at 1500..1600, 300..500.
		scale := float64(b.Dy()) / 4000
		if b.Dy() < 2*b.Dx() {
			t.Fatalf("a %d×%d image of a 4000 px tall page", b.Dx(), b.Dy())
		}
		red := img.At(int(400*scale), int(1550*scale))
		if rr, g, bb, _ := red.RGBA(); rr>>8 < 200 || g>>8 > 60 || bb>>8 > 60 {
			t.Fatalf("no red box at its place in the full page (%v): %s", red, text(res))
		}
		// The viewport's mapping for clicks is untouched.
		var sy float64
		r.js(s, tab, "scrollY", &sy)
		if sy != 0 {
			t.Fatalf("the page scrolled to %g", sy)
		}
	})

	t.Run("element", func(t *testing.T) {
		tab := r.newTab(s, "/colors")
		r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "document.getElementById('red').setAttribute('role', 'img'); document.getElementById('red').setAttribute('aria-label', 'Red box'); 0"})
		ref := refFor(t, r.ok(s, "find", map[string]any{"tabId": tab, "query": "Red box"}), `img "Red box"`)
		res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab, "ref": ref})
		if res.IsError || len(res.Content) != 2 {
			t.Fatalf("element: %s", text(res))
		}
		w, h, _ := jpegSize(t, res.Content[1].Data)
		// 200×100 CSS px, enlarged twice.
		if w != 400 || h != 200 {
			t.Fatalf("element screenshot is %d×%d", w, h)
		}
		raw, _ := base64.StdEncoding.DecodeString(res.Content[1].Data)
		img, _ := jpeg.Decode(bytes.NewReader(raw))
		if rr, g, _, _ := img.At(w/2, h/2).RGBA(); rr>>8 < 200 || g>>8 > 60 {
			t.Fatal("the element screenshot is not the red box")
		}
	})

	t.Run("a tall noisy page stays within the byte budget", func(t *testing.T) {
		tab := r.newTab(s, "/tallnoise")
		res := r.call(s, "computer", map[string]any{"action": "screenshot", "tabId": tab, "fullPage": true})
		if res.IsError {
			t.Fatal(text(res))
		}
		w, h, size := jpegSize(t, res.Content[1].Data)
		if size > 1<<20 || h > 6000 || w > 1400 {
			t.Fatalf("%d×%d, %d bytes of base64", w, h, size)
		}
		t.Logf("tall noise: %d×%d in %d bytes of base64", w, h, size)
	})
}
