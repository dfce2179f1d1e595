package app

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

func TestLivePrintsAOneTimeLink(t *testing.T) {
	r := startCompanion(t)
	changes, stop := r.c.Changes()
	defer stop()
	x, err := hubtest.Dial(testCtx(t), "ws://127.0.0.1:"+strconv.Itoa(r.port)+"/", wire.Hello{
		Version: 3, ExtensionVersion: "test", BrowserEngine: wire.EngineChromium, InstanceID: "i", BrowserSessionID: "s",
	}, hubtest.Options{DataDir: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()
	if err := x.SendTabs([]wire.TabInfo{
		{ID: 1, URL: "https://example.com/", Title: "Shared", Shared: true},
		{ID: 2, URL: "https://example.com/private", Title: "Private"},
	}); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	deadline := time.After(10 * time.Second)
	for len(ids) < 2 {
		select {
		case <-changes:
		case <-deadline:
			t.Fatal("the fake extension's tabs never appeared")
		}
		for _, tb := range r.c.Hub().Tabs() {
			ids[tb.Title] = tb.ID
		}
	}

	code, out, errOut := run(t, nil, "live", strconv.Itoa(ids["Shared"]), "--data-dir", r.dir)
	want := "http://127.0.0.1:" + strconv.Itoa(r.port) + "/live/" + strconv.Itoa(ids["Shared"]) + "?ticket="
	if code != 0 || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
		t.Fatalf("live: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "once") {
		t.Fatalf("stderr %q does not say the link works once", errOut)
	}

	// --file prints a file:// URL without the ticket, of a file only this
	// user can read, which leads to a link.
	code, out, errOut = run(t, nil, "live", "--file", strconv.Itoa(ids["Shared"]), "--data-dir", r.dir)
	if code != 0 || !strings.HasPrefix(out, "file://"+filepath.ToSlash(r.dir)+"/live/") || strings.Contains(out, "ticket") || strings.Count(out, "\n") != 1 {
		t.Fatalf("live --file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	u, _ := url.Parse(strings.TrimSpace(out))
	if fi, err := os.Stat(u.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("live --file: the file %s: %v %v", u.Path, fi, err)
	}
	if data, _ := os.ReadFile(u.Path); !strings.Contains(string(data), "/live/"+strconv.Itoa(ids["Shared"])+"?ticket=") {
		t.Fatalf("live --file: the file does not lead to a link: %q", data)
	}

	code, _, errOut = run(t, nil, "live", "--data-dir", r.dir, strconv.Itoa(ids["Private"]))
	if code != 1 || !strings.Contains(errOut, "not shared") {
		t.Fatalf("unshared tab: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, nil, "live", "999", "--data-dir", r.dir)
	if code != 1 || !strings.Contains(errOut, "no tab 999") {
		t.Fatalf("unknown tab: exit %d, stderr %q", code, errOut)
	}
}

func TestLiveUsageAndNoCompanion(t *testing.T) {
	dir := dataDir(t)
	for _, args := range [][]string{{"live"}, {"live", "seven"}, {"live", "1", "2"}} {
		code, _, errOut := run(t, nil, append(args, "--data-dir", dir)...)
		if code != 1 || !strings.Contains(errOut, "usage: reins live [--file] TABID") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, _, errOut := run(t, nil, "live", "3", "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "not running") {
		t.Fatalf("no companion: exit %d, stderr %q", code, errOut)
	}
}
