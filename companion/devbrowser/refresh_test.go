package devbrowser

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

// scriptedBrowser is the browser's end of the CDP pipe: it answers
// Target.createTarget and Target.closeTarget at once and holds each
// Target.getTargets until the test releases it with the page list of its
// choice, as a browser whose answer was made before the changes that
// follow it.
type scriptedBrowser struct {
	in     chan []byte
	asked  chan int64  // ids of held getTargets
	held   chan string // methods sent to a page, which it never answers
	closed chan struct{}
	once   sync.Once
}

func newScriptedBrowser() *scriptedBrowser {
	return &scriptedBrowser{in: make(chan []byte, 16), asked: make(chan int64, 4), held: make(chan string, 4), closed: make(chan struct{})}
}

func (s *scriptedBrowser) ReadMessage() ([]byte, error) {
	select {
	case m := <-s.in:
		return m, nil
	case <-s.closed:
		return nil, io.EOF
	}
}

func (s *scriptedBrowser) WriteMessage(_ context.Context, msg []byte) error {
	var req struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(msg, &req)
	if req.SessionID != "" {
		s.held <- req.Method
		return nil
	}
	switch req.Method {
	case "Target.attachToTarget":
		s.answer(req.ID, map[string]any{"sessionId": "S1"})
	case "Target.getTargets":
		s.asked <- req.ID
	case "Target.createTarget":
		s.answer(req.ID, map[string]any{"targetId": "NEW"})
	default:
		s.answer(req.ID, map[string]any{})
	}
	return nil
}

func (s *scriptedBrowser) answer(id int64, result any) {
	data, _ := json.Marshal(map[string]any{"id": id, "result": result})
	s.in <- data
}

func (s *scriptedBrowser) event(method string, params any) {
	data, _ := json.Marshal(map[string]any{"method": method, "params": params})
	s.in <- data
}

func (s *scriptedBrowser) Close(error) error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func pages(ids ...string) map[string]any {
	infos := []map[string]any{}
	for _, id := range ids {
		infos = append(infos, map[string]any{"targetId": id, "type": "page", "url": "about:blank"})
	}
	return map[string]any{"targetInfos": infos}
}

// listing lists the tabs while a stale Target.getTargets answer is held,
// runs during in between, then releases the answer with ids.
func listing(t *testing.T, l *link, s *scriptedBrowser, during func(), ids ...string) []wire.TabInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type answer struct {
		raw json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		raw, err := l.RoundTrip(ctx, wire.MethodTabsList, nil)
		done <- answer{raw, err}
	}()
	var id int64
	select {
	case id = <-s.asked:
	case <-ctx.Done():
		t.Fatal("tabs.list never asked for the targets")
	}
	during()
	s.answer(id, pages(ids...))
	a := <-done
	if a.err != nil {
		t.Fatal(a.err)
	}
	var tabs []wire.TabInfo
	if err := json.Unmarshal(a.raw, &tabs); err != nil {
		t.Fatal(err)
	}
	return tabs
}

// A listing that raced an agent's new tab, or a tab's close, keeps to what
// happened after it was asked for: the new tab stays the agent's under its
// id (it was handed back to nobody under a new id, visible to every agent),
// and the closed tab stays closed.
func TestAStaleListingNeitherDropsNewTabsNorRevivesClosedOnes(t *testing.T) {
	s := newScriptedBrowser()
	l := newLink(nil, s)
	t.Cleanup(func() { l.conn.Close(nil); l.conn.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.event("Target.targetCreated", map[string]any{"targetInfo": map[string]any{"targetId": "OLD", "type": "page", "url": "about:blank"}})

	var created wire.TabInfo
	tabs := listing(t, l, s, func() {
		raw, err := l.RoundTrip(ctx, wire.MethodTabsCreate, wire.CreateParams{URL: "about:blank", Owner: "agent:a"})
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(raw, &created)
	}, "OLD")
	if created.Owner != "agent:a" {
		t.Fatalf("created %+v", created)
	}
	found := false
	for _, tb := range tabs {
		if tb.ID == created.ID {
			found = tb.Owner == "agent:a" && tb.Agent
		} else if tb.Owner != "" {
			t.Fatalf("another tab has an owner: %+v", tb)
		}
	}
	if !found || len(tabs) != 2 {
		t.Fatalf("after a listing that raced tab %d's creation: %+v", created.ID, tabs)
	}

	// The agent's tab closes while a listing made before the close is on
	// its way.
	tabs = listing(t, l, s, func() {
		if _, err := l.RoundTrip(ctx, wire.MethodTabsClose, wire.TabParams{TabID: created.ID}); err != nil {
			t.Fatal(err)
		}
	}, "OLD", "NEW")
	if len(tabs) != 1 || tabs[0].URL != "about:blank" || tabs[0].Owner != "" {
		t.Fatalf("after a listing that raced tab %d's close: %+v", created.ID, tabs)
	}

	// A target gone from an up-to-date listing is dropped.
	tabs = listing(t, l, s, func() {})
	if len(tabs) != 0 {
		t.Fatalf("after a listing without pages: %+v", tabs)
	}
}

// Target.closeTarget answers before the tab is gone, and a listing asked
// for after the close may still name it: the closed tab must not come back
// as nobody's, which would show an agent's page to every agent.
func TestAClosedTabStillListedByTheBrowserStaysClosed(t *testing.T) {
	s := newScriptedBrowser()
	l := newLink(nil, s)
	t.Cleanup(func() { l.conn.Close(nil); l.conn.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := l.RoundTrip(ctx, wire.MethodTabsCreate, wire.CreateParams{URL: "about:blank", Owner: "agent:a"})
	if err != nil {
		t.Fatal(err)
	}
	var created wire.TabInfo
	json.Unmarshal(raw, &created)
	if _, err := l.RoundTrip(ctx, wire.MethodTabsClose, wire.TabParams{TabID: created.ID}); err != nil {
		t.Fatal(err)
	}
	if tabs := listing(t, l, s, func() {}, "NEW"); len(tabs) != 0 {
		t.Fatalf("a tab closed before the listing was asked for came back: %+v", tabs)
	}
}

// The record of dropped targets is bounded.
func TestDroppedTargetsAreBounded(t *testing.T) {
	l := &link{targets: map[string]*target{}, byTab: map[int]*target{}, sessions: map[string]*target{}, children: map[string]*target{}}
	for i := range 3 * maxDropped {
		l.tmu.Lock()
		tg := l.upsertLocked(targetInfo{TargetID: "T" + string(rune('a'+i%26)) + string(rune(i)), Type: "page"})
		l.dropLocked(tg)
		l.tmu.Unlock()
	}
	if len(l.dropped) > maxDropped || len(l.dropOrder) > maxDropped {
		t.Fatalf("%d dropped targets remembered, want at most %d", len(l.dropped), maxDropped)
	}
	// The newest are the ones kept.
	last := l.dropOrder[len(l.dropOrder)-1]
	if !l.dropped[last] || len(l.dropped) != maxDropped {
		t.Fatalf("after %d drops: %d remembered, the last one %v", 3*maxDropped, len(l.dropped), l.dropped[last])
	}
}

// A tab that closes fails the calls waiting on its page at once (the
// browser never answers them), and the info changes the browser sends
// about it afterwards do not bring it back as nobody's tab.
func TestAClosedTabFailsItsCallsAndStaysClosed(t *testing.T) {
	s := newScriptedBrowser()
	l := newLink(nil, s)
	t.Cleanup(func() { l.conn.Close(nil); l.conn.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := l.RoundTrip(ctx, wire.MethodTabsCreate, wire.CreateParams{URL: "about:blank", Owner: "agent:a"})
	if err != nil {
		t.Fatal(err)
	}
	var created wire.TabInfo
	json.Unmarshal(raw, &created)
	pending := make(chan error, 1)
	go func() {
		_, err := l.RoundTrip(ctx, wire.MethodCDP, wire.CDPParams{TabID: created.ID, Method: "Runtime.evaluate", Params: json.RawMessage(`{"expression":"1"}`)})
		pending <- err
	}()
	select {
	case <-s.held:
	case <-ctx.Done():
		t.Fatal("the call never reached the page")
	}
	if _, err := l.RoundTrip(ctx, wire.MethodTabsClose, wire.TabParams{TabID: created.ID}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-pending:
		if !errors.Is(err, wire.ErrNoSuchTab) {
			t.Fatalf("the call waiting on the closed tab failed with %v (code %s), want no_such_tab", err, wire.CodeOf(err))
		}
	case <-ctx.Done():
		t.Fatal("the call waiting on the closed tab never answered")
	}
	s.event("Target.targetInfoChanged", map[string]any{"targetInfo": map[string]any{"targetId": "NEW", "type": "page", "url": "", "title": "closing"}})
	// The reader handles frames in order: once an answer sent after the
	// event is in, the event was handled.
	if _, err := l.send(ctx, "", "Target.activateTarget", map[string]any{"targetId": "x"}); err != nil {
		t.Fatal(err)
	}
	if tabs := l.tabInfos(); len(tabs) != 0 {
		t.Fatalf("the closed tab came back: %+v", tabs)
	}
}
