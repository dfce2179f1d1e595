package sse

import (
	"errors"
	"strings"
	"testing"
)

func collect(t *testing.T, in string, max int) ([]Event, error) {
	t.Helper()
	var got []Event
	err := Read(strings.NewReader(in), max, func(e Event) error {
		got = append(got, Event{Type: e.Type, Data: append([]byte(nil), e.Data...)})
		return nil
	})
	return got, err
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Event
	}{
		{"one message", "data: {\"a\":1}\n\n", []Event{{"", []byte(`{"a":1}`)}}},
		{"typed", "event: command\ndata: x\n\n", []Event{{"command", []byte("x")}}},
		{"type without data", "event: disconnect\n\n", []Event{{"disconnect", nil}}},
		{"multi-line data", "data: a\ndata: b\ndata:c\n\n", []Event{{"", []byte("a\nb\nc")}}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []Event{{"", []byte("a")}, {"", []byte("b")}}},
		{"comments and ids", ": keep-alive\nid: 7\nretry: 10\ndata: x\n\n:\n\n", []Event{{"", []byte("x")}}},
		{"blank lines alone", "\n\n\n", nil},
		{"no trailing blank line", "data: x\n", nil},
		{"empty data", "data\n\n", []Event{{"", []byte("")}}},
	} {
		got, err := collect(t, tc.in, MaxEvent)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d events %q, want %d", tc.name, len(got), got, len(tc.want))
			continue
		}
		for i := range got {
			if got[i].Type != tc.want[i].Type || string(got[i].Data) != string(tc.want[i].Data) {
				t.Errorf("%s: event %d = %q %q, want %q %q", tc.name, i, got[i].Type, got[i].Data, tc.want[i].Type, tc.want[i].Data)
			}
		}
	}
}

func TestReadBoundsAnEvent(t *testing.T) {
	// One long line, many short lines, and exactly the limit.
	long := "data: " + strings.Repeat("x", 2000) + "\n\n"
	if _, err := collect(t, long, 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a long line: %v", err)
	}
	many := strings.Repeat("data: xxxxxxxxx\n", 200) + "\n"
	if _, err := collect(t, many, 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("many lines: %v", err)
	}
	fits := "data: " + strings.Repeat("x", 1000-len("data: ")-1) + "\n\n"
	if got, err := collect(t, fits, 1000); err != nil || len(got) != 1 {
		t.Fatalf("an event of exactly the limit: %d %v", len(got), err)
	}
	// The bound is per event: many events of half the limit are fine.
	halves := strings.Repeat("data: "+strings.Repeat("y", 400)+"\n\n", 50)
	if got, err := collect(t, halves, 1000); err != nil || len(got) != 50 {
		t.Fatalf("50 events under the limit: %d %v", len(got), err)
	}
}

func TestReadStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Read(strings.NewReader("data: 1\n\ndata: 2\n\n"), MaxEvent, func(Event) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("%v after %d events", err, n)
	}
}
