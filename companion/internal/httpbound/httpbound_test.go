package httpbound

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const limit = 200 * time.Millisecond

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Limits{ReadHeader: limit, Body: limit, Idle: limit}.Server(h, quiet)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
	})
	return ln.Addr().String()
}

// readAll reads what the server sends until it closes, bounded by d.
func readAll(t *testing.T, c net.Conn, d time.Duration) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	data, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %s: %q", d, data)
	}
	return string(data), time.Since(start)
}

// A body that trickles in slower than the limit loses its connection.
func TestSlowBodyIsCut(t *testing.T) {
	readErr := make(chan error, 1)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		if err != nil {
			http.Error(w, "slow body", http.StatusRequestTimeout)
		}
	}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
	_, took := readAll(t, c, 20*limit)
	if err := <-readErr; err == nil {
		t.Fatal("the handler read the whole body")
	}
	t.Logf("a 10-of-1000-byte body was cut after %s (limit %s)", took.Round(time.Millisecond), limit)
}

// A slow header is cut by the header limit.
func TestSlowHeaderIsCut(t *testing.T) {
	addr := serve(t, http.NotFoundHandler())
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n")
	readAll(t, c, 20*limit)
}

// Once the body is in, the response may stream far past the body limit:
// the request's context is not cancelled, whether the handler read to EOF
// or just the declared length.
func TestResponseStreamsPastTheBodyLimit(t *testing.T) {
	const body = `{"jsonrpc":"2.0"}`
	for name, read := range map[string]func(r *http.Request) error{
		"to EOF": func(r *http.Request) error { _, err := io.ReadAll(r.Body); return err },
		"the declared length": func(r *http.Request) error {
			_, err := io.ReadFull(r.Body, make([]byte, r.ContentLength))
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := read(r); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				http.NewResponseController(w).Flush()
				select {
				case <-r.Context().Done():
					fmt.Fprint(w, "cancelled")
				case <-time.After(5 * limit):
					fmt.Fprint(w, "streamed")
				}
			}))
			resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if string(got) != "streamed" {
				t.Fatalf("the stream ended with %q", got)
			}
		})
	}
}

// A WebSocket outlives every limit.
func TestWebSocketOutlivesTheLimits(t *testing.T) {
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, data, err := c.Read(context.Background())
			if err != nil {
				return
			}
			c.Write(context.Background(), typ, data)
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	<-time.After(5 * limit)
	if err := c.Write(ctx, websocket.MessageText, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if _, data, err := c.Read(ctx); err != nil || string(data) != "still here" {
		t.Fatalf("echo after %s: %q %v", 5*limit, data, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// An idle keep-alive connection is closed.
func TestIdleConnectionIsClosed(t *testing.T) {
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	_, took := readAll(t, c, 20*limit)
	t.Logf("idle connection closed after %s (limit %s)", took.Round(time.Millisecond), limit)
}
