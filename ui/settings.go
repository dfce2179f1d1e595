package ui

import (
	"fmt"
	"slices"
	"strconv"

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
	v.toolBox = container.NewGridWithColumns(3)

	form := container.New(layout.NewFormLayout(),
		bold("Port"), container.NewVBox(v.port, secondary("Extensions and agents reach Reins on this port of 127.0.0.1. To change it, quit Reins and start it with reins --port N.")),
		bold("MCP endpoint"), container.NewBorder(nil, nil, nil, v.endCopy, v.endpoint),
		bold("Startup"), v.login,
		bold("Pages"), v.overlay,
		bold("Extensions"), container.NewVBox(v.exts, secondary("Off by default. The browser also asks you, once, in the Reins extension's popup.")),
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
