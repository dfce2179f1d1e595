package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"
)

// settingsView shows the port, start at login, the page overlay, whether
// agents may manage extensions and which tools agents may call.
//
// Checks are set from the State with their OnChanged guarded by applying: a
// Fyne Check calls OnChanged on SetChecked, and echoing every incoming State
// back to the companion as a change would loop.
type settingsView struct {
	d        *Dashboard
	content  fyne.CanvasObject
	applying bool

	port     *widget.Label
	endpoint *widget.Label
	endCopy  *widget.Button
	version  *widget.Label
	login    *widget.Check
	overlay  *widget.Check
	exts     *widget.Check
	dialogs  *widget.Select
	toolBox  *fyne.Container
	tools    []string
	checks   map[string]*widget.Check
}

func newSettingsView(d *Dashboard) *settingsView {
	v := &settingsView{d: d, checks: map[string]*widget.Check{}}
	v.port = bold("")
	v.endpoint = mono("")
	v.endCopy = copyButton(d.app, func() string { return v.endpoint.Text })
	v.version = widget.NewLabel("")

	v.login = widget.NewCheck("Start Reins when I log in", func(on bool) {
		if v.applying || d.auto == nil {
			return
		}
		if err := d.auto.SetEnabled(on); err != nil {
			d.fail(fmt.Errorf("changing start at login: %w", err))
		}
		v.update(d.state)
	})
	if d.auto == nil {
		v.login.Disable()
		v.login.Text = "Start Reins when I log in (not available on this system)"
	}
	v.overlay = widget.NewCheck("Show an overlay on pages an agent is controlling", func(on bool) {
		if v.applying {
			return
		}
		if err := d.c.SetOverlay(on); err != nil {
			d.fail(fmt.Errorf("changing the page overlay: %w", err))
			v.update(d.state)
		}
	})
	v.exts = widget.NewCheck("Agents may manage extensions (list, enable and disable them)", func(on bool) {
		if v.applying {
			return
		}
		if err := d.c.SetManageExtensions(on); err != nil {
			d.fail(fmt.Errorf("changing whether agents may manage extensions: %w", err))
			v.update(d.state)
		}
	})
	v.dialogs = widget.NewSelect(nil, func(choice string) {
		if v.applying {
			return
		}
		timeout := dialogChoice(choice)
		if timeout == 0 {
			return
		}
		if err := d.c.SetDialogTimeout(timeout); err != nil {
			d.fail(fmt.Errorf("changing the dialog timeout: %w", err))
			v.update(d.state)
		}
	})
	v.toolBox = container.NewGridWithColumns(3)

	form := container.New(layout.NewFormLayout(),
		bold("Port"), container.NewVBox(v.port, secondary("Extensions and agents reach Reins on this port of 127.0.0.1. To change it, quit Reins and start it with reins --port N.")),
		bold("MCP endpoint"), container.NewBorder(nil, nil, nil, v.endCopy, v.endpoint),
		bold("Startup"), v.login,
		bold("Pages"), v.overlay,
		bold("Extensions"), container.NewVBox(v.exts, secondary("Off by default. The browser also asks you, once, in the Reins extension's popup.")),
		bold("Dialogs"), container.NewVBox(v.dialogs, secondary("An alert, confirm or prompt in an agent's tab waits this long for the agent, then Reins dismisses it. Dialogs in tabs you shared are only answered by an agent.")),
		bold("Version"), v.version,
	)
	v.content = container.NewVScroll(container.NewPadded(container.NewVBox(
		form,
		widget.NewSeparator(),
		heading("Tools agents may use"),
		secondary("Unchecked tools are refused for every agent and paired product."),
		v.toolBox,
	)))
	return v
}

func (v *settingsView) update(s State) {
	v.applying = true
	defer func() { v.applying = false }()

	v.port.SetText(strconv.Itoa(s.Port))
	if v.endpoint.Text != s.MCPURL {
		v.endpoint.SetText(s.MCPURL)
		resetCopy(v.endCopy)
	}
	v.version.SetText(s.Version)
	if v.d.auto != nil {
		v.login.SetChecked(v.d.auto.Enabled())
	}
	v.overlay.SetChecked(s.Overlay)
	v.exts.SetChecked(s.ManageExtensions)
	choices := slices.Clone(dialogChoices)
	current := dialogLabel(s.DialogTimeout)
	if s.DialogTimeout > 0 && !slices.Contains(choices, current) {
		choices = append(choices, current) // a value set outside this view
	}
	v.dialogs.SetOptions(choices)
	if s.DialogTimeout > 0 {
		v.dialogs.SetSelected(current)
	}

	if !slices.Equal(v.tools, s.Tools) {
		v.tools = slices.Clone(s.Tools)
		v.toolBox.RemoveAll()
		v.checks = map[string]*widget.Check{}
		for _, name := range v.tools {
			c := widget.NewCheck(name, func(bool) { v.toolsChanged() })
			v.checks[name] = c
			v.toolBox.Add(c)
		}
	}
	for name, c := range v.checks {
		c.SetChecked(!slices.Contains(s.DisabledTools, name))
	}
}

func (v *settingsView) toolsChanged() {
	if v.applying {
		return
	}
	disabled := []string{} // never nil: "none disabled" is a value, not a missing one
	for _, name := range v.tools {
		if !v.checks[name].Checked {
			disabled = append(disabled, name)
		}
	}
	if err := v.d.c.SetDisabledTools(disabled); err != nil {
		v.d.fail(fmt.Errorf("changing the allowed tools: %w", err))
		v.update(v.d.state)
	}
}

// dialogChoices are the dialog timeouts the view offers, within the
// companion's bounds (5 s to 10 min).
var dialogChoices = []string{"5 seconds", "15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes"}

// dialogLabel names a timeout as dialogChoices do.
func dialogLabel(d time.Duration) string {
	secs := int(d / time.Second)
	switch {
	case secs == 60:
		return "1 minute"
	case secs%60 == 0:
		return fmt.Sprintf("%d minutes", secs/60)
	case secs == 1:
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", secs)
}

// dialogChoice parses a dialogLabel; 0 when it is not one.
func dialogChoice(label string) time.Duration {
	var n int
	var unit string
	if _, err := fmt.Sscanf(label, "%d %s", &n, &unit); err != nil || n <= 0 {
		return 0
	}
	switch strings.TrimSuffix(unit, "s") {
	case "second":
		return time.Duration(n) * time.Second
	case "minute":
		return time.Duration(n) * time.Minute
	}
	return 0
}
