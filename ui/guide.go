package ui

import (
	"fmt"
	"image/color"
	"maps"
	"reflect"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/reinshq/reins/assets"
)

// GuideTitle is the guide window's title.
const GuideTitle = "Set up Reins"

// Guide is the first-run window: five steps from "which browsers do you
// have" to an agent's first call, each turning green by itself when the
// State stream shows it happened. It opens at first run, whenever the
// person asks for Reins while nothing is connected, and from the tray.
// Closing it only hides it.
type Guide struct {
	app   fyne.App
	c     Companion
	setup Setup
	// openDashboard shows a dashboard view (Agents for other clients,
	// Activity for the first call).
	openDashboard func(View)

	win     fyne.Window
	visible bool
	body    *fyne.Container
	state   State
	shown   *guideModel

	browsers []InstalledBrowser
	clients  []MCPClient
	help     map[string]ExtensionHelp // browsers whose Add was clicked
	results  map[string]string        // per client: what the last action did
	failures map[string]string        // per client: why the last action failed
	demo     *DemoTab
	demoFrom int // activity entries before the demo opened

	// The widgets tests tap, rebuilt with each render.
	steps    [5]guideStepView
	adds     map[string]*widget.Button
	restarts map[string]*widget.Button
	connects map[string]*widget.Button
	discos   map[string]*widget.Button
	showFile map[string]*widget.Button
	demoBtn  *widget.Button
	prompt   *widget.Label
}

type guideStepView struct {
	done  bool
	title string
}

// guideModel is everything the guide shows; the window is rebuilt only
// when it changes, so a burst of activity does not redraw it.
type guideModel struct {
	Browsers  []InstalledBrowser
	Clients   []MCPClient
	Help      map[string]ExtensionHelp
	Results   map[string]string
	Failures  map[string]string
	Connected []BrowserNode
	Agents    []Agent
	Demo      *DemoTab
	First     *Activity
}

// NewGuide builds the guide window without showing it.
func NewGuide(app fyne.App, c Companion, setup Setup, openDashboard func(View)) *Guide {
	g := &Guide{
		app: app, c: c, setup: setup, openDashboard: openDashboard,
		help: map[string]ExtensionHelp{}, results: map[string]string{}, failures: map[string]string{},
	}
	g.win = app.NewWindow(GuideTitle)
	g.win.SetIcon(assets.AppIcon)
	g.body = container.NewVBox()
	closeBtn := widget.NewButton("Close", g.Hide)
	footer := container.NewBorder(nil, nil,
		quiet("Reins keeps running in your tray; Set up… there brings this back."), closeBtn)
	g.win.SetContent(container.NewBorder(nil, container.NewPadded(footer), nil, nil,
		container.NewVScroll(container.NewPadded(g.body))))
	g.win.Resize(fyne.NewSize(720, 760))
	g.win.SetCloseIntercept(g.Hide)
	return g
}

// Window is the guide window.
func (g *Guide) Window() fyne.Window { return g.win }

// Show reads the machine's browsers and clients again, then shows and
// raises the guide.
func (g *Guide) Show() {
	g.refresh()
	g.visible = true
	g.win.Show()
	g.win.RequestFocus()
}

// Hide hides the guide.
func (g *Guide) Hide() {
	g.visible = false
	g.win.Hide()
}

// Visible reports whether the guide is on screen.
func (g *Guide) Visible() bool { return g.visible }

// refresh asks Setup what is installed: on opening and after an action.
func (g *Guide) refresh() {
	if g.setup == nil {
		return
	}
	g.browsers = g.setup.Browsers()
	g.clients = g.setup.Clients()
	g.render()
}

// Update applies a State. It must run on the Fyne goroutine.
func (g *Guide) Update(s State) {
	g.state = s
	g.render()
}

// Done reports which steps are complete, for the shell and tests.
func (g *Guide) Done() [5]bool {
	var out [5]bool
	for i, s := range g.steps {
		out[i] = s.done
	}
	return out
}

func (g *Guide) model() guideModel {
	m := guideModel{
		Browsers: g.browsers, Clients: g.clients, Demo: g.demo,
		// Copies: the model is compared with the last one shown.
		Help: maps.Clone(g.help), Results: maps.Clone(g.results), Failures: maps.Clone(g.failures),
		Agents: g.state.Agents,
	}
	for _, b := range g.state.Graph.Browsers {
		if b.Mode == ModeExtension {
			m.Connected = append(m.Connected, b)
		}
	}
	if a := g.firstCall(); a != nil {
		m.First = a
	}
	return m
}

// firstCall is the first tool call after the demo opened, or the latest
// one when no demo was opened.
func (g *Guide) firstCall() *Activity {
	acts := g.state.Activity
	if len(acts) == 0 {
		return nil
	}
	if g.demo != nil {
		if len(acts) <= g.demoFrom {
			return nil
		}
		a := acts[g.demoFrom]
		return &a
	}
	a := acts[len(acts)-1]
	return &a
}

func (g *Guide) render() {
	m := g.model()
	if g.shown != nil && reflect.DeepEqual(*g.shown, m) {
		return
	}
	g.shown = &m
	g.adds, g.restarts = map[string]*widget.Button{}, map[string]*widget.Button{}
	g.connects, g.discos, g.showFile = map[string]*widget.Button{}, map[string]*widget.Button{}, map[string]*widget.Button{}

	agentSeen := slices.ContainsFunc(m.Agents, func(a Agent) bool { return a.Connected || !a.LastSeen.IsZero() })
	g.steps = [5]guideStepView{
		{done: len(m.Browsers) > 0, title: "Your browsers"},
		{done: len(m.Connected) > 0, title: "Add the Reins extension"},
		{done: len(m.Connected) > 0, title: "Browser connected"},
		{done: agentSeen, title: "Connect an agent"},
		{done: m.First != nil, title: "Try it"},
	}
	bodies := [5]fyne.CanvasObject{g.browsersBody(m), g.extensionBody(m), g.connectedBody(m), g.agentsBody(m), g.tryBody(m)}
	g.body.RemoveAll()
	g.body.Add(heading("Let agents use your browser, in five steps"))
	g.body.Add(secondary("Each step turns green by itself as it happens. Nothing here reaches a tab you have not shared, and the tray's Pause automation stops every agent at once."))
	for i, st := range g.steps {
		g.body.Add(stepCard(i+1, st, bodies[i]))
	}
	g.body.Refresh()
}

// stepCard is one numbered step: a badge that turns into a green check.
func stepCard(n int, st guideStepView, body fyne.CanvasObject) fyne.CanvasObject {
	var mark fyne.CanvasObject
	stroke := fyne.ThemeColorName("")
	if st.done {
		mark = widget.NewIcon(theme.NewSuccessThemedResource(theme.ConfirmIcon()))
		stroke = theme.ColorNameSuccess
	} else {
		mark = numberBadge(n)
	}
	title := bold(st.title)
	if st.done {
		title.Importance = widget.SuccessImportance
	}
	head := container.NewHBox(container.NewCenter(mark), title)
	return newPanel(container.NewVBox(head, body), theme.ColorNameInputBackground, stroke)
}

// numberBadge is a step number in a circle.
func numberBadge(n int) fyne.CanvasObject {
	c := canvas.NewCircle(color.Transparent)
	c.StrokeColor = theme.Color(theme.ColorNamePrimary)
	c.StrokeWidth = 2
	t := canvas.NewText(fmt.Sprint(n), theme.Color(theme.ColorNamePrimary))
	t.TextStyle.Bold = true
	t.Alignment = fyne.TextAlignCenter
	box := container.NewStack(c, container.NewCenter(t))
	return container.NewGridWrap(fyne.NewSize(24, 24), box)
}

func (g *Guide) browsersBody(m guideModel) fyne.CanvasObject {
	if len(m.Browsers) == 0 {
		return secondary("No supported browser found. Reins works with Chrome, Chromium, Edge, Brave, Vivaldi and Firefox; install one, then open this guide again.")
	}
	box := container.NewVBox()
	for _, b := range m.Browsers {
		detail := ""
		switch n := len(b.Profiles); {
		case n == 1:
			detail = "profile " + untrusted(b.Profiles[0], 40)
		case n > 1:
			names := make([]string, 0, n)
			for _, p := range b.Profiles {
				names = append(names, untrusted(p, 30))
			}
			detail = "profiles " + strings.Join(names, ", ")
		}
		row := container.NewHBox(engineGlyph(b.Engine, 18), bold(b.Name))
		if detail != "" {
			row.Add(quiet(detail))
		}
		box.Add(row)
	}
	return box
}

func (g *Guide) extensionBody(m guideModel) fyne.CanvasObject {
	box := container.NewVBox()
	if len(m.Connected) > 0 {
		box.Add(secondary("The extension is in. Add it to every browser profile agents may use; each profile connects on its own."))
	} else {
		box.Add(secondary("The extension lets Reins see and drive the tabs you share. Add it to the browser you want agents to use."))
	}
	for _, b := range m.Browsers {
		id, name := b.ID, b.Name
		switch {
		case b.Offered:
			box.Add(secondary(name + " offers Reins the next time it starts: it was installed with Reins, no store or developer mode needed. If " + name + " asks, choose Enable extension."))
			// One click, as a browser's own Relaunch button: the button
			// says what happens, and the tabs come back.
			r := widget.NewButtonWithIcon("Restart "+name+" (your tabs reopen)", theme.ViewRefreshIcon(), func() { g.restartBrowser(id) })
			if len(m.Connected) == 0 {
				r.Importance = widget.HighImportance
			}
			g.restarts[id] = r
			box.Add(container.NewHBox(r))
		default:
			label := "Add to " + name
			if b.Store {
				label = "Get Reins for " + name
			}
			a := widget.NewButtonWithIcon(label, theme.ContentAddIcon(), func() { g.addExtension(id) })
			if len(m.Connected) == 0 {
				// The next thing to do; once a browser is in, adding it
				// to another is optional.
				a.Importance = widget.HighImportance
			}
			g.adds[id] = a
			box.Add(container.NewHBox(a))
		}
		if h, ok := m.Help[id]; ok && h.Folder != "" {
			box.Add(unpackedSteps(b, h))
		} else if ok {
			box.Add(secondary("The " + name + " store page is open: click Add to " + lastWord(name) + ", then come back here."))
		}
	}
	return box
}

// lastWord is what a browser's store calls it: "Google Chrome" → "Chrome".
func lastWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[len(f)-1]
	}
	return s
}

// unpackedSteps are the three steps of Load unpacked, with a picture of
// where each control is.
func unpackedSteps(b InstalledBrowser, h ExtensionHelp) fyne.CanvasObject {
	steps := []string{
		"Turn on Developer mode, at the top right of the page that just opened (" + h.Opened + ").",
		"Click Load unpacked.",
		"Paste the folder's path (it is on your clipboard) into the folder dialog and click Select.",
	}
	if b.Engine == EngineFirefox {
		steps = []string{
			"On the page that just opened (" + h.Opened + "), click This Firefox.",
			"Click Load Temporary Add-on….",
			"Paste the folder's path (it is on your clipboard), open it and pick manifest.json. Firefox keeps it until it restarts; the signed add-on from addons.mozilla.org stays.",
		}
	}
	box := container.NewVBox()
	for i, s := range steps {
		l := widget.NewLabel(fmt.Sprintf("%d. %s", i+1, s))
		l.Wrapping = fyne.TextWrapWord
		box.Add(l)
	}
	box.Add(mono(h.Folder))
	if b.Engine != EngineFirefox {
		box.Add(unpackedPicture(h.Folder))
	}
	return box
}

// unpackedPicture draws the extensions page as the person will see it,
// with each control numbered as in the steps.
func unpackedPicture(folder string) fyne.CanvasObject {
	toggle := widget.NewCheck("Developer mode", nil)
	toggle.SetChecked(true)
	toggle.Disable()
	load := widget.NewButtonWithIcon("Load unpacked", theme.FolderOpenIcon(), nil)
	load.Importance = widget.HighImportance
	pack := widget.NewButton("Pack extension", nil)
	pack.Disable()
	path := widget.NewLabelWithStyle(folder, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	path.Truncation = fyne.TextTruncateEllipsis
	sel := widget.NewButton("Select", nil)
	page := container.NewVBox(
		container.NewBorder(nil, nil, bold("Extensions"), container.NewHBox(numberBadge(1), toggle)),
		widget.NewSeparator(),
		container.NewHBox(numberBadge(2), load, pack),
		newPanel(container.NewBorder(nil, nil, container.NewHBox(numberBadge(3), quiet("Folder:")), sel, path),
			theme.ColorNameBackground, theme.ColorNameSeparator),
	)
	return newPanel(page, theme.ColorNameBackground, theme.ColorNamePrimary)
}

func (g *Guide) connectedBody(m guideModel) fyne.CanvasObject {
	if len(m.Connected) == 0 {
		return secondary("Waiting for a browser. Once the extension is in, it finds Reins by itself and this turns green.")
	}
	box := container.NewVBox()
	for _, b := range m.Connected {
		l := widget.NewLabel(connectedLabel(b, m.Browsers))
		l.Importance = widget.SuccessImportance
		box.Add(container.NewHBox(engineGlyph(b.Engine, 18), l))
	}
	return box
}

// connectedLabel names a connected profile the way the person knows it:
// "Chrome — Work profile is connected". The extension reports the profile
// name set in its options; a browser with a single profile on this
// machine names that one.
func connectedLabel(b BrowserNode, installed []InstalledBrowser) string {
	product := untrusted(b.Browser, 32)
	if product == "" {
		product = untrusted(b.Name, 48)
	}
	profile := untrusted(b.Profile, 40)
	if profile == "" {
		for _, in := range installed {
			if sameBrowser(in, b) && len(in.Profiles) == 1 {
				profile = untrusted(in.Profiles[0], 40)
			}
		}
	}
	if profile == "" || b.Browser == "" {
		return product + " is connected"
	}
	return product + " — " + profile + " profile is connected"
}

// sameBrowser matches a hello's browser ("Chrome", "Edge") to an
// installed one ("Google Chrome", "Microsoft Edge").
func sameBrowser(in InstalledBrowser, b BrowserNode) bool {
	p := strings.ToLower(strings.TrimSpace(b.Browser))
	return p != "" && (strings.EqualFold(in.Name, p) || strings.HasSuffix(strings.ToLower(in.Name), " "+p) || in.ID == p)
}

func (g *Guide) agentsBody(m guideModel) fyne.CanvasObject {
	box := container.NewVBox()
	var shown int
	for _, c := range m.Clients {
		if !c.Installed && !c.Connected && c.Problem == "" {
			continue
		}
		shown++
		box.Add(g.clientRow(c, m))
	}
	if shown == 0 {
		box.Add(secondary("No MCP client found on this computer. Claude Desktop, Cursor, VS Code, Windsurf and Claude Code are set up here with one click; for any other client, the Agents view has the settings to paste."))
	} else {
		box.Add(secondary("Connect writes the client's settings for you, keeps a backup of its old file, and gives it a token of its own, which you can revoke in Agents."))
	}
	other := widget.NewButton("Other clients…", func() { g.dashboard(ViewAgents) })
	other.Importance = widget.LowImportance
	box.Add(container.NewHBox(other))
	return box
}

func (g *Guide) clientRow(c MCPClient, m guideModel) fyne.CanvasObject {
	id, name := c.ID, c.Name
	var status *widget.Label
	var buttons []fyne.CanvasObject
	seen := slices.ContainsFunc(m.Agents, func(a Agent) bool {
		return a.Name == c.Agent && (a.Connected || !a.LastSeen.IsZero())
	})
	switch {
	case c.Problem != "":
		status = widget.NewLabel("Reins cannot read its settings file and left it as it was: " + c.Problem)
		status.Importance = widget.DangerImportance
		path := c.ConfigPath
		sf := widget.NewButtonWithIcon("Show the file", theme.FolderOpenIcon(), func() {
			if err := g.setup.ShowFile(path); err != nil {
				g.fail(err)
			}
		})
		g.showFile[id] = sf
		buttons = append(buttons, sf)
	case c.Connected && seen:
		status = widget.NewLabel(name + " is using Reins as agent " + untrusted(c.Agent, 40) + ".")
		status.Importance = widget.SuccessImportance
	case c.Connected:
		status = widget.NewLabel("Set up as agent " + untrusted(c.Agent, 40) + ". " + c.Restart)
	default:
		status = widget.NewLabel("Not connected.")
		status.Importance = widget.LowImportance
	}
	status.Wrapping = fyne.TextWrapWord
	if msg := m.Results[id]; msg != "" && c.Problem == "" {
		status.SetText(status.Text + " " + msg)
	}
	if c.Problem == "" {
		if c.Connected {
			d := widget.NewButton("Disconnect", func() { g.disconnectClient(id) })
			g.discos[id] = d
			buttons = append(buttons, d)
		} else {
			b := widget.NewButtonWithIcon("Connect", theme.LoginIcon(), func() { g.connectClient(id) })
			b.Importance = widget.HighImportance
			g.connects[id] = b
			buttons = append(buttons, b)
		}
	}
	info := container.NewVBox(bold(name), status)
	if f := m.Failures[id]; f != "" {
		e := widget.NewLabel(f)
		e.Importance = widget.DangerImportance
		e.Wrapping = fyne.TextWrapWord
		info.Add(e)
	}
	return container.NewBorder(nil, nil, nil, container.NewVBox(layout.NewSpacer(), container.NewHBox(buttons...), layout.NewSpacer()), info)
}

func (g *Guide) tryBody(m guideModel) fyne.CanvasObject {
	box := container.NewVBox()
	g.demoBtn = widget.NewButtonWithIcon("Open a demo tab", theme.MailComposeIcon(), g.openDemo)
	if m.Demo == nil {
		g.demoBtn.Importance = widget.HighImportance
	}
	g.prompt = nil
	if len(m.Connected) == 0 {
		g.demoBtn.Disable()
		box.Add(secondary("Once a browser is connected, open a demo tab that agents may use, and ask your agent to do something in it."))
	} else if m.Demo == nil {
		box.Add(secondary("Open a small demo page in a shared tab, then ask your agent to work in it."))
	}
	if m.Demo != nil {
		box.Add(secondary("The demo tab is open and shared with your agents. Ask your agent:"))
		g.prompt = mono(m.Demo.Prompt)
		prompt := m.Demo.Prompt
		box.Add(container.NewBorder(nil, nil, nil, copyButton(g.app, func() string { return prompt }), g.prompt))
	}
	box.Add(container.NewHBox(g.demoBtn))
	if a := m.First; a != nil {
		outcome := a.Outcome
		if outcome == "" {
			outcome = "ok"
		}
		l := widget.NewLabel(fmt.Sprintf("%s called %s: %s. Every call shows up in Activity.", untrusted(a.Agent, 40), a.Tool, outcome))
		l.Importance = widget.SuccessImportance
		l.Wrapping = fyne.TextWrapWord
		act := widget.NewButton("Open Activity", func() { g.dashboard(ViewActivity) })
		box.Add(container.NewBorder(nil, nil, nil, act, l))
	} else if m.Demo != nil {
		box.Add(quiet("Waiting for the agent's first call…"))
	}
	return box
}

func (g *Guide) dashboard(v View) {
	if g.openDashboard != nil {
		g.openDashboard(v)
	}
}

func (g *Guide) fail(err error) { dialog.ShowError(err, g.win) }

func (g *Guide) addExtension(id string) {
	h, err := g.setup.AddExtension(id)
	if err != nil {
		g.fail(err)
		return
	}
	if h.Folder != "" {
		g.app.Clipboard().SetContent(h.Folder)
	}
	g.help[id] = h
	g.render()
}

func (g *Guide) restartBrowser(id string) {
	if err := g.setup.RestartBrowser(id); err != nil {
		g.fail(err)
	}
}

func (g *Guide) connectClient(id string) {
	delete(g.failures, id)
	res, err := g.setup.ConnectClient(id)
	if err != nil {
		g.failures[id] = err.Error()
		g.refresh()
		return
	}
	msg := ""
	if res.Backup != "" {
		msg = "(The old settings are kept beside them.)"
	}
	g.results[id] = msg
	g.refresh()
}

func (g *Guide) disconnectClient(id string) {
	delete(g.failures, id)
	if err := g.setup.DisconnectClient(id); err != nil {
		g.failures[id] = err.Error()
	}
	delete(g.results, id)
	g.refresh()
}

func (g *Guide) openDemo() {
	if len(g.shown.Connected) == 0 {
		return
	}
	d, err := g.setup.OpenDemo(g.shown.Connected[0].ID)
	if err != nil {
		g.fail(err)
		return
	}
	g.demo = &d
	g.demoFrom = len(g.state.Activity)
	g.render()
}
