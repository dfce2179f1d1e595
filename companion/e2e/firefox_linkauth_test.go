package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/linkauth"
)

// The link handshake in Firefox through web-ext: the extension takes the
// link key from `reins native-host` (registered under the test's HOME),
// proves it with WebCrypto in its background script, checks the
// companion's proof, and then works as a browser.
func TestFirefoxLinkHandshake(t *testing.T) {
	t.Parallel()
	s := newFirefoxStack(t)
	ctx := within(t, 60*time.Second)
	modes, took := loggedHandshakes(ctx, t, s.Reins)
	if len(modes) == 0 || modes[len(modes)-1] != linkauth.ModeKey {
		t.Fatalf("no key-mode handshake logged:\n%s", harness.Tail(s.Reins.Output(), 40))
	}
	if strings.Contains(s.Reins.Output(), "refused extension link") {
		t.Fatalf("a link was refused:\n%s", harness.Tail(s.Reins.Output(), 40))
	}
	tab, err := s.OpenShared(ctx, "ff-link", false)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := s.Reins.Client.CDP(ctx, tab.ID, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})
	if err != nil {
		t.Fatal(err)
	}
	var title string
	if err := decodeEvaluate(raw, &title); err != nil || title != harness.TestPageTitle("ff-link") {
		t.Fatalf("title %q, %v", title, err)
	}
	t.Logf("link handshakes in Firefox (hello to verified proof): %v", took)
}
