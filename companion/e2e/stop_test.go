//go:build linux

package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/internal/proctest"
)

// stopBudget is how long a companion may take to exit after SIGTERM, with
// browsers, agents and viewers connected.
const stopBudget = 2 * time.Second

// goneWithin is how long the dev browser may outlive a companion that was
// killed.
const goneWithin = 5 * time.Second

// sigterm stops r with SIGTERM and returns how long it took to exit; it
// fails the test when the exit is not clean.
func sigterm(t *testing.T, r *harness.Reins) time.Duration {
	t.Helper()
	start := time.Now()
	if err := r.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Exited():
	case <-time.After(30 * time.Second):
		t.Fatalf("reins still runs 30 s after SIGTERM\n%s", harness.Tail(r.Output(), 30))
	}
	took := time.Since(start)
	if err := r.ExitErr(); err != nil {
		t.Fatalf("reins exited uncleanly: %v\n%s", err, harness.Tail(r.Output(), 30))
	}
	return took
}

// TestStopOnSIGTERMWithABrowserAnAgentAndAViewer stops a companion with the
// real extension connected in Chromium, an MCP agent with a session open
// and a Live viewer watching a busy tab: it must be gone within stopBudget.
func TestStopOnSIGTERMWithABrowserAnAgentAndAViewer(t *testing.T) {
	s := newStack(t)
	pages := startLivePages()
	t.Cleanup(pages.Close)
	ctx := within(t, liveStep)
	cs := mcpSession(t, s.Reins, "stopper")
	mustTool(t, cs, "tabs_context_mcp", map[string]any{"createIfEmpty": true})
	tab, err := openLiveTab(ctx, s, pages, "busy", "stop")
	if err != nil {
		t.Fatal(err)
	}
	link, err := liveURL(ctx, s, tab.ID)
	if err != nil {
		t.Fatal(err)
	}
	ls, _, err := redeem(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := dialLive(ctx, ls, s.Reins.BaseURL(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	for {
		m, err := readLive(ctx, conn)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kind == "frame" {
			break
		}
	}
	took := sigterm(t, s.Reins)
	t.Logf("stopped %s after SIGTERM", took.Round(time.Millisecond))
	if took > stopBudget {
		t.Fatalf("reins took %s to stop, over %s\n%s", took, stopBudget, harness.Tail(s.Reins.Output(), 30))
	}
}

var devStartedRE = regexp.MustCompile(`msg="dev browser started".* pid=(\d+) .*profile=(\S+)`)

// startDevCompanion runs reins headless --dev-browser and returns it with
// its dev Chromium's pid, once the dev browser serves an agent.
func startDevCompanion(t *testing.T) (*harness.Reins, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	path := harness.ChromiumPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no Chromium at %s (set REINS_CHROMIUM): %v", path, err)
	}
	r, err := harness.StartReins(ctx, "--dev-browser", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	// The admin socket answers before the dev browser has started.
	if _, err := r.WaitLogTime(ctx, `msg="dev browser started"`); err != nil {
		t.Fatalf("%v:\n%s", err, harness.Tail(r.Output(), 30))
	}
	m := devStartedRE.FindStringSubmatch(r.Output())
	if m == nil {
		t.Fatalf("no dev browser in the log:\n%s", harness.Tail(r.Output(), 30))
	}
	pid, _ := strconv.Atoi(m[1])
	// A companion that is killed leaves its temporary profile behind.
	t.Cleanup(func() { os.RemoveAll(m[2]) })
	cs := mcpSession(t, r, "dev-agent")
	mustTool(t, cs, "tabs_create_mcp", map[string]any{"url": "about:blank"})
	return r, pid
}

// TestStopOnSIGTERMWithTheDevBrowser stops a companion that drives its own
// dev Chromium, with an agent that has a tab in it: the companion must be
// gone within stopBudget, and its Chromium with it.
func TestStopOnSIGTERMWithTheDevBrowser(t *testing.T) {
	r, pid := startDevCompanion(t)
	group := proctest.GroupPIDs(pid)
	if len(group) < 2 {
		t.Fatalf("the dev Chromium's process group holds %v; want it and its helpers", group)
	}
	took := sigterm(t, r)
	t.Logf("stopped %s after SIGTERM", took.Round(time.Millisecond))
	if took > stopBudget {
		t.Fatalf("reins took %s to stop, over %s\n%s", took, stopBudget, harness.Tail(r.Output(), 30))
	}
	if alive, err := proctest.WaitGone(group, time.Second); err != nil || len(alive) > 0 {
		t.Fatalf("the dev Chromium's processes %v outlived the companion (%v)", alive, err)
	}
}

// The bug: the dev Chromium runs in a process group of its own, so when
// the companion was killed (no chance to close it) it kept running, its
// profile and its pages with it. It must die with the companion.
func TestDevBrowserDiesWhenTheCompanionIsKilled(t *testing.T) {
	r, pid := startDevCompanion(t)
	group := proctest.GroupPIDs(pid)
	if len(group) < 2 {
		t.Fatalf("the dev Chromium's process group holds %v; want it and its helpers", group)
	}
	start := time.Now()
	if err := r.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.Exited()
	alive, err := proctest.WaitGone(group, goneWithin)
	if err != nil {
		t.Fatal(err)
	}
	if len(alive) > 0 {
		for _, p := range alive {
			syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("%s after the companion was killed, its dev Chromium's processes %v still run", goneWithin, alive)
	}
	t.Logf("the dev Chromium and its %d helpers were gone %s after the companion was killed", len(group)-1, time.Since(start).Round(time.Millisecond))
}

// The dev browser used to be launched once: when it died (a crash, its
// window closed, the OOM killer), agents had no browser until the companion
// was restarted. It now starts again under the same browser id, and an
// agent that chose it goes on without choosing again; the call on the tab
// that went with it answers with a code.
func TestTheDevBrowserStartsAgainAfterItDies(t *testing.T) {
	r, pid := startDevCompanion(t)
	ctx := within(t, 2*time.Minute)
	w, err := r.Client.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var dev hub.BrowserInfo
	for _, b := range w.Last().Browsers {
		if b.Mode == hub.ModeDev {
			dev = b
		}
	}
	if dev.ID == "" {
		t.Fatalf("no dev browser in %+v", w.Last().Browsers)
	}
	cs := mcpSession(t, r, "keeper-agent")
	mustTool(t, cs, "switch_browser", map[string]any{"browserId": dev.ID})
	tab := openTab(t, cs, "about:blank")
	if out := mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "6*7"}); !strings.Contains(out.text, "42") {
		t.Fatalf("javascript_tool answered %s", out.text)
	}

	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The tab went with the browser: its call answers with a code, whether
	// the browser is still away or already back.
	out := callTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "6*7"})
	if !out.isErr || !codeRE.MatchString(out.text) {
		t.Fatalf("a call on the dead browser's tab answered %+v, want an error with a code", out)
	}
	t.Logf("the call on the dead browser's tab answered in %s: %.120s", time.Since(killed).Round(time.Millisecond), out.text)
	snap, err := w.Until(within(t, 30*time.Second), func(snap admin.Snapshot) bool {
		for _, b := range snap.Browsers {
			if b.ID == dev.ID && b.Since.After(dev.Since) {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the dev browser never came back: %v\n%s", err, harness.Tail(r.Output(), 30))
	}
	for _, b := range snap.Browsers {
		if b.ID == dev.ID {
			t.Logf("the dev browser was back under %s %s after it was killed", b.ID, b.Since.Sub(killed).Round(time.Millisecond))
		}
	}
	// The process's output trails what it answers.
	var starts [][]string
	r.WaitOutput(within(t, 10*time.Second), func(out string) bool {
		starts = devStartedRE.FindAllStringSubmatch(out, -1)
		return len(starts) >= 2
	})
	if len(starts) != 2 || starts[1][1] == strconv.Itoa(pid) {
		t.Fatalf("dev browser starts in the log: %v, want the first and a new one", starts)
	}
	t.Cleanup(func() { os.RemoveAll(starts[1][2]) })
	if _, err := os.Stat(starts[0][2]); !os.IsNotExist(err) {
		t.Fatalf("the dead browser's profile %s is still there (%v)", starts[0][2], err)
	}
	// The agent's browser is the same one: no switch_browser.
	tab = openTab(t, cs, "about:blank")
	if out := mustTool(t, cs, "javascript_tool", map[string]any{"tabId": tab, "text": "6*7"}); !strings.Contains(out.text, "42") {
		t.Fatalf("javascript_tool in the new dev browser answered %s", out.text)
	}
}

// TestSIGTERMAsTheCompanionStarts stops reins headless the moment its port
// takes connections, while it is still starting: it must exit cleanly, each
// time. The signal used to be caught only once the companion had started, and
// one that came earlier killed it (CI's package test caught one, 57 ms after
// the start).
func TestSIGTERMAsTheCompanionStarts(t *testing.T) {
	bin, err := harness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		port, err := harness.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "headless", "--keyring", "file", "--port", strconv.Itoa(port), "--data-dir", t.TempDir())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// The kernel takes connections as soon as the port is bound, before
		// the companion serves them.
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("run %d: the port never opened: %v\n%s", i, err, out.String())
			}
			runtime.Gosched()
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("run %d: reins headless, stopped as it started, exited with %v\n%s", i, err, out.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("run %d: reins headless still runs 30 s after SIGTERM\n%s", i, out.String())
		}
	}
}
