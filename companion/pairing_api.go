package companion

import (
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/wire"
)

// parkOffer receives pair.offer events from extensions. The offer only
// waits; nothing is applied until the person approves it.
func (c *Companion) parkOffer(browserID string, p wire.PairOffer) {
	o, err := c.offers.Park(browserID, p)
	if err != nil {
		c.log.Warn("pair offer refused", "browser", browserID, "origin", p.Origin, "err", err)
		return
	}
	c.log.Info("pair offer waiting for approval", "offer", o.ID, "origin", o.Origin, "brand", o.Brand, "transport", o.Transport, "server", o.ServerURL)
}

// PendingOffers lists pair offers waiting for the person, without tokens.
func (c *Companion) PendingOffers() []pairing.Offer { return c.offers.List() }

// DenyOffer discards an offer; nothing of it is kept.
func (c *Companion) DenyOffer(id string) error {
	if err := c.offers.Deny(id); err != nil {
		return err
	}
	c.log.Info("pair offer denied", "offer", id)
	return nil
}
