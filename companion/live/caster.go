package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// caster runs one Page.startScreencast for one tab and hands its frames to
// every viewer of that tab.
//
// Frames arrive on the hub's reader goroutine for the owning browser, which
// must never wait. The hub callback therefore only starts the frame's ack on
// its own goroutine and drops the frame into a one-slot mailbox that keeps
// the newest; the caster's own goroutine encodes it once and offers it
// to every viewer's one-frame queue. Nothing on that path waits for a viewer.
type caster struct {
	s    *Server
	tab  int
	log  *slog.Logger
	prev *caster // an earlier caster of this tab that must finish stopping first

	mailbox chan rawFrame // newest frame wins
	kick    chan struct{} // tab events are waiting in pending
	quit    chan struct{} // closed when the caster must stop
	done    chan struct{} // closed once the screencast is stopped and cleaned up
	unsub   func()
	acking  sync.WaitGroup // acks in flight

	mu      sync.Mutex
	viewers map[*viewer]struct{}
	last    []byte // the newest frame message, for viewers that join
	// notice is the notice standing while there is no picture (a browser
	// page, a failed start, a detached debugger), for viewers that join
	// while it stands; a frame or a started screencast clears it.
	notice   []byte
	meta     FrameMetadata
	haveMeta bool
	pending  []hub.TabEvent
	ending   bool
	endCode  wire.Code // set when the view ends with an error
	endMsg   string

	// Owned by the run goroutine.
	adapt     adapter
	seq       int64
	streaming bool
	// waitAttach is set when the screencast is down and must not be
	// restarted until there is a reason to think it can work again: the
	// person dismissed the debugging banner, or the page is restricted.
	waitAttach bool
	retry      *time.Timer
	backoff    time.Duration
}

type rawFrame struct {
	Data      json.RawMessage `json:"data"`
	SessionID int             `json:"sessionId"`
	Metadata  struct {
		OffsetTop       float64 `json:"offsetTop"`
		PageScaleFactor float64 `json:"pageScaleFactor"`
		DeviceWidth     float64 `json:"deviceWidth"`
		DeviceHeight    float64 `json:"deviceHeight"`
		ScrollOffsetX   float64 `json:"scrollOffsetX"`
		ScrollOffsetY   float64 `json:"scrollOffsetY"`
		Timestamp       float64 `json:"timestamp"`
	} `json:"metadata"`
}

func newCaster(s *Server, tab int, prev *caster) *caster {
	c := &caster{
		s:       s,
		tab:     tab,
		log:     s.log.With("tab", tab),
		prev:    prev,
		mailbox: make(chan rawFrame, 1),
		kick:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		viewers: map[*viewer]struct{}{},
		adapt:   adapter{level: startLevel},
	}
	// Subscribe before the screencast starts so its first frame is seen.
	c.unsub = s.opts.Hub.SubscribeTab(tab, c.onEvent)
	return c
}

// begin starts the screencast. The caller adds the first viewer before, so
// nothing the caster says (a notice, the end of the view) can miss it.
func (c *caster) begin() { go c.run() }

// onEvent runs on the hub's reader goroutine: queue and return.
func (c *caster) onEvent(ev hub.TabEvent) {
	if ev.Kind == hub.TabCDPEvent && ev.Method == "Page.screencastFrame" && ev.SessionID == "" {
		var f rawFrame
		if err := json.Unmarshal(ev.Params, &f); err != nil || len(f.Data) == 0 || f.Data[0] != '"' {
			c.log.Debug("malformed screencast frame ignored", "err", err)
			return
		}
		// Chromium keeps at most a couple of frames unacknowledged and then
		// stops sending, so every frame is acked, including the ones the
		// mailbox is about to drop, and at once: each ack is its own round
		// trip through the extension, and acking one after the other would
		// cap the frame rate at one frame per round trip. The lock orders
		// Add before stop's Wait.
		c.mu.Lock()
		if c.ending {
			c.mu.Unlock()
			return
		}
		c.acking.Add(1)
		c.mu.Unlock()
		go func() {
			defer c.acking.Done()
			c.ack(f.SessionID)
		}()
		select {
		case c.mailbox <- f:
		default:
			select {
			case <-c.mailbox:
			default:
			}
			select {
			case c.mailbox <- f:
			default:
			}
		}
		return
	}
	c.mu.Lock()
	c.pending = append(c.pending, ev)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *caster) ack(id int) {
	ctx, cancel := c.s.callCtx()
	defer cancel()
	if _, err := c.s.opts.Hub.CDP(ctx, c.tab, "Page.screencastFrameAck", map[string]int{"sessionId": id}, "", Client); err != nil {
		c.log.Debug("screencast frame not acknowledged", "err", err)
	}
}

// add registers a viewer and gives it the newest frame at once, so a second
// viewer of a still page does not wait for the page to change.
func (c *caster) add(v *viewer) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ending {
		return false
	}
	c.viewers[v] = struct{}{}
	if c.last != nil {
		v.offerFrame(c.last)
	}
	if c.notice != nil {
		v.offerControl(c.notice)
	}
	return true
}

// notify tells every viewer, and every viewer that joins until the picture
// is back, why there is no picture.
func (c *caster) notify(message string) {
	msg := encode(NoticeMsg{Kind: KindNotice, Message: message})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notice = msg
	for v := range c.viewers {
		v.offerControl(msg)
	}
}

func (c *caster) clearNotice() {
	c.mu.Lock()
	c.notice = nil
	c.mu.Unlock()
}

// remove drops a viewer; the last one to leave stops the screencast.
func (c *caster) remove(v *viewer) {
	c.mu.Lock()
	delete(c.viewers, v)
	last := len(c.viewers) == 0 && !c.ending
	if last {
		c.ending = true
	}
	c.mu.Unlock()
	if last {
		close(c.quit)
	}
}

// end tells every viewer why the view is over and stops the screencast.
func (c *caster) end(code wire.Code, msg string) {
	c.mu.Lock()
	if c.endCode != "" {
		c.mu.Unlock()
		return
	}
	c.endCode, c.endMsg = code, msg
	vs := make([]*viewer, 0, len(c.viewers))
	for v := range c.viewers {
		vs = append(vs, v)
	}
	wasEnding := c.ending
	c.ending = true
	c.mu.Unlock()
	c.log.Info("live view ended", "code", code, "reason", msg)
	for _, v := range vs {
		v.fail(code, msg)
	}
	if !wasEnding {
		close(c.quit)
	}
}

func (c *caster) broadcast(msg []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for v := range c.viewers {
		v.offerControl(msg)
	}
}

// metadata is the newest frame's metadata, for mapping input coordinates.
func (c *caster) metadata() (FrameMetadata, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meta, c.haveMeta
}

func (c *caster) run() {
	defer close(c.done)
	if c.prev != nil {
		// Its Page.stopScreencast must not land after our start.
		<-c.prev.done
	}
	c.retry = time.NewTimer(time.Hour)
	c.retry.Stop()
	defer c.retry.Stop()
	c.start()
	for {
		select {
		case <-c.quit:
			c.stop()
			return
		case f := <-c.mailbox:
			c.fanout(f)
		case <-c.kick:
			c.events()
		case <-c.retry.C:
			c.start()
		}
	}
}

// start (re)issues Page.startScreencast at the current level. It also
// re-attaches the debugger when it was detached: the extension attaches on
// the next command.
func (c *caster) start() {
	select {
	case <-c.quit:
		return
	default:
	}
	ctx, cancel := c.s.callCtx()
	defer cancel()
	// Hold the debugger while someone watches: a still page sends no frames
	// and so no acks, and the extension would detach it after its idle time.
	if err := c.s.opts.Hub.TabsHold(ctx, c.tab, true); err != nil && !errors.Is(err, wire.ErrUnknownMethod) {
		c.log.Debug("tab not held for live view", "err", err)
	}
	lv := levels[c.adapt.level]
	_, err := c.s.opts.Hub.CDP(ctx, c.tab, "Page.startScreencast", map[string]any{
		"format": "jpeg", "quality": lv.Quality, "maxWidth": lv.MaxWidth, "maxHeight": lv.MaxHeight, "everyNthFrame": 1,
	}, "", Client)
	if err == nil {
		c.streaming, c.waitAttach, c.backoff = true, false, 0
		c.clearNotice()
		c.log.Debug("screencast started", "quality", lv.Quality, "max_width", lv.MaxWidth, "max_height", lv.MaxHeight)
		return
	}
	c.streaming = false
	switch wire.CodeOf(err) {
	case wire.CodeNoSuchTab:
		c.end(wire.CodeNoSuchTab, "The tab was closed.")
	case wire.CodeNoSuchBrowser:
		c.end(wire.CodeNoSuchBrowser, "The browser that has this tab is no longer connected to Reins.")
	case wire.CodeNotShared:
		c.end(wire.CodeNotShared, "The tab is no longer shared with Reins.")
	case wire.CodeRestrictedURL:
		c.waitAttach = true
		c.notify("This page cannot be shown: browsers keep their own pages and extension pages out of reach. The picture comes back when the tab shows a web page.")
	default:
		c.backoff = min(max(2*c.backoff, 500*time.Millisecond), 30*time.Second)
		c.log.Warn("screencast did not start; retrying", "err", err, "in", c.backoff)
		c.notify(fmt.Sprintf("The picture could not be started (%v); trying again.", err))
		c.retry.Reset(c.backoff)
	}
}

func (c *caster) stop() {
	c.unsub()
	c.mu.Lock()
	code := c.endCode
	c.mu.Unlock()
	if code != wire.CodeNoSuchTab && code != wire.CodeNoSuchBrowser {
		ctx, cancel := c.s.callCtx()
		if _, err := c.s.opts.Hub.CDP(ctx, c.tab, "Page.stopScreencast", nil, "", Client); err != nil {
			c.log.Debug("screencast not stopped", "err", err)
		}
		if err := c.s.opts.Hub.TabsHold(ctx, c.tab, false); err != nil && !errors.Is(err, wire.ErrUnknownMethod) {
			c.log.Debug("tab hold not released", "err", err)
		}
		cancel()
	}
	c.acking.Wait()
	c.s.casterStopped(c)
}

func (c *caster) fanout(f rawFrame) {
	c.seq++
	md := FrameMetadata{
		Width: f.Metadata.DeviceWidth, Height: f.Metadata.DeviceHeight,
		PageScaleFactor: f.Metadata.PageScaleFactor,
		ScrollOffsetX:   f.Metadata.ScrollOffsetX, ScrollOffsetY: f.Metadata.ScrollOffsetY,
		Timestamp: f.Metadata.Timestamp,
	}
	msg := frameMessage(c.seq, md, f.Data)
	c.mu.Lock()
	c.last = msg
	c.notice = nil
	c.meta, c.haveMeta = md, md.Width > 0 && md.Height > 0
	vs := make([]*viewer, 0, len(c.viewers))
	for v := range c.viewers {
		vs = append(vs, v)
		v.offerFrame(msg)
	}
	c.mu.Unlock()

	c.adapt.frames++
	if c.adapt.frames < adaptWindow {
		return
	}
	c.adapt.frames = 0
	worst := 0.0
	for _, v := range vs {
		offered, dropped := v.takeStats()
		if v.stalled() || offered == 0 {
			continue
		}
		worst = max(worst, float64(dropped)/float64(offered))
	}
	if lv, changed := c.adapt.windowDone(worst); changed && c.streaming {
		c.log.Info("screencast quality adapted", "quality", levels[lv].Quality, "max_width", levels[lv].MaxWidth, "worst_drop", worst)
		c.restart()
	}
}

// restart applies a new level to a running screencast. Chromium refuses a
// second Page.startScreencast while one runs ("Screencast is already
// active"), so the running one stops first. Frames of the old one that are
// still on their way are acked and shown like any other.
func (c *caster) restart() {
	ctx, cancel := c.s.callCtx()
	_, err := c.s.opts.Hub.CDP(ctx, c.tab, "Page.stopScreencast", nil, "", Client)
	cancel()
	if err != nil {
		c.log.Debug("screencast not stopped before a restart", "err", err)
	}
	c.streaming = false
	c.start()
}

func (c *caster) events() {
	c.mu.Lock()
	evs := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, ev := range evs {
		switch ev.Kind {
		case hub.TabClosed:
			c.end(wire.CodeNoSuchTab, "The tab was closed.")
			return
		case hub.TabGone:
			c.end(wire.CodeNoSuchBrowser, fmt.Sprintf("The browser that has this tab disconnected from Reins (%s).", ev.Reason))
			return
		case hub.TabUpdated:
			if !ev.Tab.Shared {
				c.end(wire.CodeNotShared, "The tab is no longer shared with Reins.")
				return
			}
			c.broadcast(encode(TabMsg{Kind: KindTab, Tab: describe(ev.Tab)}))
			if c.waitAttach && ev.Tab.Unsupported == "" {
				c.start()
			}
		case hub.TabDetached:
			c.streaming = false
			switch ev.Reason {
			case "canceled_by_user":
				// The person dismissed the browser's debugging banner: do
				// not attach again behind their back. Any later command on
				// the tab (theirs in Take over, or an agent's) re-attaches,
				// and its events tell us so.
				c.waitAttach = true
				c.notify("The browser detached Reins from this tab. The picture resumes when Reins attaches again (Take over and click, or an agent's next step).")
			case "target_closed":
				// A tabs event saying the tab closed follows.
				c.waitAttach = true
			default:
				c.start()
			}
		case hub.TabCDPEvent:
			if c.waitAttach {
				c.start()
			}
		}
	}
}

// reattached is called after a command of ours succeeded on the tab: when
// the screencast was waiting for the debugger, it can run again.
func (c *caster) reattached() {
	c.mu.Lock()
	c.pending = append(c.pending, hub.TabEvent{Kind: hub.TabCDPEvent, Method: "live.reattached"})
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func describe(t hub.Tab) TabDesc {
	return TabDesc{ID: t.ID, Title: t.Title, URL: t.URL, Browser: t.BrowserName}
}
