package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinshq/reins/companion/agentfiles"
	"github.com/reinshq/reins/companion/devbrowser"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// One Chromium serves every real-browser test and benchmark in the package;
// each test opens its own tabs through its own engine and agent names.

var shared struct {
	once sync.Once
	err  error
	hub  *hub.Hub
	dev  *devbrowser.Browser
	hb   *hub.Browser
	srv  *httptest.Server
	alt  *httptest.Server // a second origin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dev != nil {
		shared.dev.Close()
	}
	if shared.hub != nil {
		shared.hub.Close()
	}
	if shared.srv != nil {
		shared.srv.Close()
		shared.alt.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func chromiumPath() string {
	if p := os.Getenv("REINS_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/lib/chromium/chromium"
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// browser starts the shared Chromium and page servers once. A missing
// Chromium fails the calling test.
func browser(tb testing.TB) {
	tb.Helper()
	shared.once.Do(func() {
		if _, err := os.Stat(chromiumPath()); err != nil {
			shared.err = fmt.Errorf("chromium not found at %s (set REINS_CHROMIUM): %w", chromiumPath(), err)
			return
		}
		shared.srv = httptest.NewServer(pages())
		shared.alt = httptest.NewServer(pages())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		shared.hub = hub.New(hub.Options{Logger: quietLogger()})
		shared.dev, shared.err = devbrowser.Launch(ctx, devbrowser.Options{Path: chromiumPath(), Headless: true, Logger: quietLogger()})
		if shared.err != nil {
			return
		}
		shared.hb, shared.err = shared.dev.Attach(shared.hub)
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
}

type rig struct {
	tb    testing.TB
	e     *tools.Engine
	files *agentfiles.Root // the agents' folders, in a temporary data dir
	url   string           // base URL of the test pages
	alt   string           // the same pages on another origin

	mu         sync.Mutex
	activities []tools.Activity
	activity   chan struct{} // signalled on every activity
}

type rigOptions struct {
	paused    func() error
	takenOver func(int) string
	// The person's permissions: developer agents, managing extensions.
	developer     func(string) bool
	manageExt     func() bool
	dialogTimeout time.Duration
}

func newRig(tb testing.TB, o ...rigOptions) *rig {
	tb.Helper()
	browser(tb)
	r := &rig{tb: tb, url: shared.srv.URL, alt: shared.alt.URL, files: agentfiles.New(tb.TempDir()), activity: make(chan struct{}, 1)}
	var opt rigOptions
	if len(o) > 0 {
		opt = o[0]
	}
	var dialogTimeout func() time.Duration
	if opt.dialogTimeout > 0 {
		dialogTimeout = func() time.Duration { return opt.dialogTimeout }
	}
	r.e = tools.NewEngine(tools.Options{
		Hub: shared.hub, Logger: quietLogger(), Paused: opt.paused, TakenOver: opt.takenOver, Files: r.files,
		Developer: opt.developer, ManageExtensions: opt.manageExt, DialogTimeout: dialogTimeout,
		OnActivity: func(a tools.Activity) {
			r.mu.Lock()
			r.activities = append(r.activities, a)
			r.mu.Unlock()
			select {
			case r.activity <- struct{}{}:
			default:
			}
		},
	})
	tb.Cleanup(r.e.Close)
	return r
}

func ctxFor(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// call runs a tool and returns its result.
func (r *rig) call(s *tools.Session, tool string, args any) *tools.Result {
	r.tb.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		r.tb.Fatal(err)
	}
	return r.e.Call(ctxFor(r.tb), s, tool, raw)
}

// ok runs a tool that must succeed and returns its text.
func (r *rig) ok(s *tools.Session, tool string, args any) string {
	r.tb.Helper()
	res := r.call(s, tool, args)
	if res.IsError {
		r.tb.Fatalf("%s %v failed: %s", tool, args, text(res))
	}
	return text(res)
}

// fails runs a tool that must fail with code.
func (r *rig) fails(s *tools.Session, tool string, args any, code wire.Code) string {
	r.tb.Helper()
	res := r.call(s, tool, args)
	if !res.IsError || res.Code != code {
		r.tb.Fatalf("%s %v: want %s, got isError=%v code=%q: %s", tool, args, code, res.IsError, res.Code, text(res))
	}
	t := text(res)
	if !strings.HasPrefix(t, "["+string(code)+"]") {
		r.tb.Fatalf("%s: error text does not start with [%s]: %s", tool, code, t)
	}
	return t
}

func text(r *tools.Result) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

var tabIDRE = regexp.MustCompile(`Created tab (\d+)`)

// newTab opens a tab for the session at path on the test server.
func (r *rig) newTab(s *tools.Session, path string) int {
	r.tb.Helper()
	out := r.ok(s, "tabs_create_mcp", map[string]any{"url": r.url + path})
	m := tabIDRE.FindStringSubmatch(out)
	if m == nil {
		r.tb.Fatalf("no tab id in %q", out)
	}
	var id int
	fmt.Sscan(m[1], &id)
	r.tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = shared.hub.TabsClose(ctx, id)
	})
	return id
}

// js evaluates an expression in the tab and decodes its JSON value.
func (r *rig) js(s *tools.Session, tab int, expr string, out any) {
	r.tb.Helper()
	t := r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "JSON.stringify(" + expr + ")"})
	if err := json.Unmarshal([]byte(t), out); err != nil {
		r.tb.Fatalf("%s returned %q: %v", expr, t, err)
	}
}

// event is one entry of a test page's window.__log.
type event struct {
	T      string  `json:"t"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Button int     `json:"b"`
	Detail int     `json:"n"`
	ID     string  `json:"id"`
	Key    string  `json:"key"`
	Code   string  `json:"code"`
	Ctrl   bool    `json:"ctrl"`
	Shift  bool    `json:"shift"`
	Value  string  `json:"v"`
	Name   string  `json:"name"`
	Size   int     `json:"size"`
	Type   string  `json:"type"`
	DY     float64 `json:"dy"`
}

func (r *rig) log(s *tools.Session, tab int) []event {
	r.tb.Helper()
	var evs []event
	r.js(s, tab, "window.__log || []", &evs)
	return evs
}

func (r *rig) clearLog(s *tools.Session, tab int) {
	r.tb.Helper()
	r.ok(s, "javascript_tool", map[string]any{"tabId": tab, "text": "window.__log = []; 0"})
}

func only(evs []event, typ string) []event {
	var out []event
	for _, e := range evs {
		if e.T == typ {
			out = append(out, e)
		}
	}
	return out
}

var refRE = regexp.MustCompile(`\[(ref_(?:f\d+_)?\d+)\]`)

// anyRefRE is a ref anywhere: in brackets on read_page lines, first on
// find's.
var anyRefRE = regexp.MustCompile(`ref_(?:f\d+_)?\d+`)

// refFor finds the ref on the first line of a read_page or find answer
// containing needle.
func refFor(tb testing.TB, tree, needle string) string {
	tb.Helper()
	for _, l := range strings.Split(tree, "\n") {
		if strings.Contains(l, needle) {
			if m := anyRefRE.FindString(l); m != "" {
				return m
			}
		}
	}
	tb.Fatalf("no ref for %q in:\n%s", needle, tree)
	return ""
}

var jsonMarshal = json.Marshal
