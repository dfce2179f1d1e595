package hub

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

type idleLink struct{}

func (idleLink) RoundTrip(context.Context, string, any) (json.RawMessage, error) {
	return nil, wire.Errorf(wire.CodeInternal, "no link")
}
func (idleLink) Close(error) {}

// A tab's description can be on its way to a caller (Tabs copies the
// listing, then names each tab) while a new listing drops the tab. Naming
// it then must not record a public id: only a listing that drops a tab
// forgets its id, so that record would stay for as long as the browser
// run, one more for every tab closed in that window (a soak showed the
// count growing by 18 in 30 minutes).
func TestATabNamedAfterItLeftTheListingIsNotRemembered(t *testing.T) {
	h := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer h.Close()
	b, err := h.Attach(wire.Hello{Version: 3, Browser: "Chromium", InstanceID: "i1", BrowserSessionID: "s1"}, ModeExtension, idleLink{})
	if err != nil {
		t.Fatal(err)
	}
	b.setTabs([]wire.TabInfo{{ID: 1, URL: "https://a.example/"}, {ID: 2, URL: "https://b.example/"}})
	snapshot := b.Tabs()
	b.setTabs([]wire.TabInfo{{ID: 1, URL: "https://a.example/"}})
	// The copy taken before the second listing still describes tab 2.
	late := b.public(wire.TabInfo{ID: 2, URL: "https://b.example/"})
	if _, _, tabs := h.Remembered(); tabs != 1 {
		t.Fatalf("%d public tab ids remembered for one listed tab", tabs)
	}
	if _, _, err := h.Tab(late.ID); wire.CodeOf(err) != wire.CodeNoSuchTab {
		t.Fatalf("the late id %d resolves: %v", late.ID, err)
	}
	if _, _, err := h.Tab(snapshot[1].ID); wire.CodeOf(err) != wire.CodeNoSuchTab {
		t.Fatalf("the closed tab's id %d resolves: %v", snapshot[1].ID, err)
	}
	if got, _, err := h.Tab(snapshot[0].ID); err != nil || got.Native != 1 {
		t.Fatalf("the listed tab: %+v %v", got, err)
	}
}

// A worker that stops and comes back joins the same browser run, which
// keeps its public ids. A tab closed while the link was down is in no
// listing after that, so the first listing of the new link must forget it;
// otherwise its id stays for the browser's run (a soak showed 3 more in 10
// minutes of worker stops and tab closes).
func TestATabClosedWhileTheLinkWasDownIsForgotten(t *testing.T) {
	h := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer h.Close()
	hello := wire.Hello{Version: 3, Browser: "Chromium", InstanceID: "i1", BrowserSessionID: "s1"}
	b, err := h.Attach(hello, ModeExtension, idleLink{})
	if err != nil {
		t.Fatal(err)
	}
	b.setTabs([]wire.TabInfo{{ID: 1, URL: "https://a.example/"}, {ID: 2, URL: "https://b.example/"}})
	before := b.Tabs()
	var closed atomic.Bool
	defer h.SubscribeTab(before[1].ID, func(ev TabEvent) {
		if ev.Kind == TabClosed {
			closed.Store(true)
		}
	})()
	b.detach(wire.Errorf(wire.CodeNoSuchBrowser, "gone"), wire.Errorf(wire.CodeNoSuchBrowser, "worker stopped"))

	again, err := h.Attach(hello, ModeExtension, idleLink{})
	if err != nil {
		t.Fatal(err)
	}
	again.setTabs([]wire.TabInfo{{ID: 1, URL: "https://a.example/"}})
	if _, _, tabs := h.Remembered(); tabs != 1 {
		t.Fatalf("%d public tab ids remembered for one listed tab", tabs)
	}
	if _, _, err := h.Tab(before[1].ID); wire.CodeOf(err) != wire.CodeNoSuchTab {
		t.Fatalf("the tab closed while the link was down still resolves: %v", err)
	}
	if got := again.Tabs(); len(got) != 1 || got[0].ID != before[0].ID {
		t.Fatalf("the open tab lost its id across the reconnect: %+v, was %d", got, before[0].ID)
	}
	// setTabs publishes on this goroutine.
	if !closed.Load() {
		t.Fatal("the closed tab's watchers were not told")
	}
}
