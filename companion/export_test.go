package companion

import (
	"github.com/reinshq/reins/companion/internal/httpbound"
)

// SetHTTPLimits shortens the listener's limits for a test; call it before
// Start.
func SetHTTPLimits(c *Companion, l httpbound.Limits) { c.limits = l }
