package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Inspector is the client's view of the inspection routes. Failures come
// back as *wire.Error, so errors.Is(err, wire.ErrNotShared) and wire.CodeOf
// work on them.
type Inspector struct{ c *Client }

// Inspect returns the inspection view of c.
func (c *Client) Inspect() *Inspector { return &Inspector{c: c} }

// Close drops idle connections.
func (i *Inspector) Close() { i.c.Close() }

// Browsers lists connected browsers.
func (i *Inspector) Browsers(ctx context.Context) ([]hub.BrowserInfo, error) {
	var out []hub.BrowserInfo
	return out, i.c.do(ctx, http.MethodGet, "/v1/inspect/browsers", nil, &out)
}

// Tabs lists every tab with its public id.
func (i *Inspector) Tabs(ctx context.Context) ([]hub.Tab, error) {
	var out []hub.Tab
	return out, i.c.do(ctx, http.MethodGet, "/v1/inspect/tabs", nil, &out)
}

// Request sends one raw wire request to a browser.
func (i *Inspector) Request(ctx context.Context, browserID, method string, params any) (json.RawMessage, error) {
	raw, err := paramsOf(params)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	return out, i.c.do(ctx, http.MethodPost, "/v1/inspect/request", RequestBody{BrowserID: browserID, Method: method, Params: raw}, &out)
}

// CDP runs one DevTools protocol command on a shared tab.
func (i *Inspector) CDP(ctx context.Context, tabID int, method string, params any) (json.RawMessage, error) {
	raw, err := paramsOf(params)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	return out, i.c.do(ctx, http.MethodPost, "/v1/inspect/cdp", CDPBody{TabID: tabID, Method: method, Params: raw}, &out)
}

func paramsOf(p any) (json.RawMessage, error) {
	switch v := p.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "encoding params: %w", err)
		}
		return data, nil
	}
}

// CreateTab opens a tab in a browser; the extension shares it.
func (i *Inspector) CreateTab(ctx context.Context, browserID, url string, active bool) (hub.Tab, error) {
	var out hub.Tab
	return out, i.c.do(ctx, http.MethodPost, "/v1/inspect/tabs/create", CreateBody{BrowserID: browserID, URL: url, Active: active}, &out)
}

// CloseTab closes a tab.
func (i *Inspector) CloseTab(ctx context.Context, tabID int) error {
	return i.c.do(ctx, http.MethodPost, "/v1/inspect/tabs/close", CloseBody{TabID: tabID}, nil)
}

// Stream is an open NDJSON answer. C delivers its lines and is closed when
// the stream ends; Err then says why.
type Stream[T any] struct {
	C      <-chan T
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// Close ends the stream and waits for its reader.
func (s *Stream[T]) Close() {
	s.cancel()
	<-s.done
}

// Err is why the stream ended (nil while it runs, io.EOF when the server
// ended it).
func (s *Stream[T]) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Stream[T]) setErr(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

func openStream[T any](ctx context.Context, c *Client, path string) (*Stream[T], error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("admin channel: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		cancel()
		return nil, errorOf(resp, data)
	}
	ch := make(chan T)
	s := &Stream[T]{C: ch, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), wire.MaxFrameBytes+1024)
		for sc.Scan() {
			var v T
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				s.setErr(fmt.Errorf("admin channel: GET %s: malformed line: %w", path, err))
				return
			}
			select {
			case ch <- v:
			case <-ctx.Done():
				s.setErr(ctx.Err())
				return
			}
		}
		if err := sc.Err(); err != nil {
			s.setErr(err)
			return
		}
		s.setErr(io.EOF)
	}()
	return s, nil
}

// Changes opens GET /v1/inspect/changes. The first snapshot arrives at once.
func (i *Inspector) Changes(ctx context.Context) (*Stream[Snapshot], error) {
	return openStream[Snapshot](ctx, i.c, "/v1/inspect/changes")
}

// Events opens GET /v1/inspect/events for a public tab id. It returns once
// the subscription is in place, so no later event of the tab is missed.
func (i *Inspector) Events(ctx context.Context, tabID int) (*Stream[Event], error) {
	s, err := openStream[Event](ctx, i.c, "/v1/inspect/events?tab="+strconv.Itoa(tabID))
	if err != nil {
		return nil, err
	}
	select {
	case ev, ok := <-s.C:
		if ok && ev.Kind == KindSubscribed {
			return s, nil
		}
		s.Close()
		if !ok {
			return nil, fmt.Errorf("admin channel: GET /v1/inspect/events: stream ended before subscribing: %w", s.Err())
		}
		return nil, fmt.Errorf("admin channel: GET /v1/inspect/events: first line is %q, want %q", ev.Kind, KindSubscribed)
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// Watch follows GET /v1/inspect/changes and remembers the latest snapshot,
// so a wait for a state that already holds returns at once instead of
// waiting for the next change.
type Watch struct {
	s    *Stream[Snapshot]
	last Snapshot
}

// Watch opens the change stream and reads the first snapshot.
func (i *Inspector) Watch(ctx context.Context) (*Watch, error) {
	s, err := i.Changes(ctx)
	if err != nil {
		return nil, err
	}
	select {
	case snap, ok := <-s.C:
		if !ok {
			s.Close()
			return nil, fmt.Errorf("change stream ended before its first snapshot: %w", s.Err())
		}
		return &Watch{s: s, last: snap}, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// Last is the latest snapshot read.
func (w *Watch) Last() Snapshot { return w.last }

// Until returns the first snapshot, the latest one included, for which cond
// holds. It fails when the stream ends or ctx ends first.
func (w *Watch) Until(ctx context.Context, cond func(Snapshot) bool) (Snapshot, error) {
	for !cond(w.last) {
		if err := w.Next(ctx); err != nil {
			return w.last, err
		}
	}
	return w.last, nil
}

// Next waits for the next line of the stream, that is the companion's next
// change signal. The change may concern state the snapshot does not show
// (pairing offers, pause): a caller waiting on such state re-reads it
// through its own API after Next returns.
func (w *Watch) Next(ctx context.Context) error {
	select {
	case snap, ok := <-w.s.C:
		if !ok {
			return fmt.Errorf("change stream ended: %w", w.s.Err())
		}
		w.last = snap
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends the stream.
func (w *Watch) Close() { w.s.Close() }

// Runtime reads the companion's goroutine, heap and tab-state counts.
func (i *Inspector) Runtime(ctx context.Context) (Runtime, error) {
	var out Runtime
	err := i.c.do(ctx, http.MethodGet, "/v1/inspect/runtime", nil, &out)
	return out, err
}
