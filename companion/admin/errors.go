package admin

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/reinshq/reins/companion/operator"
	"github.com/reinshq/reins/companion/pairing"
	"github.com/reinshq/reins/companion/tokens"
)

// Sentinel errors of the channel itself.
var (
	ErrBadRequest     = errors.New("bad request")
	ErrForbidden      = errors.New("forbidden")
	ErrNotImplemented = errors.New("not implemented")
	ErrInternal       = errors.New("internal error")
)

// Code is an admin error's machine-readable discriminator.
type Code string

// codes is the one table from sentinel errors to wire codes and HTTP
// statuses. The client maps a code back to its sentinel, so errors.Is works
// on the CLI side of the socket as it would in-process.
var codes = []struct {
	err    error
	code   Code
	status int
}{
	{tokens.ErrInvalidName, "invalid_name", http.StatusBadRequest},
	{tokens.ErrNameInUse, "name_in_use", http.StatusConflict},
	{tokens.ErrNotFound, "not_found", http.StatusNotFound},
	{tokens.ErrKeychainUnavailable, "keychain_unavailable", http.StatusServiceUnavailable},
	{pairing.ErrNoOffer, "no_such_offer", http.StatusNotFound},
	{operator.ErrNoBackend, "no_such_backend", http.StatusNotFound},
	{ErrNoSuchBrowser, "no_such_browser", http.StatusNotFound},
	{ErrBadRequest, "bad_request", http.StatusBadRequest},
	{ErrForbidden, "forbidden", http.StatusForbidden},
	{ErrNotImplemented, "not_implemented", http.StatusNotImplemented},
	{ErrInternal, "internal", http.StatusInternalServerError},
}

func codeOf(err error) (Code, int) {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code, c.status
		}
	}
	return "internal", http.StatusInternalServerError
}

func sentinelOf(code Code) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return ErrInternal
}

type errorBody struct {
	Error string `json:"error"`
	Code  Code   `json:"code"`
}

func writeError(w http.ResponseWriter, err error) {
	code, status := codeOf(err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorBody{Error: err.Error(), Code: code})
}

// Error is an error the running companion answered with. Its message is the
// companion's; errors.Is matches the sentinel of its code.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return sentinelOf(e.Code) }
