package companion_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// stopBudget is how long a companion may take to stop.
const stopBudget = 2 * time.Second

// The bug: a connection that has not sent its request yet (a browser
// reconnecting the moment its socket closed, a preconnect) held
// http.Server.Shutdown for 5 s, and a request that never ended held it for
// as long as the caller's context allowed. Shutdown must be over within
// the companion's stop budget, cleanly.
func TestShutdownIsNotHeldByConnectionsOrRequests(t *testing.T) {
	c, port := startOn(t, t.TempDir())
	addr := "127.0.0.1:" + strconv.Itoa(port)
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// A request whose body never ends keeps its handler (the MCP
	// endpoint reading it) busy.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte("POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")); err != nil {
		t.Fatal(err)
	}
	// Both are in the server's hands once it answers another request.
	if resp, err := http.Get("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > stopBudget {
		t.Fatalf("Shutdown took %s", took)
	}
	// And nothing new is taken.
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatal("the stopped companion still accepts connections")
	}
}
