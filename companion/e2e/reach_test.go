package e2e

import (
	"bytes"
	"image/jpeg"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
	"github.com/reinshq/reins/companion/e2e/internal/taskpages"
)

// reachSuite checks what the task pages cannot judge themselves: full-page
// and element screenshots, and the errors for refs, through MCP on one
// transport.
func reachSuite(t *testing.T, r *harness.Reins, transport string) {
	pages := taskpages.Start()
	t.Cleanup(pages.Close)
	pages.Handle("GET /reach/closed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Closed</title><h1>Closed shadow root</h1><div id="host"></div><script>
			const root = document.getElementById('host').attachShadow({mode: 'closed'});
			root.innerHTML = '<button>Closed button</button>';
			root.querySelector('button').addEventListener('click', () => { document.title = 'clicked'; });
		</script>`)
	})
	cs := mcpSession(t, r, "reach-"+transport)
	a := &taskAgent{t: t, cs: cs, pages: pages, transport: transport}
	a.open(pages.URL("/task/far"))

	t.Run("full-page screenshot", func(t *testing.T) {
		a.t = t
		out := a.on("computer", map[string]any{"action": "screenshot", "fullPage": true})
		if len(out.images) != 1 || !strings.Contains(out.text, "Full-page screenshot") {
			t.Fatalf("full page: %s", out.text)
		}
		img, err := jpeg.DecodeConfig(bytes.NewReader(out.images[0]))
		if err != nil {
			t.Fatal(err)
		}
		// The terms run to several screens: the image is much taller than wide.
		if img.Height < 3*img.Width || img.Height > 6000 || img.Width > 1400 || len(out.images[0]) > 3<<18 {
			t.Fatalf("a %d×%d full page of %d bytes", img.Width, img.Height, len(out.images[0]))
		}
	})
	t.Run("element screenshot", func(t *testing.T) {
		a.t = t
		out := a.on("computer", map[string]any{"action": "screenshot", "ref": a.find("I have read the terms button", "I have read the terms")})
		if len(out.images) != 1 || !strings.Contains(out.text, `button "I have read the terms"`) {
			t.Fatalf("element: %s", out.text)
		}
		img, err := jpeg.DecodeConfig(bytes.NewReader(out.images[0]))
		if err != nil {
			t.Fatal(err)
		}
		// A button, enlarged: wider than tall, far smaller than the page.
		if img.Width < img.Height || img.Width > 600 || img.Height > 200 {
			t.Fatalf("a %d×%d screenshot of a button", img.Width, img.Height)
		}
	})
	t.Run("closed shadow roots", func(t *testing.T) {
		a.t = t
		a.on("navigate", map[string]any{"url": pages.URL("/reach/closed")})
		tree := a.on("read_page", nil).text
		if transport != "firefox" {
			// Chromium keeps a closed shadow root from every script,
			// the isolated world's too.
			if strings.Contains(tree, "Closed button") {
				t.Fatalf("a closed shadow root was read:\n%s", tree)
			}
			return
		}
		a.click(refFor(t, tree, `button "Closed button"`))
		if ctx := a.on("tabs_context_mcp", nil).text; !strings.Contains(ctx, `"title": "clicked"`) {
			t.Fatalf("the button in the closed shadow root was not clicked:\n%s", ctx)
		}
	})
	t.Run("refs never issued and stale", func(t *testing.T) {
		a.t = t
		a.on("navigate", map[string]any{"url": pages.URL("/task/far")})
		out := a.call("form_input", map[string]any{"tabId": a.tab, "ref": "ref_987654", "value": "x"})
		if !out.isErr || !strings.Contains(out.text, "bad_params") || !strings.Contains(out.text, "never issued") {
			t.Fatalf("a ref never issued: %+v", out)
		}
		ref := a.find("I have read the terms button", "I have read the terms")
		a.on("navigate", map[string]any{"url": pages.URL("/task/far")})
		out = a.call("computer", map[string]any{"action": "left_click", "tabId": a.tab, "ref": ref})
		if !out.isErr || !strings.Contains(out.text, "stale") {
			t.Fatalf("a ref of the page before a reload: %+v", out)
		}
	})
}

func TestPageReachWithChromium(t *testing.T) {
	s := newStack(t)
	reachSuite(t, s.Reins, "chromium")
}

func TestPageReachWithTheDevBrowser(t *testing.T) {
	reachSuite(t, startDevReins(t), "dev")
}

func TestPageReachWithFirefox(t *testing.T) {
	s := newFirefoxStack(t)
	reachSuite(t, s.Reins, "firefox")
}
