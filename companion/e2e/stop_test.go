//go:build linux

package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
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

var devStartedRE = regexp.MustCompile(`msg="dev browser started".* pid=(\d+)`)

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
	m := devStartedRE.FindStringSubmatch(r.Output())
	if m == nil {
		t.Fatalf("no dev browser in the log:\n%s", harness.Tail(r.Output(), 30))
	}
	pid, _ := strconv.Atoi(m[1])
	cs := mcpSession(t, r, "dev-agent")
	mustTool(t, cs, "tabs_create_mcp", map[string]any{"url": "about:blank"})
	return r, pid
}

// TestStopOnSIGTERMWithTheDevBrowser stops a companion that drives its own
// dev Chromium, with an agent that has a tab in it: the companion must be
// gone within stopBudget, and its Chromium with it.
func TestStopOnSIGTERMWithTheDevBrowser(t *testing.T) {
	r, pid := startDevCompanion(t)
	group := groupPIDs(pid)
	if len(group) < 2 {
		t.Fatalf("the dev Chromium's process group holds %v; want it and its helpers", group)
	}
	took := sigterm(t, r)
	t.Logf("stopped %s after SIGTERM", took.Round(time.Millisecond))
	if took > stopBudget {
		t.Fatalf("reins took %s to stop, over %s\n%s", took, stopBudget, harness.Tail(r.Output(), 30))
	}
	if alive := waitGone(t, group, time.Second); len(alive) > 0 {
		t.Fatalf("the dev Chromium's processes %v outlived the companion", alive)
	}
}

// The bug: the dev Chromium runs in a process group of its own, so when
// the companion was killed (no chance to close it) it kept running, its
// profile and its pages with it. It must die with the companion.
func TestDevBrowserDiesWhenTheCompanionIsKilled(t *testing.T) {
	r, pid := startDevCompanion(t)
	group := groupPIDs(pid)
	if len(group) < 2 {
		t.Fatalf("the dev Chromium's process group holds %v; want it and its helpers", group)
	}
	start := time.Now()
	if err := r.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.Exited()
	alive := waitGone(t, group, goneWithin)
	if len(alive) > 0 {
		for _, p := range alive {
			syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("%s after the companion was killed, its dev Chromium's processes %v still run", goneWithin, alive)
	}
	t.Logf("the dev Chromium and its %d helpers were gone %s after the companion was killed", len(group)-1, time.Since(start).Round(time.Millisecond))
}

// groupPIDs lists the live processes of process group pgid.
func groupPIDs(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pg, state, ok := procGroup(pid); ok && pg == pgid && state != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// procGroup reads a process's group and state from /proc.
func procGroup(pid int) (pgid int, state string, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, "", false
	}
	pg, err := strconv.Atoi(f[2])
	return pg, f[0], err == nil
}

// waitGone waits until every process in pids has exited, woken by each
// one's pidfd, and returns those still running at the deadline.
func waitGone(t *testing.T, pids []int, d time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(d)
	var alive []int
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // already gone
		}
		if err != nil {
			t.Fatalf("pidfd of %d: %v", pid, err)
		}
		exited := pollPidfd(fd, time.Until(deadline))
		unix.Close(fd)
		if !exited {
			alive = append(alive, pid)
		}
	}
	return alive
}

// pollPidfd waits for the pidfd to turn readable (its process exited).
func pollPidfd(fd int, d time.Duration) bool {
	for {
		ms := max(int(d.Milliseconds()), 0)
		start := time.Now()
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if errors.Is(err, unix.EINTR) {
			d -= time.Since(start)
			continue
		}
		return err == nil && n > 0
	}
}
