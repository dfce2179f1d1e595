//go:build !nogui

package app

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinshq/reins/app/browsers"
)

// The demo page is served on its own loopback port, never the
// companion's, and only to requests naming that host.
func TestDemoServer(t *testing.T) {
	d := &demoServer{log: slog.New(slog.DiscardHandler)}
	defer d.close()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	u, err := d.url()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := d.url()
	if again != u || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("urls %s, %s", u, again)
	}
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Shopping list") || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("page: %d %s", resp.StatusCode, body)
	}
	// A rebinding attack names another host.
	req, _ := http.NewRequest("GET", u, nil)
	req.Host = "attacker.example"
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host answered %d", resp.StatusCode)
	}
	p, _ := url.Parse(u)
	p.Path = "/other"
	resp, err = hc.Get(p.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("another path answered %d", resp.StatusCode)
	}
}

func TestStoreURL(t *testing.T) {
	chrome, _ := browsers.Find("chrome")
	edge, _ := browsers.Find("edge")
	ff, _ := browsers.Find("firefox")
	if storeURL(chrome) != "" || storeURL(ff) != "" {
		t.Error("a listing without one configured")
	}
	defer func(c, e, f string) { ChromeStoreID, EdgeStoreID, FirefoxAddonSlug = c, e, f }(ChromeStoreID, EdgeStoreID, FirefoxAddonSlug)
	ChromeStoreID, EdgeStoreID, FirefoxAddonSlug = "abc", "def", "reins"
	for _, tc := range []struct {
		b    browsers.Browser
		want string
	}{
		{chrome, "https://chromewebstore.google.com/detail/abc"},
		{edge, "https://microsoftedge.microsoft.com/addons/detail/def"},
		{ff, "https://addons.mozilla.org/firefox/addon/reins/"},
	} {
		if got := storeURL(tc.b); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.b.ID, got, tc.want)
		}
	}
}

// A browser is offered the packed extension when the package's file for
// an id the companion accepts is in its external-extensions dir.
func TestOffered(t *testing.T) {
	dir := t.TempDir()
	s := &setup{ids: []string{"cahakjcjmollcmebjjnhhlhcdhipahla", "nljkokplaafmcokolakdfdjgkfhffdei"}}
	b := browsers.Browser{ID: "chromium", ExternalDir: dir}
	if s.offered(b) {
		t.Fatal("offered with an empty dir")
	}
	os.WriteFile(filepath.Join(dir, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.json"), []byte("{}"), 0o644)
	if s.offered(b) {
		t.Fatal("offered by another extension's file")
	}
	os.WriteFile(filepath.Join(dir, "nljkokplaafmcokolakdfdjgkfhffdei.json"), []byte("{}"), 0o644)
	if !s.offered(b) {
		t.Error("not offered with the file in place")
	}
}
