package companion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/companiontest"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/internal/httpbound"
	"github.com/reinshq/reins/companion/nativemsg"
	"github.com/reinshq/reins/companion/wire"
)

// The listener bounds headers, bodies and idle connections, and an
// extension's WebSocket outlives all three.
func TestListenerLimits(t *testing.T) {
	const limit = 300 * time.Millisecond
	dir := t.TempDir()
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, NoAdmin: true}, func(c *companion.Companion) {
		companion.SetHTTPLimits(c, httpbound.Limits{ReadHeader: limit, Body: limit, Idle: limit})
	})

	x, err := hubtest.Dial(context.Background(), "ws://127.0.0.1:"+strconv.Itoa(port)+"/", wire.Hello{Version: 3, InstanceID: "i", BrowserSessionID: "s"}, hubtest.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Kill()
	x.Handle(wire.MethodTabsList, func(json.RawMessage) (any, error) { return []wire.TabInfo{}, nil })
	bs := waitBrowsers(t, c, 1)

	for name, req := range map[string]string{
		"a slow header":      "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + strconv.Itoa(port) + "\r\n",
		"a slow body":        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + strconv.Itoa(port) + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":",
		"an idle keep-alive": "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + strconv.Itoa(port) + "\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(conn, req)
		start := time.Now()
		conn.SetReadDeadline(start.Add(30 * limit))
		_, err = io.ReadAll(conn)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the companion kept the connection for %s", name, 30*limit)
		}
		conn.Close()
		t.Logf("%s: closed after %s", name, time.Since(start).Round(time.Millisecond))
	}

	// The extension's socket was open through all of it.
	<-time.After(3 * limit)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Hub().TabsList(ctx, bs[0].ID); err != nil {
		t.Fatalf("the extension's socket did not outlive the limits: %v", err)
	}
}

// A running companion records its port where the native messaging host
// reads it (nativemsg.ReadPort), and removes it when it stops.
func TestPortFileForTheNativeHost(t *testing.T) {
	dir := t.TempDir()
	c, port := companiontest.Start(t, companion.Config{DataDir: dir, NoAdmin: true})
	if got := nativemsg.ReadPort(dir); got != port {
		t.Fatalf("the native host reads port %d, want %d", got, port)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, nativemsg.PortFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the port file outlived the companion: %v", err)
	}
}
