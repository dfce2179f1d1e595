package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/wire"
)

// ErrNotRunning means no companion answered on the port.
var ErrNotRunning = errors.New("reins is not running")

// runMCP is `reins mcp`: an MCP server on stdin/stdout, for clients that
// can only launch commands, relaying every message to the running
// companion's /mcp. stdout carries JSON-RPC only; diagnostics go to stderr.
func runMCP(env Env, args []string) error {
	var tokenName string
	common, _, err := parseCommand(env, "mcp", "", args, func(fs *flag.FlagSet) {
		fs.StringVar(&tokenName, "token-name", "", "read the agent token NAME from the token store (default: the REINS_TOKEN environment variable)")
	})
	if err != nil {
		return err
	}
	token := ""
	if env.Getenv != nil {
		token = strings.TrimSpace(env.Getenv("REINS_TOKEN"))
	}
	if tokenName != "" {
		t, err := agentToken(common.DataDir, common.Keyring, tokenName)
		if err != nil {
			return err
		}
		token = t
	}
	if token == "" {
		return errors.New("no agent token: set REINS_TOKEN or pass --token-name NAME (issue one with reins token issue NAME)")
	}
	port := common.Port
	if port == 0 {
		port = runningPort(common.DataDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in, ok := env.Stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(env.Stdin)
	}
	return bridgeMCP(ctx, in, env.Stdout, port, token)
}

// runningPort is the port a running companion recorded in the data dir, or
// the default port.
func runningPort(dataDir string) int {
	data, err := os.ReadFile(filepath.Join(dataDir, companion.PortFile))
	if err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && p > 0 && p < 65536 {
			return p
		}
	}
	return companion.DefaultPort
}

// agentToken reads an agent's token from the store. The Manager keeps only
// digests, so the secret is read from the Store itself, under the account
// name the tokens package documents ("agent:NAME"); the index decides
// whether the name exists.
func agentToken(dataDir, keyring, name string) (string, error) {
	m, err := openTokens(dataDir, keyring)
	if err != nil {
		return "", err
	}
	infos, err := m.List()
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(infos, func(in tokens.Info) bool { return in.Name == name }) {
		return "", fmt.Errorf("no agent token named %q (reins token list shows them; reins token issue %s makes one): %w", name, name, tokens.ErrNotFound)
	}
	var s tokens.Store
	if keyring == tokens.KeyringFile {
		if s, err = tokens.NewFileStore(dataDir); err != nil {
			return "", err
		}
	} else {
		s = tokens.NewKeychainStore(tokens.SystemKeyring(), 0)
	}
	tok, err := s.Get("agent:" + name)
	if err != nil {
		return "", fmt.Errorf("reading agent token %q: %w", name, err)
	}
	return tok, nil
}

// preflight tells "not running" and "token refused" apart before the MCP
// client sends anything, so the person reads a sentence rather than a
// JSON-RPC error in the client's log.
func preflight(ctx context.Context, hc *http.Client, port int, token string) error {
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	notRunning := fmt.Errorf("%w on port %d: start the Reins app or `reins headless`", ErrNotRunning, port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w (%v)", notRunning, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != wire.HealthText || resp.Header.Get("X-Reins-Version") == "" {
		return fmt.Errorf("%w (another program answers there)", notRunning)
	}
	// A GET without a session is refused by the MCP handler after the token
	// check, so 401 means the token and anything else means it passed.
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+"/mcp", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err = hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w (%v)", notRunning, err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return errors.New("reins refused the agent token: it may have been revoked; issue a new one with reins token issue NAME")
	}
	return nil
}

// bridgeMCP relays JSON-RPC messages between an MCP client speaking
// newline-delimited JSON on in/out and the companion's /mcp on port, until
// either side ends. It returns nil when the client closes its input.
func bridgeMCP(ctx context.Context, in io.ReadCloser, out io.Writer, port int, token string) error {
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	rt := &bridgeTransport{token: token, base: http.DefaultTransport.(*http.Transport).Clone()}
	defer rt.base.CloseIdleConnections()
	hc := &http.Client{Transport: rt}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := preflight(pctx, hc, port, token)
	cancel()
	if err != nil {
		return err
	}

	local, err := (&sdk.IOTransport{Reader: in, Writer: nopWriteCloser{out}}).Connect(ctx)
	if err != nil {
		return err
	}
	remote, err := (&sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}).Connect(ctx)
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
						listenStandalone(ctx, hc, base+"/mcp", remote.SessionID(), rt.negotiated(), func(m jsonrpc.Message) error { return local.Write(ctx, m) })
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

// bridgeTransport adds the bearer token to every request, and the
// negotiated protocol version, which the SDK's client transport only sets
// when its own client session drives it.
type bridgeTransport struct {
	token string
	base  *http.Transport

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

// standaloneOpened is called once the standalone stream is open; tests
// wait on it before making the companion speak.
var standaloneOpened = func() {}

// standaloneStreamRemoved is the first protocol version without the
// session's standalone GET stream (server messages then ride on responses).
const standaloneStreamRemoved = "2026-07-28"

// listenStandalone opens the session's standalone server-sent-events stream
// (a GET on the endpoint) and hands each JSON-RPC message on it to deliver,
// until the stream or ctx ends. A server without the stream (405) or a
// protocol version that dropped it leaves nothing to do.
func listenStandalone(ctx context.Context, hc *http.Client, endpoint, sessionID, version string, deliver func(jsonrpc.Message) error) {
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
	standaloneOpened()
	_ = readSSE(resp.Body, func(data []byte) error {
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil // not a message; the next may be
		}
		return deliver(msg)
	})
}

// maxSSEEvent bounds one server-sent event (a screenshot is at most ~1 MB).
const maxSSEEvent = 16 << 20

// readSSE reads server-sent events from r and calls fn with the data of
// each "message" event (several data lines joined by newlines), until r
// ends or fn fails.
func readSSE(r io.Reader, fn func(data []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSEEvent)
	var (
		data  []byte
		event string
		has   bool
	)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if has && (event == "" || event == "message") {
				if err := fn(data); err != nil {
					return err
				}
			}
			data, event, has = data[:0], "", false
			continue
		}
		if line[0] == ':' {
			continue // a comment, such as a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if has {
				data = append(data, '\n')
			}
			data = append(data, value...)
			has = true
		case "event":
			event = string(value)
		}
	}
	return sc.Err()
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

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
