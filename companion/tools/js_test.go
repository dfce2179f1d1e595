package tools_test

import (
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

func TestJavaScriptTool(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:scripter", "scripter")
	tab := r.newTab(s, "/text")
	for _, tc := range []struct{ code, want string }{
		{"1 + 2", "3"},
		{"document.title", "Article"},
		{"({a: 1, b: [true, null], c: 'x'})", "{\n \"a\": 1,\n \"b\": [\n  true,\n  null\n ],\n \"c\": \"x\"\n}"},
		{"await new Promise(r => setTimeout(() => r('later'), 5))", "later"},
		{"return document.querySelectorAll('p').length", "2"},
		{"undefined", "undefined"},
		{"null", "null"},
		{"NaN", "NaN"},
		{"10n ** 20n", "100000000000000000000n"},
		{"document.querySelector('h1')", "\"<h1>The headline</h1>\""},
		{"let v = 5; v * 2", "10"},
	} {
		if got := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": tc.code}); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.code, got, tc.want)
		}
	}
	msg := r.fails(s, "javascript_tool", map[string]any{"tabId": tab, "text": "nope.missing"}, wire.CodeScriptError)
	if !strings.Contains(msg, "ReferenceError") || !strings.Contains(msg, "nope") {
		t.Fatalf("exception text: %s", msg)
	}
	msg = r.fails(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await Promise.reject(new Error('async boom'))"}, wire.CodeScriptError)
	if !strings.Contains(msg, "async boom") {
		t.Fatalf("rejection text: %s", msg)
	}
	// Cycles do not break serialization.
	out := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "const o = {name: 'loop'}; o.self = o; o"})
	if !strings.Contains(out, "[circular]") {
		t.Fatalf("cyclic object: %s", out)
	}
}

// What a script returns is released in the page once the tool has read it:
// an object held only by the tool's result, and one thrown, can be
// collected afterwards. A primitive result holds nothing, and the check
// runs on the same page after one.
func TestJavaScriptToolReleasesItsObjects(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:releaser", "releaser")
	tab := r.newTab(s, "/text")
	for _, tc := range []struct{ name, script string }{
		// Inside functions: a top-level const would live on as a binding of
		// the page's REPL scope.
		{"returned", "(() => { const o = {payload: 'x'.repeat(1000)}; window.__probe = new WeakRef(o); return o })()"},
		{"thrown", "(() => { const e = new Error('kept?'); window.__probe = new WeakRef(e); throw e })()"},
		{"awaited", "window.__probe = null; new Promise(r => { const o = {n: 1}; window.__probe = new WeakRef(o); r(o) })"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.call(s, "javascript_tool", map[string]any{"tabId": tab, "text": tc.script})
			if got := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "1 + 1"}); got != "2" {
				t.Fatalf("1 + 1 = %q", got)
			}
			if _, err := shared.hub.CDP(ctxFor(t), tab, "HeapProfiler.collectGarbage", nil, "", "releaser"); err != nil {
				t.Fatal(err)
			}
			if got := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "window.__probe.deref() === undefined"}); got != "true" {
				t.Errorf("the %s object is still alive after the tool answered and the page collected garbage", tc.name)
			}
		})
	}
}

// Where the page cannot carry the guard (Firefox's adapter), javascript_tool
// asks the isolated world first: a tab that left the origin the agent last
// saw gets navigated_away and the script is never sent.
func TestJavaScriptGuardOutsideChromium(t *testing.T) {
	c := newCompanionSide(t, 0)
	b := newFakeBrowser(t, "fox", wire.TabInfo{ID: 1, URL: "https://shop.example/cart", Title: "Cart", Shared: true, WindowID: 1})
	b.hello.BrowserEngine = wire.EngineFirefox
	b.connect(c)
	tab := c.hub.Tabs()[0].ID
	s := c.e.NewSession("agent:a1", "alice")
	c.ok(t, s, "read_page", map[string]any{"tabId": tab})
	b.page.mu.Lock()
	b.page.href = "https://evil.example/"
	b.page.calls = nil
	b.page.mu.Unlock()
	msg := wantCode(t, c.call(t, s, "javascript_tool", map[string]any{"tabId": tab, "text": "document.cookie"}), wire.CodeNavigatedAway)
	if !strings.Contains(msg, "https://shop.example") || !strings.Contains(msg, "https://evil.example") {
		t.Fatalf("message does not name both origins: %s", msg)
	}
	if b.page.called("Runtime.evaluate") {
		t.Fatal("the script was sent to the new page")
	}
}
