package tools

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Waits are event driven: a watcher collects the tab's Page events from the
// moment it is created (before the action that may navigate), and the
// waiting code reads them in order until the event that matters arrives or
// its deadline passes. Nothing sleeps for a fixed time.

const maxWatchedEvents = 512

type watcher struct {
	ts     *tabState
	mu     sync.Mutex
	events []hub.TabEvent
	read   int
	signal chan struct{}
}

// waitHook, when a test sets it, hears each wait start on a tab (a watcher
// made, a crash notice taken), so that the test can make its fault then.
var waitHook atomic.Pointer[func(tab int)]

func waited(tab int) {
	if fn := waitHook.Load(); fn != nil {
		(*fn)(tab)
	}
}

func (ts *tabState) watch() *watcher {
	waited(ts.id)
	w := &watcher{ts: ts, signal: make(chan struct{}, 1)}
	ts.mu.Lock()
	gone := ts.gone
	ts.watchers[w] = struct{}{}
	ts.mu.Unlock()
	if gone {
		w.push(hub.TabEvent{Kind: hub.TabClosed})
	}
	return w
}

func (w *watcher) stop() {
	w.ts.mu.Lock()
	delete(w.ts.watchers, w)
	w.ts.mu.Unlock()
}

func (w *watcher) push(ev hub.TabEvent) {
	w.mu.Lock()
	if len(w.events) < maxWatchedEvents {
		w.events = append(w.events, ev)
	}
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

// next returns the next unread event, waiting until ctx ends. The report
// of a crashed renderer is an error: nothing a wait looks for comes from a
// page after its renderer crashed.
func (w *watcher) next(ctx context.Context) (hub.TabEvent, error) {
	for {
		w.mu.Lock()
		if w.read < len(w.events) {
			ev := w.events[w.read]
			w.read++
			w.mu.Unlock()
			if isCrash(ev) {
				return hub.TabEvent{}, crashError(w.ts.id)
			}
			return ev, nil
		}
		w.mu.Unlock()
		select {
		case <-w.signal:
		case <-ctx.Done():
			return hub.TabEvent{}, ctx.Err()
		}
	}
}

// pending drains the already-received events without waiting, up to a
// crash report, which it leaves for next.
func (w *watcher) pending() []hub.TabEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	end := w.read
	for end < len(w.events) && !isCrash(w.events[end]) {
		end++
	}
	out := append([]hub.TabEvent(nil), w.events[w.read:end]...)
	w.read = end
	return out
}

func isCrash(ev hub.TabEvent) bool {
	return ev.Kind == hub.TabCDPEvent && ev.Method == crashEvent && ev.SessionID == ""
}

// navState follows one main-frame navigation through its events.
type navState struct {
	mainFrame       string
	loaderID        string // wanted loader, "" = any
	started         bool   // the main frame started loading or asked to navigate
	committed       bool   // the new document committed
	sameDoc         bool   // a same-document navigation happened
	done            bool
	closed          bool
	detached        bool
	committedLoader string
	downloads       []string // guids of downloads the page started
}

type pageEventParams struct {
	FrameID  string `json:"frameId"`
	LoaderID string `json:"loaderId"`
	Name     string `json:"name"`
	Frame    struct {
		ID       string `json:"id"`
		ParentID string `json:"parentId"`
		LoaderID string `json:"loaderId"`
	} `json:"frame"`
	Type string `json:"type"`
}

// feed advances the state with one event.
func (n *navState) feed(ev hub.TabEvent) {
	switch ev.Kind {
	case hub.TabClosed, hub.TabGone:
		n.closed, n.done = true, true
		return
	case hub.TabDetached:
		n.detached, n.done = true, true
		return
	case hub.TabCDPEvent:
	default:
		return
	}
	var p pageEventParams
	switch ev.Method {
	case "Page.frameRequestedNavigation", "Page.frameStartedNavigating", "Page.frameStartedLoading",
		"Page.frameNavigated", "Page.navigatedWithinDocument", "Page.lifecycleEvent", "Page.frameStoppedLoading":
		if json.Unmarshal(ev.Params, &p) != nil {
			return
		}
	case "Page.loadEventFired":
		if n.committed {
			n.done = true
		}
		return
	case "Page.downloadWillBegin":
		n.downloads = append(n.downloads, guidOf(ev.Params))
		if n.started && !n.committed {
			n.done = true // the navigation became this download
		}
		return
	default:
		return
	}
	// A frameNavigated without a parent is the main frame's; the other
	// events name their frame.
	if ev.Method == "Page.frameNavigated" {
		if p.Frame.ParentID != "" {
			return
		}
	} else if n.mainFrame != "" && p.FrameID != n.mainFrame {
		return
	}
	switch ev.Method {
	case "Page.frameRequestedNavigation", "Page.frameStartedNavigating", "Page.frameStartedLoading":
		n.started = true
	case "Page.frameNavigated":
		if n.loaderID == "" || p.Frame.LoaderID == n.loaderID {
			n.committed = true
			n.started = true
			n.committedLoader = p.Frame.LoaderID
			if p.Type == "BackForwardCacheRestore" {
				// A page restored from the back/forward cache does not load again.
				n.done = true
			}
		}
	case "Page.navigatedWithinDocument":
		n.sameDoc = true
	case "Page.lifecycleEvent":
		if p.Name == "load" && (p.LoaderID == n.loaderID && n.loaderID != "" || n.committed && p.LoaderID == n.committedLoader) {
			n.done = true
		}
	case "Page.frameStoppedLoading":
		if n.started {
			n.done = true
		}
	}
}

// waitLoad reads events until the navigation finished loading or timeout
// passes. It reports whether the load finished.
func (w *watcher) waitLoad(ctx context.Context, n *navState, timeout time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for !n.done {
		ev, err := w.next(ctx)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return false, nil
			}
			return false, err
		}
		n.feed(ev)
	}
	if n.closed {
		return false, wire.Errorf(wire.CodeNoSuchTab, "tab %d closed while loading", w.ts.id)
	}
	return !n.detached, nil
}

// settled is what an action's wait observed.
type settled struct {
	downloads []string // lines about downloads the action started
	href      string
	title     string
	navigated bool // a new document committed
	sameDoc   bool // the URL changed within the document
	pending   bool // a navigation started but had not committed by the deadline
	loading   bool // the new document was still loading at the deadline
}

// settle waits after an action: for the DOM to go quiet in the page, and,
// if the action started a main-frame navigation, for that page to load.
func (c *call) settle(ctx context.Context, ts *tabState, w *watcher) (settled, error) {
	var out settled
	quiet, max := c.e.opts.QuietWindow, c.e.opts.SettleTimeout
	// No retry in a new document: if the action navigated, the world is
	// created once the new page has loaded, not while it swaps in.
	href, qerr := ts.call(ctx, c.s.Label, "quiet", nil, false, quiet.Milliseconds(), max.Milliseconds())
	if qerr == nil && c.requestsAnswered(ctx, ts, max) {
		// What the answers changed settles in turn.
		href, qerr = ts.call(ctx, c.s.Label, "quiet", nil, false, quiet.Milliseconds(), max.Milliseconds())
	}
	n := &navState{mainFrame: ts.frame()}
	for _, ev := range w.pending() {
		n.feed(ev)
	}
	out.sameDoc = n.sameDoc
	if n.closed {
		return out, wire.Errorf(wire.CodeNoSuchTab, "tab %d closed", ts.id)
	}
	if !n.started && !n.committed {
		if qerr == nil {
			out.href = href
			out.downloads = c.downloadNotes(ctx, w, n.downloads, false)
			return out, nil
		}
		if !contextGone(qerr) {
			return out, qerr
		}
	}
	if !n.done {
		ok, err := w.waitLoad(ctx, n, c.e.opts.NavigationTimeout)
		if err != nil {
			return out, err
		}
		out.loading = !ok && n.committed
	}
	out.navigated = n.committed || (qerr != nil && contextGone(qerr))
	out.pending = n.started && !n.committed && !n.done
	// A navigation that ended without a new document may have become a
	// download, which the browser announces a moment later.
	out.downloads = c.downloadNotes(ctx, w, n.downloads, n.started && !n.committed && !out.pending)
	var info struct {
		Title string `json:"title"`
	}
	href, err := ts.helper(ctx, c.s.Label, "info", &info)
	if err != nil {
		return out, err
	}
	out.href, out.title = href, info.Title
	return out, nil
}

// requestsAnswered waits, up to max since the call began, for the
// requests the page started since then to finish. It reports whether there
// were any.
func (c *call) requestsAnswered(ctx context.Context, ts *tabState, max time.Duration) bool {
	n, changed := ts.net.startedSince(c.start)
	if n == 0 {
		return false
	}
	ctx, cancel := context.WithDeadline(ctx, c.start.Add(max))
	defer cancel()
	crashed := ts.crashNotice()
	for n > 0 {
		select {
		case <-changed:
		case <-ctx.Done():
			return true
		case <-crashed:
			return true // the page's next call says so
		}
		n, changed = ts.net.startedSince(c.start)
	}
	return true
}
