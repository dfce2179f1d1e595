// Package taskpages serves the realistic pages of the agent-task suite
// (companion/e2e tasks_*_test.go). Each page decides by itself whether its
// task was done: its own script checks the page state and reports to the
// server, or a server-side handler checks what the browser sent (a form, an
// upload, a cookie). A test never takes a tool's word for it; it waits for
// the page or the server to say so.
//
// The pages are served on two loopback origins (two ports of 127.0.0.1), so
// a page on one can frame a page of the other.
package taskpages

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
)

//go:embed pages
var pagesFS embed.FS

// Server serves the task pages and records which tasks their pages or
// handlers declared done.
type Server struct {
	main, other *httptest.Server
	mux         *http.ServeMux

	mu      sync.Mutex
	done    map[string]string // task → detail of its first report
	changed chan struct{}     // closed and replaced on every report
}

// Start serves the pages on two random ports of 127.0.0.1.
func Start() *Server {
	s := &Server{mux: http.NewServeMux(), done: map[string]string{}, changed: make(chan struct{})}
	pages, err := fs.Sub(pagesFS, "pages")
	if err != nil {
		panic(err)
	}
	static := http.FileServerFS(pages)
	s.mux.HandleFunc("GET /task/{file...}", func(w http.ResponseWriter, r *http.Request) {
		file := r.PathValue("file")
		if path.Ext(file) == "" {
			file += ".html"
		}
		w.Header().Set("Cache-Control", "no-store")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + file
		static.ServeHTTP(w, r2)
	})
	// A page's own script reports its task done; see pages/task.js.
	s.mux.HandleFunc("POST /done", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.Done(q.Get("task"), q.Get("detail"))
		w.WriteHeader(http.StatusNoContent)
	})
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	s.main = httptest.NewServer(s.mux)
	s.other = httptest.NewServer(s.mux)
	return s
}

// Handle adds a server-side route for a task (a form target, an upload, a
// download). Register it before the page that needs it is opened.
func (s *Server) Handle(pattern string, h http.HandlerFunc) { s.mux.HandleFunc(pattern, h) }

// URL is the address of p (a path such as "/task/login") on the main origin.
func (s *Server) URL(p string) string { return s.main.URL + p }

// OtherURL is the address of p on the second origin.
func (s *Server) OtherURL(p string) string { return s.other.URL + p }

// CrossSiteURL is the address of p on the second server under the name
// localhost: another site to the browser, so Chromium renders a frame of it
// in a process of its own (an out-of-process frame), as it does a real
// third-party widget.
func (s *Server) CrossSiteURL(p string) string { return s.CrossSiteOrigin() + p }

// CrossSiteOrigin is the origin of CrossSiteURL.
func (s *Server) CrossSiteOrigin() string {
	return strings.Replace(s.other.URL, "127.0.0.1", "localhost", 1)
}

// Origin and OtherOrigin are the two origins.
func (s *Server) Origin() string      { return s.main.URL }
func (s *Server) OtherOrigin() string { return s.other.URL }

// Done records that task was done; the first report counts.
func (s *Server) Done(task, detail string) {
	if task == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.done[task]; ok {
		return
	}
	s.done[task] = detail
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait returns the detail of task's done report, waiting for it until ctx
// ends.
func (s *Server) Wait(ctx context.Context, task string) (string, error) {
	for {
		s.mu.Lock()
		detail, ok := s.done[task]
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return detail, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", fmt.Errorf("the %s page never said its task was done: %w", task, ctx.Err())
		}
	}
}

// Close stops both servers.
func (s *Server) Close() {
	s.main.Close()
	s.other.Close()
}
