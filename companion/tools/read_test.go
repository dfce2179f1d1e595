package tools_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestReadPage(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:reader", "reader")
	tab := r.newTab(s, "/form")

	full := r.ok(s, "read_page", map[string]any{"tabId": tab})
	for _, want := range []string{`heading "Sign up"`, `textbox "Email"`, `type=email`, `combobox "Country"`, `checkbox "I agree"`, `radio "Free"`, `checked`, `link "About us"`, `href=/about`, `text "This paragraph will be removed."`, `textbox "Notes"`} {
		if !strings.Contains(full, want) {
			t.Errorf("read_page lacks %s:\n%s", want, full)
		}
	}

	t.Run("refs are stable", func(t *testing.T) {
		again := r.ok(s, "read_page", map[string]any{"tabId": tab})
		if refFor(t, full, `textbox "Email"`) != refFor(t, again, `textbox "Email"`) {
			t.Fatalf("the same element got a new ref:\n%s\n---\n%s", full, again)
		}
		inter := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
		if refFor(t, full, `button "Create account"`) != refFor(t, inter, `button "Create account"`) {
			t.Fatal("interactive filter renumbered refs")
		}
	})

	t.Run("interactive filter lists only controls", func(t *testing.T) {
		inter := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
		if strings.Contains(inter, "heading") || strings.Contains(inter, "text \"") {
			t.Fatalf("interactive output has non-controls:\n%s", inter)
		}
		lines := 0
		for _, l := range strings.Split(inter, "\n") {
			if refRE.MatchString(l) {
				lines++
			}
		}
		// email, password, bio, country, tags, agree, free, pro, notes, button, link
		if lines != 11 {
			t.Fatalf("%d interactive lines, want 11:\n%s", lines, inter)
		}
	})

	t.Run("ref_id reads a subtree", func(t *testing.T) {
		footer := refFor(t, full, "contentinfo")
		sub := r.ok(s, "read_page", map[string]any{"tabId": tab, "ref_id": footer})
		if !strings.Contains(sub, "About us") || strings.Contains(sub, "Sign up") {
			t.Fatalf("subtree:\n%s", sub)
		}
	})

	t.Run("stale ref", func(t *testing.T) {
		p := regexp.MustCompile(`ref_\d+`).FindString(r.ok(s, "find", map[string]any{"tabId": tab, "query": "paragraph will be removed"}))
		r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "document.getElementById('gone').remove()"})
		msg := r.fails(s, "computer", map[string]any{"action": "scroll_to", "tabId": tab, "ref": p}, wire.CodeBadParams)
		if !strings.Contains(msg, "stale") {
			t.Fatalf("stale ref error: %s", msg)
		}
		r.fails(s, "read_page", map[string]any{"tabId": tab, "ref_id": p}, wire.CodeBadParams)
		r.fails(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "ref": "ref_99999"}, wire.CodeBadParams)
	})

	t.Run("refs die with the document", func(t *testing.T) {
		ref := refFor(t, full, `textbox "Email"`)
		r.ok(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/form"})
		msg := r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": ref, "value": "x"}, wire.CodeBadParams)
		if !strings.Contains(msg, "stale") {
			t.Fatal(msg)
		}
	})

	t.Run("max_chars and depth", func(t *testing.T) {
		cut := r.ok(s, "read_page", map[string]any{"tabId": tab, "max_chars": 200})
		if len(cut) > 400 || !strings.Contains(cut, "max_chars") {
			t.Fatalf("max_chars output (%d):\n%s", len(cut), cut)
		}
		shallow := r.ok(s, "read_page", map[string]any{"tabId": tab, "depth": 1})
		if strings.Contains(shallow, "Email") {
			t.Fatalf("depth 1 went deep:\n%s", shallow)
		}
	})
}

func TestReadPageCompact(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:compact", "compact")
	tab := r.newTab(s, "/big")
	var elements, interactive int
	r.js(s, tab, "document.body.querySelectorAll('*').length", &elements)
	r.js(s, tab, "document.querySelectorAll('a[href],button,input,select,textarea').length", &interactive)
	if elements < 195 || elements > 215 {
		t.Fatalf("the big page has %d elements", elements)
	}
	out := r.ok(s, "read_page", map[string]any{"tabId": tab})
	if len(out) > 4500 {
		t.Fatalf("read_page of a %d-element page is %d chars:\n%s", elements, len(out), out)
	}
	refs := map[string]bool{}
	for _, m := range refRE.FindAllStringSubmatch(out, -1) {
		refs[m[1]] = true
	}
	inter := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	n := 0
	for _, m := range refRE.FindAllStringSubmatch(inter, -1) {
		n++
		if !refs[m[1]] {
			t.Errorf("interactive %s missing from the full tree", m[1])
		}
	}
	if n != interactive {
		t.Fatalf("%d interactive refs for %d controls", n, interactive)
	}
	t.Logf("%d elements, %d controls: read_page %d chars, interactive %d chars", elements, interactive, len(out), len(inter))
}

var findLineRE = regexp.MustCompile(`(?m)^(ref_\d+) (\S+) "([^"]*)".* at \((\d+), (\d+)\)`)

func TestFind(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:finder", "finder")
	tab := r.newTab(s, "/many")
	out := r.ok(s, "find", map[string]any{"tabId": tab, "query": "item"})
	lines := findLineRE.FindAllStringSubmatch(out, -1)
	if len(lines) != 20 || !strings.Contains(out, "of 60") {
		t.Fatalf("find returned %d matches:\n%s", len(lines), out)
	}
	out = r.ok(s, "find", map[string]any{"tabId": tab, "query": "search box"})
	m := findLineRE.FindStringSubmatch(out)
	if m == nil || m[2] != "textbox" || m[3] != "Search the catalogue" {
		t.Fatalf("find search box:\n%s", out)
	}
	// The coordinates find reports are where a click lands on the element.
	var x, y int
	fmt.Sscan(m[4], &x)
	fmt.Sscan(m[5], &y)
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{x, y}})
	var focused string
	r.js(s, tab, "document.activeElement.id", &focused)
	if focused != "q" {
		t.Fatalf("clicking find's coordinates focused %q", focused)
	}
	out = r.ok(s, "find", map[string]any{"tabId": tab, "query": "Item 42"})
	if m := findLineRE.FindStringSubmatch(out); m == nil || m[3] != "Item 42" {
		t.Fatalf("exact name is not first:\n%s", out)
	}
	out = r.ok(s, "find", map[string]any{"tabId": tab, "query": "zebra"})
	if !strings.Contains(out, "Nothing") {
		t.Fatal(out)
	}
}

func TestGetPageText(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:text", "text")
	tab := r.newTab(s, "/text")
	out := r.ok(s, "get_page_text", map[string]any{"tabId": tab})
	head := strings.Index(out, "The headline")
	side := strings.Index(out, "Sidebar advert")
	if !strings.HasPrefix(out, "Article\n") || head < 0 || side < 0 || head > side || !strings.Contains(out, "Second paragraph.") || !strings.Contains(out, "Copyright footer") {
		t.Fatalf("page text:\n%s", out)
	}
}
