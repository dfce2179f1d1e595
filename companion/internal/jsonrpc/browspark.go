package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/reinshq/reins/companion/wire"
)

// Browspark is the extension socket's dialect (browspark v3, after the
// hello and the link handshake): requests {id, method, params}, answers
// {id, result} or {id, error, code}, and events {event, params} both ways.
// A frame that is not a JSON object breaks the protocol and closes the
// link; an error answer comes back as a *wire.Error with the extension's
// code.
var Browspark NotifyDialect = browsparkDialect{}

type browsparkDialect struct{}

func (browsparkDialect) EncodeRequest(id int64, r Request) ([]byte, error) {
	data, err := json.Marshal(wire.Req{ID: id, Method: r.Method, Params: r.Params})
	if err != nil {
		return nil, wire.Errorf(wire.CodeBadParams, "encoding %s params: %v", r.Method, err)
	}
	return data, nil
}

// EncodeNotification encodes an event; r.Method is the event's name.
func (browsparkDialect) EncodeNotification(r Request) ([]byte, error) {
	raw, err := json.Marshal(r.Params)
	if err != nil {
		return nil, wire.Errorf(wire.CodeBadParams, "encoding %s params: %v", r.Method, err)
	}
	return json.Marshal(wire.Evt{Event: r.Method, Params: raw})
}

// ErrNotObject is the protocol error of a frame that is not a JSON object.
var ErrNotObject = fmt.Errorf("frame is not a JSON object: %w", ErrProtocol)

// DecodeFrame decodes one browspark frame, refusing anything that is not a
// JSON object (the handshake reads its frames with it too).
func DecodeFrame(msg []byte) (wire.Frame, error) {
	var f wire.Frame
	trimmed := bytes.TrimLeft(msg, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return f, ErrNotObject
	}
	if err := json.Unmarshal(msg, &f); err != nil {
		return f, ErrNotObject
	}
	return f, nil
}

// Decode classifies a frame: an event first, then an answer (an id and no
// method). Anything else (a request from the extension, which v3 has
// none of) comes out as an event with no name, for the owner to ignore.
func (browsparkDialect) Decode(msg []byte) (Incoming, error) {
	f, err := DecodeFrame(msg)
	if err != nil {
		return Incoming{}, err
	}
	switch {
	case f.Event != "":
		return Incoming{Method: f.Event, Params: f.Params}, nil
	case f.ID != nil && f.Method == "":
		in := Incoming{IsResponse: true, ID: *f.ID, Result: f.Result}
		if f.Error != "" || f.Code != "" {
			msg := f.Error
			if msg == "" {
				msg = string(f.Code)
			}
			in.Err = wire.Remote(msg, f.Code)
		}
		return in, nil
	}
	return Incoming{}, nil
}
