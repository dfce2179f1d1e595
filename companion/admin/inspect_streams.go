package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Snapshot is one line of GET /v1/inspect/changes.
type Snapshot struct {
	Browsers []hub.BrowserInfo `json:"browsers"`
	Tabs     []hub.Tab         `json:"tabs"`
}

// Event is one line of GET /v1/inspect/events. The first line of every
// stream has kind "subscribed": once a client has read it, no event of the
// tab can be missed.
type Event struct {
	Kind      string          `json:"kind"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Tab       *hub.Tab        `json:"tab,omitempty"`
}

// Event kinds, one per hub.TabEventKind plus the stream's own.
const (
	KindSubscribed = "subscribed"
	KindCDPEvent   = "cdp.event"
	KindDetached   = "detached"
	KindClosed     = "closed"
	KindUpdated    = "updated"
	KindGone       = "gone"
	// KindOverflow is the last line sent to a client that fell too far
	// behind (see Inspect.StreamQueue); the stream ends after it.
	KindOverflow = "overflow"
)

var kindNames = map[hub.TabEventKind]string{
	hub.TabCDPEvent: KindCDPEvent,
	hub.TabDetached: KindDetached,
	hub.TabClosed:   KindClosed,
	hub.TabUpdated:  KindUpdated,
	hub.TabGone:     KindGone,
}

func toEvent(ev hub.TabEvent) Event {
	out := Event{Kind: kindNames[ev.Kind], Method: ev.Method, Params: ev.Params, SessionID: ev.SessionID, Reason: ev.Reason}
	if out.Kind == "" {
		out.Kind = "unknown"
	}
	if ev.Kind == hub.TabUpdated {
		t := ev.Tab
		out.Tab = &t
	}
	return out
}

// ndjson starts a streaming answer and returns a func that writes one line
// and flushes it at once, so a waiting test sees each change as it happens.
func ndjson(w http.ResponseWriter) func(v any) error {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	return func(v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(data, '\n')); err != nil {
			return err
		}
		return rc.Flush()
	}
}

func (h *Handler) inspectChanges(w http.ResponseWriter, r *http.Request) {
	if h.opts.Inspect.Changes == nil {
		writeError(w, wire.Errorf(wire.CodeNotImplemented, "this companion's inspection routes have no change source"))
		return
	}
	signals, cancel := h.opts.Inspect.Changes()
	defer cancel()
	write := ndjson(w)
	// One line per change signal, even when browsers and tabs look the
	// same: the signal may be about state the snapshot does not show
	// (pairing offers, pause), and a test waiting on that state re-reads
	// it through another API when a line arrives.
	emit := func() error {
		return write(Snapshot{Browsers: h.hub().Browsers(), Tabs: nonNil(h.hub().Tabs())})
	}
	// The source's own first signal yields the first line; a source that
	// sends none still gets one line at once.
	select {
	case _, ok := <-signals:
		if !ok {
			return
		}
	default:
	}
	if emit() != nil {
		return
	}
	for {
		select {
		case _, ok := <-signals:
			if !ok {
				return // the companion is shutting down
			}
			if emit() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-h.stopping:
			return
		}
	}
}

func (h *Handler) inspectEvents(w http.ResponseWriter, r *http.Request) {
	tab, err := strconv.Atoi(r.URL.Query().Get("tab"))
	if err != nil {
		writeError(w, wire.Errorf(wire.CodeBadParams, "tab must be a public tab id"))
		return
	}
	if _, _, err := h.hub().Tab(tab); errors.Is(err, wire.ErrNoSuchTab) {
		writeError(w, err)
		return
	}
	n := h.opts.Inspect.StreamQueue
	if n <= 0 {
		n = DefaultStreamQueue
	}
	// The hub calls back on a browser's reader goroutine, which must never
	// block: events queue here, and a client that falls behind is cut off.
	queue := make(chan hub.TabEvent, n)
	overflow := make(chan struct{})
	var once sync.Once
	cancel := h.hub().SubscribeTab(tab, func(ev hub.TabEvent) {
		select {
		case queue <- ev:
		default:
			once.Do(func() { close(overflow) })
		}
	})
	defer cancel()
	write := ndjson(w)
	if write(Event{Kind: KindSubscribed}) != nil {
		return
	}
	for {
		select {
		case ev := <-queue:
			if write(toEvent(ev)) != nil {
				return
			}
		case <-overflow:
			// Deliver what was queued before the loss, then say so.
			for {
				select {
				case ev := <-queue:
					if write(toEvent(ev)) != nil {
						return
					}
					continue
				default:
				}
				break
			}
			write(Event{Kind: KindOverflow, Reason: "client fell behind; events were dropped"})
			h.log.Warn("inspection event stream cut off: client too slow", "tab", tab)
			return
		case <-r.Context().Done():
			return
		case <-h.stopping:
			return
		}
	}
}
