package companion_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/wire"
)

// The inspection routes of the admin socket send raw requests to browsers,
// which can do what any tool does. The attack: while the person has paused
// automation, or turned a tool off, something on the admin socket sends a
// page a CDP command, a raw wire request, or opens or closes a tab. None of
// it may reach the browser, and each is refused with the code that says
// why. Reading the hub's state stays open.
func TestInspectionRequestsObeyPauseAndDisabledTools(t *testing.T) {
	dir := companiontest.ShortDir(t)
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, Inspect: true})
	x := dialExt(t, dir, port, "inst-raw")
	var reached atomic.Int64 // requests that reached the browser
	answer := func(result any) func(json.RawMessage) (any, error) {
		return func(json.RawMessage) (any, error) {
			reached.Add(1)
			return result, nil
		}
	}
	x.Handle(wire.MethodCDP, answer(map[string]any{"result": map[string]any{"type": "number", "value": 2}}))
	x.Handle(wire.MethodTabsList, answer([]wire.TabInfo{}))
	x.Handle(wire.MethodTabsCreate, answer(wire.TabInfo{ID: 6, URL: "https://b.test/", Shared: true, Agent: true}))
	x.Handle(wire.MethodTabsClose, answer(nil))
	if err := x.SendTabs([]wire.TabInfo{{ID: 5, URL: "https://a.test/", Title: "A", Shared: true, WindowID: 1}}); err != nil {
		t.Fatal(err)
	}
	browser := waitBrowsers(t, c, 1)[0].ID
	tab := waitTab(t, c, 5)

	cl := admin.NewClient(dir).Inspect()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	attempts := []struct {
		name string
		do   func() error
	}{
		{"cdp", func() error {
			_, err := cl.CDP(ctx, tab, "Runtime.evaluate", map[string]any{"expression": "1+1"})
			return err
		}},
		{"raw cdp request", func() error {
			_, err := cl.Request(ctx, browser, wire.MethodCDP, wire.CDPParams{TabID: 5, Method: "Runtime.evaluate", Params: json.RawMessage(`{"expression":"1+1"}`)})
			return err
		}},
		{"raw tabs.list", func() error { _, err := cl.Request(ctx, browser, wire.MethodTabsList, nil); return err }},
		{"create a tab", func() error { _, err := cl.CreateTab(ctx, browser, "https://b.test/", false); return err }},
		{"close a tab", func() error { return cl.CloseTab(ctx, tab) }},
	}
	allowed := func(when string) {
		t.Helper()
		for _, a := range attempts {
			before := reached.Load()
			if err := a.do(); err != nil {
				t.Fatalf("%s, %s: %v", when, a.name, err)
			}
			if reached.Load() != before+1 {
				t.Fatalf("%s, %s did not reach the browser", when, a.name)
			}
		}
	}
	refused := func(when string, code wire.Code) {
		t.Helper()
		before := reached.Load()
		for _, a := range attempts {
			if err := a.do(); wire.CodeOf(err) != code {
				t.Errorf("%s, %s: %v (code %s), want code %s", when, a.name, err, wire.CodeOf(err), code)
			}
		}
		if n := reached.Load() - before; n != 0 {
			t.Fatalf("%s, %d raw requests reached the browser", when, n)
		}
		// The hub's own state is no browser request: it stays readable.
		if bs, err := cl.Browsers(ctx); err != nil || len(bs) != 1 {
			t.Fatalf("%s, listing browsers: %+v, %v", when, bs, err)
		}
		if _, err := cl.Tabs(ctx); err != nil {
			t.Fatalf("%s, listing tabs: %v", when, err)
		}
	}

	allowed("at first")
	c.Pause()
	refused("paused", wire.CodePaused)
	c.Resume()
	allowed("resumed")
	if err := c.SetDisabledTools([]string{"javascript_tool"}); err != nil {
		t.Fatal(err)
	}
	refused("with javascript_tool off", wire.CodeToolDisabled)
	if err := c.SetDisabledTools(nil); err != nil {
		t.Fatal(err)
	}
	allowed("with every tool on")
}

// Without Config.Inspect the admin socket has no inspection routes.
func TestInspectionRoutesAreOffByDefault(t *testing.T) {
	dir := companiontest.ShortDir(t)
	companiontest.Start(t, companion.Config{DataDir: dir})
	cl := admin.NewClient(dir).Inspect()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.Browsers(ctx); !errors.Is(err, wire.ErrNotImplemented) {
		t.Fatalf("inspection without --inspect: %v, want not_implemented", err)
	}
}

// waitTab waits until the companion lists the native tab and returns its
// public id.
func waitTab(t *testing.T, c *companion.Companion, native int) int {
	t.Helper()
	changes, stop := c.Changes()
	defer stop()
	deadline := time.After(10 * time.Second)
	for {
		for _, tb := range c.Hub().Tabs() {
			if tb.Native == native {
				return tb.ID
			}
		}
		select {
		case <-changes:
		case <-deadline:
			t.Fatalf("timed out waiting for tab %d; have %+v", native, c.Hub().Tabs())
		}
	}
}

// /v1/inspect/runtime reports the counts a soak test watches: goroutines,
// the hub's tabs and what it remembers, and the engine's tab states.
func TestInspectionRuntimeCounts(t *testing.T) {
	dir := companiontest.ShortDir(t)
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, Inspect: true})
	x := dialExt(t, dir, port, "inst-runtime")
	if err := x.SendTabs([]wire.TabInfo{{ID: 5, URL: "https://a.test/", Title: "A", Shared: true, WindowID: 1}, {ID: 6, URL: "https://b.test/", WindowID: 1}}); err != nil {
		t.Fatal(err)
	}
	waitBrowsers(t, c, 1)
	waitTab(t, c, 6)
	cl := admin.NewClient(dir).Inspect()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rt, err := cl.Runtime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Goroutines < 5 || rt.HeapAlloc == 0 || rt.HubTabs != 2 || rt.RememberedInstances != 1 || rt.TabStates != 0 {
		t.Fatalf("runtime counts %+v; want goroutines and heap, 2 hub tabs, 1 remembered instance, no tab states yet", rt)
	}
}
