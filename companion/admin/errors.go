package admin

import (
	"encoding/json"
	"net/http"

	"github.com/reinshq/reins/companion/wire"
)

// Sentinel errors of the channel itself. Their codes and HTTP statuses, like
// every other error's, come from wire's one error table; the client turns an
// answer's code back into a *wire.Error, which errors.Is matches against the
// sentinel of the same code, so errors.Is works on the CLI side of the
// socket as it would in-process.
var (
	ErrBadRequest     error = &wire.Error{Code: wire.CodeBadParams, Message: "bad request"}
	ErrForbidden      error = &wire.Error{Code: wire.CodeUnauthorized, Message: "forbidden"}
	ErrNotImplemented error = wire.ErrNotImplemented
	ErrInternal       error = wire.ErrInternal
)

// errorBody is every failure's body.
type errorBody struct {
	Error string    `json:"error"`
	Code  wire.Code `json:"code"`
}

func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, wire.HTTPStatus(err), errorBody{Error: err.Error(), Code: wire.CodeOf(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed","code":"internal"}`)
	}
	writeRaw(w, status, data)
}

func writeRaw(w http.ResponseWriter, status int, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(data)
	w.Write([]byte{'\n'})
}
