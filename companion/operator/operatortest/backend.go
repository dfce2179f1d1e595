// Package operatortest is a reference Browser Operator backend speaking
// both transports (SSE+HTTP and WebSocket), for tests: it authenticates the
// companion, sends commands, collects results, and can revoke, disconnect
// or drop the network on demand.
package operatortest

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Result is a result as the backend received it.
type Result struct {
	CommandID string          `json:"commandId"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// Content decodes Result.Result's content blocks.
func (r Result) Content() []map[string]any {
	var v struct {
		Content []map[string]any `json:"content"`
	}
	json.Unmarshal(r.Result, &v)
	return v.Content
}

// Backend is a running reference backend.
type Backend struct {
	Server *httptest.Server
	Token  string
	Target string // required target for SSE paths and WS auth; "" accepts any

	mu         sync.Mutex
	revoked    bool
	streams    map[chan string]struct{}
	wsConns    map[*websocket.Conn]chan []byte
	connected  chan string // "sse" or "ws" on each (re)connect
	results    chan Result
	authFrames []map[string]string
	seq        int
}

// New starts a backend on 127.0.0.1.
func New(token, target string) *Backend {
	b := &Backend{Token: token, Target: target, streams: map[chan string]struct{}{}, wsConns: map[*websocket.Conn]chan []byte{},
		connected: make(chan string, 64), results: make(chan Result, 256)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /t/{target}/events", b.serveSSE)
	mux.HandleFunc("POST /t/{target}/result", b.serveResult)
	mux.HandleFunc("GET /browser/events", b.serveSSE)
	mux.HandleFunc("POST /browser/result", b.serveResult)
	mux.HandleFunc("GET /ws", b.serveWS)
	b.Server = httptest.NewServer(mux)
	return b
}

// URL is the backend's base URL.
func (b *Backend) URL() string { return b.Server.URL }

// Close stops the backend.
func (b *Backend) Close() {
	b.DropNetwork()
	b.Server.Close()
}

// Connected delivers the transport name on each (re)connect.
func (b *Backend) Connected() <-chan string { return b.connected }

// Results delivers results as they arrive.
func (b *Backend) Results() <-chan Result { return b.results }

// AuthFrames returns the WebSocket auth frames received.
func (b *Backend) AuthFrames() []map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]map[string]string(nil), b.authFrames...)
}

func (b *Backend) authorized(r *http.Request) bool {
	b.mu.Lock()
	revoked := b.revoked
	b.mu.Unlock()
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	return !revoked && subtle.ConstantTimeCompare([]byte(got), []byte(b.Token)) == 1
}

func (b *Backend) serveSSE(w http.ResponseWriter, r *http.Request) {
	if !b.authorized(r) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if t := r.PathValue("target"); b.Target != "" && r.URL.Path != "/browser/events" && t != b.Target {
		http.Error(w, "unknown target", http.StatusNotFound)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no flusher", 500)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	ch := make(chan string, 64)
	b.mu.Lock()
	b.streams[ch] = struct{}{}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.streams, ch)
		b.mu.Unlock()
	}()
	b.connected <- "sse"
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if _, err := fmt.Fprint(w, ev); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

func (b *Backend) serveResult(w http.ResponseWriter, r *http.Request) {
	if !b.authorized(r) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var res Result
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	b.results <- res
	w.WriteHeader(http.StatusNoContent)
}

func (b *Backend) serveWS(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	_, data, err := conn.Read(ctx)
	if err != nil {
		return
	}
	var auth map[string]string
	json.Unmarshal(data, &auth)
	b.mu.Lock()
	b.authFrames = append(b.authFrames, auth)
	revoked := b.revoked
	b.mu.Unlock()
	if auth["type"] != "auth" || revoked || subtle.ConstantTimeCompare([]byte(auth["token"]), []byte(b.Token)) != 1 ||
		(b.Target != "" && auth["target"] != b.Target) {
		conn.Close(4001, "bad token")
		return
	}
	out := make(chan []byte, 64)
	b.mu.Lock()
	b.wsConns[conn] = out
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.wsConns, conn)
		close(out)
		b.mu.Unlock()
	}()
	conn.Write(ctx, websocket.MessageText, []byte(`{"type":"auth_ok"}`))
	b.connected <- "ws"
	go func() {
		for data := range out {
			if data == nil {
				conn.Close(4001, "token revoked")
				return
			}
			if conn.Write(ctx, websocket.MessageText, data) != nil {
				return
			}
		}
	}()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var res struct {
			Type string `json:"type"`
			Result
		}
		if json.Unmarshal(data, &res) == nil && res.Type == "result" {
			b.results <- res.Result
		}
	}
}

// Send sends a command to every connected companion and returns its id.
func (b *Backend) Send(tool string, args any) (string, error) {
	b.mu.Lock()
	b.seq++
	id := fmt.Sprintf("cmd-%d", b.seq)
	b.mu.Unlock()
	rawArgs, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	cmd, _ := json.Marshal(map[string]any{"id": id, "tool": tool, "args": json.RawMessage(rawArgs)})
	wsFrame, _ := json.Marshal(map[string]any{"type": "command", "id": id, "tool": tool, "args": json.RawMessage(rawArgs)})
	if b.broadcast("data: "+string(cmd)+"\n\n", wsFrame) == 0 {
		return "", errors.New("no companion is connected")
	}
	return id, nil
}

func (b *Backend) broadcast(sse string, ws []byte) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for ch := range b.streams {
		ch <- sse
		n++
	}
	for _, ch := range b.wsConns {
		if ws != nil {
			ch <- ws
		}
		n++
	}
	return n
}

// Await waits for the result of command id.
func (b *Backend) Await(ctx context.Context, id string) (Result, error) {
	for {
		select {
		case r := <-b.results:
			if r.CommandID == id {
				return r, nil
			}
		case <-ctx.Done():
			return Result{}, fmt.Errorf("no result for %s: %w", id, ctx.Err())
		}
	}
}

// Revoke makes the token invalid: SSE streams answer 401 from now on, and
// WebSocket connections are closed with 4001.
func (b *Backend) Revoke() {
	b.mu.Lock()
	b.revoked = true
	for ch := range b.streams {
		close(ch)
		delete(b.streams, ch)
	}
	for _, ch := range b.wsConns {
		ch <- nil
	}
	b.mu.Unlock()
}

// Disconnect sends the SSE disconnect event.
func (b *Backend) Disconnect() int {
	return b.broadcast("event: disconnect\ndata: bye\n\n", nil)
}

// DropNetwork cuts every connection at once, as a network failure would.
func (b *Backend) DropNetwork() {
	b.Server.CloseClientConnections()
	// Hijacked WebSocket connections are no longer the server's to close.
	b.mu.Lock()
	for c := range b.wsConns {
		c.CloseNow()
	}
	b.mu.Unlock()
}

// WaitConnected waits for the next (re)connect.
func (b *Backend) WaitConnected(d time.Duration) (string, error) {
	select {
	case t := <-b.connected:
		return t, nil
	case <-time.After(d):
		return "", errors.New("the companion did not connect to the backend")
	}
}
