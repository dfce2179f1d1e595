package harness

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
)

// Pages serves the local test pages on 127.0.0.1 and records what the pages
// report back (load, clicks, anything a test's script reports), so a test
// waits for the page to say something happened instead of polling it.
type Pages struct {
	srv *httptest.Server

	mu      sync.Mutex
	events  []PageEvent
	changed chan struct{} // closed and replaced on every new event
}

// PageEvent is one report from a page.
type PageEvent struct {
	Page  string // the id in the page's URL
	Kind  string // "load", "click" or what a script passed to report()
	Count int    // the page's click counter at the time
}

// TestPageTitle is the title of a page before any click.
func TestPageTitle(id string) string { return "Reins e2e " + id }

// The page: a button at a fixed place whose clicks change the title and a
// counter, and a report() helper that tells the server.
const pageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>
  html, body { margin: 0; background: #fff; }
  #btn { position: absolute; left: 40px; top: 60px; width: 200px; height: 80px; font-size: 20px; }
</style></head>
<body>
<button id="btn">Click me</button>
<p id="count" style="position:absolute;top:160px;left:40px">0</p>
<script>
  const id = %q;
  let clicks = 0;
  function report(kind) {
    return fetch('/event?id=' + encodeURIComponent(id) + '&kind=' + encodeURIComponent(kind) + '&n=' + clicks,
      { method: 'POST', cache: 'no-store', keepalive: true });
  }
  document.getElementById('btn').addEventListener('click', () => {
    clicks++;
    document.getElementById('count').textContent = String(clicks);
    document.title = 'clicked ' + clicks;
    report('click');
  });
  addEventListener('load', () => report('load'));
  window.report = report;
</script>
</body></html>`

// StartPages starts the page server on a random port of 127.0.0.1.
func StartPages() *Pages {
	p := &Pages{changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, pageHTML, html.EscapeString(TestPageTitle(id)), id)
	})
	mux.HandleFunc("POST /event", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		n, _ := strconv.Atoi(q.Get("n"))
		p.record(PageEvent{Page: q.Get("id"), Kind: q.Get("kind"), Count: n})
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	p.srv = httptest.NewServer(mux) // binds 127.0.0.1:0
	return p
}

func (p *Pages) record(ev PageEvent) {
	p.mu.Lock()
	p.events = append(p.events, ev)
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// URL is the address of the test page with this id.
func (p *Pages) URL(id string) string { return p.srv.URL + "/page?id=" + url.QueryEscape(id) }

// Origin is the server's origin.
func (p *Pages) Origin() string { return p.srv.URL }

// Wait returns the first event of page id and kind, waiting for it until
// ctx ends.
func (p *Pages) Wait(ctx context.Context, id, kind string) (PageEvent, error) {
	for {
		p.mu.Lock()
		for _, ev := range p.events {
			if ev.Page == id && ev.Kind == kind {
				p.mu.Unlock()
				return ev, nil
			}
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return PageEvent{}, fmt.Errorf("page %s never reported %q: %w", id, kind, ctx.Err())
		}
	}
}

// Close stops the server.
func (p *Pages) Close() { p.srv.Close() }
