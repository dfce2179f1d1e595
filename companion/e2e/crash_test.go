package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

// A renderer that crashes under an agent's tab (Page.crash from the
// browser's own DevTools, behind the extension's back): the call waiting
// on the page and every call after it get an error with a code at once,
// not after their deadlines, and navigating loads the tab again, still the
// agent's.
func TestACrashedTabAnswersThroughTheExtension(t *testing.T) {
	s := newStack(t)
	inFlight := make(chan struct{}, 1)
	pages := faultPages(inFlight)
	t.Cleanup(pages.Close)
	cs := mcpSession(t, s.Reins, "crashy")
	url := pages.URL + "/fault?m=crashmarker&n=1"
	tab := openTab(t, cs, url)
	ctx := within(t, 60*time.Second)
	var target harness.TargetInfo
	targets, err := s.Chrome.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.URL == url {
			target = tg
		}
	}
	if target.TargetID == "" {
		t.Fatalf("no target for %s in %+v", url, targets)
	}
	// A call in flight when the renderer dies.
	pending := make(chan toolOut, 1)
	start := time.Now()
	go func() {
		pending <- callTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "fetch('/pending').then(() => new Promise(() => {}))"})
	}()
	select {
	case <-inFlight:
	case <-ctx.Done():
		t.Fatal("the pending script never ran")
	}
	if err := s.Chrome.CrashTab(ctx, target.TargetID); err != nil {
		t.Fatal(err)
	}
	out := <-pending
	t.Logf("the pending call answered after %s: %s", time.Since(start).Round(time.Millisecond), out.text)
	if !out.isErr || !strings.Contains(out.text, "[attach_failed]") || !strings.Contains(out.text, "crashed") {
		t.Fatalf("the call pending on the crashed page answered %+v, want attach_failed saying the page crashed", out)
	}
	crashedTabAnswers(t, cs, tab, pages.URL+"/fault?m=crashmarker&n=2")
}

// crashedTabAnswers checks a tab whose page crashed: page calls answer
// attach_failed saying so, and navigating to url (a faultPages page of the
// crashmarker) loads it again.
func crashedTabAnswers(t *testing.T, cs *mcp.ClientSession, tab int, url string) {
	t.Helper()
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"javascript_tool", map[string]any{"tabId": tab, "text": "1+1"}},
		{"read_page", map[string]any{"tabId": tab}},
		{"computer", map[string]any{"tabId": tab, "action": "screenshot"}},
	} {
		start := time.Now()
		out := callTool(t, cs, call.tool, call.args)
		t.Logf("%s on the crashed tab answered after %s: %.200s", call.tool, time.Since(start).Round(time.Millisecond), out.text)
		if !out.isErr || !strings.Contains(out.text, "[attach_failed]") || !strings.Contains(out.text, "crashed") {
			t.Fatalf("%s on the crashed tab answered %+v, want attach_failed saying the page crashed", call.tool, out)
		}
	}
	nav := mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": url})
	if !strings.Contains(nav.text, "crashmarker") {
		t.Fatalf("navigate after the crash: %s", nav.text)
	}
	if got := mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "document.body.dataset.marker"}); !strings.Contains(got.text, "crashmarker") {
		t.Fatalf("javascript_tool after the reload: %s", got.text)
	}
}

// Through the extension, a crash ends the calls that wait in the companion
// on the page's events (the extension forwards Chromium's crash report):
// a navigation whose load never finishes, and waits for a URL and for an
// idle network, answer attach_failed at once instead of at their timeouts.
func TestWaitsEndWhenTheRendererCrashesThroughTheExtension(t *testing.T) {
	s := newStack(t)
	asked := make(chan struct{}, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hung", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Hung</title><img src="/hang">`)
	})
	mux.HandleFunc("GET /hang", func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cs := mcpSession(t, s.Reins, "crashwait")
	tab := openTab(t, cs, "about:blank")
	ctx := within(t, 90*time.Second)
	answers := make(chan toolOut, 3)
	go func() {
		answers <- callTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": srv.URL + "/hung"})
	}()
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the page never asked for its image")
	}
	for _, args := range []map[string]any{
		{"tabId": tab, "url": "*/never", "timeout": 60},
		{"tabId": tab, "networkIdle": true, "timeout": 60},
	} {
		go func() { answers <- callTool(t, cs, "wait_for", args) }()
	}
	var target harness.TargetInfo
	targets, err := s.Chrome.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if strings.HasSuffix(tg.URL, "/hung") {
			target = tg
		}
	}
	if target.TargetID == "" {
		t.Fatalf("no target for the hung page in %+v", targets)
	}
	if err := s.Chrome.CrashTab(ctx, target.TargetID); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case out := <-answers:
			t.Logf("answer: %.200s", out.text)
			if !out.isErr || !strings.Contains(out.text, "[attach_failed]") || !strings.Contains(out.text, "crashed") {
				t.Fatalf("a call waiting on the crashed page answered %+v, want attach_failed saying the page crashed", out)
			}
		case <-ctx.Done():
			t.Fatal("a call waiting on the crashed page did not answer")
		}
	}
}

// firefoxCrash is TestACrashedTabAnswersThroughTheExtension for Firefox,
// whose web content processes the harness kills (the extension's own
// process lives on): Firefox shows its crashed-tab page, the call running
// in the page, a page-side wait and a wait in the companion on the page's
// events all answer attach_failed at once, so does every page call after
// them, and navigating loads the tab again. It kills every web page of the
// browser, so it runs last on its Firefox.
func firefoxCrash(t *testing.T, s *harness.FirefoxStack) {
	inFlight := make(chan struct{}, 1)
	pages := faultPages(inFlight)
	t.Cleanup(pages.Close)
	cs := mcpSession(t, s.Reins, "crashy")
	tab := openTab(t, cs, pages.URL+"/fault?m=crashmarker&n=1")
	ctx := within(t, 60*time.Second)
	answers := make(chan toolOut, 3)
	go func() {
		answers <- callTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "fetch('/pending').then(() => new Promise(() => {}))"})
	}()
	select {
	case <-inFlight:
	case <-ctx.Done():
		t.Fatal("the pending script never ran")
	}
	// Longer than this test may take: a wait that missed the crash would
	// answer timeout.
	for _, args := range []map[string]any{
		{"tabId": tab, "selector": "#never", "timeout": 60},
		{"tabId": tab, "url": "*/never", "timeout": 60},
	} {
		go func() { answers <- callTool(t, cs, "wait_for", args) }()
	}
	killed, err := s.Firefox.CrashContent()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 3 {
		select {
		case out := <-answers:
			t.Logf("a call under way answered %s after the crash (%d processes killed): %s", time.Since(start).Round(time.Millisecond), killed, out.text)
			if !out.isErr || !strings.Contains(out.text, "[attach_failed]") || !strings.Contains(out.text, "crashed") {
				t.Fatalf("a call under way when the page crashed answered %+v, want attach_failed saying the page crashed", out)
			}
		case <-ctx.Done():
			t.Fatal("a call under way never answered after the crash")
		}
	}
	crashedTabAnswers(t, cs, tab, pages.URL+"/fault?m=crashmarker&n=2")
}
