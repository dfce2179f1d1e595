// Package hub owns the connected browsers: the extension WebSocket
// connections (and any virtual browser the companion drives itself), the
// translation between native and public tab ids, and request routing with
// per-request ids and deadlines. Higher layers (tools, live view, pairing)
// call its Go API with public tab ids and never see a socket.
package hub

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/wire"
)

// DefaultRequestTimeout bounds every request that has no earlier deadline.
const DefaultRequestTimeout = 30 * time.Second

// DefaultMaxRemembered is how many disconnected browser profiles keep their
// browser id and public tab ids for a reconnect.
const DefaultMaxRemembered = 64

// Mode tells how the companion reaches a browser.
type Mode string

const (
	ModeExtension Mode = "extension"
	ModeDev       Mode = "dev"
)

// Options configure a Hub.
type Options struct {
	Logger *slog.Logger
	// RequestTimeout overrides DefaultRequestTimeout.
	RequestTimeout time.Duration
	// HelloTimeout bounds hello and the link handshake together; default
	// DefaultHelloTimeout.
	HelloTimeout time.Duration
	// Auth is the companion's side of the link handshake: every extension
	// must prove the link key (or a pairing code) before it is attached.
	// Nil attaches every extension after its hello with no proof; that is
	// only for in-process tests of the layers above the hub, never for a
	// listener a browser or another local process can reach.
	Auth *linkauth.Server
	// MaxUnauthenticated caps the sockets in their handshake at once;
	// default DefaultMaxUnauthenticated.
	MaxUnauthenticated int
	// MaxRemembered caps the disconnected browser profiles whose browser
	// id and public tab ids the hub keeps for a reconnect; default
	// DefaultMaxRemembered. The least recently connected is forgotten
	// first.
	MaxRemembered int
	// OnChange is called, without locks held, whenever browsers, tabs or
	// policies change. It must not block.
	OnChange func()
	// OnPairOffer receives pair.offer events. It must not block.
	OnPairOffer func(browserID string, offer wire.PairOffer)
	// Admit decides, from its hello, whether an extension may connect. An
	// error refuses it: the socket closes with StatusRefused and the
	// error's text as the reason. Nil admits every extension.
	Admit func(hello wire.Hello) error
}

// StatusRefused is the WebSocket close code for an extension the person
// refused (see Options.Admit and ReasonBlocked). The extension shows the
// close reason and retries on its slow backoff, so unblocking takes effect
// without a browser restart.
const StatusRefused = websocket.StatusCode(wire.CloseRefused)

// ReasonBlocked is the close reason of a browser profile the person blocked.
const ReasonBlocked = "this browser profile is blocked in the Reins app"

// ErrBlocked is why a blocked profile's link ends (Browser.Disconnect): its
// code closes the socket with StatusRefused and ReasonBlocked.
var ErrBlocked error = &wire.Error{Code: wire.CodeBrowserBlocked, Message: ReasonBlocked}

// Hub tracks every connected browser.
type Hub struct {
	log     *slog.Logger
	opts    Options
	timeout time.Duration

	nextTab     atomic.Int64
	nextBrowser atomic.Int64

	mu        sync.RWMutex
	browsers  map[string]*Browser // connected, by browser id
	instances map[string]string   // instanceId → browser id, kept across reconnects
	sessions  map[string]*idMap   // instanceId/browserSessionId → native↔public ids
	// idle lists the instanceIds remembered but not connected, least
	// recently connected first; forget trims it to opts.MaxRemembered.
	idle    []string
	unauth  slots
	tabs    map[int]tabRef // public id → owner
	policy  wire.Policy
	closed  bool
	subMu   sync.RWMutex
	tabSubs map[int]map[int64]func(TabEvent)
	nextSub atomic.Int64
}

type tabRef struct {
	browserID string
	session   *idMap
	native    int
}

// New returns an empty hub.
func New(opts Options) *Hub {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.HelloTimeout <= 0 {
		opts.HelloTimeout = DefaultHelloTimeout
	}
	if opts.MaxUnauthenticated <= 0 {
		opts.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	if opts.MaxRemembered <= 0 {
		opts.MaxRemembered = DefaultMaxRemembered
	}
	return &Hub{
		unauth:    slots{max: opts.MaxUnauthenticated},
		log:       opts.Logger,
		opts:      opts,
		timeout:   opts.RequestTimeout,
		browsers:  map[string]*Browser{},
		instances: map[string]string{},
		sessions:  map[string]*idMap{},
		tabs:      map[int]tabRef{},
		tabSubs:   map[int]map[int64]func(TabEvent){},
	}
}

// RoundTripper carries requests to one browser. The WebSocket link to an
// extension is one; a browser driven over raw CDP is another.
type RoundTripper interface {
	RoundTrip(ctx context.Context, method string, params any) (json.RawMessage, error)
	// Close ends the link; pending round trips fail. cause says why: its
	// text is the reason the peer is given, its code (wire.CloseCode) how
	// a WebSocket closes.
	Close(cause error)
}

// Attach registers a connected browser after its hello. The browser's events
// reach the hub through the returned Browser's Handle method. Reconnects with
// the same instanceId keep the browser id; the same instanceId and
// browserSessionId also keep public tab ids.
func (h *Hub) Attach(hello wire.Hello, mode Mode, rt RoundTripper) (*Browser, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, wire.Errorf(wire.CodeNoSuchBrowser, "companion is shutting down")
	}
	id := ""
	if hello.InstanceID != "" {
		id = h.instances[hello.InstanceID]
	}
	if id == "" {
		id = "b" + strconv.FormatInt(h.nextBrowser.Add(1), 10)
		if hello.InstanceID != "" {
			h.instances[hello.InstanceID] = id
		}
	}
	var replaced *Browser
	if old := h.browsers[id]; old != nil {
		replaced = old
	}
	sessKey := ""
	if hello.InstanceID != "" && hello.BrowserSessionID != "" {
		sessKey = hello.InstanceID + "\x00" + hello.BrowserSessionID
	}
	sess := h.sessions[sessKey]
	if sess == nil || sessKey == "" {
		// A new browser run: forget the previous run's ids for this profile
		// so they can never be resolved again. The counter is monotonic, so
		// no id is ever handed out twice.
		for k, s := range h.sessions {
			if s.browserID == id {
				delete(h.sessions, k)
				h.dropTabs(s)
			}
		}
		sess = newIDMap(id)
		if sessKey != "" {
			h.sessions[sessKey] = sess
		}
	}
	b := &Browser{
		ID:     id,
		Hello:  hello,
		Mode:   mode,
		hub:    h,
		rt:     rt,
		ids:    sess,
		closed: make(chan struct{}),
		since:  time.Now(),
	}
	b.name = browserName(hello)
	h.browsers[id] = b
	h.idle = slices.DeleteFunc(h.idle, func(s string) bool { return s == hello.InstanceID })
	policy := h.policy
	h.mu.Unlock()

	if replaced != nil {
		replaced.detach(wire.Errorf(wire.CodeNoSuchBrowser, "browser %s reconnected on a new connection", id), errors.New("replaced by a new connection"))
	}
	h.log.Info("browser connected", "browser", id, "name", b.name, "engine", hello.EngineOrDefault(), "mode", mode)
	b.sendPolicy(policy)
	h.changed()
	return b, nil
}

func browserName(h wire.Hello) string {
	name := h.Browser
	if name == "" {
		if h.EngineOrDefault() == wire.EngineFirefox {
			name = "Firefox"
		} else {
			name = "Chromium"
		}
	}
	if h.Profile != "" {
		name += " (" + h.Profile + ")"
	}
	return name
}

func (h *Hub) remove(b *Browser) {
	h.mu.Lock()
	if h.browsers[b.ID] == b {
		delete(h.browsers, b.ID)
		if inst := b.Hello.InstanceID; inst != "" && h.instances[inst] == b.ID {
			h.idle = append(slices.DeleteFunc(h.idle, func(s string) bool { return s == inst }), inst)
			h.forgetIdle()
		}
		if !h.keeps(b.ids) {
			// A run without instance and session ids can never be resumed:
			// its public ids go with it.
			h.dropTabs(b.ids)
		}
	}
	h.mu.Unlock()
	h.changed()
}

// forgetIdle drops the least recently connected profiles beyond
// MaxRemembered: their browser ids, public tab ids and tab records. A
// forgotten profile that comes back is a new browser with new ids. h.mu
// must be held.
func (h *Hub) forgetIdle() {
	for len(h.idle) > h.opts.MaxRemembered {
		inst := h.idle[0]
		h.idle = h.idle[1:]
		id := h.instances[inst]
		delete(h.instances, inst)
		for k, s := range h.sessions {
			if s.browserID == id {
				delete(h.sessions, k)
				h.dropTabs(s)
			}
		}
	}
}

func (h *Hub) keeps(m *idMap) bool {
	for _, s := range h.sessions {
		if s == m {
			return true
		}
	}
	return false
}

// dropTabs forgets the public ids of one browser run. h.mu must be held.
func (h *Hub) dropTabs(m *idMap) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for pub := range m.toNative {
		if h.tabs[pub].session == m {
			delete(h.tabs, pub)
		}
	}
}

// Remembered counts what the hub keeps for browsers: profiles by
// instanceId, browser runs with their public tab ids, and public tab ids.
func (h *Hub) Remembered() (instances, sessions, tabs int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.instances), len(h.sessions), len(h.tabs)
}

func (h *Hub) changed() {
	if h.opts.OnChange != nil {
		h.opts.OnChange()
	}
}

// Close disconnects every browser; their pending requests fail at once.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	bs := make([]*Browser, 0, len(h.browsers))
	for _, b := range h.browsers {
		bs = append(bs, b)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, b := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.detach(wire.Errorf(wire.CodeNoSuchBrowser, "companion is shutting down"), wire.Errorf(wire.CodeShuttingDown, "companion shutting down"))
		}()
	}
	wg.Wait()
}

// BrowserInfo describes a connected browser.
type BrowserInfo struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Mode       Mode        `json:"mode"`
	Engine     wire.Engine `json:"browserEngine"`
	Hello      wire.Hello  `json:"hello"`
	SharedTabs int         `json:"sharedTabs"`
	OpenTabs   int         `json:"openTabs"`
	Graph      bool        `json:"graph"`
	Since      time.Time   `json:"since"`
}

// Browsers lists connected browsers, sorted by id.
func (h *Hub) Browsers() []BrowserInfo {
	h.mu.RLock()
	bs := make([]*Browser, 0, len(h.browsers))
	for _, b := range h.browsers {
		bs = append(bs, b)
	}
	h.mu.RUnlock()
	out := make([]BrowserInfo, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.Info())
	}
	sort.Slice(out, func(i, j int) bool { return browserLess(out[i].ID, out[j].ID) })
	return out
}

func browserLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// Browser returns a connected browser by id.
func (h *Hub) Browser(id string) (*Browser, error) {
	h.mu.RLock()
	b := h.browsers[id]
	h.mu.RUnlock()
	if b == nil {
		return nil, wire.Errorf(wire.CodeNoSuchBrowser, "no browser %q is connected", id)
	}
	return b, nil
}

// Tab is a tab with its public id and owning browser.
type Tab struct {
	wire.TabInfo
	Native        int         `json:"nativeId"`
	BrowserID     string      `json:"browserId"`
	BrowserName   string      `json:"browserName"`
	BrowserEngine wire.Engine `json:"browserEngine"`
}

// Tabs lists every tab of every connected browser with public ids.
func (h *Hub) Tabs() []Tab {
	var out []Tab
	for _, bi := range h.Browsers() {
		if b, err := h.Browser(bi.ID); err == nil {
			out = append(out, b.Tabs()...)
		}
	}
	return out
}

// Tab resolves a public tab id to its tab and browser.
func (h *Hub) Tab(publicID int) (Tab, *Browser, error) {
	h.mu.RLock()
	ref, ok := h.tabs[publicID]
	var b *Browser
	if ok {
		b = h.browsers[ref.browserID]
	}
	h.mu.RUnlock()
	if !ok {
		return Tab{}, nil, wire.Errorf(wire.CodeNoSuchTab, "no tab %d", publicID)
	}
	if b == nil || b.ids != ref.session {
		return Tab{}, nil, wire.Errorf(wire.CodeNoSuchBrowser, "the browser that owned tab %d is not connected", publicID)
	}
	t, ok := b.tab(ref.native)
	if !ok {
		return Tab{}, nil, wire.Errorf(wire.CodeNoSuchTab, "tab %d was closed", publicID)
	}
	return t, b, nil
}

// publicID returns the public id for a native tab of b, allocating one.
func (h *Hub) publicID(b *Browser, native int) int {
	if id, ok := b.ids.public(native); ok {
		return id
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if id, ok := b.ids.public(native); ok {
		return id
	}
	id := int(h.nextTab.Add(1))
	if !b.lists(native) {
		// The tab left the browser's listing while its description was on
		// its way (a snapshot of the tabs taken before a listing without
		// it). Only a listing that drops a tab forgets its id, so a recorded
		// id would stay for good: this one resolves to no tab.
		return id
	}
	b.ids.set(native, id)
	h.tabs[id] = tabRef{browserID: b.ID, session: b.ids, native: native}
	return id
}

func (h *Hub) forgetTab(b *Browser, native int) {
	id, ok := b.ids.public(native)
	if !ok {
		return
	}
	h.mu.Lock()
	delete(h.tabs, id)
	b.ids.drop(native)
	h.mu.Unlock()
	h.publishTab(id, TabEvent{Kind: TabClosed})
}

// SetPolicy records the policy and sends it to every browser.
func (h *Hub) SetPolicy(p wire.Policy) {
	h.mu.Lock()
	h.policy = p
	bs := make([]*Browser, 0, len(h.browsers))
	for _, b := range h.browsers {
		bs = append(bs, b)
	}
	h.mu.Unlock()
	for _, b := range bs {
		b.sendPolicy(p)
	}
}

// Policy returns the current policy.
func (h *Hub) Policy() wire.Policy {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.policy
}

// TabEventKind tells what happened to a tab.
type TabEventKind int

const (
	TabCDPEvent TabEventKind = iota // a DevTools protocol event
	TabDetached                     // the debugger detached
	TabClosed                       // the tab closed or left its browser's records
	TabUpdated                      // url, title or sharing changed
	TabGone                         // the browser disconnected
	// TabOpened goes to the subscribers of a tab that opened another
	// (Tab is the new one): the shared tab appeared, or gained its opener.
	TabOpened
)

// TabEvent is delivered to tab subscribers.
type TabEvent struct {
	Kind      TabEventKind
	Method    string
	Params    json.RawMessage
	SessionID string
	Reason    string
	Tab       Tab
}

// SubscribeTab calls fn for every event of the public tab until cancel is
// called. fn runs on the browser's reader goroutine: it must not block.
func (h *Hub) SubscribeTab(publicID int, fn func(TabEvent)) (cancel func()) {
	id := h.nextSub.Add(1)
	h.subMu.Lock()
	m := h.tabSubs[publicID]
	if m == nil {
		m = map[int64]func(TabEvent){}
		h.tabSubs[publicID] = m
	}
	m[id] = fn
	h.subMu.Unlock()
	return func() {
		h.subMu.Lock()
		if m := h.tabSubs[publicID]; m != nil {
			delete(m, id)
			if len(m) == 0 {
				delete(h.tabSubs, publicID)
			}
		}
		h.subMu.Unlock()
	}
}

func (h *Hub) publishTab(publicID int, ev TabEvent) {
	h.subMu.RLock()
	m := h.tabSubs[publicID]
	if len(m) == 0 {
		h.subMu.RUnlock()
		return
	}
	fns := make([]func(TabEvent), 0, len(m))
	for _, fn := range m {
		fns = append(fns, fn)
	}
	h.subMu.RUnlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// Request sends one raw request to a browser, for tests and diagnostics.
func (h *Hub) Request(ctx context.Context, browserID, method string, params any) (json.RawMessage, error) {
	b, err := h.Browser(browserID)
	if err != nil {
		return nil, err
	}
	return b.Call(ctx, method, params)
}
