package ui

import (
	"net/url"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// Shell is the whole desktop UI bound to one companion: the tray, the
// dashboard (created when first opened) and the approval windows, all fed by
// a single subscription to the companion's State stream.
type Shell struct {
	app     fyne.App
	c       Companion
	auto    Autostart
	openURL func(*url.URL) error

	tray      *Tray
	approvals *Approvals
	dash      *Dashboard
	guide     *Guide
	setup     Setup // nil: no guide (tests of other parts)
	state     State
	started   bool // the first State was applied
	stop      func()

	applied func(State) // see start
}

// Options are the shell's optional parts.
type Options struct {
	// Setup gives the first-run guide the machine's browsers and clients;
	// the guide opens by itself when the first State shows nothing set up
	// yet. Nil: no guide.
	Setup Setup
	// SetTooltip sets the tray icon's tooltip where the platform has one.
	SetTooltip func(string)
}

// Start builds the tray and subscribes to c. Each new pair offer opens its
// approval window at once: an offer is a person's own click on a web page a
// moment ago, so asking right away is what they expect. openURL opens live
// views (nil: the app's OpenURL); auto may be nil. Call it on the Fyne
// goroutine, before or after app.Run.
func Start(app fyne.App, c Companion, auto Autostart, openURL func(*url.URL) error, opts Options) *Shell {
	return start(app, c, auto, openURL, opts, fyne.Do, nil)
}

// start is Start with the hand-off to the Fyne goroutine (see follow) and a
// hook that runs after each State is applied, so tests can wait for a State
// instead of sleeping.
func start(app fyne.App, c Companion, auto Autostart, openURL func(*url.URL) error, opts Options, do func(func()), applied func(State)) *Shell {
	setup := opts.Setup
	if openURL == nil {
		openURL = app.OpenURL
	}
	s := &Shell{app: app, c: c, auto: auto, openURL: openURL, setup: setup, applied: applied}
	s.approvals = NewApprovals(app, c)
	act := TrayActions{
		OpenDashboard: s.ShowDashboard,
		OpenURL:       openURL,
		ShowOffers:    s.approvals.ShowPending,
		NewOffer:      func(o Offer) { s.approvals.Show(o) },
		SetTooltip:    opts.SetTooltip,
	}
	if setup != nil {
		act.OpenGuide = s.ShowGuide
	}
	s.tray = NewTray(app, c, auto, act)
	s.stop = follow(c, s.apply, do)
	return s
}

func (s *Shell) apply(st State) {
	s.state = st
	s.approvals.Update(st.Offers)
	s.tray.Update(st)
	if s.dash != nil {
		s.dash.Update(st)
	}
	if s.guide != nil {
		s.guide.Update(st)
	}
	if !s.started {
		s.started = true
		if s.setup != nil && nothingSetUp(st) {
			// First run (or every run until an agent or a product is
			// set up): the guide is the way in, and the tray says
			// where Reins lives.
			s.ShowGuide()
			if _, ok := s.app.(desktop.App); ok {
				s.app.SendNotification(fyne.NewNotification("Reins is running",
					"Reins lives in your tray and lets the agents you connect use the browser tabs you share. The setup window shows the next steps; Set up… in the tray menu brings it back."))
			}
		}
	}
	if s.applied != nil {
		s.applied(st)
	}
}

// Tray is the tray controller.
func (s *Shell) Tray() *Tray { return s.tray }

// Approvals is the set of open approval windows.
func (s *Shell) Approvals() *Approvals { return s.approvals }

// Dashboard returns the dashboard, building it on first use.
func (s *Shell) Dashboard() *Dashboard {
	if s.dash == nil {
		s.dash = NewDashboard(s.app, s.c, s.auto, s.openURL)
		if s.setup != nil {
			s.dash.openGuide = s.ShowGuide
		}
		s.dash.Update(s.state)
	}
	return s.dash
}

// ShowDashboard shows the dashboard on view v (a second `reins` launch and
// the tray both end up here). While nothing is connected the guide comes
// up in front of it: an empty dashboard has nothing to act on.
func (s *Shell) ShowDashboard(v View) {
	s.Dashboard().Show(v)
	if s.setup != nil && nothingConnected(s.state) {
		s.ShowGuide()
	}
}

// Guide returns the first-run guide, building it on first use; nil without
// a Setup.
func (s *Shell) Guide() *Guide {
	if s.guide == nil && s.setup != nil {
		s.guide = NewGuide(s.app, s.c, s.setup, func(v View) { s.Dashboard().Show(v) })
		s.guide.Update(s.state)
	}
	return s.guide
}

// ShowGuide shows the first-run guide ("Set up…").
func (s *Shell) ShowGuide() {
	if g := s.Guide(); g != nil {
		g.Show()
	}
}

// nothingSetUp: no agent has a token and no product is paired.
func nothingSetUp(st State) bool { return len(st.Agents) == 0 && len(st.Backends) == 0 }

// nothingConnected: no browser profile and no agent is connected now.
func nothingConnected(st State) bool {
	for _, b := range st.Graph.Browsers {
		if b.Mode == ModeExtension {
			return false
		}
	}
	for _, a := range st.Graph.Agents {
		if a.Connected {
			return false
		}
	}
	return true
}

// Stop ends the subscription. Windows stay as they are.
func (s *Shell) Stop() { s.stop() }
