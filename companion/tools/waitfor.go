package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// wait_for waits for a condition on a tab, driven by events: DOM
// conditions by a MutationObserver in the page (page.js waitFor), URLs by
// the tab's navigation events, network idle by its request events. Nothing
// in Go polls.

type waitForArgs struct {
	TabID       int     `json:"tabId" jsonschema:"tab id"`
	Text        string  `json:"text,omitempty" jsonschema:"text on the page"`
	Selector    string  `json:"selector,omitempty" jsonschema:"CSS selector"`
	Ref         string  `json:"ref,omitempty" jsonschema:"element ref"`
	State       string  `json:"state,omitempty" jsonschema:"default visible"`
	URL         string  `json:"url,omitempty" jsonschema:"substring or * pattern"`
	NetworkIdle bool    `json:"networkIdle,omitempty" jsonschema:"no request for 500 ms"`
	Timeout     float64 `json:"timeout,omitempty" jsonschema:"seconds, default 10"`
}

const (
	defaultWaitFor = 10 * time.Second
	maxWaitFor     = 60 * time.Second
	// waitChunk bounds one page-side wait, below the hub's request
	// timeout; a longer wait asks the page again for the rest.
	waitChunk = 20 * time.Second
	// waitMargin is the time left for the page's answer to come back.
	waitMargin = 5 * time.Second
	// netQuiet is how long a tab must have no request in flight to count
	// as network idle.
	netQuiet = 500 * time.Millisecond
	// maxInflight bounds the requests a tab's tracker follows; past it the
	// oldest are forgotten (a page that keeps 1,000 requests open is not
	// going to go idle).
	maxInflight = 1000
)

func registerWaitFor(e *Engine) {
	define(e, Info{
		Name: "wait_for",
		Description: "Wait until text, a selector or a ref reaches a state, the URL matches, or the network is idle. " +
			"Use it instead of sleeping when an action's effect comes later.",
		ReadOnly: true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "state", "visible", "enabled", "hidden", "gone")
		bounds(s, "timeout", 0, maxWaitFor.Seconds())
	}, runWaitFor)
}

func runWaitFor(ctx context.Context, c *call, in *waitForArgs) (*Result, error) {
	n := 0
	for _, set := range []bool{in.Text != "", in.Selector != "", in.Ref != "", in.URL != "", in.NetworkIdle} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, wire.Errorf(wire.CodeBadParams, "give exactly one of text, selector, ref, url or networkIdle")
	}
	if in.State != "" && (in.URL != "" || in.NetworkIdle) {
		return nil, wire.Errorf(wire.CodeBadParams, "state applies to text, selector or ref")
	}
	if in.Text != "" && in.State == "enabled" {
		return nil, wire.Errorf(wire.CodeBadParams, "text can be visible, hidden or gone, not enabled")
	}
	timeout := defaultWaitFor
	if in.Timeout > 0 {
		timeout = time.Duration(in.Timeout * float64(time.Second))
	}
	if timeout > maxWaitFor {
		return nil, wire.Errorf(wire.CodeBadParams, "timeout is at most %g seconds", maxWaitFor.Seconds())
	}
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var what string
	var href string
	switch {
	case in.URL != "":
		what = fmt.Sprintf("the URL to match %q", in.URL)
		href, err = c.waitURL(wctx, ts, in.URL)
	case in.NetworkIdle:
		what = "the network to go idle"
		if err = ts.net.idle(wctx, netQuiet, ts.crashNotice()); errors.Is(err, errIdleCrashed) {
			err = crashError(ts.id)
		}
	default:
		what = describeCond(in)
		href, err = c.waitPage(ctx, start.Add(timeout), ts, in)
	}
	took := time.Since(start).Round(10 * time.Millisecond)
	if err != nil {
		if (errors.Is(err, context.DeadlineExceeded) || wctx.Err() != nil) && ctx.Err() == nil {
			return nil, wire.Errorf(wire.CodeTimeout, "waited %s for %s on tab %d; it did not happen", timeout, what, in.TabID)
		}
		return nil, err
	}
	line := fmt.Sprintf("Done waiting for %s after %s.", what, took)
	if href != "" {
		c.observe(in.TabID, href)
		line += " The tab shows " + href + "."
	}
	return textResult(line), nil
}

func describeCond(in *waitForArgs) string {
	state := in.State
	if state == "" {
		state = "visible"
	}
	switch {
	case in.Text != "":
		if state == "visible" {
			return fmt.Sprintf("text %q to appear", in.Text)
		}
		return fmt.Sprintf("text %q to be %s", in.Text, state)
	case in.Selector != "":
		return fmt.Sprintf("%q to be %s", in.Selector, state)
	}
	return fmt.Sprintf("%s to be %s", in.Ref, state)
}

// waitPage runs the page-side wait, again in each new document the tab
// loads before the deadline. The page's own timer ends each wait; the
// request gets waitMargin more, so the page's answer, not a cut request,
// says the time is up.
func (c *call) waitPage(ctx context.Context, deadline time.Time, ts *tabState, in *waitForArgs) (string, error) {
	cond := map[string]any{}
	switch {
	case in.Text != "":
		cond["text"] = in.Text
	case in.Selector != "":
		cond["selector"] = in.Selector
	default:
		cond["ref"] = in.Ref
	}
	if in.State != "" {
		cond["state"] = in.State
	}
	for {
		left := time.Until(deadline)
		if left <= time.Millisecond {
			return "", context.DeadlineExceeded
		}
		chunk := min(left, waitChunk)
		w := ts.watch()
		var r struct {
			Met bool `json:"met"`
		}
		cctx, cancel := context.WithTimeout(ctx, chunk+waitMargin)
		href, err := ts.call(cctx, c.s.Label, "waitFor", &r, false, cond, max(chunk.Milliseconds(), 1))
		cancel()
		if err == nil && r.Met {
			w.stop()
			return href, nil
		}
		if err != nil && !contextGone(err) {
			w.stop()
			return href, err
		}
		if err != nil {
			if ctx.Err() != nil || time.Until(deadline) <= 0 {
				w.stop()
				return "", context.DeadlineExceeded
			}
			if in.Ref != "" && in.State != "gone" && in.State != "hidden" {
				// A ref belongs to its document; the new one has none.
				w.stop()
				return "", wire.Errorf(wire.CodeBadParams, "the page navigated while waiting for %s; refs from the old page are gone", in.Ref)
			}
			if in.Ref != "" {
				w.stop()
				return "", nil
			}
			// The document changed under the wait: wait for the new one to
			// load, then look there.
			n := &navState{mainFrame: ts.frame()}
			for _, ev := range w.pending() {
				n.feed(ev)
			}
			if !n.done {
				if _, err := w.waitLoad(ctx, n, time.Until(deadline)); err != nil {
					w.stop()
					return "", err
				}
			}
		}
		w.stop()
	}
}

// waitURL reads the tab's navigation events until its main frame's URL
// matches pattern.
func (c *call) waitURL(ctx context.Context, ts *tabState, pattern string) (string, error) {
	match := urlMatcher(pattern)
	w := ts.watch()
	defer w.stop()
	var info struct {
		Title string `json:"title"`
	}
	href, err := ts.helper(ctx, c.s.Label, "info", &info)
	if err != nil && ctx.Err() != nil {
		return "", ctx.Err()
	}
	select {
	case <-ts.crashNotice():
		// The page cannot change its URL until an agent navigates it.
		return "", crashError(ts.id)
	default:
	}
	if err == nil && match(href) {
		return href, nil
	}
	for {
		ev, err := w.next(ctx)
		if err != nil {
			return "", err
		}
		switch ev.Kind {
		case hub.TabClosed, hub.TabGone:
			return "", wire.Errorf(wire.CodeNoSuchTab, "tab %d closed while waiting", ts.id)
		case hub.TabCDPEvent:
		default:
			continue
		}
		var p struct {
			FrameID string `json:"frameId"`
			URL     string `json:"url"`
			Frame   struct {
				ParentID string `json:"parentId"`
				URL      string `json:"url"`
				Fragment string `json:"urlFragment"`
			} `json:"frame"`
		}
		switch ev.Method {
		case "Page.frameNavigated":
			if json.Unmarshal(ev.Params, &p) != nil || p.Frame.ParentID != "" {
				continue
			}
			if u := p.Frame.URL + p.Frame.Fragment; match(u) {
				return u, nil
			}
		case "Page.navigatedWithinDocument":
			if json.Unmarshal(ev.Params, &p) != nil || (p.FrameID != "" && p.FrameID != ts.frame()) {
				continue
			}
			if match(p.URL) {
				return p.URL, nil
			}
		}
	}
}

// netTracker counts a tab's requests in flight from its Network events.
type netTracker struct {
	mu       sync.Mutex
	inflight map[string]time.Time
	changed  chan struct{} // closed and replaced on every change
}

func (n *netTracker) feed(method string, params json.RawMessage) {
	var p struct {
		RequestID string `json:"requestId"`
		Type      string `json:"type"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.inflight == nil {
		n.inflight = map[string]time.Time{}
	}
	switch method {
	case "Network.requestWillBeSent":
		if p.Type == "WebSocket" || p.Type == "EventSource" {
			return // open for the page's life by design
		}
		if len(n.inflight) >= maxInflight {
			oldest, at := "", time.Time{}
			for id, t := range n.inflight {
				if oldest == "" || t.Before(at) {
					oldest, at = id, t
				}
			}
			delete(n.inflight, oldest)
		}
		n.inflight[p.RequestID] = time.Now()
	case "Network.loadingFinished", "Network.loadingFailed":
		if _, ok := n.inflight[p.RequestID]; !ok {
			return
		}
		delete(n.inflight, p.RequestID)
	default:
		return
	}
	if n.changed != nil {
		close(n.changed)
		n.changed = nil
	}
}

// state returns the requests in flight and a channel closed at the next
// change.
func (n *netTracker) state() (int, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.changed == nil {
		n.changed = make(chan struct{})
	}
	return len(n.inflight), n.changed
}

// startedSince counts the requests in flight that started at or after t,
// and returns a channel closed at the next change.
func (n *netTracker) startedSince(t time.Time) (int, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.changed == nil {
		n.changed = make(chan struct{})
	}
	count := 0
	for _, at := range n.inflight {
		if !at.Before(t) {
			count++
		}
	}
	return count, n.changed
}

// idle returns once no request has been in flight for quiet, or with
// errIdleCrashed once crashed is closed, or when ctx ends.
func (n *netTracker) idle(ctx context.Context, quiet time.Duration, crashed <-chan struct{}) error {
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		count, changed := n.state()
		var fire <-chan time.Time
		if count == 0 {
			timer.Reset(quiet)
			fire = timer.C
		}
		select {
		case <-fire:
			return nil
		case <-changed:
		case <-crashed:
			return errIdleCrashed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// errIdleCrashed ends a wait for the network of a page whose renderer
// crashed: its requests went with it, and so did whatever would load next.
var errIdleCrashed = errors.New("the page crashed")
