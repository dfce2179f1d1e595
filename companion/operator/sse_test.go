package operator_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/internal/sse"
	"github.com/reinshq/reins/companion/operator"
)

// A hosted backend that opens an event and never ends it (issue 11 item 8)
// costs a bounded buffer: the operator stops reading after sse.MaxEvent,
// says why, and reconnects; the stream it gets then works.
func TestUnterminatedSSEEventIsBounded(t *testing.T) {
	var (
		mu       sync.Mutex
		streams  int
		written  int64 // bytes of the endless event the backend got out
		endless  = make(chan struct{})
		second   = make(chan struct{})
		results  = make(chan string, 1)
		tokenBad bool
	)
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-sse" {
			mu.Lock()
			tokenBad = true
			mu.Unlock()
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			var b bytes.Buffer
			b.ReadFrom(r.Body)
			select {
			case results <- b.String():
			default:
			}
			return
		}
		mu.Lock()
		streams++
		n := streams
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush := http.NewResponseController(w).Flush
		if n == 1 {
			// data: xxxx… with no end of line, until the client hangs up.
			w.Write([]byte("data: "))
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for {
				k, err := w.Write(chunk)
				mu.Lock()
				written += int64(k)
				mu.Unlock()
				if err != nil || flush() != nil {
					close(endless)
					return
				}
			}
		}
		close(second)
		w.Write([]byte(`data: {"id":"c1","tool":"echo","args":{"after":"reconnect"}}` + "\n\n"))
		flush()
		<-r.Context().Done()
	}))
	// Cleanups run last first: the manager lets go of the stream, then the
	// backend closes.
	t.Cleanup(be.Close)

	f := newFixture(t)
	// The reason goes to the log; the fixture's logger discards it.
	logs := &syncLog{}
	m, err := operator.New(operator.Options{
		DataDir: t.TempDir(), Secrets: f.secrets, Runner: f.runner,
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if _, err := m.Approve(offer(t, map[string]any{"transport": "sse-http", "serverUrl": be.URL, "token": "tok-sse",
		"commandPath": "/events", "resultPath": "/result"}, "Big")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-endless:
	case <-time.After(60 * time.Second):
		t.Fatal("the operator kept reading the endless event")
	}
	mu.Lock()
	got := written
	mu.Unlock()
	// What the operator holds is sse.MaxEvent; the rest sat in socket
	// buffers. Without the bound it would read 64 MiB or more.
	_ = sse.MaxEvent
	if got > 16<<20 {
		t.Fatalf("the backend got %d MiB of one event out before the operator gave up", got>>20)
	}
	t.Logf("the backend wrote %.1f MiB of the unterminated event before the operator hung up", float64(got)/(1<<20))
	select {
	case <-second:
	case <-time.After(30 * time.Second):
		t.Fatal("the operator did not reconnect")
	}
	select {
	case r := <-results:
		if !strings.Contains(r, "reconnect") {
			t.Fatalf("result %s", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the command after the reconnect got no result")
	}
	mu.Lock()
	defer mu.Unlock()
	if tokenBad {
		t.Fatal("a request came without the token")
	}
	if !strings.Contains(logs.String(), "event is larger than the limit: an event passed 1048576 bytes without ending") {
		t.Fatalf("the log does not say why the stream was dropped:\n%s", logs.String())
	}
}

type syncLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
