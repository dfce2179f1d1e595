//go:build !nogui

package app

import (
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/reinshq/reins/companion"
	"github.com/reinshq/reins/companion/wire"
	"github.com/reinshq/reins/ui"
)

// The attack: the tray's Live view item handed the one-time link, ticket
// and all, to the opener, which starts the browser with it as an argument
// (xdg-open URL). Any user of the machine can read another process's
// arguments in /proc/PID/cmdline and redeem the ticket first. The real tray
// over the real binding and companion must hand the opener a URL without
// the secret, which still leads to the view.
func TestTrayLiveViewOpensAURLWithoutTheTicket(t *testing.T) {
	e := startBound(t)
	e.browser(t, workHello, []wire.TabInfo{{ID: 11, URL: "https://mail.example/inbox", Title: "Inbox", Shared: true, WindowID: 1}})
	s := e.wait(t, "the shared tab", func(s ui.State) bool { return len(s.Tabs) == 1 })

	var argv []string // what the opener would put on the command line
	tr := ui.NewTray(test.NewTempApp(t), e.b, nil, ui.TrayActions{OpenURL: func(u *url.URL) error {
		argv = append(argv, u.String())
		return nil
	}})
	tr.Update(s)
	var live []string
	for _, it := range tr.Menu().Items {
		if it.Label == "Live view" && it.ChildMenu != nil && len(it.ChildMenu.Items) == 1 {
			it.ChildMenu.Items[0].Action()
			live = append(live, it.Label)
		}
	}
	if len(live) != 1 || len(argv) != 1 {
		t.Fatalf("the Live view item opened %q", argv)
	}
	arg := argv[0]
	u, err := url.Parse(arg)
	if err != nil || u.Scheme != "file" || u.RawQuery != "" || strings.Contains(arg, "ticket") {
		t.Fatalf("the opener got %q, want a file:// URL without a ticket", arg)
	}
	file := filepath.FromSlash(u.Path)
	if filepath.Base(filepath.Dir(file)) != companion.LiveLinkDir {
		t.Fatalf("the link file %s is not in the data dir's %s", file, companion.LiveLinkDir)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the link file: %v %v, want mode 0600", fi, err)
	}
	data, _ := os.ReadFile(file)
	m := regexp.MustCompile(`url=([^"]+)"`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("the link file leads nowhere: %q", data)
	}
	link := html.UnescapeString(m[1])
	ticket, _ := url.Parse(link)
	if secret := ticket.Query().Get("ticket"); secret == "" || strings.Contains(arg, secret) {
		t.Fatalf("the link file leads to %q", link)
	}
	// The file leads to a working link.
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 {
		t.Fatalf("following the link file: status %d, %d cookies", resp.StatusCode, len(resp.Cookies()))
	}
}
