package ui

import (
	"fmt"
	"net/url"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// agentsView issues and revokes agent tokens and shows how to set up each
// MCP client. A newly issued token is shown once, in the snippets too, until
// the person clicks Done or closes the dashboard; Reins cannot show it again.
type agentsView struct {
	d       *Dashboard
	content fyne.CanvasObject

	name  *widget.Entry
	issue *widget.Button

	tokenBox   *fyne.Container
	tokenTitle *widget.Label
	tokenText  *widget.Label
	tokenCopy  *widget.Button
	token      string

	mcpURL   string
	endpoint *widget.Label
	snippets []*snippetPane
	clients  *container.AppTabs
	list     *fyne.Container
	revokes  map[string]*widget.Button // by agent name, for tests
	devs     map[string]*widget.Check  // developer agent marks, by agent name
	folders  map[string]*widget.Button // by agent name, for tests
	confirm  *dialog.ConfirmDialog     // the last confirmation shown, for tests
}

type snippetPane struct {
	where *widget.Label
	text  *widget.Label
	copy  *widget.Button
}

func newAgentsView(d *Dashboard) *agentsView {
	v := &agentsView{d: d, revokes: map[string]*widget.Button{}, devs: map[string]*widget.Check{}, folders: map[string]*widget.Button{}}

	v.name = widget.NewEntry()
	v.name.SetPlaceHolder("Agent name, e.g. claude-code")
	v.name.OnSubmitted = func(string) { v.issueToken() }
	v.issue = widget.NewButtonWithIcon("Issue token", theme.ContentAddIcon(), v.issueToken)
	v.issue.Importance = widget.HighImportance
	issueRow := container.NewBorder(nil, nil, nil, v.issue, v.name)

	v.tokenTitle = bold("")
	v.tokenText = mono("")
	v.tokenCopy = copyButton(d.app, func() string { return v.token })
	done := widget.NewButton("Done", v.forgetToken)
	v.tokenBox = container.NewVBox(newPanel(container.NewVBox(
		v.tokenTitle,
		secondary("Copy it now: Reins will not show it again. The setup snippets include it until you click Done."),
		container.NewBorder(nil, nil, nil, container.NewHBox(v.tokenCopy, done), v.tokenText),
	), theme.ColorNameInputBackground, theme.ColorNameSuccess))
	v.tokenBox.Hide()

	v.endpoint = secondary("")
	v.clients = container.NewAppTabs()
	for _, s := range setupSnippets("", "") {
		p := &snippetPane{where: secondary(s.Where), text: mono(s.Text)}
		p.copy = copyButton(d.app, func() string { return p.text.Text })
		v.snippets = append(v.snippets, p)
		v.clients.Append(container.NewTabItem(s.Client, container.NewVBox(
			p.where,
			newPanel(p.text, theme.ColorNameInputBackground, ""),
			container.NewHBox(layout.NewSpacer(), p.copy),
		)))
	}

	v.list = container.NewVBox()
	// Two columns: who has access on the left, how to connect on the right,
	// so the tall JSON snippets never push the agent list out of view.
	left := container.NewVBox(
		heading("Agents with a token"),
		v.list,
		widget.NewSeparator(),
		heading("Connect an agent"),
		secondary("Each agent gets its own token. Name it after the client or the task so you can recognise and revoke it later; issuing a token for an existing name replaces the old one."),
		issueRow,
		v.tokenBox,
	)
	right := container.NewVBox(
		heading("Set up your client"),
		v.endpoint,
		v.clients,
	)
	split := container.NewHSplit(
		container.NewVScroll(container.NewPadded(left)),
		container.NewVScroll(container.NewPadded(right)),
	)
	split.SetOffset(0.4)
	v.content = split
	return v
}

func (v *agentsView) issueToken() {
	name := strings.TrimSpace(v.name.Text)
	if name == "" {
		v.d.fail(fmt.Errorf("give the agent a name first"))
		return
	}
	tok, err := v.d.c.IssueToken(name)
	if err != nil {
		v.d.fail(fmt.Errorf("issuing a token for %q: %w", name, err))
		return
	}
	v.name.SetText("")
	v.token = tok
	v.tokenTitle.SetText("Token for " + untrusted(name, 60))
	v.tokenText.SetText(tok)
	resetCopy(v.tokenCopy)
	v.tokenBox.Show()
	v.refreshSnippets()
}

// forgetToken drops the token from the screen and from memory.
func (v *agentsView) forgetToken() {
	v.token = ""
	v.tokenText.SetText("")
	v.tokenBox.Hide()
	v.refreshSnippets()
}

func (v *agentsView) refreshSnippets() {
	for i, s := range setupSnippets(v.mcpURL, v.token) {
		v.snippets[i].text.SetText(s.Text)
		resetCopy(v.snippets[i].copy)
	}
}

func (v *agentsView) update(agents []Agent, mcpURL string) {
	if mcpURL != v.mcpURL {
		v.mcpURL = mcpURL
		v.refreshSnippets()
	}
	v.endpoint.SetText("MCP endpoint: " + mcpURL + ". Agents authenticate with a bearer token; Claude Desktop reaches it through the reins mcp bridge.")

	v.list.RemoveAll()
	v.revokes = map[string]*widget.Button{}
	v.devs = map[string]*widget.Check{}
	v.folders = map[string]*widget.Button{}
	if len(agents) == 0 {
		v.list.Add(secondary("No agent has a token yet."))
		if b := v.d.guideButton("Connect an agent for me"); b != nil {
			v.list.Add(secondary("The setup guide writes Claude Desktop's, Cursor's, VS Code's, Windsurf's or Claude Code's settings for you."))
			v.list.Add(b)
		}
		return
	}
	now := v.d.now()
	for _, a := range agents {
		name := a.Name
		status := widget.NewLabel(lastSeen(a.Connected, a.LastSeen, now))
		if a.Connected {
			status.Importance = widget.SuccessImportance
		} else {
			status.Importance = widget.LowImportance
		}
		created := ""
		if !a.Created.IsZero() {
			created = "token issued " + clock(a.Created, now)
		}
		revoke := widget.NewButtonWithIcon("Revoke", theme.DeleteIcon(), func() { v.askRevoke(name) })
		revoke.Importance = widget.DangerImportance
		v.revokes[name] = revoke
		files := widget.NewButtonWithIcon("Files", theme.FolderOpenIcon(), func() { v.openFolder(name) })
		v.folders[name] = files
		nameLabel := bold(untrusted(name, 60))
		nameLabel.Truncation = fyne.TextTruncateEllipsis
		info := container.NewVBox(container.NewBorder(nil, nil, nil, status, nameLabel))
		if created != "" {
			info.Add(quiet(created))
		}
		if a.ID != "" {
			info.Add(v.developerCheck(a))
		}
		v.list.Add(container.NewBorder(nil, nil, nil,
			container.NewVBox(layout.NewSpacer(), container.NewHBox(files, revoke), layout.NewSpacer()), info))
	}
}

// openFolder shows the person the agent's folder: the files it may upload
// (uploads) and the files its tabs downloaded (downloads).
func (v *agentsView) openFolder(name string) {
	dir, err := v.d.c.AgentFolder(name)
	if err != nil {
		v.d.fail(fmt.Errorf("opening the folder of %q: %w", name, err))
		return
	}
	u, err := url.Parse(storage.NewFileURI(dir).String())
	if err == nil {
		err = v.d.openURL(u)
	}
	if err != nil {
		v.d.fail(fmt.Errorf("opening %s: %w", dir, err))
	}
}

func (v *agentsView) askRevoke(name string) {
	shown := untrusted(name, 60)
	v.confirm = v.d.confirmDanger("Revoke "+shown+"?",
		shown+" loses access at once and its open sessions end.\nIssue a new token to let it back in.",
		"Revoke", fmt.Sprintf("revoking %q", name), func() error { return v.d.c.RevokeToken(name) })
}

// developerCheck marks an agent as a developer agent, which may send raw
// DevTools commands to its tabs. The check is set before its handler is,
// so showing the state never echoes back as a change.
func (v *agentsView) developerCheck(a Agent) *widget.Check {
	c := widget.NewCheck("Developer agent (raw DevTools)", nil)
	c.SetChecked(a.Developer)
	id, name := a.ID, a.Name
	c.OnChanged = func(on bool) {
		if err := v.d.c.SetDeveloperAgent(id, on); err != nil {
			v.d.fail(fmt.Errorf("changing whether %s is a developer agent: %w", untrusted(name, 60), err))
			v.update(v.d.state.Agents, v.d.state.MCPURL) // back to what the companion holds
		}
	}
	v.devs[name] = c
	return c
}
