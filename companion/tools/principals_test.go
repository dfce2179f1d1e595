package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// Tab ownership lives with the tab: these tests play a browser that keeps
// its tabs (and their owners, as the extension does in its session storage)
// across connections, and the companion side that loses everything it held
// in memory.

// fakeBrowser is a browser profile whose extension connects over a real
// WebSocket. Its tabs outlive each connection.
type fakeBrowser struct {
	t     *testing.T
	hello wire.Hello
	page  *fakeEnv // answers cdp like a page on page.href

	mu   sync.Mutex
	tabs []wire.TabInfo
	next int
	ext  *hubtest.Ext
	// list answers tabs.list; nil answers at once with the tabs.
	list func() ([]wire.TabInfo, error)
}

func newFakeBrowser(t *testing.T, instance string, tabs ...wire.TabInfo) *fakeBrowser {
	return &fakeBrowser{
		t:     t,
		hello: wire.Hello{Version: 3, ExtensionVersion: "test", Browser: "Chromium", InstanceID: instance, BrowserSessionID: "run-1"},
		page:  &fakeEnv{href: "https://shop.example/cart"},
		tabs:  tabs,
		next:  100,
	}
}

func (b *fakeBrowser) snapshot() []wire.TabInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]wire.TabInfo(nil), b.tabs...)
}

// connect dials a companion's hub (a reconnect when already connected:
// the old link drops first, as when the browser's worker restarts) and
// waits until the hub lists the browser with its tabs.
func (b *fakeBrowser) connect(c *companionSide) {
	b.t.Helper()
	b.mu.Lock()
	old := b.ext
	b.mu.Unlock()
	if old != nil {
		old.Kill()
		c.waitFor(b.t, "the old connection to go", func() bool { return !c.has(b.hello.InstanceID, 0) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ext, err := hubtest.Dial(ctx, c.wsURL, b.hello, hubtest.Options{})
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(ext.Kill)
	ext.Handle(wire.MethodTabsCreate, func(params json.RawMessage) (any, error) {
		var p wire.CreateParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		b.mu.Lock()
		b.next++
		// As the extension does: an agent tab is shared and records the
		// principal it was opened for.
		tab := wire.TabInfo{ID: b.next, URL: p.URL, Title: "New", Shared: true, Agent: true, Owner: p.Owner, WindowID: 1}
		b.tabs = append(b.tabs, tab)
		b.mu.Unlock()
		return tab, nil
	})
	ext.Handle(wire.MethodTabsList, func(json.RawMessage) (any, error) {
		b.mu.Lock()
		list := b.list
		b.mu.Unlock()
		if list != nil {
			return list()
		}
		return b.snapshot(), nil
	})
	ext.Handle(wire.MethodCDP, b.page.cdp)
	ext.Handle(wire.MethodTabsClose, func(json.RawMessage) (any, error) { return map[string]any{}, nil })
	b.mu.Lock()
	b.ext = ext
	b.mu.Unlock()
	if err := ext.SendTabs(b.snapshot()); err != nil {
		b.t.Fatal(err)
	}
	n := len(b.snapshot())
	c.waitFor(b.t, "the browser and its tabs", func() bool { return c.has(b.hello.InstanceID, n) })
}

// shareByHand is the person sharing the tab from the popup: the extension
// clears its owner and its agent mark.
func (b *fakeBrowser) shareByHand(c *companionSide, native int) {
	b.t.Helper()
	b.mu.Lock()
	for i := range b.tabs {
		if b.tabs[i].ID == native {
			b.tabs[i].Shared, b.tabs[i].Agent, b.tabs[i].Owner = true, false, ""
		}
	}
	ext := b.ext
	b.mu.Unlock()
	if err := ext.SendTabs(b.snapshot()); err != nil {
		b.t.Fatal(err)
	}
	c.waitFor(b.t, "the hand-shared tab", func() bool {
		for _, t := range c.hub.Tabs() {
			if t.Native == native && t.BrowserID != "" && !t.Agent {
				return true
			}
		}
		return false
	})
}

// companionSide is one run of the companion: a hub and an engine, with
// nothing carried over from an earlier run.
type companionSide struct {
	hub     *hub.Hub
	e       *tools.Engine
	wsURL   string
	changed chan struct{}
}

func newCompanionSide(t *testing.T, timeout time.Duration) *companionSide {
	t.Helper()
	c := &companionSide{changed: make(chan struct{}, 1)}
	c.hub = hub.New(hub.Options{Logger: quietLogger(), RequestTimeout: timeout, OnChange: func() {
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}})
	srv := httptest.NewServer(c.hub)
	c.wsURL = "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	c.e = tools.NewEngine(tools.Options{Hub: c.hub, Logger: quietLogger()})
	t.Cleanup(func() {
		c.e.Close()
		c.hub.Close()
		srv.Close()
	})
	return c
}

// has reports whether the browser with that instance is connected with at
// least n tabs.
func (c *companionSide) has(instance string, n int) bool {
	for _, b := range c.hub.Browsers() {
		if b.Hello.InstanceID == instance && b.OpenTabs >= n {
			return true
		}
	}
	return false
}

func (c *companionSide) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (c *companionSide) call(t *testing.T, s *tools.Session, tool string, args any) *tools.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	return c.e.Call(ctxFor(t), s, tool, raw)
}

func (c *companionSide) ok(t *testing.T, s *tools.Session, tool string, args any) string {
	t.Helper()
	res := c.call(t, s, tool, args)
	if res.IsError {
		t.Fatalf("%s for %s: %s", tool, s.Label, text(res))
	}
	return text(res)
}

// context is what tabs_context_mcp shows the session: tab id → sharedBy.
func (c *companionSide) context(t *testing.T, s *tools.Session) map[int]string {
	t.Helper()
	out := c.ok(t, s, "tabs_context_mcp", map[string]any{})
	var tc tabsContext
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &tc); err != nil {
		t.Fatalf("tabs_context_mcp: %v\n%s", err, out)
	}
	seen := map[int]string{}
	for _, tb := range tc.Tabs {
		seen[tb.TabID] = tb.SharedBy
	}
	return seen
}

func (c *companionSide) create(t *testing.T, s *tools.Session) int {
	t.Helper()
	out := c.ok(t, s, "tabs_create_mcp", map[string]any{})
	var id int
	if _, err := fmt.Sscanf(out, "Created tab %d", &id); err != nil {
		t.Fatalf("tabs_create_mcp: %s", out)
	}
	return id
}

// refused checks that s can neither see nor use the tab.
func (c *companionSide) refused(t *testing.T, s *tools.Session, tab int) {
	t.Helper()
	if by, ok := c.context(t, s)[tab]; ok {
		t.Fatalf("%s sees tab %d (sharedBy %q)", s.Label, tab, by)
	}
	wantCode(t, c.call(t, s, "read_page", map[string]any{"tabId": tab}), wire.CodeTabNotInSession)
	wantCode(t, c.call(t, s, "computer", map[string]any{"action": "left_click", "tabId": tab, "coordinate": []int{5, 5}}), wire.CodeTabNotInSession)
	wantCode(t, c.call(t, s, "javascript_tool", map[string]any{"tabId": tab, "text": "document.cookie"}), wire.CodeTabNotInSession)
}

// owns checks that s sees the tab as its own and can use it.
func (c *companionSide) owns(t *testing.T, s *tools.Session, tab int) {
	t.Helper()
	if by := c.context(t, s)[tab]; by != "you" {
		t.Fatalf("%s's tab %d shows as %q, want \"you\"", s.Label, tab, by)
	}
	c.ok(t, s, "read_page", map[string]any{"tabId": tab})
}

// H-3: agent A's tab, after its browser reconnects with the same instance
// and session ids (so the tab keeps its public id), is still A's and never
// B's.
func TestOwnershipSurvivesReconnect(t *testing.T) {
	c := newCompanionSide(t, 0)
	b := newFakeBrowser(t, "inst-1")
	b.connect(c)
	alice, bob := c.e.NewSession("agent:a1", "alice"), c.e.NewSession("agent:b2", "bob")
	tab := c.create(t, alice)
	c.owns(t, alice, tab)
	c.refused(t, bob, tab)

	b.connect(c)
	if _, _, err := c.hub.Tab(tab); err != nil {
		t.Fatalf("after the reconnect tab %d is gone (%v); it should have kept its public id", tab, err)
	}
	c.refused(t, bob, tab)
	c.owns(t, alice, tab)
}

// H-3: after a companion restart nothing of the old engine remains; the
// browser reports its tabs with their owners, and they stay their owners'.
func TestOwnershipSurvivesCompanionRestart(t *testing.T) {
	first := newCompanionSide(t, 0)
	b := newFakeBrowser(t, "inst-1")
	b.connect(first)
	tab := first.create(t, first.e.NewSession("agent:a1", "alice"))
	native := b.snapshot()[0].ID

	second := newCompanionSide(t, 0)
	b.connect(second)
	var id int
	for _, tb := range second.hub.Tabs() {
		if tb.Native == native {
			id = tb.ID
		}
	}
	if id == 0 {
		t.Fatalf("the restarted companion does not list the tab (was %d)", tab)
	}
	alice, bob := second.e.NewSession("agent:a1", "alice"), second.e.NewSession("agent:b2", "bob")
	second.refused(t, bob, id)
	second.owns(t, alice, id)
}

// A paired backend whose page-chosen brand is "claude" is not the agent
// whose token is named "claude": the label decides nothing.
func TestSameLabelIsNotTheSamePrincipal(t *testing.T) {
	c := newCompanionSide(t, 0)
	newFakeBrowser(t, "inst-1").connect(c)
	agent := c.e.NewSession("agent:3f9a", "claude")
	backend := c.e.NewSession("backend:77c1", "claude")
	if agent.GroupTitle() != backend.GroupTitle() {
		t.Fatalf("group titles %q and %q: the title is the label", agent.GroupTitle(), backend.GroupTitle())
	}
	tab := c.create(t, agent)
	c.refused(t, backend, tab)
	c.owns(t, agent, tab)
	theirs := c.create(t, backend)
	c.refused(t, agent, theirs)
	c.owns(t, backend, theirs)
}

// An agent tab whose owner is unknown (a tab an older extension marked as
// an agent's, or whose owner the browser lost) or is a principal that is
// not calling is invisible to everyone, until the person shares it by
// hand, which makes it everyone's.
func TestUnknownOwnerIsInvisibleUntilSharedByHand(t *testing.T) {
	c := newCompanionSide(t, 0)
	b := newFakeBrowser(t, "inst-1",
		wire.TabInfo{ID: 1, URL: "https://mail.example/", Title: "Mail", Shared: true, Agent: true, WindowID: 1},
		wire.TabInfo{ID: 2, URL: "https://bank.example/", Title: "Bank", Shared: true, Agent: true, Owner: "agent:gone", WindowID: 1},
		wire.TabInfo{ID: 3, URL: "https://docs.example/", Title: "Docs", Shared: true, WindowID: 1},
	)
	b.connect(c)
	ids := map[int]int{}
	for _, tb := range c.hub.Tabs() {
		ids[tb.Native] = tb.ID
	}
	sessions := []*tools.Session{c.e.NewSession("agent:a1", "alice"), c.e.NewSession("backend:b1", "crm"), c.e.NewSession("", "")}
	for _, s := range sessions {
		c.refused(t, s, ids[1])
		c.refused(t, s, ids[2])
		if by := c.context(t, s)[ids[3]]; by != "person" {
			t.Fatalf("%q: the hand-shared tab shows as %q", s.Principal, by)
		}
		c.ok(t, s, "read_page", map[string]any{"tabId": ids[3]})
	}
	b.shareByHand(c, 1)
	for _, s := range sessions {
		if by := c.context(t, s)[ids[1]]; by != "person" {
			t.Fatalf("%q: the tab shared by hand shows as %q", s.Principal, by)
		}
		c.ok(t, s, "read_page", map[string]any{"tabId": ids[1]})
	}
}

// answerList makes fn answer the browser's tabs.list from now on.
func (b *fakeBrowser) answerList(fn func() ([]wire.TabInfo, error)) {
	b.mu.Lock()
	b.list = fn
	b.mu.Unlock()
}

// twoBrowsers connects two profiles to c with one shared tab each, titled
// first and second.
func twoBrowsers(t *testing.T, c *companionSide, first, second string) (*fakeBrowser, *fakeBrowser) {
	t.Helper()
	one := newFakeBrowser(t, "one", wire.TabInfo{ID: 1, URL: "https://a.example/", Title: first, Shared: true, WindowID: 1})
	two := newFakeBrowser(t, "two", wire.TabInfo{ID: 1, URL: "https://b.example/", Title: second, Shared: true, WindowID: 1})
	one.connect(c)
	two.connect(c)
	return one, two
}

// A browser that never answers tabs.list costs tabs_context_mcp a short
// bound, not the request timeout: the call answers with that browser's last
// known tabs while its tabs.list is still unanswered.
func TestStalledTabsListIsBounded(t *testing.T) {
	c := newCompanionSide(t, time.Hour)
	_, stalled := twoBrowsers(t, c, "Good tab", "Stalled tab")
	release := make(chan struct{})
	asked := make(chan struct{}, 16)
	stalled.answerList(func() ([]wire.TabInfo, error) {
		asked <- struct{}{}
		<-release
		return nil, fmt.Errorf("released")
	})
	defer close(release)

	s := c.e.NewSession("agent:a1", "alice")
	done := make(chan *tools.Result, 1)
	go func() { done <- c.e.Call(context.Background(), s, "tabs_context_mcp", json.RawMessage(`{}`)) }()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled browser was never asked for its tabs")
	}
	select {
	case res := <-done:
		out := text(res)
		if res.IsError || !strings.Contains(out, "Good tab") || !strings.Contains(out, "Stalled tab") {
			t.Fatalf("tabs_context_mcp with a stalled browser: %s", out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("tabs_context_mcp waited on a browser that never answers tabs.list")
	}
}

// Browsers are refreshed at once, not in turn: each of these two answers
// tabs.list only once the other has been asked, so a refresh that waits
// for one before asking the next misses the first one's new title.
func TestTabsListRefreshesBrowsersTogether(t *testing.T) {
	c := newCompanionSide(t, time.Hour)
	one, two := twoBrowsers(t, c, "old one", "old two")
	askedOne, askedTwo := make(chan struct{}), make(chan struct{})
	var onceOne, onceTwo sync.Once
	barrier := func(mine chan struct{}, once *sync.Once, other chan struct{}, title string) func() ([]wire.TabInfo, error) {
		return func() ([]wire.TabInfo, error) {
			once.Do(func() { close(mine) })
			select {
			case <-other:
			case <-time.After(15 * time.Second):
				return nil, fmt.Errorf("the other browser was not asked")
			}
			return []wire.TabInfo{{ID: 1, URL: "https://x.example/", Title: title, Shared: true, WindowID: 1}}, nil
		}
	}
	one.answerList(barrier(askedOne, &onceOne, askedTwo, "new one"))
	two.answerList(barrier(askedTwo, &onceTwo, askedOne, "new two"))

	out := c.ok(t, c.e.NewSession("agent:a1", "alice"), "tabs_context_mcp", map[string]any{})
	if !strings.Contains(out, "new one") || !strings.Contains(out, "new two") {
		t.Fatalf("both browsers' fresh titles should be listed:\n%s", out)
	}
}
