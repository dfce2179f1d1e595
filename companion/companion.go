// Package companion is the Reins daemon: it owns the localhost listener,
// composes the hub, the tool engine, MCP, pairing and live view behind one
// route table, and exposes the state and controls the tray app needs. It
// never imports ui, app or fyne.
package companion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/agentfiles"
	"github.com/reinshq/reins/companion/edge"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/internal/httpbound"
	"github.com/reinshq/reins/companion/linkauth"
	"github.com/reinshq/reins/companion/live"
	"github.com/reinshq/reins/companion/mcp"
	"github.com/reinshq/reins/companion/nativemsg"
	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tokens"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// DefaultPort is the fixed, documented port extensions look for first.
const DefaultPort = 47100

// ExtensionID is the id the "key" in extension/manifest.json pins.
const ExtensionID = "cahakjcjmollcmebjjnhhlhcdhipahla"

// LiveLinkDir is the directory in the data dir for Live view link files.
const LiveLinkDir = "live"

// Config configures a Companion.
type Config struct {
	Port    int
	DataDir string
	Version string
	Logger  *slog.Logger
	// ExtensionIDs are extra Chromium extension ids the person allowed.
	ExtensionIDs []string
	// RequestTimeout bounds requests to browsers (default 30 s).
	RequestTimeout time.Duration
	// Tokens is the agent token store. /mcp verifies bearer tokens against
	// it and the admin channel issues and revokes through it. Nil refuses
	// every agent.
	Tokens TokenStore
	// Tools replaces the tool engine; tests pass a fake. Nil builds the
	// real engine.
	Tools tools.Runner
	// ShowDashboard brings the tray app's dashboard forward when a second
	// `reins` asks over the admin channel; nil when headless.
	ShowDashboard func() error
	// NoAdmin skips the admin channel (tests that run several companions
	// on one data dir).
	NoAdmin bool
	// Inspect turns on the admin channel's inspection routes: the hub's
	// API as JSON, for end-to-end tests, benchmarks and diagnostics
	// (`reins headless --inspect`). Their raw requests to browsers obey
	// pause and the tools the person turned off (RawRefusal).
	Inspect bool
}

// TokenStore is what the companion needs from the token store;
// *tokens.Manager satisfies it.
type TokenStore interface {
	// Verify says, in constant time, which agent token a bearer token is:
	// its stable id (the agent's identity) and its name (a label).
	Verify(token string) (id, name string, ok bool)
	Issue(name string) (string, error)
	List() ([]tokens.Info, error)
	Revoke(name string) error
	OnChange(fn func(tokens.Event)) (cancel func())
}

// tokenWatcher is a TokenStore that can follow changes other processes make
// to the store (a `reins token` run while the admin channel was down).
type tokenWatcher interface {
	Watch(ctx context.Context, onError func(error)) error
}

// ErrPortInUse is returned by Start when another program holds the port.
var ErrPortInUse = errors.New("port in use")

// Companion is one running daemon.
type Companion struct {
	cfg   Config
	log   *slog.Logger
	files *agentfiles.Root // each agent's upload and downloads folders
	hub   *hub.Hub
	edge  *edge.Handler
	srv   *http.Server
	ln    net.Listener

	mcp       *mcp.Server
	engine    *tools.Engine // nil when Config.Tools replaced it
	admin     *admin.Server
	tokensOff func()
	watchStop context.CancelFunc
	watchDone chan struct{}
	// The graph pusher: one goroutine at a time, run again when a change
	// arrives while it pushes.
	graphBusy, graphAgain bool
	graphWG               sync.WaitGroup

	paused    atomic.Bool
	overlay   atomic.Bool
	manageExt atomic.Bool // agents may manage extensions
	// dialogTimeout is the person's choice (settings.go); 0 is the default.
	dialogTimeout atomic.Int64

	// The person's settings (settings.go): setMu orders their saves.
	setMu    sync.Mutex
	disabled []string         // sorted
	blocked  []BlockedBrowser // by the person; oldest first
	// developers are the principals marked as developer agents, sorted.
	developers []string
	// refusedLogged notes the blocked profiles whose refusal was logged.
	refusedLogged map[string]bool
	activity      activityLog

	offers    *pairing.Store
	operators *operator.Manager
	live      *live.Server

	// The link handshake: every extension proves the link key, or a
	// pairing code the person read from the app, before it is attached.
	linkAuth *linkauth.Server
	limits   httpbound.Limits

	mu       sync.Mutex
	subs     map[int]chan struct{}
	nextSub  int
	shutdown bool
}

// New builds a companion; Start makes it listen.
func New(cfg Config) (*Companion, error) {
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("port %d is out of range 1-65535", cfg.Port)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.DataDir == "" {
		return nil, errors.New("no data dir")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	c := &Companion{cfg: cfg, log: cfg.Logger, subs: map[int]chan struct{}{}, limits: httpbound.Default, files: agentfiles.New(cfg.DataDir)}
	if err := c.loadSettings(); err != nil {
		return nil, err
	}
	key, replaced, err := linkauth.LoadOrCreate(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if replaced {
		c.log.Warn("the link key was replaced because others could read it or it was damaged; browsers fetch the new one from the native host, or pair again with a code",
			"file", filepath.Join(cfg.DataDir, linkauth.KeyFile))
	}
	c.linkAuth = linkauth.NewServer(key, linkauth.NewCodes(nil))
	c.hub = hub.New(hub.Options{
		Logger:         cfg.Logger,
		RequestTimeout: cfg.RequestTimeout,
		OnChange:       c.changed,
		OnPairOffer:    c.parkOffer,
		Admit:          c.admit,
		Auth:           c.linkAuth,
	})
	// The engine drives the hub's browsers for MCP agents and paired
	// backends; c.CheckPaused is how the tray's Pause reaches every call.
	runner := cfg.Tools
	if runner == nil {
		c.engine = tools.NewEngine(tools.Options{
			Hub: c.hub, Paused: c.CheckPaused, TakenOver: c.TakenOver,
			Disabled: c.toolRefusal, OnActivity: c.RecordActivity, Logger: cfg.Logger,
			Developer: c.IsDeveloperAgent, ManageExtensions: c.ManageExtensions,
			Files: c.files, DialogTimeout: c.DialogTimeout,
		})
		runner = c.engine
	}
	c.mcp = mcp.New(mcp.Options{
		Verifier:   verifier(cfg.Tokens),
		Tools:      runner,
		Paused:     c.CheckPaused,
		Refusal:    c.toolRefusal,
		OnActivity: c.RecordActivity,
		OnChange:   c.changed,
		Version:    cfg.Version,
		Logger:     cfg.Logger,
	})
	// Tools the person turned off are not offered to agents at all.
	c.mcp.SetHidden(c.disabled)
	if cfg.Tokens != nil {
		c.tokensOff = cfg.Tokens.OnChange(func(e tokens.Event) {
			if e.Kind == tokens.KindAgent && (e.Op == tokens.OpRemoved || e.Op == tokens.OpReplaced) && e.ID != "" {
				c.mcp.Revoke(mcp.AgentID(e.ID))
				c.forgetDeveloper(mcp.AgentID(e.ID))
			}
			c.changed()
		})
	}
	c.offers = pairing.NewStore(nil, c.changed)
	if err := c.newOperators(runner); err != nil {
		return nil, err
	}
	c.live = live.New(live.Options{Hub: c.hub, BaseURL: c.BaseURL(), LinkDir: filepath.Join(cfg.DataDir, LiveLinkDir), Logger: cfg.Logger, OnChange: c.changed})
	c.edge = edge.New(edge.Config{Port: cfg.Port, ExtensionIDs: c.extensionIDs}, c.routes())
	// The hub hands its policy to every browser that connects; it must carry
	// the saved settings from the first one on.
	c.pushPolicy()
	return c, nil
}

func verifier(ts TokenStore) mcp.Verifier {
	if ts == nil {
		return nil
	}
	return ts
}

// Agents lists the agents that connected over MCP since start.
func (c *Companion) Agents() []mcp.AgentInfo { return c.mcp.Agents() }

// Tokens is the agent token store, nil when none was configured.
func (c *Companion) Tokens() TokenStore { return c.cfg.Tokens }

// MCPURL is the URL agents connect to.
func (c *Companion) MCPURL() string { return c.BaseURL() + "/mcp" }

// LiveViewURL returns a Live view link for a shared tab, with a one-time
// ticket valid for a minute (`reins live`, which prints it).
func (c *Companion) LiveViewURL(tabID int) (string, error) { return c.live.ViewURL(tabID) }

// LiveViewOpenURL returns a URL that opens a Live view of a shared tab in
// the default browser and carries no secret, so it may go on a command line
// (the tray's Live view item): a file:// URL of a 0600 file in the data
// dir's LiveLinkDir that leads to a one-time link.
func (c *Companion) LiveViewOpenURL(tabID int) (string, error) { return c.live.OpenURL(tabID) }

// TakenOver names who holds the tab in Live view ("" when nobody does); the
// tool engine refuses mutating calls on the tab meanwhile.
func (c *Companion) TakenOver(tabID int) string { return c.live.TakenOver(tabID) }

func (c *Companion) extensionIDs() []string {
	return append([]string{ExtensionID}, c.cfg.ExtensionIDs...)
}

// PairingCode issues the one-time code a browser without the native host
// pairs with (the tray's "Pair a browser…", `reins browsers code`): valid
// for linkauth.CodeTTL, burned by the first handshake that uses it, and
// replacing any code issued before.
func (c *Companion) PairingCode() (code string, expires time.Time) {
	code, expires = c.linkAuth.Codes().Issue()
	c.log.Info("pairing code issued", "expires", expires.Format(time.RFC3339))
	return code, expires
}

// Hub is the browser hub.
func (c *Companion) Hub() *hub.Hub { return c.hub }

// Port is the port the companion listens on.
func (c *Companion) Port() int { return c.cfg.Port }

// BaseURL is http://127.0.0.1:PORT.
func (c *Companion) BaseURL() string { return "http://127.0.0.1:" + strconv.Itoa(c.cfg.Port) }

// Version is the companion's version.
func (c *Companion) Version() string { return c.cfg.Version }

// Handler is the edge-guarded route table, for in-process tests.
func (c *Companion) Handler() http.Handler { return c.edge }

// Start listens on 127.0.0.1 only and serves in the background.
func (c *Companion) Start() error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w: another program is listening on 127.0.0.1:%d; start Reins with --port N to use another port", ErrPortInUse, c.cfg.Port)
		}
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	c.ln = ln
	if err := c.startAdmin(); err != nil {
		ln.Close()
		return err
	}
	if c.operators != nil {
		c.operators.Start()
	}
	// Headers, bodies and idle connections are bounded; WebSockets and
	// event streams are not, since they live as long as their peer.
	c.srv = c.limits.Server(c.edge, c.log)
	go func() {
		if err := c.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			c.log.Error("server stopped", "err", err)
		}
	}()
	// The native messaging host reads it to hand the extension the port.
	if err := nativemsg.WritePort(c.cfg.DataDir, c.cfg.Port); err != nil {
		c.log.Warn("could not record the port for the native host", "err", err)
	}
	c.log.Info("companion listening", "addr", "http://"+addr, "version", c.cfg.Version, "data_dir", c.cfg.DataDir)
	return nil
}

// Shutdown closes extensions with a close frame, fails pending requests and
// stops the listener.
func (c *Companion) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return nil
	}
	c.shutdown = true
	for id, ch := range c.subs {
		close(ch)
		delete(c.subs, id)
	}
	c.mu.Unlock()
	// Take no new connections from here on: an extension whose socket
	// closes below reconnects at once, and a connection that has not sent
	// its request yet holds http.Server.Shutdown for 5 s.
	if c.ln != nil {
		c.ln.Close()
	}
	if c.tokensOff != nil {
		c.tokensOff()
	}
	if c.watchStop != nil {
		c.watchStop()
		<-c.watchDone
	}
	// Before the HTTP server and the admin channel: open SSE streams would
	// hold their Shutdown.
	c.mcp.Close()
	if c.engine != nil {
		c.engine.Close()
	}
	// Before the hub: viewers get their closing message while the tab's
	// browser can still stop the screencast.
	c.live.Close()
	c.hub.Close()
	// After the hub: an inspection request in flight gets the hub's
	// shutdown error as its answer rather than being cut off.
	if c.admin != nil {
		c.admin.Close(ctx)
	}
	c.graphWG.Wait()
	c.offers.Close()
	if c.operators != nil {
		c.operators.Close()
	}
	var err error
	if c.srv != nil {
		var cut bool
		cut, err = httpbound.Stop(ctx, c.srv)
		if errors.Is(err, net.ErrClosed) {
			err = nil // the listener, closed above
		}
		if cut {
			c.log.Warn("requests still running at shutdown were cut off", "after", httpbound.DrainTimeout)
		}
		os.Remove(filepath.Join(c.cfg.DataDir, nativemsg.PortFileName))
	}
	c.log.Info("companion stopped")
	return err
}

// Pause makes every new tool call fail at once with code paused.
func (c *Companion) Pause() { c.setPaused(true) }

// Resume lets tool calls run again.
func (c *Companion) Resume() { c.setPaused(false) }

// Paused reports whether automation is paused.
func (c *Companion) Paused() bool { return c.paused.Load() }

func (c *Companion) setPaused(p bool) {
	if c.paused.Swap(p) == p {
		return
	}
	c.log.Info("automation", "paused", p)
	c.pushPolicy()
	c.changed()
}

func (c *Companion) pushPolicy() {
	c.hub.SetPolicy(wire.Policy{Paused: c.paused.Load(), Overlay: c.overlay.Load(), Disabled: c.DisabledTools()})
}

// CheckPaused returns wire.ErrPaused-coded error while paused.
func (c *Companion) CheckPaused() error {
	if c.paused.Load() {
		return wire.Errorf(wire.CodePaused, "automation is paused in Reins; the person can resume it from the tray")
	}
	return nil
}

// Changes returns a channel that receives a signal (coalesced) whenever the
// companion's state changes, and a cancel func. The UI adapter turns these
// signals into snapshots.
func (c *Companion) Changes() (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{}, 1)
	if c.shutdown {
		close(ch)
		return ch, func() {}
	}
	id := c.nextSub
	c.nextSub++
	c.subs[id] = ch
	ch <- struct{}{}
	return ch, func() {
		c.mu.Lock()
		if _, ok := c.subs[id]; ok {
			delete(c.subs, id)
			close(ch)
		}
		c.mu.Unlock()
	}
}

func (c *Companion) changed() {
	c.signal()
	c.pushGraph()
}

// signal wakes every Changes subscriber without waiting for any.
func (c *Companion) signal() {
	c.mu.Lock()
	for _, ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
}

// pushGraph sends graph.state to Graph-enabled profiles in the background;
// the hub skips profiles whose snapshot did not change.
func (c *Companion) pushGraph() {
	c.mu.Lock()
	if c.shutdown || c.hub == nil {
		c.mu.Unlock()
		return
	}
	if c.graphBusy {
		c.graphAgain = true
		c.mu.Unlock()
		return
	}
	c.graphBusy = true
	c.graphWG.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.graphWG.Done()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c.hub.PushGraph(ctx, c.readState().graph().Wire())
			cancel()
			c.mu.Lock()
			if !c.graphAgain || c.shutdown {
				c.graphBusy, c.graphAgain = false, false
				c.mu.Unlock()
				return
			}
			c.graphAgain = false
			c.mu.Unlock()
		}
	}()
}

// startAdmin opens the admin channel and follows token changes other
// processes make. Only a second companion on the same data dir is fatal:
// without the channel, `reins token` falls back to the store, whose changes
// Watch picks up.
func (c *Companion) startAdmin() error {
	if w, ok := c.cfg.Tokens.(tokenWatcher); ok {
		ctx, stop := context.WithCancel(context.Background())
		c.watchStop, c.watchDone = stop, make(chan struct{})
		go func() {
			defer close(c.watchDone)
			err := w.Watch(ctx, func(err error) { c.log.Warn("reloading tokens", "err", err) })
			if err != nil && !errors.Is(err, context.Canceled) {
				c.log.Warn("not watching the token store; restart Reins after changing tokens with it stopped", "err", err)
			}
		}()
	}
	if c.cfg.NoAdmin {
		return nil
	}
	ln, err := admin.Listen(c.cfg.DataDir)
	if errors.Is(err, admin.ErrAlreadyRunning) {
		if c.watchStop != nil {
			c.watchStop()
			<-c.watchDone
			c.watchStop = nil
		}
		return err
	}
	if err != nil {
		c.log.Warn("admin channel unavailable; reins token commands will use the store directly", "err", err)
		return nil
	}
	var ts admin.Tokens
	if c.cfg.Tokens != nil {
		ts = c.cfg.Tokens
	}
	var inspect *admin.Inspect
	if c.cfg.Inspect {
		inspect = &admin.Inspect{Hub: c.hub, Changes: c.Changes, Allow: c.RawRefusal, Runtime: c.runtimeCounts}
	}
	c.admin = admin.Serve(ln, admin.NewHandler(admin.Options{
		Tokens:          ts,
		Status:          func() admin.Status { return admin.Status{Port: c.cfg.Port, Version: c.cfg.Version, PID: os.Getpid()} },
		ShowDashboard:   c.cfg.ShowDashboard,
		LiveViewURL:     c.LiveViewURL,
		LiveViewOpenURL: c.LiveViewOpenURL,
		Pairing:         c,
		Browsers:        adminBrowsers{c},
		PairingCode:     c.PairingCode,
		Settings:        adminSettings{c},
		Pause:           c,
		MCP:             c.mcp,
		Inspect:         inspect,
		Logger:          c.log,
	}), c.log)
	return nil
}

// runtimeCounts is what a soak test watches for leaks (admin.Runtime).
func (c *Companion) runtimeCounts() admin.Runtime {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out := admin.Runtime{Goroutines: runtime.NumGoroutine(), HeapAlloc: ms.HeapAlloc, HubTabs: len(c.hub.Tabs())}
	out.RememberedInstances, out.RememberedSessions, out.RememberedTabs = c.hub.Remembered()
	if c.engine != nil {
		out.TabStates = c.engine.TabStates()
	}
	return out
}
