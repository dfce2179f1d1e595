package tools_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A click settles once the page is still and the requests it started have
// answered, not after a fixed window: an answer the server sends 200 ms
// later is on the page when the click returns. A request that never
// answers holds the click no longer than the settle bound (1 s).
func TestClickSettlesAfterTheRequestsItStarted(t *testing.T) {
	hold := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Settle</title><style>body{margin:0} button{position:absolute;width:100px;height:40px}</style>
<button id="late" style="left:100px;top:100px" onclick="fetch('/late').then((r) => r.text()).then((t) => { document.title = t; })">Late</button>
<button id="never" style="left:300px;top:100px" onclick="fetch('/never')">Never</button>`)
	})
	mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		// A slow server: the answer leaves 200 ms after the request.
		timer := time.NewTimer(200 * time.Millisecond)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "answered")
	})
	mux.HandleFunc("/never", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) }) // runs first: the held request ends, then the server

	r := newRig(t)
	s := r.e.NewSession("agent:settle", "settle")
	out := r.ok(s, "tabs_create_mcp", map[string]any{"url": srv.URL + "/"})
	m := tabIDRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no tab id in %q", out)
	}
	var tab int
	fmt.Sscan(m[1], &tab)
	r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})

	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{150, 120}})
	var title string
	r.js(s, tab, "document.title", &title)
	if title != "answered" {
		t.Fatalf("title %q right after the click, want the answer to the request it started", title)
	}

	start := time.Now()
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{350, 120}})
	// The bound is 1 s from the call's start; the rest is a loaded
	// machine's slack.
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a click whose request never answered took %s", took)
	}
}
