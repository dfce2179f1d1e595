package companion

import (
	"errors"

	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// ErrNoBackends is returned when pairing is unavailable: the token store
// cannot hold backend tokens, or there is no tool engine.
var ErrNoBackends = errors.New("pairing with hosted products is unavailable: no token store for backend tokens")

// newOperators builds the hosted-backend manager when the token store can
// keep backend tokens (the keychain or the 0600 file store).
func (c *Companion) newOperators(runner tools.Runner) error {
	secrets, ok := c.cfg.Tokens.(operator.Secrets)
	if !ok || runner == nil {
		return nil
	}
	m, err := operator.New(operator.Options{
		DataDir: c.cfg.DataDir, Secrets: secrets, Runner: runner,
		Logger: c.log, OnChange: c.changed,
	})
	if err != nil {
		return err
	}
	c.operators = m
	return nil
}

// parkOffer receives pair.offer events from extensions. The offer only
// waits; nothing is applied until the person approves it. A refused offer
// is logged with its reason; the page learns nothing either way.
func (c *Companion) parkOffer(browserID string, p wire.PairOffer) {
	o, err := c.offers.Park(c.relay(browserID), p)
	if err != nil {
		c.log.Warn("pair offer refused", "browser", browserID, "origin", p.Origin, "err", err)
		return
	}
	c.log.Info("pair offer waiting for approval", "offer", o.ID, "origin", o.Origin, "brand", o.Brand,
		"browser", browserID, "transport", o.Transport, "server", o.ServerURL)
}

// relay names the browser profile that relayed an offer, for the approval
// window.
func (c *Companion) relay(browserID string) pairing.Relay {
	r := pairing.Relay{BrowserID: browserID}
	b, err := c.hub.Browser(browserID)
	if err != nil {
		return r
	}
	r.Browser, r.Profile = b.Hello.Browser, b.Hello.Profile
	if r.Browser == "" {
		r.Browser = "Chromium"
		if b.Engine() == wire.EngineFirefox {
			r.Browser = "Firefox"
		}
	}
	return r
}

// PendingOffers lists pair offers waiting for the person, without tokens.
func (c *Companion) PendingOffers() []pairing.Offer { return c.offers.List() }

// ShowingOffer records whether an approval window shows an offer now; while
// one does, no newer offer from the same page replaces it.
func (c *Companion) ShowingOffer(id string, showing bool) error {
	return c.offers.SetShown(id, showing)
}

// ApproveOffer applies an offer the person approved: its token goes to the
// keychain and the companion connects to the backend. It is the only path
// from an offer to a backend.
func (c *Companion) ApproveOffer(id string) (operator.State, error) {
	if c.operators == nil {
		return operator.State{}, ErrNoBackends
	}
	o, err := c.offers.Take(id)
	if err != nil {
		return operator.State{}, err
	}
	st, err := c.operators.Approve(o)
	if err != nil {
		return operator.State{}, err
	}
	c.log.Info("pair offer approved", "offer", id, "backend", st.ID, "origin", st.Origin)
	return st, nil
}

// DenyOffer discards an offer; nothing of it is kept.
func (c *Companion) DenyOffer(id string) error {
	if err := c.offers.Deny(id); err != nil {
		return err
	}
	c.log.Info("pair offer denied", "offer", id)
	return nil
}

// Backends lists paired hosted products with their connection state.
func (c *Companion) Backends() []operator.State {
	if c.operators == nil {
		return nil
	}
	return c.operators.List()
}

// ForgetBackend disconnects a backend and deletes its keychain entry.
func (c *Companion) ForgetBackend(id string) error {
	if c.operators == nil {
		return ErrNoBackends
	}
	return c.operators.Forget(id)
}
