package tools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

func TestTwoSessionsInParallel(t *testing.T) {
	r := newRig(t)
	agents := []string{"ada", "grace"}
	sessions := map[string]*tools.Session{}
	tabs := map[string]int{}
	for _, a := range agents {
		sessions[a] = r.e.NewSession("agent:"+a, a)
		tabs[a] = r.newTab(sessions[a], "/record")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*20)
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, tab := sessions[a], tabs[a]
			for i := 0; i < 4; i++ {
				for _, step := range []struct {
					tool string
					args map[string]any
				}{
					{"computer", map[string]any{"action": "screenshot", "tabId": tab}},
					{"computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{650, 210}}},
					{"computer", map[string]any{"action": "type", "tabId": tab, "text": a}},
					{"read_page", map[string]any{"tabId": tab, "filter": "interactive"}},
					{"navigate", map[string]any{"tabId": tab, "url": r.url + "/record"}},
				} {
					raw := mustJSON(step.args)
					if res := r.e.Call(context.Background(), s, step.tool, []byte(raw)); res.IsError {
						errs <- fmt.Errorf("%s %s: %s", a, step.tool, text(res))
						return
					}
				}
			}
			// Each agent's last round typed its own name into its own tab.
			if res := r.e.Call(context.Background(), s, "computer", []byte(fmt.Sprintf(`{"action":"left_click","tabId":%d,"coordinate":[650,210]}`, tab))); res.IsError {
				errs <- errors.New(text(res))
				return
			}
			r.e.Call(context.Background(), s, "computer", []byte(fmt.Sprintf(`{"action":"type","tabId":%d,"text":"%s-final"}`, tab, a)))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, a := range agents {
		var v string
		r.js(sessions[a], tabs[a], "document.getElementById('name').value", &v)
		if v != a+"-final" {
			t.Errorf("%s's tab holds %q", a, v)
		}
	}
	r.fails(sessions["ada"], "computer", map[string]any{"action": "left_click", "tabId": tabs["grace"], "coordinate": []int{1, 1}}, wire.CodeTabNotInSession)
}

func TestNavigatedAway(t *testing.T) {
	r := newRig(t)
	s := r.e.NewSession("agent:careful", "careful")
	tab := r.newTab(s, "/form")
	tree := r.ok(s, "read_page", map[string]any{"tabId": tab, "filter": "interactive"})
	email := refFor(t, tree, `textbox "Email"`)

	// The person (or the page) takes the tab to another origin behind the
	// agent's back.
	ctx := ctxFor(t)
	if _, err := shared.hub.CDP(ctx, tab, "Page.navigate", map[string]any{"url": r.alt + "/record"}, "", "person"); err != nil {
		t.Fatal(err)
	}
	// Wait until the new document is in place, via the page itself.
	for {
		raw, err := shared.hub.CDP(ctx, tab, "Runtime.evaluate", map[string]any{"expression": "location.href + '|' + document.readyState", "returnByValue": true}, "", "person")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), r.alt+"/record|complete") {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the page never moved")
		}
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{200, 200}}},
		{"computer", map[string]any{"action": "double_click", "tabId": tab, "coordinate": []int{200, 200}}},
		{"computer", map[string]any{"action": "type", "tabId": tab, "text": "secret"}},
		{"computer", map[string]any{"action": "key", "tabId": tab, "text": "Return"}},
		{"computer", map[string]any{"action": "left_click_drag", "tabId": tab, "start_coordinate": []int{200, 200}, "coordinate": []int{300, 300}}},
		{"form_input", map[string]any{"tabId": tab, "ref": email, "value": "x@y"}},
		{"upload_image", map[string]any{"tabId": tab, "imageId": "img_1", "coordinate": []int{200, 200}}},
		{"upload_file", map[string]any{"tabId": tab, "ref": email, "files": []map[string]any{{"name": "a.txt", "data": "YQ=="}}}},
		{"upload_file", map[string]any{"tabId": tab, "coordinate": []int{200, 200}, "files": []map[string]any{{"name": "a.txt", "data": "YQ=="}}}},
		// A script would run in the new page, with whatever it reads or
		// changes there.
		{"javascript_tool", map[string]any{"tabId": tab, "text": "window.__log.push({t: 'js', v: document.cookie}); 1"}},
		{"javascript_tool", map[string]any{"tabId": tab, "text": "window.__log.push({t: 'js-return'}); return 1"}},
	} {
		if tc.tool == "upload_image" {
			// upload_image needs an image of this session; take one on another tab.
			other := r.newTab(s, "/text")
			r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": other})
		}
		msg := r.fails(s, tc.tool, tc.args, wire.CodeNavigatedAway)
		if !strings.Contains(msg, r.url) || !strings.Contains(msg, r.alt) {
			t.Errorf("%s: message does not name both origins: %s", tc.tool, msg)
		}
	}
	// Read the page's log in a session of the same agent that has not
	// looked at the tab yet, so nothing guards the read.
	if evs := r.log(r.e.NewSession(s.Principal, s.Label), tab); len(evs) != 0 {
		t.Fatalf("actions reached the new page: %+v", evs)
	}
	// Scrolling does not change the page, so it is not guarded.
	r.ok(s, "computer", map[string]any{"action": "scroll", "tabId": tab, "scroll_direction": "down"})
	// Looking again makes acting allowed again.
	r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{200, 200}})
	if len(only(r.log(s, tab), "click")) != 1 {
		t.Fatal("click after a fresh look did not land")
	}
}

func TestPausedAndTakenOver(t *testing.T) {
	var paused atomic.Bool
	var holder atomic.Value
	holder.Store("")
	r := newRig(t, rigOptions{
		paused: func() error {
			if paused.Load() {
				return wire.Errorf(wire.CodePaused, "automation is paused by the person")
			}
			return nil
		},
		takenOver: func(int) string { return holder.Load().(string) },
	})
	s := r.e.NewSession("agent:patient", "patient")
	tab := r.newTab(s, "/record")

	paused.Store(true)
	for _, tool := range []string{"tabs_context_mcp", "computer", "read_page", "navigate", "no_such_tool", "browser_batch"} {
		msg := r.fails(s, tool, map[string]any{"tabId": tab, "action": "screenshot"}, wire.CodePaused)
		if !strings.Contains(msg, "paused by the person") {
			t.Fatal(msg)
		}
	}
	paused.Store(false)

	holder.Store("Sam (live view)")
	msg := r.fails(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{200, 200}}, wire.CodePaused)
	if !strings.Contains(msg, "Sam (live view)") {
		t.Fatal(msg)
	}
	r.fails(s, "navigate", map[string]any{"tabId": tab, "url": r.url + "/text"}, wire.CodePaused)
	r.fails(s, "form_input", map[string]any{"tabId": tab, "ref": "ref_1", "value": "x"}, wire.CodePaused)
	r.ok(s, "computer", map[string]any{"action": "screenshot", "tabId": tab})
	r.ok(s, "read_page", map[string]any{"tabId": tab})
	holder.Store("")
	r.ok(s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{200, 200}})

	r.mu.Lock()
	defer r.mu.Unlock()
	var paused0, ok0 int
	for _, a := range r.activities {
		if a.Agent != "patient" || a.Principal != "agent:patient" || a.Duration < 0 {
			t.Fatalf("activity %+v", a)
		}
		switch a.Outcome {
		case "paused":
			paused0++
		case "ok":
			ok0++
		}
	}
	if paused0 < 9 || ok0 < 3 {
		t.Fatalf("activities: %d paused, %d ok", paused0, ok0)
	}
}

func mustJSON(v any) string {
	b, err := jsonMarshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
