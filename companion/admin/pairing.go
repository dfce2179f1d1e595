package admin

import (
	"context"
	"net/http"
	"net/url"

	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/pairing"
)

// BackendState is a paired backend as the CLI sees it.
type BackendState = operator.State

// Pairing is what the pair and backends routes need; the companion
// satisfies it.
type Pairing interface {
	PendingOffers() []pairing.Offer
	ApproveOffer(id string) (operator.State, error)
	DenyOffer(id string) error
	Backends() []operator.State
	ForgetBackend(id string) error
}

// OffersResponse lists waiting pair offers (never their tokens).
type OffersResponse struct {
	Offers []pairing.Offer `json:"offers"`
}

// BackendsResponse lists paired backends.
type BackendsResponse struct {
	Backends []operator.State `json:"backends"`
}

const noPairing = "pairing is not available in this companion"

func listOffers(p Pairing, _ *http.Request) (any, error) {
	offers := p.PendingOffers()
	if offers == nil {
		offers = []pairing.Offer{}
	}
	return OffersResponse{Offers: offers}, nil
}

// approveOffer is the CLI's explicit approval: the only way, besides the
// tray's Allow button, that an offer becomes a backend.
func approveOffer(p Pairing, r *http.Request) (any, error) {
	return p.ApproveOffer(r.PathValue("id"))
}

func denyOffer(p Pairing, r *http.Request) (any, error) {
	return struct{}{}, p.DenyOffer(r.PathValue("id"))
}

func listBackends(p Pairing, _ *http.Request) (any, error) {
	bs := p.Backends()
	if bs == nil {
		bs = []operator.State{}
	}
	return BackendsResponse{Backends: bs}, nil
}

func forgetBackend(p Pairing, r *http.Request) (any, error) {
	return struct{}{}, p.ForgetBackend(r.PathValue("id"))
}

// Offers lists the pair offers waiting in the running companion.
func (c *Client) Offers(ctx context.Context) ([]pairing.Offer, error) {
	var out OffersResponse
	err := c.do(ctx, http.MethodGet, "/v1/pair", nil, &out)
	return out.Offers, err
}

// ApproveOffer approves a waiting offer.
func (c *Client) ApproveOffer(ctx context.Context, id string) (operator.State, error) {
	var out operator.State
	err := c.do(ctx, http.MethodPost, "/v1/pair/"+url.PathEscape(id)+"/approve", nil, &out)
	return out, err
}

// DenyOffer denies a waiting offer.
func (c *Client) DenyOffer(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/v1/pair/"+url.PathEscape(id)+"/deny", nil, nil)
}

// Backends lists paired backends.
func (c *Client) Backends(ctx context.Context) ([]operator.State, error) {
	var out BackendsResponse
	err := c.do(ctx, http.MethodGet, "/v1/backends", nil, &out)
	return out.Backends, err
}

// ForgetBackend forgets a paired backend.
func (c *Client) ForgetBackend(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/backends/"+url.PathEscape(id), nil, nil)
}
