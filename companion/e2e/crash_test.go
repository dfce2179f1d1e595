package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

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
	created := mustTool(t, cs, "tabs_create_mcp", map[string]any{"url": url})
	m := createdRE.FindStringSubmatch(created.text)
	if m == nil {
		t.Fatalf("tabs_create_mcp: %s", created.text)
	}
	tab, _ := strconv.Atoi(m[1])
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
		if !out.isErr || !strings.Contains(out.text, "crashed") {
			t.Fatalf("%s on the crashed tab answered %+v, want an error saying the page crashed", call.tool, out)
		}
	}
	nav := mustTool(t, cs, "navigate", map[string]any{"tabId": tab, "url": pages.URL + "/fault?m=crashmarker&n=2"})
	if !strings.Contains(nav.text, "crashmarker") {
		t.Fatalf("navigate after the crash: %s", nav.text)
	}
	if got := mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "document.body.dataset.marker"}); !strings.Contains(got.text, "crashmarker") {
		t.Fatalf("javascript_tool after the reload: %s", got.text)
	}
}
