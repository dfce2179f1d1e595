package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// newFirefoxStack starts reins, Firefox ESR (headless, the extension loaded
// through web-ext) and the pages for one test and stops them when it ends.
func newFirefoxStack(t testing.TB) *harness.FirefoxStack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout+harness.FirefoxHelloTimeout)
	defer cancel()
	s, err := harness.StartFirefoxStack(ctx)
	if err != nil {
		t.Fatalf("starting reins and firefox: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(s.Diagnostics())
		}
		if err := s.Close(); err != nil {
			t.Errorf("stopping reins: %v\n%s", err, harness.Tail(s.Reins.Output(), 40))
		}
	})
	return s
}

// TestFirefoxExtension runs against one reins and one Firefox ESR.
func TestFirefoxExtension(t *testing.T) {
	t.Parallel()
	s := newFirefoxStack(t)

	t.Run("hello says firefox", func(t *testing.T) {
		want, err := harness.ExtensionVersion()
		if err != nil {
			t.Fatal(err)
		}
		bs, err := s.Reins.Client.Browsers(within(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 1 {
			t.Fatalf("%d browsers, want 1: %+v", len(bs), bs)
		}
		b := bs[0]
		h := b.Hello
		for _, c := range []struct {
			what string
			ok   bool
		}{
			{"version 3", h.Version == wire.ProtocolVersion},
			{"extensionVersion " + want, h.ExtensionVersion == want},
			{"browser Firefox", h.Browser == "Firefox"},
			{"browserEngine firefox", h.BrowserEngine == wire.EngineFirefox && b.Engine == wire.EngineFirefox},
			{"a UUID instanceId", uuidish.MatchString(h.InstanceID)},
			{"a UUID browserSessionId", uuidish.MatchString(h.BrowserSessionID) && h.BrowserSessionID != h.InstanceID},
			{"a Firefox user agent", strings.Contains(h.UserAgent, "Firefox/")},
			{"extension mode", b.Mode == hub.ModeExtension},
		} {
			if !c.ok {
				t.Errorf("hello lacks %s: %+v", c.what, h)
			}
		}
	})
}
