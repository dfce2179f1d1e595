package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CDP is the Chrome DevTools Protocol's dialect: requests {id, method,
// params, sessionId}, answers {id, result} or {id, error}, events {method,
// params, sessionId}.
var CDP Dialect = cdpDialect{}

// Error is a CDP error answer.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("cdp error %d: %s: %s", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("cdp error %d: %s", e.Code, e.Message)
}

type cdpDialect struct{}

type cdpRequest struct {
	ID        int64  `json:"id"`
	Method    string `json:"method"`
	Params    any    `json:"params,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *Error          `json:"error,omitempty"`
}

func (cdpDialect) EncodeRequest(id int64, r Request) ([]byte, error) {
	params := r.Params
	if raw, ok := params.(json.RawMessage); ok && len(raw) == 0 {
		params = nil
	}
	return json.Marshal(cdpRequest{ID: id, Method: r.Method, Params: params, SessionID: r.SessionID})
}

func (cdpDialect) Decode(msg []byte) (Incoming, error) {
	var m cdpMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return Incoming{}, err
	}
	switch {
	case m.ID != 0:
		in := Incoming{IsResponse: true, ID: m.ID, Result: m.Result, SessionID: m.SessionID}
		if m.Error != nil {
			in.Err = m.Error
		}
		return in, nil
	case m.Method != "":
		return Incoming{Method: m.Method, Params: m.Params, SessionID: m.SessionID}, nil
	}
	return Incoming{}, errors.New("neither an answer nor an event")
}
