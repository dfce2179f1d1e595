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
}

// ErrTokenRefused means the companion answered the token with 401.
var ErrTokenRefused = errors.New("reins refused the agent token: it may have been revoked; issue a new one with reins token issue NAME")

// Bridge relays JSON-RPC messages between an MCP client speaking
// newline-delimited JSON on in/out and the companion's /mcp, until either
// side ends. It returns nil when the client closes its input.
func Bridge(ctx context.Context, in io.ReadCloser, out io.Writer, opts BridgeOptions) error {
	rt := &bridgeTransport{token: opts.Token, base: opts.Transport}
	if t, ok := opts.Transport.(interface{ CloseIdleConnections() }); ok {
		defer t.CloseIdleConnections()
	}
	hc := &http.Client{Transport: rt}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := preflight(pctx, hc, opts.Endpoint)
	cancel()
	if err != nil {
		return err
	}

	local, err := (&sdk.IOTransport{Reader: in, Writer: nopWriteCloser{out}}).Connect(ctx)
	if err != nil {
		return err
	}
	remote, err := (&sdk.StreamableClientTransport{Endpoint: opts.Endpoint, HTTPClient: hc}).Connect(ctx)
	if err != nil {
		local.Close()
		return err
	}
	ctx, cancel = context.WithCancel(ctx)
	defer cancel()

	var (
		mu         sync.Mutex
		initID     jsonrpc.ID
		listenOnce sync.Once
		wg         sync.WaitGroup
	)
	defer wg.Wait()
	errs := make(chan error, 2)
	// client → companion
	go func() {
		for {
			msg, err := local.Read(ctx)
			if err != nil {
				if errors.Is(err, io.EOF) || ctx.Err() != nil {
					err = nil
				}
				errs <- err
				return
			}
			if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
				mu.Lock()
				initID = req.ID
				mu.Unlock()
			}
			err = remote.Write(ctx, msg)
			if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/initialized" && err == nil {
				// What the companion says on its own (a changed tool list,
				// log messages) arrives on the session's GET stream.
				listenOnce.Do(func() {
					wg.Add(1)
					go func() {
						defer wg.Done()
						listenStandalone(ctx, hc, opts.Endpoint, remote.SessionID(), rt.negotiated(), opts.OnStream, func(m jsonrpc.Message) error { return local.Write(ctx, m) })
					}()
				})
			}
			if err != nil {
				// A call must get an answer, or the client waits forever.
				if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
					local.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "reins: " + err.Error()}})
				}
				if ctx.Err() != nil {
					errs <- nil
					return
				}
			}
		}
	}()
	// companion → client
	go func() {
		for {
			msg, err := remote.Read(ctx)
			if err != nil {
				if ctx.Err() != nil {
					err = nil
				} else {
					err = fmt.Errorf("connection to reins lost: %w", err)
				}
				errs <- err
				return
			}
			if resp, ok := msg.(*jsonrpc.Response); ok {
				mu.Lock()
				isInit := initID.IsValid() && resp.ID == initID
				mu.Unlock()
				if isInit {
					rt.learnVersion(resp.Result)
				}
			}
			if err := local.Write(ctx, msg); err != nil {
				errs <- fmt.Errorf("writing to the MCP client: %w", err)
				return
			}
		}
	}()
	err = <-errs
	cancel()
	// Closing the remote side ends the session with a DELETE; closing the
	// local side unblocks its reader.
	remote.Close()
	local.Close()
	<-errs
	return err
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
