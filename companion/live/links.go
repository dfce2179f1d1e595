package live

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Link files carry a ticket from the companion to the person's browser
// without a command line: whatever starts the browser (xdg-open, open,
// ShellExecute) passes its URL as an argument, and any user of the machine
// can read another process's arguments (/proc/PID/cmdline). So the tray
// opens file://…/live-XXXX.html, a name that says nothing, and the file,
// which only the person can read, sends the browser on to the ticket's link.
const (
	linkPrefix = "live-"
	linkSuffix = ".html"
)

// OpenURL returns a URL for the tray to open a Live view of a shared tab
// with: a file:// URL of a 0600 file in Options.LinkDir that leads to a
// fresh one-time link. The URL carries no secret. The file is removed when
// its ticket is used or expires, and when the server closes.
func (s *Server) OpenURL(tabID int) (string, error) {
	if s.opts.LinkDir == "" {
		return "", errors.New("live view: no directory for link files")
	}
	if err := s.checkShared(tabID); err != nil {
		return "", err
	}
	if err := os.MkdirAll(s.opts.LinkDir, 0o700); err != nil {
		return "", fmt.Errorf("live view of tab %d: creating the link directory: %w", tabID, err)
	}
	var name [8]byte
	if _, err := rand.Read(name[:]); err != nil {
		return "", fmt.Errorf("live view of tab %d: %w", tabID, err)
	}
	file := filepath.Join(s.opts.LinkDir, linkPrefix+hex.EncodeToString(name[:])+linkSuffix)
	_, err := s.auth.issueTicket(tabID, file, func(ticket string) error {
		return writeLinkFile(file, s.linkURL(tabID, ticket))
	})
	if err != nil {
		return "", fmt.Errorf("live view of tab %d: %w", tabID, err)
	}
	s.armJanitor()
	s.log.Info("live view link issued", "tab", tabID, "file", file)
	return fileURL(file), nil
}

// writeLinkFile creates file, readable by its owner only, with a page that
// moves on to link at once.
func writeLinkFile(file, link string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing the link file: %w", err)
	}
	// The same page that sends a redeemed link on to its session: no
	// script, a meta refresh and a link to follow by hand.
	_, werr := f.WriteString(strings.ReplaceAll(openPage, "{{URL}}", html.EscapeString(link)))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(file)
		return fmt.Errorf("writing the link file: %w", err)
	}
	return nil
}

// fileURL is the file:// URL of an absolute path.
func fileURL(path string) string {
	p := filepath.ToSlash(path)
	if runtime.GOOS == "windows" && !strings.HasPrefix(p, "/") {
		p = "/" + p // file:///C:/Users/…
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// armJanitor makes sure the oldest link file is removed once its ticket
// expires, even if nothing else touches the tickets by then.
func (s *Server) armJanitor() {
	at, ok := s.auth.nextExpiry()
	if !ok {
		return
	}
	d := max(at.Sub(s.opts.Now()), 0) + time.Second
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.janitor == nil {
		s.janitor = time.AfterFunc(d, s.sweep)
		return
	}
	s.janitor.Reset(d)
}

func (s *Server) sweep() {
	s.auth.prune()
	s.armJanitor()
}

// removeStaleLinks removes link files a companion that did not stop
// cleanly left behind; their tickets died with it.
func removeStaleLinks(dir string) {
	if dir == "" {
		return
	}
	names, err := filepath.Glob(filepath.Join(dir, linkPrefix+"*"+linkSuffix))
	if err != nil {
		return
	}
	for _, n := range names {
		os.Remove(n)
	}
}
