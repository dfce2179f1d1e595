package companion

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/tools"
)

func quietCompanion(t *testing.T, dir string) *Companion {
	t.Helper()
	c, err := New(Config{Port: 47998, DataDir: dir, NoAdmin: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Shutdown(t.Context()) })
	return c
}

func TestActivityRingKeepsTheLast200InOrder(t *testing.T) {
	var l activityLog
	base := time.Date(2025, 12, 2, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		l.add(tools.Activity{Time: base.Add(time.Duration(i) * time.Second), Tool: fmt.Sprint("t", i)})
	}
	if got := l.list(); len(got) != 3 || got[0].Tool != "t0" || got[2].Tool != "t2" {
		t.Fatalf("before the ring is full: %+v", got)
	}
	for i := 3; i < 3*MaxActivity+17; i++ {
		l.add(tools.Activity{Time: base.Add(time.Duration(i) * time.Second), Tool: fmt.Sprint("t", i)})
	}
	got := l.list()
	if len(got) != MaxActivity {
		t.Fatalf("ring holds %d calls, want %d", len(got), MaxActivity)
	}
	last := 3*MaxActivity + 16
	if got[0].Tool != fmt.Sprint("t", last-MaxActivity+1) || got[MaxActivity-1].Tool != fmt.Sprint("t", last) {
		t.Fatalf("ring is not the newest %d, oldest first: first %s, last %s", MaxActivity, got[0].Tool, got[MaxActivity-1].Tool)
	}
	for i := 1; i < len(got); i++ {
		if !got[i].Time.After(got[i-1].Time) {
			t.Fatalf("out of order at %d", i)
		}
	}
	if cap(l.ring) > MaxActivity {
		t.Fatalf("ring grew its backing array to %d", cap(l.ring))
	}
}

func TestTabUsersFollowSuccessfulCallsAndForgetUnsharedTabs(t *testing.T) {
	var l activityLog
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	l.add(tools.Activity{Time: now, Principal: "agent:c1", Agent: "claude", Tool: "navigate", TabID: 4, Outcome: "ok"})
	l.add(tools.Activity{Time: now, Principal: "agent:c2", Agent: "cursor", Tool: "computer", TabID: 4, Outcome: "tab_not_in_session"})
	l.add(tools.Activity{Time: now, Principal: "agent:c2", Agent: "cursor", Tool: "read_page", TabID: 9, Outcome: "ok"})
	l.add(tools.Activity{Time: now, Principal: "agent:c2", Agent: "cursor", Tool: "tabs_context_mcp", Outcome: "ok"})
	// A backend with the same label is another principal.
	l.add(tools.Activity{Time: now, Principal: "backend:b1", Agent: "claude", Tool: "read_page", TabID: 11, Outcome: "ok"})
	got := l.tabUsers(map[int]bool{4: true, 9: true, 11: true}, now)
	if want := map[int]string{4: "agent:c1", 9: "agent:c2", 11: "backend:b1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tab users %v, want %v (a refused call does not make its agent the tab's user)", got, want)
	}
	if got := l.tabUsers(map[int]bool{4: true}, now.Add(unsharedGrace+time.Second)); len(got) != 1 || len(l.users) != 1 {
		t.Fatalf("an unshared tab was not forgotten: %v, kept %v", got, l.users)
	}
}

// A call can finish on a new tab before the browser's listing shows the tab
// shared; a snapshot taken in between must not forget who works there (the
// dashboard lost the edge of a backend's new tab for good).
func TestTabUsersKeepATabNotListedYet(t *testing.T) {
	var l activityLog
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	l.add(tools.Activity{Time: now, Principal: "backend:b1", Agent: "claude", Tool: "tabs_create_mcp", TabID: 2, Outcome: "ok"})
	if got := l.tabUsers(map[int]bool{}, now.Add(50*time.Millisecond)); len(got) != 0 {
		t.Fatalf("an unlisted tab has users: %v", got)
	}
	got := l.tabUsers(map[int]bool{2: true}, now.Add(100*time.Millisecond))
	if got[2] != "backend:b1" {
		t.Fatalf("once listed, tab 2's user is %q, want backend:b1", got[2])
	}
}

// The activity type has no field an argument could hide in, and a call
// whose arguments carry a secret leaves no trace of it in the ring.
func TestActivityNeverRecordsArguments(t *testing.T) {
	allowed := []string{"Agent", "Duration", "Outcome", "Principal", "TabID", "Time", "Tool"}
	var fields []string
	for f := range reflect.TypeFor[tools.Activity]().Fields() {
		fields = append(fields, f.Name)
	}
	slices.Sort(fields)
	if !slices.Equal(fields, allowed) {
		t.Fatalf("tools.Activity has fields %v; only %v may be recorded", fields, allowed)
	}

	c := quietCompanion(t, t.TempDir())
	changes, stop := c.Changes()
	defer stop()
	<-changes
	const secret = "correct-horse-battery-staple"
	s := c.engine.NewSession("agent:c1", "claude")
	args, _ := json.Marshal(map[string]any{"action": "type", "text": secret, "tabId": 7})
	res := c.engine.Call(t.Context(), s, "computer", args)
	if !res.IsError {
		t.Fatalf("typing into a tab that does not exist succeeded: %+v", res)
	}
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("recording a call did not signal a change")
	}
	got := c.Activity()
	if len(got) != 1 || got[0].Tool != "computer" || got[0].Agent != "claude" || got[0].Principal != "agent:c1" || got[0].TabID != 7 || got[0].Outcome == "ok" {
		t.Fatalf("activity %+v", got)
	}
	if dump := fmt.Sprintf("%#v", got); strings.Contains(dump, secret) {
		t.Fatalf("the activity ring holds the call's arguments: %s", dump)
	}
}
