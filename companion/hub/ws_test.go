package hub_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/wire"
)

// readFrame reads one whole frame of a ManualRead fake extension.
func readFrame(t *testing.T, x *hubtest.Ext) wire.Frame {
	t.Helper()
	_, data, err := x.Conn.Read(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var f wire.Frame
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("a frame that is not JSON (%d bytes): %v", len(data), err)
	}
	return f
}

type result struct {
	raw json.RawMessage
	err error
}

// An agent that gives up while its request is being written to the
// extension returns at once, and the frame is still written whole: the
// browser stays connected and the next request is answered. Writing with
// the caller's context instead makes coder/websocket close the socket
// mid-frame, dropping the browser for every agent.
func TestCallerCancelledMidWriteKeepsTheBrowser(t *testing.T) {
	changed, notify := changeSignal()
	e := newEnv(t, hub.Options{OnChange: notify})
	x, err := hubtest.Dial(ctxT(t), e.url, hello("i", "s"), hubtest.Options{Key: e.key, ManualRead: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Kill)
	waitFor(t, changed, "browser", func() bool { return len(e.hub.Browsers()) == 1 })
	browserID := e.hub.Browsers()[0].ID
	if f := readFrame(t, x); f.Event != wire.EventPolicy {
		t.Fatalf("first frame %+v, want the policy sent on connect", f)
	}

	// More than the loopback socket buffers on both sides hold, so the
	// write is still going when the caller leaves; random, so nothing on
	// the way can shrink it.
	raw := make([]byte, 18<<20)
	rand.Read(raw)
	blob := base64.StdEncoding.EncodeToString(raw)
	actx, cancelA := context.WithCancel(ctxT(t))
	a := make(chan result, 1)
	go func() {
		res, err := e.hub.Request(actx, browserID, "test.big", map[string]string{"blob": blob})
		a <- result{res, err}
	}()
	_, r, err := x.Conn.Reader(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 1024)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	cancelA()
	select {
	case res := <-a:
		if !errors.Is(res.err, context.Canceled) {
			t.Fatalf("the cancelled caller got %v, want context.Canceled", res.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled caller is still waiting")
	}
	b := make(chan result, 1)
	go func() {
		res, err := e.hub.Request(ctxT(t), browserID, "test.small", nil)
		b <- result{res, err}
	}()
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the big frame was cut after %d bytes: %v", len(head)+len(rest), err)
	}
	var big struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params struct {
			Blob string `json:"blob"`
		} `json:"params"`
	}
	if err := json.Unmarshal(append(head, rest...), &big); err != nil || big.Method != "test.big" || big.Params.Blob != blob {
		t.Fatalf("the big frame arrived cut or changed: method %q, %d of %d bytes: %v", big.Method, len(big.Params.Blob), len(blob), err)
	}
	small := readFrame(t, x)
	if small.Method != "test.small" || small.ID == nil {
		t.Fatalf("after the big frame the extension got %+v", small)
	}
	// The answer to the caller who left is dropped quietly.
	for _, res := range []wire.Res{{ID: big.ID, Result: json.RawMessage(`{}`)}, {ID: *small.ID, Result: json.RawMessage(`{"ok":true}`)}} {
		data, _ := json.Marshal(res)
		if err := x.WriteRaw(data); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case res := <-b:
		if res.err != nil || string(res.raw) != `{"ok":true}` {
			t.Fatalf("the next request: %s %v", res.raw, res.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the next request was not answered")
	}
	br, err := e.hub.Browser(browserID)
	if err != nil || br.Err() != nil {
		t.Fatalf("the browser left: %v %v", err, br.Err())
	}
}

// A browser the companion closes hears why: pending requests fail at once
// with no_such_browser and the reason, and the extension gets the close
// code for it.
func TestCloseCodesByReason(t *testing.T) {
	for _, tc := range []struct {
		cause  error
		reason string
		code   websocket.StatusCode
	}{
		{hub.ErrBlocked, hub.ReasonBlocked, hub.StatusRefused},
		{errors.New("replaced by a new connection"), "replaced by a new connection", websocket.StatusGoingAway},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			e, changed, x := oneBrowser(t)
			started := hangUntilGone(x, wire.MethodTabsList)
			waitFor(t, changed, "browser", func() bool { return len(e.hub.Browsers()) == 1 })
			b, _ := e.hub.Browser(e.hub.Browsers()[0].ID)
			errc := make(chan error, 1)
			go func() {
				_, err := e.hub.TabsList(context.Background(), b.ID)
				errc <- err
			}()
			<-started
			b.Disconnect(tc.cause)
			if err := <-errc; !errors.Is(err, wire.ErrNoSuchBrowser) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("the pending request: %v", err)
			}
			var ce websocket.CloseError
			if !errors.As(x.Err(), &ce) || ce.Code != tc.code || ce.Reason != tc.reason {
				t.Fatalf("the extension got %v, want %v %q", x.Err(), tc.code, tc.reason)
			}
		})
	}
}
