package ui

import (
	"net/url"

	"fyne.io/fyne/v2"
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
	state     State
	stop      func()

	applied func(State) // see start
}

// Start builds the tray and subscribes to c. Each new pair offer opens its
// approval window at once: an offer is a person's own click on a web page a
// moment ago, so asking right away is what they expect. openURL opens live
// views (nil: the app's OpenURL); auto may be nil. Call it on the Fyne
// goroutine, before or after app.Run.
func Start(app fyne.App, c Companion, auto Autostart, openURL func(*url.URL) error) *Shell {
	return start(app, c, auto, openURL, fyne.Do, nil)
}

// start is Start with the hand-off to the Fyne goroutine (see follow) and a
// hook that runs after each State is applied, so tests can wait for a State
// instead of sleeping.
func start(app fyne.App, c Companion, auto Autostart, openURL func(*url.URL) error, do func(func()), applied func(State)) *Shell {
	if openURL == nil {
		openURL = app.OpenURL
	}
	s := &Shell{app: app, c: c, auto: auto, openURL: openURL, applied: applied}
	s.approvals = NewApprovals(app, c)
	s.tray = NewTray(app, c, auto, TrayActions{
		OpenDashboard: s.ShowDashboard,
		OpenURL:       openURL,
		ShowOffers:    s.approvals.ShowPending,
		NewOffer:      func(o Offer) { s.approvals.Show(o) },
	})
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
		s.dash.Update(s.state)
	}
	return s.dash
}

// ShowDashboard shows the dashboard on view v (a second `reins` launch and
// the tray both end up here).
func (s *Shell) ShowDashboard(v View) { s.Dashboard().Show(v) }

// Stop ends the subscription. Windows stay as they are.
func (s *Shell) Stop() { s.stop() }
