package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/internal/sse"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// maxQueued bounds results kept for a backend while it is unreachable.
const maxQueued = 100

// A backend's commands: at most MaxRunning run at once and at most
// MaxWaiting more wait for a slot, in no particular order. A command beyond
// those is answered at once with the code busy; none vanishes in silence.
const (
	MaxRunning = 8
	MaxWaiting = 32
)

// client keeps one backend connected and runs its commands.
type client struct {
	m *Manager

	mu        sync.Mutex
	rec       Record
	connected bool
	lastErr   string
	lastSeen  time.Time
	inflight  int           // running and waiting commands
	slots     chan struct{} // one token per running command, MaxRunning in all
	queued    []resultMsg   // results whose connection died before delivery
	session   *tools.Session
	cancel    context.CancelFunc
	done      chan struct{}

	// http is the backend's own: its connections go when the client
	// stops, where a shared transport would keep them (and their
	// goroutines) for the life of the process.
	http *http.Client
	// cmds counts the command goroutines; the client's run ends after
	// them, so no result is posted by a client that has stopped.
	cmds sync.WaitGroup
}

func newClient(m *Manager, r Record) *client {
	return &client{m: m, rec: r, slots: make(chan struct{}, MaxRunning),
		http: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
}

func (c *client) state() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return State{Record: c.rec, Principal: PrincipalID(c.rec.ID), Agent: AgentName(c.rec), Connected: c.connected, LastError: c.lastErr, LastSeen: c.lastSeen, InFlight: c.inflight}
}

func (c *client) start() {
	if c.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done = make(chan struct{})
	c.session = c.m.opts.Runner.NewSession(PrincipalID(c.rec.ID), AgentName(c.rec))
	c.session.OperatorCatalog = true
	go c.run(ctx)
}

func (c *client) stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	<-c.done
}

// outcome says how a connection ended.
type outcome int

const (
	outcomeRetry      outcome = iota // network trouble: reconnect with backoff
	outcomeRevoked                   // 401 or close 4001: token dropped
	outcomeDisconnect                // event: disconnect: credentials dropped
)

func (c *client) setConnected(ok bool, errText string) {
	c.mu.Lock()
	changed := c.connected != ok || c.lastErr != errText
	c.connected = ok
	if errText != "" || ok {
		c.lastErr = errText
	}
	if ok {
		c.lastSeen = time.Now()
	}
	c.mu.Unlock()
	if changed {
		c.m.opts.OnChange()
	}
}

func (c *client) run(ctx context.Context) {
	defer close(c.done)
	defer c.setConnected(false, "")
	defer c.http.CloseIdleConnections()
	defer c.cmds.Wait()
	backoff := c.m.opts.MinBackoff
	for {
		token, err := c.m.opts.Secrets.Backend(c.rec.ID)
		var out outcome
		var connectedFor time.Duration
		if err != nil {
			err = fmt.Errorf("reading the backend token: %w", err)
		} else {
			start := time.Now()
			if c.rec.Transport == pairing.TransportWebSocket {
				out, err = c.runWebSocket(ctx, token)
			} else {
				out, err = c.runSSE(ctx, token)
			}
			connectedFor = time.Since(start)
		}
		if ctx.Err() != nil {
			return
		}
		switch out {
		case outcomeRevoked:
			c.m.revoke(c, true, describe(err, "the backend refused the token"))
			return
		case outcomeDisconnect:
			c.m.revoke(c, false, "the backend asked to disconnect")
			return
		}
		c.setConnected(false, describe(err, "connection lost"))
		c.m.log.Info("backend connection lost; reconnecting", "backend", c.rec.ID, "err", err, "in", backoff)
		if connectedFor > 10*time.Second {
			backoff = c.m.opts.MinBackoff
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, c.m.opts.MaxBackoff)
	}
}

func describe(err error, fallback string) string {
	if err == nil {
		return fallback
	}
	return err.Error()
}

// exec runs one command through the tool engine. Its context ends with the
// connection, so a command never outlives the link that asked for it; its
// result is then queued and delivered after the next connect, never lost
// in silence.
func (c *client) exec(ctx context.Context, raw []byte, send func(resultMsg) error) {
	var cmd command
	if err := json.Unmarshal(raw, &cmd); err != nil || cmd.ID == "" {
		c.m.log.Warn("backend sent a malformed command", "backend", c.rec.ID, "err", err)
		if cmd.ID != "" {
			send(resultMsg{CommandID: cmd.ID, Error: "malformed command"})
		}
		return
	}
	if cmd.Tool == "" {
		send(resultMsg{CommandID: cmd.ID, Error: "command has no tool"})
		return
	}
	if len(cmd.Args) == 0 || string(cmd.Args) == "null" {
		cmd.Args = json.RawMessage(`{}`)
	}
	c.mu.Lock()
	if c.inflight >= MaxRunning+MaxWaiting {
		n := c.inflight
		c.mu.Unlock()
		c.m.log.Warn("backend command refused: too many in flight", "backend", c.rec.ID, "tool", cmd.Tool, "inFlight", n)
		// Answered on the reader's goroutine: a backend that floods
		// commands waits for its refusals instead of growing goroutines.
		msg := resultMsg{CommandID: cmd.ID, Error: fmt.Sprintf("[%s] %d commands are already running or waiting (at most %d run at once and %d wait); this one did not run",
			wire.CodeBusy, n, MaxRunning, MaxWaiting)}
		if send(msg) != nil {
			c.queue(msg)
		}
		return
	}
	c.inflight++
	c.lastSeen = time.Now()
	c.mu.Unlock()
	c.m.opts.OnChange()
	c.cmds.Add(1)
	go func() {
		defer c.cmds.Done()
		var msg resultMsg
		select {
		case c.slots <- struct{}{}:
			res := c.m.opts.Runner.Call(ctx, c.session, cmd.Tool, cmd.Args)
			<-c.slots
			msg = toResult(cmd.ID, res)
			if ctx.Err() != nil && res != nil && res.IsError {
				msg = resultMsg{CommandID: cmd.ID, Error: "[" + string(wire.CodeNoSuchSession) + "] the connection to the backend was lost during the command; it was stopped: " + msg.Error}
			}
		case <-ctx.Done():
			msg = resultMsg{CommandID: cmd.ID, Error: "[" + string(wire.CodeNoSuchSession) + "] the connection to the backend was lost before the command ran; it did not run"}
		}
		c.mu.Lock()
		c.inflight--
		c.mu.Unlock()
		if ctx.Err() != nil || send(msg) != nil {
			c.queue(msg)
		}
		c.m.opts.OnChange()
	}()
}

func (c *client) queue(msg resultMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queued) >= maxQueued {
		c.queued = c.queued[1:]
	}
	c.queued = append(c.queued, msg)
}

func (c *client) flush(send func(resultMsg) error) {
	c.mu.Lock()
	q := c.queued
	c.queued = nil
	c.mu.Unlock()
	for i, msg := range q {
		if err := send(msg); err != nil {
			c.mu.Lock()
			c.queued = append(q[i:], c.queued...)
			c.mu.Unlock()
			return
		}
	}
}

// --- WebSocket transport ---

func wsURL(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	return u.String(), nil
}

func (c *client) runWebSocket(ctx context.Context, token string) (outcome, error) {
	u, err := wsURL(c.rec.ServerURL)
	if err != nil {
		return outcomeRetry, err
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	conn, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: c.http})
	cancel()
	if err != nil {
		return outcomeRetry, fmt.Errorf("connecting to %s: %w", u, err)
	}
	conn.SetReadLimit(wire.MaxFrameBytes)
	connCtx, stop := context.WithCancel(ctx)
	defer stop()
	defer conn.CloseNow()

	var wmu sync.Mutex
	write := func(v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(connCtx, 30*time.Second)
		defer cancel()
		wmu.Lock()
		defer wmu.Unlock()
		return conn.Write(wctx, websocket.MessageText, data)
	}
	auth := map[string]string{"type": "auth", "token": token}
	if c.rec.Target != "" {
		auth["target"] = c.rec.Target
	}
	if err := write(auth); err != nil {
		return outcomeRetry, fmt.Errorf("sending auth: %w", err)
	}
	c.setConnected(true, "")
	send := func(r resultMsg) error {
		return write(struct {
			Type string `json:"type"`
			resultMsg
		}{"result", r})
	}
	c.flush(send)
	for {
		_, data, err := conn.Read(connCtx)
		if err != nil {
			if websocket.CloseStatus(err) == 4001 {
				return outcomeRevoked, errors.New("the backend refused the token (close 4001)")
			}
			return outcomeRetry, err
		}
		var msg struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &msg) != nil {
			c.m.log.Warn("backend sent a malformed frame", "backend", c.rec.ID)
			continue
		}
		switch msg.Type {
		case "auth_ok":
			c.setConnected(true, "")
		case "command":
			c.exec(connCtx, data, send)
		case "error":
			c.m.log.Warn("backend error", "backend", c.rec.ID, "message", msg.Message)
			c.mu.Lock()
			c.lastErr = msg.Message
			c.mu.Unlock()
			c.m.opts.OnChange()
		default:
			c.m.log.Debug("backend frame ignored", "backend", c.rec.ID, "type", msg.Type)
		}
	}
}

// --- SSE + HTTP transport ---

func (c *client) endpoint(path string) string {
	return c.rec.ServerURL + strings.ReplaceAll(path, "{target}", url.PathEscape(c.rec.Target))
}

func (c *client) runSSE(ctx context.Context, token string) (outcome, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint(c.rec.CommandPath), nil)
	if err != nil {
		return outcomeRetry, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := c.http.Do(req)
	if err != nil {
		return outcomeRetry, fmt.Errorf("opening the command stream: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return outcomeRevoked, errors.New("the backend answered the command stream with 401")
	}
	if resp.StatusCode != http.StatusOK {
		return outcomeRetry, fmt.Errorf("the command stream answered %s", resp.Status)
	}
	c.setConnected(true, "")
	streamCtx, stop := context.WithCancel(ctx)
	defer stop()
	send := func(r resultMsg) error { return c.postResult(ctx, token, r) }
	c.flush(send)

	// One event is at most sse.MaxEvent: a backend that never ends one
	// costs a bounded buffer and a reconnect, not the companion's memory.
	err = sse.Read(resp.Body, sse.MaxEvent, func(e sse.Event) error {
		switch e.Type {
		case "disconnect":
			return errDisconnect
		case "", "message", "command":
			c.exec(streamCtx, bytes.Clone(e.Data), send)
		default:
			c.m.log.Debug("backend event ignored", "backend", c.rec.ID, "event", e.Type)
		}
		return nil
	})
	switch {
	case errors.Is(err, errDisconnect):
		return outcomeDisconnect, nil
	case err != nil:
		return outcomeRetry, fmt.Errorf("reading the command stream: %w", err)
	}
	return outcomeRetry, errors.New("the backend closed the command stream")
}

// errDisconnect ends the command stream on the backend's disconnect event.
var errDisconnect = errors.New("disconnect")

func (c *client) postResult(ctx context.Context, token string, r resultMsg) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, c.endpoint(c.rec.ResultPath), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("posting a result: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("posting a result: %s", resp.Status)
	}
	return nil
}
