package app

import (
	_ "embed"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

//go:embed demo.html
var demoPage []byte

// demoPrompt is what the guide suggests asking an agent first.
const demoPrompt = "Use Reins: in my browser's Reins demo tab, add \"oat milk\" to the shopping list, then tell me what the list holds."

// demoServer serves the guide's demo page on a loopback port of its own,
// never on the companion's: a page agents drive must not share the origin
// of the companion's live view and MCP endpoint.
type demoServer struct {
	log  *slog.Logger
	mu   sync.Mutex
	srv  *http.Server
	addr string
}

func (d *demoServer) url() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		d.addr = "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		d.srv = &http.Server{Handler: http.HandlerFunc(d.serve), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := d.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Warn("demo page server stopped", "err", err)
			}
		}()
	}
	return "http://" + d.addr + "/", nil
}

// serve answers the one page, to requests for this host only (no DNS
// rebinding onto it).
func (d *demoServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Host != d.addr {
		http.Error(w, "wrong host", http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path != "/" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(demoPage)
}

func (d *demoServer) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv != nil {
		d.srv.Close()
	}
}
