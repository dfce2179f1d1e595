package live

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

func noRedirect(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func TestViewURLShape(t *testing.T) {
	e := newEnv(t)
	link, err := e.live.ViewURL(e.tab)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^http://127\.0\.0\.1:\d+/live/` + strconv.Itoa(e.tab) + `\?ticket=[A-Za-z0-9_-]{43}$`)
	if !re.MatchString(link) {
		t.Fatalf("link %q does not have the expected shape", link)
	}
	other, _ := e.live.ViewURL(e.tab)
	if other == link {
		t.Fatal("two links carry the same ticket")
	}
}

func TestViewURLRefusesUnknownAndUnsharedTabs(t *testing.T) {
	e := newEnv(t)
	if _, err := e.live.ViewURL(e.tab + 1000); wire.CodeOf(err) != wire.CodeNoSuchTab {
		t.Fatalf("unknown tab: got %v, want no_such_tab", err)
	}
	e.setTabs(t, []wire.TabInfo{{ID: nativeTab, URL: "https://example.com/page", Title: "Example page", Shared: false, WindowID: 1}})
	e.waitHub(t, "the tab to be unshared", func() bool {
		tb, _, err := e.hub.Tab(e.tab)
		return err == nil && !tb.Shared
	})
	if _, err := e.live.ViewURL(e.tab); wire.CodeOf(err) != wire.CodeNotShared {
		t.Fatalf("unshared tab: got %v, want not_shared", err)
	}
}

func TestTicketWorksOnceAndRedirectsWithoutIt(t *testing.T) {
	e := newEnv(t)
	link, err := e.live.ViewURL(e.tab)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := noRedirect(jar)
	resp, _ := get(t, c, link)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use: status %d, want 303", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/live/"+strconv.Itoa(e.tab) {
		t.Fatalf("redirect to %q, want the page without the ticket", loc)
	}
	if resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("redirect headers: %v", resp.Header)
	}
	// The page itself now opens with the cookie.
	resp, body := get(t, c, e.base+"/live/"+strconv.Itoa(e.tab))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<canvas id="screen"`) {
		t.Fatalf("page with cookie: status %d", resp.StatusCode)
	}
	// A second use of the same link, even from the same browser, is refused.
	resp, body = get(t, noRedirect(nil), link)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, expiredText) || !strings.Contains(body, "Reins tray") {
		t.Fatalf("second use: status %d body %q", resp.StatusCode, body)
	}
}

func TestTicketExpires(t *testing.T) {
	e := newEnv(t)
	late, _ := e.live.ViewURL(e.tab)
	justInTime, _ := e.live.ViewURL(e.tab)
	e.clock.advance(TicketTTL - time.Second)
	if resp, _ := get(t, noRedirect(nil), justInTime); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("ticket 59 s old: status %d, want 303", resp.StatusCode)
	}
	e.clock.advance(2 * time.Second)
	resp, body := get(t, noRedirect(nil), late)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, expiredText) {
		t.Fatalf("ticket 61 s old: status %d", resp.StatusCode)
	}
}

func TestTicketNearMissesAreRefusedAndDoNotConsume(t *testing.T) {
	e := newEnv(t)
	link, _ := e.live.ViewURL(e.tab)
	u, _ := url.Parse(link)
	ticket := u.Query().Get("ticket")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	page := e.base + "/live/" + strconv.Itoa(e.tab) + "?ticket="
	misses := map[string]string{
		"first byte":   page + flip(ticket, 0),
		"last byte":    page + flip(ticket, len(ticket)-1),
		"prefix":       page + ticket[:len(ticket)-1],
		"longer":       page + ticket + "A",
		"other tab":    e.base + "/live/" + strconv.Itoa(e.tab+1) + "?ticket=" + ticket,
		"empty":        page,
		"not a tab":    e.base + "/live/x?ticket=" + ticket,
		"leading zero": e.base + "/live/0" + strconv.Itoa(e.tab) + "?ticket=" + ticket,
	}
	for name, u := range misses {
		resp, _ := get(t, noRedirect(nil), u)
		if resp.StatusCode == http.StatusSeeOther || resp.StatusCode == http.StatusOK {
			t.Errorf("%s: status %d, want refusal", name, resp.StatusCode)
		}
	}
	if resp, _ := get(t, noRedirect(nil), link); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the real ticket after the misses: status %d, want 303", resp.StatusCode)
	}
}

func TestTicketComparisonIsConstantTime(t *testing.T) {
	// The store never looks a secret up by key: it compares the guess with
	// every stored secret through subtle.ConstantTimeCompare and has no
	// early exit. Check the one property that can be checked without a
	// timing oracle: a match anywhere in the store is found, whatever its
	// position, and a miss walks the same store.
	a := newAuth(time.Now)
	var tickets []string
	for i := 0; i < 50; i++ {
		tk, err := a.issueTicket(i + 1)
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	for i := len(tickets) - 1; i >= 0; i -= 7 {
		if !a.redeem(i+1, tickets[i]) {
			t.Fatalf("ticket %d not found", i)
		}
	}
	if a.redeem(1, strings.Repeat("A", 43)) {
		t.Fatal("a guess was accepted")
	}
}

func TestCookieAttributes(t *testing.T) {
	e := newEnv(t)
	link, _ := e.live.ViewURL(e.tab)
	resp, _ := get(t, noRedirect(nil), link)
	cookies := resp.Cookies()
	if len(cookies) != 2 {
		t.Fatalf("got %d cookies, want the page's and the socket's", len(cookies))
	}
	paths := map[string]bool{}
	for _, c := range cookies {
		paths[c.Path] = true
		if c.Name != CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Domain != "" || c.Secure {
			t.Errorf("cookie %+v: want %s, HttpOnly, SameSite=Strict, host-only", c, CookieName)
		}
		if c.MaxAge <= 0 || c.MaxAge > int(SessionTTL/time.Second) {
			t.Errorf("cookie Max-Age %d", c.MaxAge)
		}
		if len(c.Value) < 43 {
			t.Errorf("cookie value too short: %d", len(c.Value))
		}
	}
	if !paths["/live"] || !paths["/live-ws"] {
		t.Fatalf("cookie paths %v, want /live and /live-ws", paths)
	}
	for _, raw := range resp.Header.Values("Set-Cookie") {
		if !strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "SameSite=Strict") || strings.Contains(raw, "Domain") {
			t.Errorf("Set-Cookie %q", raw)
		}
	}
}

func TestPageNeedsASessionForThatTab(t *testing.T) {
	e := newEnv(t)
	page := e.base + "/live/" + strconv.Itoa(e.tab)
	resp, body := get(t, noRedirect(nil), page)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, expiredText) {
		t.Fatalf("no cookie: status %d", resp.StatusCode)
	}
	if resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatal("expired page without a CSP")
	}
	jar := e.open(t, e.tab)
	c := noRedirect(jar)
	if resp, _ := get(t, c, page); resp.StatusCode != http.StatusOK {
		t.Fatalf("with cookie: status %d", resp.StatusCode)
	}
	// The session covers the tab it was opened for, not others.
	if resp, _ := get(t, c, e.base+"/live/"+strconv.Itoa(e.tab+1)); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("other tab with this cookie: status %d, want 403", resp.StatusCode)
	}
	// A forged cookie is refused.
	jar2, _ := cookiejar.New(nil)
	pu, _ := url.Parse(page)
	jar2.SetCookies(pu, []*http.Cookie{{Name: CookieName, Value: strings.Repeat("A", 43), Path: "/live"}})
	if resp, _ := get(t, noRedirect(jar2), page); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged cookie: status %d", resp.StatusCode)
	}
	// Sessions expire.
	e.clock.advance(SessionTTL + time.Second)
	if resp, _ := get(t, c, page); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("expired session: status %d", resp.StatusCode)
	}
}

func TestPageCSPAllowsExactlyItsInlineCode(t *testing.T) {
	e := newEnv(t)
	jar := e.open(t, e.tab)
	resp, body := get(t, noRedirect(jar), e.base+"/live/"+strconv.Itoa(e.tab))
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "connect-src 'self' ws://127.0.0.1:"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	script := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindStringSubmatch(body)
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(body)
	if script == nil || style == nil {
		t.Fatal("page has no inline script or style")
	}
	if !strings.Contains(csp, "script-src "+hash(script[1])+";") || !strings.Contains(csp, "style-src "+hash(style[1])+";") {
		t.Fatalf("CSP %q does not pin the page's script and style", csp)
	}
	if regexp.MustCompile(`(?i)(src|href)=["']?(https?:)?//`).MatchString(body) {
		t.Fatal("page loads an external resource")
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatal("page may be framed")
	}
}

func TestSocketRefusals(t *testing.T) {
	e := newEnv(t)
	jar := e.open(t, e.tab)
	cases := []struct {
		name string
		tab  int
		o    dialOpts
	}{
		{"missing Origin", e.tab, dialOpts{origin: "-"}},
		{"web Origin", e.tab, dialOpts{origin: "https://evil.example"}},
		{"another local port", e.tab, dialOpts{origin: "http://127.0.0.1:1"}},
		{"localhost name for 127.0.0.1", e.tab, dialOpts{origin: strings.Replace(e.base, "127.0.0.1", "localhost", 1)}},
		{"missing cookie", e.tab, dialOpts{noCookie: true}},
		{"cookie for another tab", e.tab + 1, dialOpts{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, resp, err := e.dial(t, jar, tc.tab, tc.o)
			if err == nil {
				conn.CloseNow()
				t.Fatal("upgrade accepted")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("got %v, want 403", err)
			}
		})
	}
	// And the same jar connects with the right Origin.
	conn, _, err := e.dial(t, jar, e.tab, dialOpts{})
	if err != nil {
		t.Fatalf("valid viewer refused: %v", err)
	}
	conn.CloseNow()
}
