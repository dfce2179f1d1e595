package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

func netEvent(method, id, typ string) (string, json.RawMessage) {
	raw, _ := json.Marshal(map[string]string{"requestId": id, "type": typ})
	return method, raw
}

func TestNetTrackerIdleFollowsRequests(t *testing.T) {
	var n netTracker
	n.feed(netEvent("Network.requestWillBeSent", "1", "Fetch"))
	n.feed(netEvent("Network.requestWillBeSent", "ws", "WebSocket"))
	if c, _ := n.state(); c != 1 {
		t.Fatalf("%d in flight, want 1 (a WebSocket stays open by design)", c)
	}
	done := make(chan error, 1)
	go func() { done <- n.idle(context.Background(), 20*time.Millisecond, nil) }()
	select {
	case err := <-done:
		t.Fatalf("idle with a request in flight: %v", err)
	case <-time.After(100 * time.Millisecond): // the check: nothing happens while the request is open
	}
	n.feed(netEvent("Network.loadingFinished", "1", ""))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("never idle after the request finished")
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.feed(netEvent("Network.requestWillBeSent", "2", "Document"))
	cancel()
	if err := n.idle(ctx, time.Millisecond, nil); err == nil {
		t.Fatal("idle returned nil after its context ended with a request in flight")
	}
}

func TestNetTrackerIsBounded(t *testing.T) {
	var n netTracker
	for i := range maxInflight + 50 {
		n.feed(netEvent("Network.requestWillBeSent", fmt.Sprint(i), "Fetch"))
	}
	if c, _ := n.state(); c != maxInflight {
		t.Fatalf("%d requests followed, want at most %d", c, maxInflight)
	}
}

func TestDownloadTableIsBounded(t *testing.T) {
	e := NewEngine(Options{Hub: hub.New(hub.Options{})})
	defer e.Close()
	ts := &tabState{id: 3, e: e, owner: "agent:a", browser: "b-missing"}
	for i := range maxDownloads + 10 {
		raw, _ := json.Marshal(map[string]string{"guid": fmt.Sprint("g", i), "url": "http://a.test/f", "suggestedFilename": "../f.txt"})
		e.downloads.begin(ts, raw)
	}
	e.downloads.mu.Lock()
	defer e.downloads.mu.Unlock()
	if len(e.downloads.list) != maxDownloads {
		t.Fatalf("%d downloads remembered, want %d", len(e.downloads.list), maxDownloads)
	}
	last := e.downloads.list[len(e.downloads.list)-1]
	if last.id != fmt.Sprintf("dl_%d", maxDownloads+10) || last.name != "f.txt" || last.principal != "agent:a" {
		t.Fatalf("newest download %+v", last)
	}
}

func TestFileTextCapsAndRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csv := write("a.csv", []byte("é,b\n1,2\n"))
	if text, note, err := fileText(csv, "text/csv", 100); err != nil || text != "é,b\n1,2\n" || note != "" {
		t.Fatalf("csv: %q %q %v", text, note, err)
	}
	if text, note, err := fileText(csv, "text/csv", 2); err != nil || text != "é," || !strings.Contains(note, "first 2 of 8 characters") {
		t.Fatalf("capped csv: %q %q %v", text, note, err)
	}
	big := write("big.txt", []byte(strings.Repeat("x", maxReadBytes+10)))
	if text, note, err := fileText(big, "text/plain", maxReadChars); err != nil || len(text) != maxReadChars || !strings.Contains(note, "+") {
		t.Fatalf("big: %d chars, %q, %v", len(text), note, err)
	}
	bin := write("a.bin", []byte{0x89, 'P', 'N', 'G', 0, 0, 0, 1, 2, 3})
	if _, _, err := fileText(bin, "image/png", 100); wire.CodeOf(err) != wire.CodeUnsupported {
		t.Fatalf("binary: %v", err)
	}
	bad := write("bad.pdf", []byte("%PDF-1.4\nthis is no pdf at all"))
	if _, _, err := fileText(bad, "application/pdf", 100); wire.CodeOf(err) != wire.CodeUnsupported {
		t.Fatalf("a broken PDF: %v", err)
	}
	huge := filepath.Join(dir, "huge.pdf")
	if f, err := os.Create(huge); err != nil || f.Truncate(maxPDFBytes+1) != nil || f.Close() != nil {
		t.Fatal("cannot make a large PDF", err)
	}
	if _, _, err := fileText(huge, "application/pdf", 100); wire.CodeOf(err) != wire.CodeUnsupported || !strings.Contains(err.Error(), "up to 64 MiB") {
		t.Fatalf("a PDF over the bound: %v", err)
	}
	// A text file cut inside a character is still text.
	cutRune := write("cut.txt", append([]byte("a"), bytes.Repeat([]byte("é"), 3000)...))
	if _, _, err := fileText(cutRune, "application/octet-stream", 10); err != nil {
		t.Fatalf("text cut inside a character: %v", err)
	}
	if _, _, err := fileText(filepath.Join(dir, "gone"), "text/plain", 100); wire.CodeOf(err) != wire.CodeBadParams {
		t.Fatalf("a missing file: %v", err)
	}
}

// The attack: the person downloads a file in a tab they shared with an
// agent, long after the agent last acted there. The file is the person's:
// it must not move into the agent's folder, where the agent could read it.
func TestADownloadInASharedTabIsTheAgentsOnlyRightAfterItsAction(t *testing.T) {
	e := NewEngine(Options{Hub: hub.New(hub.Options{})})
	defer e.Close()
	begin := func(ts *tabState, guid string) *download {
		raw, _ := json.Marshal(map[string]string{"guid": guid, "url": "http://bank.test/statement.pdf", "suggestedFilename": "statement.pdf"})
		e.downloads.begin(ts, raw)
		e.downloads.mu.Lock()
		defer e.downloads.mu.Unlock()
		return e.downloads.byGUID(guid)
	}
	now := time.Now()
	shared := &tabState{id: 4, e: e}
	shared.acting("agent:a", "b-missing", false, true, now.Add(-downloadClaimWindow-time.Second))
	shared.acting("agent:a", "b-missing", false, false, now) // a later read claims nothing
	if d := begin(shared, "late"); d != nil {
		t.Fatalf("the person's download became %s of %s", d.id, d.principal)
	}
	shared.acting("agent:a", "b-missing", false, true, now)
	if d := begin(shared, "soon"); d == nil || d.principal != "agent:a" {
		t.Fatalf("a download right after the agent's click: %+v", d)
	}
	owned := &tabState{id: 5, e: e}
	owned.acting("agent:b", "b-missing", true, false, now.Add(-time.Hour))
	if d := begin(owned, "own"); d == nil || d.principal != "agent:b" {
		t.Fatalf("a download in the agent's own tab: %+v", d)
	}
}
