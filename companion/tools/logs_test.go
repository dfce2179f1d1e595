package tools_test

import (
	"fmt"
	"strings"
	"testing"
)

func TestConsoleAndNetworkCapture(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:listener", "listener")
	tab := r.newTab(s, "/console")
	// The page sets __done after logging the fetch's answer. Console events
	// reach the engine before the answer to this call, on the same link.
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "await window.__done; 0"})

	all := r.ok(s, "read_console_messages", map[string]any{"tabId": tab})
	for _, want := range []string{"[log]", "hello from the page 42", "[warn]", "careful", "[error]", "something broke", "Uncaught Error: late failure"} {
		if !strings.Contains(all, want) {
			t.Errorf("console lacks %q:\n%s", want, all)
		}
	}
	errs := r.ok(s, "read_console_messages", map[string]any{"tabId": tab, "onlyErrors": true})
	if strings.Contains(errs, "hello from the page") || !strings.Contains(errs, "something broke") || !strings.Contains(errs, "late failure") {
		t.Fatalf("onlyErrors:\n%s", errs)
	}
	pat := r.ok(s, "read_console_messages", map[string]any{"tabId": tab, "pattern": "^care"})
	if !strings.Contains(pat, "careful") || strings.Contains(pat, "broke") {
		t.Fatalf("pattern:\n%s", pat)
	}
	lim := r.ok(s, "read_console_messages", map[string]any{"tabId": tab, "limit": 1})
	if strings.Count(lim, "\n") != 1 {
		t.Fatalf("limit 1:\n%s", lim)
	}
	r.ok(s, "read_console_messages", map[string]any{"tabId": tab, "clear": true})
	if after := r.ok(s, "read_console_messages", map[string]any{"tabId": tab}); strings.Contains(after, "careful") {
		t.Fatalf("clear kept messages:\n%s", after)
	}

	net := r.ok(s, "read_network_requests", map[string]any{"tabId": tab})
	if !strings.Contains(all, "api said {\"ok\":true}") {
		t.Errorf("console lacks the fetch answer:\n%s", all)
	}
	if !strings.Contains(net, "GET "+r.url+"/console → 200 [Document]") || !strings.Contains(net, "/api/data?x=1 → 200 [Fetch]") {
		t.Fatalf("network:\n%s", net)
	}
	api := r.ok(s, "read_network_requests", map[string]any{"tabId": tab, "urlPattern": "/api/"})
	if strings.Contains(api, "/console") || !strings.Contains(api, "application/json") {
		t.Fatalf("urlPattern:\n%s", api)
	}
	r.ok(s, "read_network_requests", map[string]any{"tabId": tab, "clear": true})
	if after := r.ok(s, "read_network_requests", map[string]any{"tabId": tab}); strings.Contains(after, "/api/") {
		t.Fatalf("clear kept requests:\n%s", after)
	}
}

// A console message far over the per-entry bound reaches the agent cut,
// with a marker that says how much was not kept.
func TestHugeConsoleMessageIsCutInTheBrowser(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:logger", "logger")
	tab := r.newTab(s, "/text")
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "console.log('start ' + 'q'.repeat(4 << 20)); console.log('small after'); 0"})
	out := r.ok(s, "read_console_messages", map[string]any{"tabId": tab})
	if !strings.Contains(out, "[log]") || !strings.Contains(out, "start qqqq") || !strings.Contains(out, fmt.Sprintf("… [cut: %d more bytes]", len("start ")+4<<20-2000)) || !strings.Contains(out, "small after") {
		t.Fatalf("console after a 4 MiB message (%d bytes):\n%.200s\n…\n%s", len(out), out, out[max(0, len(out)-200):])
	}
	if len(out) > 20000 {
		t.Fatalf("read_console_messages answered %d bytes", len(out))
	}
}
