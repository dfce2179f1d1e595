// Package sse reads server-sent events (text/event-stream) with a bound on
// every event, for each Reins client of such a stream: the `reins mcp`
// bridge reading the companion's MCP stream and the operator reading a
// hosted backend's commands. A peer that never ends an event costs at most
// MaxEvent bytes of memory.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxEvent bounds one event: its field lines together, data and all. A
// screenshot result, the largest message either stream carries, is about
// 100 KB.
const MaxEvent = 1 << 20

// ErrTooLarge means an event grew past its bound before its blank line.
var ErrTooLarge = errors.New("event is larger than the limit")

// Event is one dispatched event. Type is the event field ("" when absent);
// Data joins its data lines with newlines.
type Event struct {
	Type string
	Data []byte
}

// Read calls fn for every event in r, in order, until r ends (nil), fn
// fails (its error), or an event passes max bytes (an error wrapping
// ErrTooLarge). An event is dispatched at its blank line when it carried
// data or a type; comments (keep-alives) and the id and retry fields are
// skipped. The Data passed to fn is only valid during the call.
func Read(r io.Reader, max int, fn func(Event) error) error {
	rd := bufio.NewReaderSize(r, 64<<10)
	var (
		data    []byte
		typ     string
		hasData bool
		size    int // bytes of the current event so far
		line    []byte
	)
	for {
		chunk, isPrefix, err := rd.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		size += len(chunk)
		if !isPrefix && (len(chunk) > 0 || line != nil) {
			size++ // the line's end; the blank line that ends the event is free
		}
		if size > max {
			return fmt.Errorf("%w: an event passed %d bytes without ending", ErrTooLarge, max)
		}
		if isPrefix {
			line = append(line, chunk...)
			continue
		}
		if line != nil {
			chunk = append(line, chunk...)
			line = nil
		}
		if len(chunk) == 0 {
			if hasData || typ != "" {
				if err := fn(Event{Type: typ, Data: data}); err != nil {
					return err
				}
			}
			data, typ, hasData, size = data[:0], "", false, 0
			continue
		}
		if chunk[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(chunk, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "event":
			typ = string(value)
		}
	}
}
