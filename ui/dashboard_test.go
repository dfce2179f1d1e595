package ui

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

func newTestDashboard(t *testing.T, s State) (*Dashboard, *fakeCompanion, *trayApp) {
	t.Helper()
	app := newTrayApp(t)
	fc := newFake(s)
	d := NewDashboard(app, fc, &fakeAutostart{}, nil)
	d.now = func() time.Time { return time.Date(2025, 12, 2, 12, 0, 0, 0, time.UTC) }
	d.Update(s)
	d.Show(ViewConnections)
	return d, fc, app
}

func labelTexts(d *Dashboard) string {
	var b strings.Builder
	for _, l := range allLabels(d.Window().Content()) {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestDashboardSelectView(t *testing.T) {
	d, _, _ := newTestDashboard(t, sampleState())
	for _, v := range Views {
		if !d.Select(v) || d.Selected() != v {
			t.Errorf("Select(%q): selected %q", v, d.Selected())
		}
	}
	if d.Select("nope") {
		t.Error("an unknown view was selected")
	}
	d.Show(ViewAgents)
	if d.Selected() != ViewAgents {
		t.Errorf("Show(ViewAgents) shows %q", d.Selected())
	}
}

func TestShellConnectAnAgentOpensAgentsView(t *testing.T) {
	sh, _ := startShell(t, newTrayApp(t), newFake(sampleState()))

	item(t, sh.Tray().Menu(), "Connect an agent…").Action()
	if sh.Dashboard().Selected() != ViewAgents || !windowOpen(sh.Dashboard().Window()) {
		t.Errorf("dashboard on %q", sh.Dashboard().Selected())
	}
	// A dashboard built after the first State still shows it.
	if !strings.Contains(labelTexts(sh.Dashboard()), "cursor") {
		t.Error("dashboard opened late is missing the current agents")
	}
}

func TestAgentsIssueTokenShownOnce(t *testing.T) {
	d, fc, app := newTestDashboard(t, sampleState())
	d.Select(ViewAgents)
	v := d.agents
	if v.tokenBox.Visible() {
		t.Fatal("token panel visible before issuing")
	}

	test.Type(v.name, "  build-bot ")
	test.Tap(v.issue)
	const tok = "rt_secret_build-bot"
	if got := fc.Calls(); !slices.Equal(got, []string{"IssueToken(build-bot)"}) {
		t.Fatalf("calls = %q", got)
	}
	if !v.tokenBox.Visible() || v.tokenText.Text != tok || v.tokenTitle.Text != "Token for build-bot" {
		t.Fatalf("token panel: visible=%v text=%q title=%q", v.tokenBox.Visible(), v.tokenText.Text, v.tokenTitle.Text)
	}
	if v.name.Text != "" {
		t.Error("name entry not cleared")
	}
	for i, p := range v.snippets {
		if !strings.Contains(p.text.Text, tok) {
			t.Errorf("snippet %d lacks the new token: %s", i, p.text.Text)
		}
	}
	test.Tap(v.tokenCopy)
	if got := app.Clipboard().Content(); got != tok {
		t.Errorf("clipboard = %q", got)
	}

	// Shown once: Done removes it from the panel and the snippets.
	for _, b := range findButtons(v.tokenBox, "Done") {
		test.Tap(b)
	}
	if v.tokenBox.Visible() || strings.Contains(labelTexts(d), tok) {
		t.Error("the token is still on screen after Done")
	}
	if !strings.Contains(v.snippets[0].text.Text, tokenPlaceholder) {
		t.Errorf("snippet not back to the placeholder: %s", v.snippets[0].text.Text)
	}

	// Closing the dashboard forgets it too.
	test.Type(v.name, "other")
	test.Tap(v.issue)
	d.Hide()
	if strings.Contains(labelTexts(d), "rt_secret_other") {
		t.Error("the token survives closing the dashboard")
	}
}

func TestAgentsIssueTokenErrors(t *testing.T) {
	d, fc, _ := newTestDashboard(t, sampleState())
	test.Tap(d.agents.issue)
	if len(fc.Calls()) != 0 {
		t.Errorf("issued without a name: %q", fc.Calls())
	}
	fc.fail = true
	test.Type(d.agents.name, "x")
	test.Tap(d.agents.issue)
	if d.agents.tokenBox.Visible() {
		t.Error("token panel shown although issuing failed")
	}
	if d.Window().Canvas().Overlays().Top() == nil {
		t.Error("the failure is not shown")
	}
}

func TestAgentsRevoke(t *testing.T) {
	d, fc, _ := newTestDashboard(t, sampleState())
	d.Select(ViewAgents)
	if !strings.Contains(labelTexts(d), "last seen 09:30:00") {
		t.Error("an agent's last seen time is missing")
	}
	b := d.agents.revokes["cursor"]
	if b == nil {
		t.Fatalf("no Revoke button for cursor; have %v", d.agents.revokes)
	}

	test.Tap(b)
	d.agents.confirm.Dismiss() // Cancel
	if len(fc.Calls()) != 0 {
		t.Fatalf("revoked without confirmation: %q", fc.Calls())
	}

	test.Tap(b)
	d.agents.confirm.Confirm()
	if got := fc.Calls(); !slices.Equal(got, []string{"RevokeToken(cursor)"}) {
		t.Errorf("calls = %q", got)
	}
}

func TestSetupSnippets(t *testing.T) {
	const u, tok = "http://127.0.0.1:47100/mcp", "rt_abc"
	got := map[string]snippet{}
	for _, s := range setupSnippets(u, tok) {
		got[s.Client] = s
	}
	if want := `claude mcp add --transport http reins http://127.0.0.1:47100/mcp --header "Authorization: Bearer rt_abc"`; got["Claude Code"].Text != want {
		t.Errorf("Claude Code:\n got %s\nwant %s", got["Claude Code"].Text, want)
	}

	decode := func(client string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(got[client].Text), &m); err != nil {
			t.Fatalf("%s snippet is not JSON: %v\n%s", client, err, got[client].Text)
		}
		return m
	}
	server := func(m map[string]any, root string) map[string]any {
		return m[root].(map[string]any)["reins"].(map[string]any)
	}
	bearer := map[string]any{"Authorization": "Bearer " + tok}
	for _, tc := range []struct {
		client, root, where string
		want                map[string]any
	}{
		{"Cursor", "mcpServers", "~/.cursor/mcp.json", map[string]any{"url": u, "headers": bearer}},
		{"VS Code", "servers", ".vscode/mcp.json", map[string]any{"type": "http", "url": u, "headers": bearer}},
		{"Claude Desktop", "mcpServers", "claude_desktop_config.json", map[string]any{
			"command": "reins", "args": []any{"mcp"}, "env": map[string]any{"REINS_TOKEN": tok}}},
		{"Windsurf", "mcpServers", "~/.codeium/windsurf/mcp_config.json", map[string]any{"serverUrl": u, "headers": bearer}},
	} {
		if s := server(decode(tc.client), tc.root); fmt.Sprint(s) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.client, s, tc.want)
		}
		if !strings.Contains(got[tc.client].Where, tc.where) {
			t.Errorf("%s: instructions %q do not name %s", tc.client, got[tc.client].Where, tc.where)
		}
	}

	if s := setupSnippets(u, "")[1].Text; !strings.Contains(s, "Bearer <token>") {
		t.Errorf("placeholder not kept readable: %s", s)
	}
}

func TestActivityBounded(t *testing.T) {
	var acts []Activity
	t0 := time.Date(2025, 12, 2, 9, 0, 0, 0, time.UTC)
	for i := range 500 {
		acts = append(acts, Activity{Time: t0.Add(time.Duration(i) * time.Second), Agent: "a", Tool: fmt.Sprintf("tool%d", i), Outcome: "ok"})
	}
	s := sampleState()
	s.Activity = acts
	d, _, _ := newTestDashboard(t, s)
	d.Select(ViewActivity)

	rows, cols := d.activity.table.Length()
	if rows != MaxActivity || cols != 6 {
		t.Fatalf("table is %dx%d, want %dx6", rows, cols, MaxActivity)
	}
	if d.activity.rows[0].Tool != "tool499" || d.activity.rows[MaxActivity-1].Tool != "tool300" {
		t.Errorf("rows run %s … %s, want newest first", d.activity.rows[0].Tool, d.activity.rows[MaxActivity-1].Tool)
	}

	cell := widget.NewLabel("")
	for col, want := range []string{"Dec 2 09:08:19", "a", "tool499", "—", "ok", "<1 ms"} {
		d.activity.cell(widget.TableCellID{Row: 0, Col: col}, cell)
		if cell.Text != want {
			t.Errorf("column %d = %q, want %q", col, cell.Text, want)
		}
	}
	d.activity.rows[0].Outcome = "not_shared"
	d.activity.cell(widget.TableCellID{Row: 0, Col: 4}, cell)
	if cell.Importance != widget.DangerImportance {
		t.Error("an error outcome is not highlighted")
	}
}

func TestTabsView(t *testing.T) {
	d, fc, app := newTestDashboard(t, sampleState())
	d.Select(ViewTabs)
	text := labelTexts(d)
	for _, want := range []string{"Chrome — Work", "2 shared tabs", "Firefox — Personal", "1 shared tab", "Inbox (3) - mail", "https://docs.example/q3  ·  shared with claude-code"} {
		if !strings.Contains(text, want) {
			t.Errorf("tabs view lacks %q", want)
		}
	}
	if strings.Index(text, "Quarterly report") > strings.Index(text, "Flights") {
		t.Error("tabs are not grouped in browser order")
	}

	test.Tap(d.shared.rows[21].live)
	test.Tap(d.shared.rows[12].stop)
	if got := fc.Calls(); !slices.Equal(got, []string{"LiveViewURL(21)", "StopSharing(12)"}) {
		t.Errorf("calls = %q", got)
	}
	if !slices.Equal(app.opened, []string{"http://127.0.0.1:47100/live/21?ticket=t21"}) {
		t.Errorf("opened %q", app.opened)
	}

	d.Update(State{})
	if !strings.Contains(labelTexts(d), "No shared tabs") {
		t.Error("no empty state")
	}
}

func TestBackendsForget(t *testing.T) {
	s := sampleState()
	s.Backends = append(s.Backends, Backend{ID: "be2", Brand: "Other", Origin: "https://other.example", Transport: "websocket", LastError: "connection refused"})
	d, fc, _ := newTestDashboard(t, s)
	d.Select(ViewBackends)
	text := labelTexts(d)
	for _, want := range []string{"https://app.acme.example", "calls itself “Acme Copilot”", "SSE + HTTP · https://api.acme.example/bop", "connected", "disconnected: connection refused"} {
		if !strings.Contains(text, want) {
			t.Errorf("backends view lacks %q", want)
		}
	}
	test.Tap(d.backends.forgets["be2"])
	d.backends.confirm.Confirm()
	if got := fc.Calls(); !slices.Equal(got, []string{"ForgetBackend(be2)"}) {
		t.Errorf("calls = %q", got)
	}
}

func TestSettings(t *testing.T) {
	d, fc, _ := newTestDashboard(t, sampleState())
	v := d.settings
	if len(fc.Calls()) != 0 {
		t.Fatalf("applying a State called the companion: %q", fc.Calls())
	}
	if v.port.Text != "47100" || v.endpoint.Text != "http://127.0.0.1:47100/mcp" {
		t.Errorf("port %q endpoint %q", v.port.Text, v.endpoint.Text)
	}
	if !v.checks["page.click"].Checked || v.checks["page.screenshot"].Checked {
		t.Error("tool checks do not follow DisabledTools")
	}

	if v.dialogs.Selected != "1 minute" {
		t.Errorf("dialog timeout shows %q", v.dialogs.Selected)
	}
	test.Tap(v.checks["page.click"])
	test.Tap(v.overlay)
	test.Tap(v.login)
	v.dialogs.SetSelected("5 minutes")
	want := []string{"SetDisabledTools([page.click page.screenshot])", "SetOverlay(true)", "SetDialogTimeout(5m0s)"}
	if got := fc.Calls(); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if !d.auto.Enabled() {
		t.Error("start at login not enabled")
	}

	s := sampleState()
	s.DisabledTools = nil
	s.DialogTimeout = 45 * time.Second // set outside the view
	d.Update(s)
	if !v.checks["page.screenshot"].Checked || len(fc.Calls()) != 3 {
		t.Errorf("re-applying a State: checks %v, calls %q", v.checks["page.screenshot"].Checked, fc.Calls())
	}
	if v.dialogs.Selected != "45 seconds" || !slices.Contains(v.dialogs.Options, "45 seconds") {
		t.Errorf("a timeout set elsewhere shows as %q among %q", v.dialogs.Selected, v.dialogs.Options)
	}
	for _, c := range dialogChoices {
		if d := dialogChoice(c); d < 5*time.Second || d > 10*time.Minute || dialogLabel(d) != c {
			t.Errorf("choice %q is %v, labelled back %q", c, d, dialogLabel(d))
		}
	}
}

func TestLiveViewURLParsed(t *testing.T) {
	var got *url.URL
	err := openLiveView(newFake(State{}), func(u *url.URL) error { got = u; return nil }, 7)
	if err != nil || got.Path != "/live/7" || got.Query().Get("ticket") != "t7" {
		t.Errorf("openLiveView: %v %v", got, err)
	}
}

// The Connections view lists the extension profiles with Block (after a
// confirmation) and the blocked ones with Unblock; a browser Reins
// launched itself has no Block button.
func TestConnectionsBlockAndUnblock(t *testing.T) {
	s := sampleState()
	s.Blocked = []BlockedBrowser{{InstanceID: "inst-edge", Name: "Edge — Home", Engine: EngineChromium, Since: time.Date(2026, 12, 1, 9, 30, 0, 0, time.Local)}}
	d, fc, _ := newTestDashboard(t, s)
	d.Select(ViewConnections)
	if _, ok := d.conns.blocks["b3"]; ok {
		t.Error("the dev browser has a Block button")
	}
	if len(d.conns.blocks) != 2 {
		t.Fatalf("Block buttons for %d browsers, want 2", len(d.conns.blocks))
	}
	text := labelTexts(d)
	for _, want := range []string{"Chrome — Work", "b1 · 2 shared tabs", "Edge — Home", "blocked since 1 Dec 09:30"} {
		if !strings.Contains(text, want) {
			t.Errorf("connections view lacks %q", want)
		}
	}

	test.Tap(d.conns.blocks["b2"])
	d.conns.confirm.Dismiss()
	if len(fc.Calls()) != 0 {
		t.Fatalf("blocked without confirmation: %q", fc.Calls())
	}
	test.Tap(d.conns.blocks["b2"])
	d.conns.confirm.Confirm()
	test.Tap(d.conns.unblocks["inst-edge"])
	if got := fc.Calls(); !slices.Equal(got, []string{"BlockBrowser(b2)", "UnblockBrowser(inst-edge)"}) {
		t.Errorf("calls = %q", got)
	}

	// The lists follow the State.
	s.Blocked = nil
	s.Graph.Browsers = s.Graph.Browsers[:1]
	d.Update(s)
	if len(d.conns.blocks) != 1 || len(d.conns.unblocks) != 0 {
		t.Errorf("after the update: %d Block and %d Unblock buttons, want 1 and 0", len(d.conns.blocks), len(d.conns.unblocks))
	}
}

func TestAgentsOpenFolder(t *testing.T) {
	d, fc, app := newTestDashboard(t, sampleState())
	d.Select(ViewAgents)
	b := d.agents.folders["cursor"]
	if b == nil {
		t.Fatalf("no Files button for cursor; have %v", d.agents.folders)
	}
	test.Tap(b)
	if got := fc.Calls(); !slices.Equal(got, []string{"AgentFolder(cursor)"}) {
		t.Errorf("calls = %q", got)
	}
	if !slices.Equal(app.opened, []string{"file:///home/p/.local/share/reins/agents/agent-cursor"}) {
		t.Errorf("opened %q", app.opened)
	}
	fc.mu.Lock()
	fc.fail = true
	fc.mu.Unlock()
	test.Tap(b)
	if len(app.opened) != 1 {
		t.Errorf("opened %q after a failure", app.opened)
	}
	if d.Window().Canvas().Overlays().Top() == nil {
		t.Error("the failure is not shown")
	}
}
