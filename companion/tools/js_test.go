package tools_test

import (
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/tools"
)

func TestJavaScriptTool(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("scripter")
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
	msg := r.fails(s, "javascript_tool", map[string]any{"tabId": tab, "text": "nope.missing"}, tools.CodeScriptError)
	if !strings.Contains(msg, "ReferenceError") || !strings.Contains(msg, "nope") {
		t.Fatalf("exception text: %s", msg)
	}
	msg = r.fails(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await Promise.reject(new Error('async boom'))"}, tools.CodeScriptError)
	if !strings.Contains(msg, "async boom") {
		t.Fatalf("rejection text: %s", msg)
	}
	// Cycles do not break serialization.
	out := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "const o = {name: 'loop'}; o.self = o; o"})
	if !strings.Contains(out, "[circular]") {
		t.Fatalf("cyclic object: %s", out)
	}
}
