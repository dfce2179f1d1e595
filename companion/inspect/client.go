package inspect

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// Client calls the inspection API over its Unix socket. Failures the API
// reports come back as *wire.Error, so errors.Is(err, wire.ErrNotShared) and
// wire.CodeOf work on them.
type Client struct {
	http *http.Client
	base string
}

// NewClient returns a client of the socket at path. It keeps connections
// alive between calls: a benchmark measures the API, not dialing.
func NewClient(path string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConnsPerHost: 64,
		DisableCompression:  true,
	}
	return &Client{http: &http.Client{Transport: tr}, base: "http://inspect"}
}

// NewClientHTTP returns a client of the API at base (for example an
// httptest server's URL) through c.
func NewClientHTTP(base string, c *http.Client) *Client {
	return &Client{http: c, base: base}
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return wire.Errorf(wire.CodeBadParams, "encoding %s body: %v", path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("inspect %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("inspect %s %s: reading answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return decodeError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], bytes.TrimSpace(data)...)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("inspect %s %s: malformed answer: %w", method, path, err)
	}
	return nil
}

func decodeError(status int, data []byte) error {
	var e errorBody
	if json.Unmarshal(data, &e) != nil || e.Error == "" {
		return wire.Errorf(wire.CodeInternal, "inspect: HTTP %d: %s", status, bytes.TrimSpace(data))
	}
	return wire.Remote(e.Error, e.Code)
}

// Browsers lists connected browsers.
func (c *Client) Browsers(ctx context.Context) ([]hub.BrowserInfo, error) {
	var out []hub.BrowserInfo
	return out, c.do(ctx, http.MethodGet, "/browsers", nil, &out)
}

// Tabs lists every tab with its public id.
func (c *Client) Tabs(ctx context.Context) ([]hub.Tab, error) {
	var out []hub.Tab
	return out, c.do(ctx, http.MethodGet, "/tabs", nil, &out)
}

// Request sends one raw wire request to a browser.
func (c *Client) Request(ctx context.Context, browserID, method string, params any) (json.RawMessage, error) {
	raw, err := rawParams(params)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	return out, c.do(ctx, http.MethodPost, "/request", RequestBody{BrowserID: browserID, Method: method, Params: raw}, &out)
}

// CDP runs one DevTools protocol command on a shared tab.
func (c *Client) CDP(ctx context.Context, tabID int, method string, params any) (json.RawMessage, error) {
	raw, err := rawParams(params)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	return out, c.do(ctx, http.MethodPost, "/cdp", CDPBody{TabID: tabID, Method: method, Params: raw}, &out)
}

func rawParams(p any) (json.RawMessage, error) {
	switch v := p.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "encoding params: %v", err)
		}
		return data, nil
	}
}

// CreateTab opens a tab in a browser; the extension shares it.
func (c *Client) CreateTab(ctx context.Context, browserID, url string, active bool) (hub.Tab, error) {
	var out hub.Tab
	return out, c.do(ctx, http.MethodPost, "/tabs/create", CreateBody{BrowserID: browserID, URL: url, Active: active}, &out)
}

// CloseTab closes a tab.
func (c *Client) CloseTab(ctx context.Context, tabID int) error {
	return c.do(ctx, http.MethodPost, "/tabs/close", CloseBody{TabID: tabID}, nil)
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

func openStream[T any](ctx context.Context, c *Client, path string) (*Stream[T], error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("inspect GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, decodeError(resp.StatusCode, data)
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
				s.setErr(fmt.Errorf("inspect GET %s: malformed line: %w", path, err))
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

func (s *Stream[T]) setErr(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// Changes opens GET /changes. The first snapshot arrives at once.
func (c *Client) Changes(ctx context.Context) (*Stream[Snapshot], error) {
	return openStream[Snapshot](ctx, c, "/changes")
}

// Events opens GET /events for a public tab id. It returns once the
// subscription is in place, so no later event of the tab is missed.
func (c *Client) Events(ctx context.Context, tabID int) (*Stream[Event], error) {
	s, err := openStream[Event](ctx, c, "/events?tab="+strconv.Itoa(tabID))
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
			return nil, fmt.Errorf("inspect GET /events: stream ended before subscribing: %w", s.Err())
		}
		return nil, fmt.Errorf("inspect GET /events: first line is %q, want %q", ev.Kind, KindSubscribed)
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// Watch follows GET /changes and remembers the latest snapshot, so a wait
// for a state that already holds returns at once instead of waiting for the
// next change.
type Watch struct {
	s    *Stream[Snapshot]
	last Snapshot
}

// Watch opens GET /changes and reads the first snapshot.
func (c *Client) Watch(ctx context.Context) (*Watch, error) {
	s, err := c.Changes(ctx)
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
		select {
		case snap, ok := <-w.s.C:
			if !ok {
				return w.last, fmt.Errorf("change stream ended: %w", w.s.Err())
			}
			w.last = snap
		case <-ctx.Done():
			return w.last, ctx.Err()
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
