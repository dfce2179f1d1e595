package app

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

func TestBrowsersCommandBlocksAndUnblocks(t *testing.T) {
	r := startCompanion(t)
	x, err := hubtest.Dial(testCtx(t), "ws://127.0.0.1:"+strconv.Itoa(r.port)+"/", wire.Hello{
		Version: 3, Browser: "Chrome", BrowserEngine: wire.EngineChromium, Profile: "Work", InstanceID: "prof-1", BrowserSessionID: "s",
	}, hubtest.Options{DataDir: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()
	changes, stop := r.c.Changes()
	defer stop()
	for len(r.c.Hub().Browsers()) == 0 {
		select {
		case <-changes:
		case <-testCtx(t).Done():
			t.Fatal("the browser never connected")
		}
	}
	id := r.c.Hub().Browsers()[0].ID

	code, out, errOut := run(t, nil, "browsers", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "Chrome (Work)") || !strings.Contains(out, "prof-1") || strings.Contains(out, "BLOCKED") {
		t.Fatalf("browsers: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := run(t, nil, "browsers", "block", "b404", "--data-dir", r.dir); code == 0 || !strings.Contains(errOut, "no such browser") {
		t.Fatalf("blocking an unknown browser: %d %q", code, errOut)
	}
	code, out, errOut = run(t, nil, "browsers", "block", id, "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "blocked browser "+id) {
		t.Fatalf("block: %d %q %q", code, out, errOut)
	}
	if got := x.CloseStatus(); got != hub.StatusRefused {
		t.Fatalf("the blocked browser was closed with %v, want %v", got, hub.StatusRefused)
	}
	code, out, _ = run(t, nil, "browsers", "--data-dir", r.dir)
	if code != 0 || !strings.Contains(out, "no browsers are connected") || !strings.Contains(out, "BLOCKED") || !strings.Contains(out, "prof-1") {
		t.Fatalf("browsers after blocking: %d %q", code, out)
	}
	if code, _, errOut := run(t, nil, "browsers", "unblock", "nope", "--data-dir", r.dir); code == 0 || !strings.Contains(errOut, "no blocked profile") {
		t.Fatalf("unblocking an unknown profile: %d %q", code, errOut)
	}
	if code, out, errOut := run(t, nil, "browsers", "unblock", "prof-1", "--data-dir", r.dir); code != 0 || !strings.Contains(out, "unblocked prof-1") {
		t.Fatalf("unblock: %d %q %q", code, out, errOut)
	}
	if n := len(r.c.BlockedBrowsers()); n != 0 {
		t.Fatalf("%d profiles still blocked", n)
	}
	if code, _, errOut := run(t, nil, "browsers", "frob", "--data-dir", r.dir); code == 0 || !strings.Contains(errOut, browsersUsage) {
		t.Fatalf("a wrong subcommand: %d %q", code, errOut)
	}
}

// `reins browsers code` prints a code that pairs a browser once.
func TestBrowsersCode(t *testing.T) {
	r := startCompanion(t)
	code, out, errOut := run(t, nil, "browsers", "code", "--data-dir", r.dir)
	m := regexp.MustCompile(`pairing code: ([0-9A-Z]{5}-[0-9A-Z]{5})\n`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "it works once") {
		t.Fatalf("browsers code: %d %q %q", code, out, errOut)
	}
	url := "ws://127.0.0.1:" + strconv.Itoa(r.port) + "/"
	x, err := hubtest.Dial(testCtx(t), url, wire.Hello{Version: 3, InstanceID: "store", BrowserSessionID: "s"}, hubtest.Options{Code: m[1]})
	if err != nil {
		t.Fatalf("pairing with the printed code: %v", err)
	}
	x.Kill()
	if _, err := hubtest.Dial(testCtx(t), url, wire.Hello{Version: 3, InstanceID: "store", BrowserSessionID: "s"}, hubtest.Options{Code: m[1]}); err == nil {
		t.Fatal("the code paired twice")
	}
}
