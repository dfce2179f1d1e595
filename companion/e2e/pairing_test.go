package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/admin"
	"github.com/reinshq/reins/companion/operator/operatortest"
	"github.com/reinshq/reins/companion/pairing"
)

// offerPage is a hosted product's page: it answers the test's calls to
// ping the extension and post a pair-offer, and embeds a cross-origin iframe
// that tries to post an offer of its own.
const offerPage = `<!doctype html><html><head><meta charset="utf-8"><title>Example CRM</title></head><body>
<h1>Example CRM</h1>
<iframe id="frame" src="%s/frame"></iframe>
<script>
window.ping = (nonce) => new Promise((resolve) => {
  addEventListener("message", function on(e) {
    if (e.source === window && e.data && e.data.__browserOperator === "pong" && e.data.nonce === nonce) {
      removeEventListener("message", on);
      resolve(e.data);
    }
  });
  window.postMessage({ __browserOperator: "ping", nonce }, window.origin);
});
window.offer = (config, brand) => window.postMessage({ __browserOperator: "pair-offer", config, brand: { name: brand } }, window.origin);
</script></body></html>`

// framePage posts an offer to its parent as soon as it loads, then tells the
// server it did.
const framePage = `<!doctype html><html><body><script>
parent.postMessage({ __browserOperator: "pair-offer",
  config: { transport: "websocket", serverUrl: "wss://iframe.example/ws", token: "from-the-iframe" },
  brand: { name: "Iframe" } }, "*");
fetch("/posted", { method: "POST" });
</script></body></html>`

type offerSite struct {
	top, frame *httptest.Server
	posted     chan struct{}
}

func startOfferSite(t *testing.T) *offerSite {
	s := &offerSite{posted: make(chan struct{}, 4)}
	frameMux := http.NewServeMux()
	frameMux.HandleFunc("GET /frame", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, framePage)
	})
	frameMux.HandleFunc("POST /posted", func(w http.ResponseWriter, r *http.Request) {
		s.posted <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	})
	s.frame = httptest.NewServer(frameMux)
	topMux := http.NewServeMux()
	topMux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, offerPage, s.frame.URL)
	})
	s.top = httptest.NewServer(topMux)
	t.Cleanup(func() { s.top.Close(); s.frame.Close() })
	return s
}

// waitOffer asks the running companion, with backoff until ctx ends, for an
// offer from origin. Offers are not on the inspection change stream, so
// this retries the admin call rather than waiting on a signal.
func waitOffer(ctx context.Context, ac *admin.Client, origin string) (pairing.Offer, error) {
	delay := 10 * time.Millisecond
	for {
		offers, err := ac.Offers(ctx)
		if err != nil {
			return pairing.Offer{}, err
		}
		for _, o := range offers {
			if o.Origin == origin {
				return o, nil
			}
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return pairing.Offer{}, fmt.Errorf("no offer from %s: %w", origin, ctx.Err())
		}
		delay = min(delay*2, 250*time.Millisecond)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var createdTab = regexp.MustCompile(`Created tab (\d+)`)

func TestPairingEndToEnd(t *testing.T) {
	for _, transport := range []string{"websocket", "sse-http"} {
		t.Run(transport, func(t *testing.T) {
			s := newStack(t)
			site := startOfferSite(t)
			ctx := within(t, 90*time.Second)
			ac := admin.NewClient(s.Reins.DataDir)
			defer ac.Close()

			target := ""
			config := map[string]any{"transport": transport, "token": "crm-token-1"}
			be := operatortest.New("crm-token-1", "")
			if transport == "websocket" {
				config["serverUrl"] = be.URL() + "/ws"
			} else {
				target = "room-9"
				be = operatortest.New("crm-token-1", target)
				config["serverUrl"] = be.URL()
				config["commandPath"] = "/t/{target}/events"
				config["resultPath"] = "/t/{target}/result"
				config["target"] = target
			}
			defer be.Close()

			_, sid, err := s.Chrome.OpenPage(ctx, site.top.URL+"/")
			if err != nil {
				t.Fatal(err)
			}
			// The cross-origin iframe posts first; the page's own offer after.
			select {
			case <-site.posted:
			case <-ctx.Done():
				t.Fatal("the iframe never posted its offer")
			}
			var pong struct {
				Nonce, Version, ProductName string
			}
			if err := s.Chrome.Evaluate(ctx, sid, `ping("n-1")`, &pong); err != nil {
				t.Fatal(err)
			}
			if pong.Nonce != "n-1" || pong.ProductName != "Reins" || pong.Version == "" {
				t.Fatalf("pong %+v", pong)
			}
			cfgJSON := mustJSON(t, config)
			if err := s.Chrome.Evaluate(ctx, sid, `offer(`+cfgJSON+`, "Example CRM"), true`, nil); err != nil {
				t.Fatal(err)
			}
			o, err := waitOffer(ctx, ac, site.top.URL)
			if err != nil {
				t.Fatalf("%v\n%s", err, s.Diagnostics())
			}
			if o.Brand != "Example CRM" || o.Transport != transport || o.Target != target {
				t.Fatalf("offer %+v", o)
			}
			if strings.Contains(s.Reins.Output(), "iframe.example") {
				t.Fatal("the cross-origin iframe's offer reached the companion")
			}
			offers, _ := ac.Offers(ctx)
			if len(offers) != 1 {
				t.Fatalf("%d offers parked, want 1: %+v", len(offers), offers)
			}

			// Nothing happens until the person approves.
			select {
			case <-be.Connected():
				t.Fatal("the backend was contacted before approval")
			default:
			}
			if bs, _ := ac.Backends(ctx); len(bs) != 0 {
				t.Fatalf("backends before approval: %+v", bs)
			}

			st, err := ac.ApproveOffer(ctx, o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.Agent != "Example CRM" || st.Origin != site.top.URL {
				t.Fatalf("backend %+v", st)
			}
			if _, err := be.WaitConnected(30 * time.Second); err != nil {
				t.Fatalf("%v\n%s", err, s.Diagnostics())
			}

			id, err := be.Send("tabs_create_mcp", map[string]any{"url": s.Pages.URL("crm")})
			if err != nil {
				t.Fatal(err)
			}
			res, err := be.Await(ctx, id)
			if err != nil || res.Error != "" {
				t.Fatalf("tabs_create_mcp: %+v %v\n%s", res, err, s.Diagnostics())
			}
			m := createdTab.FindStringSubmatch(fmt.Sprint(res.Content()))
			if m == nil {
				t.Fatalf("no tab id in %+v", res.Content())
			}
			tabID, _ := strconv.Atoi(m[1])

			id, _ = be.Send("navigate", map[string]any{"url": s.Pages.URL("crm-2"), "tabId": tabID})
			res, err = be.Await(ctx, id)
			if err != nil || res.Error != "" {
				t.Fatalf("navigate: %+v %v", res, err)
			}
			if _, err := s.Pages.Wait(ctx, "crm-2", "load"); err != nil {
				t.Fatal(err)
			}

			id, _ = be.Send("computer", map[string]any{"action": "screenshot", "tabId": tabID})
			res, err = be.Await(ctx, id)
			if err != nil || res.Error != "" {
				t.Fatalf("screenshot: %+v %v", res, err)
			}
			var image map[string]any
			for _, c := range res.Content() {
				if c["type"] == "image" {
					image = c
				}
			}
			if image == nil || image["mimeType"] != "image/jpeg" {
				t.Fatalf("no JPEG in %+v", res.Content())
			}
			data, err := base64.StdEncoding.DecodeString(image["data"].(string))
			if err != nil || len(data) < 1000 || data[0] != 0xFF || data[1] != 0xD8 {
				t.Fatalf("screenshot is not a JPEG (%d bytes, %v)", len(data), err)
			}

			if err := ac.ForgetBackend(ctx, st.ID); err != nil {
				t.Fatal(err)
			}
			if bs, _ := ac.Backends(ctx); len(bs) != 0 {
				t.Fatalf("backends after forget: %+v", bs)
			}
		})
	}
}

func TestDeniedOfferLeavesNoTrace(t *testing.T) {
	s := newStack(t)
	site := startOfferSite(t)
	ctx := within(t, 60*time.Second)
	ac := admin.NewClient(s.Reins.DataDir)
	defer ac.Close()
	be := operatortest.New("t", "")
	defer be.Close()
	_, sid, err := s.Chrome.OpenPage(ctx, site.top.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	cfg := mustJSON(t, map[string]any{"transport": "websocket", "serverUrl": be.URL() + "/ws", "token": "t"})
	if err := s.Chrome.Evaluate(ctx, sid, `offer(`+cfg+`, "Denied CRM"), true`, nil); err != nil {
		t.Fatal(err)
	}
	o, err := waitOffer(ctx, ac, site.top.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := ac.DenyOffer(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	if offers, _ := ac.Offers(ctx); len(offers) != 0 {
		t.Fatalf("offers after deny: %+v", offers)
	}
	if _, err := ac.ApproveOffer(ctx, o.ID); err == nil {
		t.Fatal("a denied offer was approved")
	}
	if bs, _ := ac.Backends(ctx); len(bs) != 0 {
		t.Fatalf("backends after deny: %+v", bs)
	}
	select {
	case <-be.Connected():
		t.Fatal("a denied backend was contacted")
	default:
	}
}

// sandboxedPage is served with a CSP sandbox: its origin is opaque while its
// tab shows the server's URL, as with a site's user-content pages. As soon
// as it loads it offers pairing with an attacker's backend under a trusted
// brand, and a sandboxed iframe in it tries as well; each then tells the
// server it posted.
const sandboxedPage = `<!doctype html><html><head><meta charset="utf-8"><title>User content</title></head><body>
<iframe sandbox="allow-scripts" srcdoc="<script>parent.postMessage({__browserOperator:'pair-offer',config:{transport:'websocket',serverUrl:'wss://sandboxed-frame.example/ws',token:'t'}},'*');fetch('%[1]s/posted',{method:'POST',mode:'no-cors'});</script>"></iframe>
<script>
window.postMessage({ __browserOperator: "pair-offer",
  config: { transport: "websocket", serverUrl: "wss://attacker.example/ws", token: "from-a-sandbox" },
  brand: { name: "Claude" } }, "*");
fetch("%[1]s/posted", { method: "POST", mode: "no-cors" });
</script></body></html>`

// TestSandboxedOfferIsRefused: a sandboxed document used to be credited
// with its tab URL's origin. Now the origin is the sending frame's, and an
// opaque one gets nothing parked; a real page's offer still is.
func TestSandboxedOfferIsRefused(t *testing.T) {
	s := newStack(t)
	site := startOfferSite(t)
	ctx := within(t, 60*time.Second)
	ac := admin.NewClient(s.Reins.DataDir)
	defer ac.Close()

	posted := make(chan struct{}, 4)
	mux := http.NewServeMux()
	var sandboxed *httptest.Server
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Security-Policy", "sandbox allow-scripts")
		fmt.Fprintf(w, sandboxedPage, sandboxed.URL)
	})
	mux.HandleFunc("POST /posted", func(w http.ResponseWriter, r *http.Request) {
		posted <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	})
	sandboxed = httptest.NewServer(mux)
	defer sandboxed.Close()

	if _, _, err := s.Chrome.OpenPage(ctx, sandboxed.URL+"/"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-posted:
		case <-ctx.Done():
			t.Fatal("the sandboxed page and frame never posted their offers")
		}
	}

	// A real page's offer, sent after the sandboxed ones, is parked; the
	// extension forwards offers in order, so the sandboxed ones would be
	// parked by now.
	_, sid, err := s.Chrome.OpenPage(ctx, site.top.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	cfg := mustJSON(t, map[string]any{"transport": "websocket", "serverUrl": "wss://crm.example/ws", "token": "t"})
	if err := s.Chrome.Evaluate(ctx, sid, `offer(`+cfg+`, "Example CRM"), true`, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := waitOffer(ctx, ac, site.top.URL); err != nil {
		t.Fatalf("%v\n%s", err, s.Diagnostics())
	}
	offers, err := ac.Offers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offers {
		if o.Origin != site.top.URL {
			t.Errorf("an offer from %s (%q, %s) was parked", o.Origin, o.Brand, o.ServerURL)
		}
	}
	if len(offers) != 1 {
		t.Fatalf("%d offers parked, want only the real page's", len(offers))
	}
}
