package desktoptest

import (
	"context"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/wire"
)

// The tray menu, driven the way a desktop panel drives it: over D-Bus,
// reading the menu with com.canonical.dbusmenu GetLayout and sending
// "clicked" events. Pause reaches the companion (the browser receives the
// paused policy), a pairing offer shows in the menu and opens its approval
// window, and Quit ends the process cleanly.
func TestTrayMenuOverDBus(t *testing.T) {
	d := newDesktop(t)
	pnl := newPanel(t, d.bus)
	port := freePort(t)
	dir := shortDir(t)
	p := d.startReins(t, dir, port, []string{"--keyring", "file"})
	p.waitMCP()
	icon := pnl.waitItem(t).sender

	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	br, err := Dial(ctx, port, dir, wire.Hello{Browser: "Chrome", BrowserEngine: wire.EngineChromium, InstanceID: "i1", BrowserSessionID: "s1", Profile: "Work"},
		[]wire.TabInfo{{ID: 5, URL: "https://mail.example/", Title: "Inbox", Shared: true, WindowID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()

	menu := pnl.waitMenu(t, icon, "the browser and its shared tab", func(m menuItem) bool {
		return len(m.Children) > 0 && strings.Contains(m.Children[0].Label, "1 browser · 1 shared tab")
	})
	pause, _ := menu.find("Pause automation")
	if pause.Toggled {
		t.Fatalf("paused at start: %s", pause)
	}
	if _, ok := menu.find("Inbox — Chrome (Work)"); !ok {
		t.Errorf("the Live view submenu does not list the shared tab: %s", menu)
	}

	// The tab's title changes after the panel showed the menu: the click
	// on the item it showed still lands (the menu used to be built again,
	// with new ids, and the click was lost).
	if err := br.UpdateTab(wire.TabInfo{ID: 5, URL: "https://mail.example/", Title: "Inbox (1)", Shared: true, WindowID: 1}); err != nil {
		t.Fatal(err)
	}
	pnl.waitMenu(t, icon, "the tab's new title", func(m menuItem) bool {
		_, ok := m.find("Inbox (1) — Chrome (Work)")
		return ok
	})
	pnl.click(t, icon, pause)
	if _, err := br.WaitPolicy(ctx, func(p wire.Policy) bool { return p.Paused }); err != nil {
		t.Fatalf("clicking Pause automation did not pause the companion: %v", err)
	}
	menu = pnl.waitMenu(t, icon, "the paused state", func(m menuItem) bool {
		it, _ := m.find("Pause automation")
		return it.Toggled && len(m.Children) > 0 && m.Children[0].Label == "Paused"
	})
	pause, _ = menu.find("Pause automation")
	pnl.click(t, icon, pause)
	if _, err := br.WaitPolicy(ctx, func(p wire.Policy) bool { return !p.Paused }); err != nil {
		t.Fatalf("clicking again did not resume: %v", err)
	}

	// A pairing offer waits for the person: the menu says so and its
	// approval window comes up on its own.
	if err := br.Offer("https://app.acme.example", "Acme Copilot", map[string]any{"transport": "sse-http", "serverUrl": "https://api.acme.example/bop", "token": "backend-secret"}); err != nil {
		t.Fatal(err)
	}
	menu = pnl.waitMenu(t, icon, "the waiting offer", func(m menuItem) bool {
		_, ok := m.find("Pairing requests (1)")
		return ok && strings.Contains(m.Children[0].Label, "1 pairing request")
	})
	d.window(t, "pairing request$")

	open, _ := menu.find("Open dashboard")
	pnl.click(t, icon, open)
	d.window(t, "^Reins$")

	if _, ok := menu.find("Quit"); !ok {
		t.Fatalf("no Quit item: %s", menu)
	}
	pnl.quit(t, icon, p)
	if code := p.wait(); code != 0 {
		t.Fatalf("Quit from the tray: exit %d; log:\n%s", code, p.log())
	}
	if strings.Contains(p.log(), "panic") {
		t.Fatalf("panic on quit:\n%s", p.log())
	}
}

// The tray app outlives its last window. Fyne ends its loop when the last
// window it knows closes; here the only window is an offer's approval, and
// it closes when the offer is denied elsewhere (reins pair deny). The tray
// must still answer, open the dashboard, and quit cleanly.
func TestTheTrayOutlivesItsLastWindow(t *testing.T) {
	d := newDesktop(t)
	pnl := newPanel(t, d.bus)
	p, dir, port := d.startSetUp(t)
	p.waitMCP()
	icon := pnl.waitItem(t).sender

	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	br, err := Dial(ctx, port, dir, wire.Hello{Browser: "Chrome", BrowserEngine: wire.EngineChromium, InstanceID: "i1", BrowserSessionID: "s1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	if err := br.Offer("https://app.acme.example", "Acme Copilot", map[string]any{"transport": "sse-http", "serverUrl": "https://api.acme.example/bop", "token": "backend-secret"}); err != nil {
		t.Fatal(err)
	}
	d.window(t, "pairing request$")
	if ids := d.windows(t, "^Reins$"); len(ids) != 0 {
		t.Fatalf("the dashboard is open: the approval must be the only window")
	}
	code, out, errOut := d.runReins(t, []string{"pair", "list", "--data-dir", dir, "--keyring", "file"})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("pair list: exit %d, %q %q", code, out, errOut)
	}
	id := strings.Fields(lines[1])[0]
	if code, out, errOut := d.runReins(t, []string{"pair", "deny", id, "--data-dir", dir, "--keyring", "file"}); code != 0 {
		t.Fatalf("pair deny: exit %d, %q %q", code, out, errOut)
	}
	menu := pnl.waitMenu(t, icon, "the offer gone", func(m menuItem) bool {
		_, waiting := m.find("Pairing requests (1)")
		_, ok := m.find("Open dashboard")
		return ok && !waiting
	})
	d.waitNoWindow(t, "pairing request$")
	open, _ := menu.find("Open dashboard")
	pnl.click(t, icon, open)
	d.window(t, "^Reins$")
	pnl.quit(t, icon, p)
	if code := p.wait(); code != 0 || strings.Contains(p.log(), "panic") {
		t.Fatalf("Quit from the tray: exit %d; log:\n%s", code, p.log())
	}
}

// Quit right after a window opens under the pointer. The window's first
// pointer event (the pointer "enters" it as it maps) is still queued when
// Quit runs, and where the pointer rests the cursor is a text cursor, so
// handling that event sets the cursor of a window that Quit is tearing
// down. Each round opens the dashboard's agents view under a resting
// pointer and quits at once, from the tray; the process must exit 0 every
// time.
func TestQuitAsAWindowOpensUnderThePointer(t *testing.T) {
	d := newDesktop(t)
	pnl := newPanel(t, d.bus)
	// The agents view's setup snippet (selectable text) is here once the
	// dashboard opens centred on the 1280×800 screen.
	d.x(t, "xdotool", "mousemove", "--sync", "700", "340")
	for round := range 8 {
		port := freePort(t)
		p := d.startReins(t, shortDir(t), port, []string{"--keyring", "file"})
		p.waitMCP()
		icon := pnl.waitItem(t).sender
		menu := pnl.waitMenu(t, icon, "the menu", func(m menuItem) bool {
			_, ok := m.find("Connect an agent…")
			return ok
		})
		open, _ := menu.find("Connect an agent…")
		pnl.click(t, icon, open)
		pnl.quit(t, icon, p)
		if code := p.wait(); code != 0 || strings.Contains(p.log(), "panic") {
			t.Fatalf("round %d: Quit as the dashboard opened: exit %d; log:\n%s", round, code, p.log())
		}
	}
}
