package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion/internal/sse"
)

// BridgeOptions says where a stdio bridge (`reins mcp`) reaches /mcp.
type BridgeOptions struct {
	// Transport carries every request to the companion. `reins mcp` passes
	// the admin channel's (admin.Transport): only this user can open it,
	// so the token never goes to whatever listens on the TCP port.
	Transport http.RoundTripper
	// Endpoint is /mcp's URL on that transport.
	Endpoint string
	// Token is the agent's bearer token.
	Token string
	// OnStream, if set, is called once the session's event stream is open
	// (tests wait for it before making the companion speak on its own).
	OnStream func()
	// StartWait is how long a bridge that finds no companion at its start
	// waits for one: a client that starts at login may launch it before
	// the app that starts at login is listening. Zero: no wait.
	StartWait time.Duration
	// OnWaiting, if set, is called when the bridge starts waiting.
	OnWaiting func()
}

// ErrTokenRefused means the companion answered the token with 401.
var ErrTokenRefused = errors.New("reins refused the agent token: it may have been revoked; issue a new one with reins token issue NAME")

// Bridge relays JSON-RPC messages between an MCP client speaking
// newline-delimited JSON on in/out and the companion's /mcp, until the
// client closes its input (then it returns nil), ctx ends, or the companion
// refuses the token.
//
// The client launched the bridge once and cannot tell it to connect again,
// so the bridge outlives the companion: when the companion stops or starts
// again (an update, a crash, the person quitting the app), every call still
// in flight is answered with an error, a call made while it is away is
// refused at once, and the bridge opens a new session as soon as the
// companion is back, initialised as the client initialised the first. The
// client's session goes on under the same token, so the agent keeps its
// tabs.
func Bridge(ctx context.Context, in io.ReadCloser, out io.Writer, opts BridgeOptions) error {
	rt := &bridgeTransport{token: opts.Token, base: opts.Transport}
	if t, ok := opts.Transport.(interface{ CloseIdleConnections() }); ok {
		defer t.CloseIdleConnections()
	}
	hc := &http.Client{Transport: rt}
	if err := waitCompanion(ctx, hc, opts); err != nil {
		return err
	}
	local, err := (&sdk.IOTransport{Reader: in, Writer: nopWriteCloser{out}}).Connect(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := &bridge{ctx: ctx, hc: hc, rt: rt, opts: opts, local: local, pending: map[jsonrpc.ID]pendingCall{}, done: make(chan error, 1)}
	if err := b.open(false); err != nil {
		local.Close()
		return err
	}
	b.wg.Add(1)
	go b.fromClient()
	err = <-b.done
	cancel()
	b.mu.Lock()
	s := b.cur
	b.cur, b.closed = nil, true
	b.mu.Unlock()
	if s != nil {
		// Closing the session ends it at the companion with a DELETE.
		s.cancel()
		s.conn.Close()
	}
	// Closing the local side unblocks its reader.
	local.Close()
	b.wg.Wait()
	return err
}

// waitCompanion checks that the companion answers and takes the token,
// waiting up to opts.StartWait for one that does not answer yet.
func waitCompanion(ctx context.Context, hc *http.Client, opts BridgeOptions) error {
	deadline := time.Now().Add(opts.StartWait)
	wait := time.Duration(0)
	for {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := preflight(pctx, hc, opts.Endpoint)
		cancel()
		if err == nil || errors.Is(err, ErrTokenRefused) || ctx.Err() != nil {
			return err
		}
		wait = min(max(2*wait, reconnectFirst), reconnectCap)
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		if wait == reconnectFirst && opts.OnWaiting != nil {
			opts.OnWaiting()
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// What a client hears for a call the companion cannot answer.
const (
	msgAway = "reins: Reins is not running, or is starting again; the call was not made. Start the Reins app if it is closed, then try again"
	msgLost = "reins: the connection to Reins was lost while this call ran; it may or may not have finished. Try again once Reins is back"
)

// The bridge's attempts to reach a companion that went away (or has not
// started yet) come at once, then after reconnectFirst, doubling up to
// reconnectCap.
const (
	reconnectFirst = 100 * time.Millisecond
	reconnectCap   = 2 * time.Second
)

type bridge struct {
	ctx   context.Context
	hc    *http.Client
	rt    *bridgeTransport
	opts  BridgeOptions
	local sdk.Connection
	done  chan error // the first reason to end
	wg    sync.WaitGroup

	opening sync.Mutex // held while a session opens

	mu     sync.Mutex
	cur    *bridgeSession // nil while the companion is away
	up     chan struct{}  // closed when the next session opens
	gen    int            // the newest session's number
	closed bool
	// pending holds the client's calls sent to a session and not
	// answered yet: each gets exactly one answer.
	pending map[jsonrpc.ID]pendingCall
	// init is the client's initialize request, initID its id, and
	// initDone says the client got its answer: a new session is then
	// initialised with the same parameters. initialized says the client
	// sent notifications/initialized.
	init        *jsonrpc.Request
	initID      jsonrpc.ID
	initDone    bool
	initialized bool
}

// bridgeSession is one MCP session with the companion.
type bridgeSession struct {
	conn   sdk.Connection
	gen    int
	ctx    context.Context
	cancel context.CancelFunc
	listen sync.Once
}

func (b *bridge) end(err error) {
	select {
	case b.done <- err:
	default:
	}
}

// fromClient relays the client's messages to the current session.
func (b *bridge) fromClient() {
	defer b.wg.Done()
	for {
		msg, err := b.local.Read(b.ctx)
		if err != nil {
			if errors.Is(err, io.EOF) || b.ctx.Err() != nil {
				err = nil
			}
			b.end(err)
			return
		}
		req, _ := msg.(*jsonrpc.Request)
		call := req != nil && req.IsCall()
		b.mu.Lock()
		if req != nil && req.Method == "initialize" {
			b.init, b.initID, b.initDone = req, req.ID, false
		}
		if req != nil && req.Method == "notifications/initialized" {
			b.initialized = true
		}
		s := b.cur
		b.mu.Unlock()
		var id jsonrpc.ID
		if call {
			id = req.ID
		}
		if s == nil {
			// The companion may be back before the next attempt: try now.
			if b.open(true) == nil {
				s = b.current()
			}
		}
		if s == nil {
			if call {
				b.answer(id, msgAway)
			}
			continue
		}
		mine, err := b.send(s, msg, id, call)
		if err != nil && errors.Is(err, sdk.ErrSessionMissing) {
			// The companion started again and forgot the session; the
			// message never reached a session. Send it again on the next.
			b.lose(s)
			if s = b.waitSession(); s == nil {
				if mine {
					b.answer(id, msgAway)
				}
				continue
			}
			mine, err = b.send(s, msg, id, call)
		}
		if err == nil {
			if req != nil && req.Method == "notifications/initialized" {
				b.listen(s)
			}
			continue
		}
		if b.ctx.Err() != nil {
			b.end(nil)
			return
		}
		gone := b.gone(err)
		// A call must get an answer, or the client waits forever.
		if mine {
			if gone {
				b.answer(id, msgAway)
			} else {
				b.answer(id, "reins: "+err.Error())
			}
		}
		if gone {
			b.lose(s)
		}
	}
}

// pendingCall is a call of the client's sent to session gen; sent says
// its write is over, so that losing the session answers it.
type pendingCall struct {
	gen  int
	sent bool
}

// send writes msg to session s. While a call is written it is send's to
// answer: mine says a write that failed left it unanswered, for the caller
// to answer or send again. A session lost during the write answers it here.
func (b *bridge) send(s *bridgeSession, msg jsonrpc.Message, id jsonrpc.ID, call bool) (mine bool, err error) {
	if call {
		b.mu.Lock()
		b.pending[id] = pendingCall{gen: s.gen}
		b.mu.Unlock()
	}
	err = s.conn.Write(b.ctx, msg)
	if !call {
		return false, err
	}
	b.mu.Lock()
	p, ok := b.pending[id]
	lost := false
	switch {
	case !ok: // answered already
	case err != nil:
		delete(b.pending, id)
		mine = true
	case b.cur != s:
		delete(b.pending, id)
		lost = true
	default:
		p.sent = true
		b.pending[id] = p
	}
	b.mu.Unlock()
	if lost {
		b.answer(id, msgLost)
	}
	return mine, err
}

// sessionWait bounds how long a message the companion refused for a
// forgotten session waits for the bridge's next one.
const sessionWait = 5 * time.Second

// waitSession returns the current session, waiting up to sessionWait for
// one to open; nil if none did.
func (b *bridge) waitSession() *bridgeSession {
	b.mu.Lock()
	s, up := b.cur, b.up
	b.mu.Unlock()
	if s != nil {
		return s
	}
	t := time.NewTimer(sessionWait)
	defer t.Stop()
	select {
	case <-up:
	case <-t.C:
	case <-b.ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// gone says whether a failed write means the session is over: the
// companion forgot it (it started again) or no longer answers.
func (b *bridge) gone(err error) bool {
	if errors.Is(err, sdk.ErrSessionMissing) {
		return true
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	return preflight(ctx, b.hc, b.opts.Endpoint) != nil
}

// fromCompanion relays a session's messages to the client until it ends.
func (b *bridge) fromCompanion(s *bridgeSession) {
	defer b.wg.Done()
	for {
		msg, err := s.conn.Read(s.ctx)
		if err != nil {
			if s.ctx.Err() == nil {
				b.lose(s)
			}
			return
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			if !b.settle(resp.ID) {
				continue // answered already, when its session was lost
			}
			b.mu.Lock()
			isInit := b.initID.IsValid() && resp.ID == b.initID
			if isInit && resp.Error == nil {
				b.initDone = true
			}
			b.mu.Unlock()
			if isInit {
				b.rt.learnVersion(resp.Result)
			}
		}
		if err := b.local.Write(b.ctx, msg); err != nil {
			b.end(fmt.Errorf("writing to the MCP client: %w", err))
			return
		}
	}
}

func (b *bridge) current() *bridgeSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// settle takes a call off the pending list; false if it was not on it.
func (b *bridge) settle(id jsonrpc.ID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pending[id]; !ok {
		return false
	}
	delete(b.pending, id)
	return true
}

func (b *bridge) answer(id jsonrpc.ID, msg string) {
	b.local.Write(b.ctx, &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}})
}

// lose ends session s once: its calls still in flight are answered with an
// error, and the bridge sets about opening a new one.
func (b *bridge) lose(s *bridgeSession) {
	b.mu.Lock()
	if b.cur != s || b.closed {
		b.mu.Unlock()
		return
	}
	b.cur, b.up = nil, make(chan struct{})
	var lost []jsonrpc.ID
	for id, p := range b.pending {
		if p.gen == s.gen && p.sent {
			lost = append(lost, id)
			delete(b.pending, id)
		}
	}
	b.wg.Add(2)
	b.mu.Unlock()
	s.cancel()
	go func() {
		defer b.wg.Done()
		s.conn.Close() // a companion that merely forgot it is told to end it
	}()
	for _, id := range lost {
		b.answer(id, msgLost)
	}
	go b.reconnect()
}

// reconnect opens a new session once the companion answers again, until
// the bridge ends; a refused token ends the bridge.
func (b *bridge) reconnect() {
	defer b.wg.Done()
	wait := time.Duration(0)
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(wait):
		}
		err := b.open(true)
		if err == nil {
			return
		}
		if errors.Is(err, ErrTokenRefused) {
			b.end(err)
			return
		}
		wait = min(max(2*wait, reconnectFirst), reconnectCap)
	}
}

// open starts a session with the companion and makes it current. With
// again, the session is initialised as the client initialised the first,
// and the client is told to read the tool list again.
func (b *bridge) open(again bool) error {
	// One opening at a time: the background reconnect and a call that
	// found no session may both try.
	b.opening.Lock()
	defer b.opening.Unlock()
	if b.current() != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := preflight(ctx, b.hc, b.opts.Endpoint); err != nil {
		return err
	}
	conn, err := (&sdk.StreamableClientTransport{Endpoint: b.opts.Endpoint, HTTPClient: b.hc}).Connect(b.ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	init, initDone, initialized := b.init, b.initDone, b.initialized
	b.mu.Unlock()
	replay := again && init != nil && initDone
	if replay {
		if err := reinitialize(ctx, conn, init, initialized); err != nil {
			conn.Close()
			return err
		}
	}
	sctx, scancel := context.WithCancel(b.ctx)
	s := &bridgeSession{conn: conn, ctx: sctx, cancel: scancel}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		scancel()
		conn.Close()
		return nil
	}
	b.gen++
	s.gen = b.gen
	b.cur = s
	if b.up != nil {
		close(b.up)
		b.up = nil
	}
	b.wg.Add(1)
	b.mu.Unlock()
	go b.fromCompanion(s)
	if replay {
		if initialized {
			b.listen(s)
		}
		b.local.Write(b.ctx, &jsonrpc.Request{Method: "notifications/tools/list_changed"})
	}
	return nil
}

// reinitialize initialises a new session with the client's own initialize
// parameters (under an id of the bridge's, whose answer stays here).
func reinitialize(ctx context.Context, conn sdk.Connection, init *jsonrpc.Request, initialized bool) error {
	id, err := jsonrpc.MakeID("reins-bridge-initialize")
	if err != nil {
		return err
	}
	if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "initialize", Params: init.Params}); err != nil {
		return err
	}
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == id {
			if resp.Error != nil {
				return resp.Error
			}
			break
		}
	}
	if !initialized {
		return nil
	}
	return conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"})
}

// listen opens session s's stream of what the companion says on its own
// (a changed tool list, log messages), once.
func (b *bridge) listen(s *bridgeSession) {
	s.listen.Do(func() {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			listenStandalone(s.ctx, b.hc, b.opts.Endpoint, s.conn.SessionID(), b.rt.negotiated(), b.opts.OnStream, func(m jsonrpc.Message) error { return b.local.Write(b.ctx, m) })
		}()
	})
}

// preflight tells "not reachable" and "token refused" apart before the MCP
// client sends anything, so the person reads a sentence rather than a
// JSON-RPC error in the client's log. A GET without a session is refused by
// the MCP handler after the token check, so 401 means the token and
// anything else means it passed.
func preflight(ctx context.Context, hc *http.Client, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return ErrTokenRefused
	}
	return nil
}

// bridgeTransport adds the bearer token to every request, and the
// negotiated protocol version, which the SDK's client transport only sets
// when its own client session drives it.
type bridgeTransport struct {
	token string
	base  http.RoundTripper

	mu      sync.Mutex
	version string
}

func (t *bridgeTransport) learnVersion(result json.RawMessage) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(result, &r) == nil && r.ProtocolVersion != "" {
		t.mu.Lock()
		t.version = r.ProtocolVersion
		t.mu.Unlock()
	}
}

func (t *bridgeTransport) negotiated() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version
}

func (t *bridgeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	t.mu.Lock()
	v := t.version
	t.mu.Unlock()
	if v != "" && r.Header.Get("Mcp-Protocol-Version") == "" {
		r.Header.Set("Mcp-Protocol-Version", v)
	}
	return t.base.RoundTrip(r)
}

// standaloneStreamRemoved is the first protocol version without the
// session's standalone GET stream (server messages then ride on responses).
const standaloneStreamRemoved = "2026-07-28"

// listenStandalone opens the session's standalone server-sent-events stream
// (a GET on the endpoint) and hands each JSON-RPC message on it to deliver,
// until the stream or ctx ends. A server without the stream (405) or a
// protocol version that dropped it leaves nothing to do.
func listenStandalone(ctx context.Context, hc *http.Client, endpoint, sessionID, version string, opened func(), deliver func(jsonrpc.Message) error) {
	if sessionID == "" || version >= standaloneStreamRemoved {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sessionID)
	resp, err := hc.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return
	}
	if opened != nil {
		opened()
	}
	_ = sse.Read(resp.Body, sse.MaxEvent, func(e sse.Event) error {
		if e.Type != "" && e.Type != "message" {
			return nil
		}
		msg, err := jsonrpc.DecodeMessage(e.Data)
		if err != nil {
			return nil // not a message; the next may be
		}
		return deliver(msg)
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
