package live

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
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

// sessionPageRE is the shape of a session's page: a random path of 32
// bytes, then the tab.
var sessionPageRE = regexp.MustCompile(`^/live/s/[A-Za-z0-9_-]{43}/(\d+)$`)

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
	if _, err := e.live.OpenURL(e.tab + 1000); wire.CodeOf(err) != wire.CodeNoSuchTab {
		t.Fatalf("OpenURL of an unknown tab: got %v, want no_such_tab", err)
	}
	e.setTabs(t, []wire.TabInfo{{ID: nativeTab, URL: "https://example.com/page", Title: "Example page", Shared: false, WindowID: 1}})
	e.waitHub(t, "the tab to be unshared", func() bool {
		tb, _, err := e.hub.Tab(e.tab)
		return err == nil && !tb.Shared
	})
	if _, err := e.live.ViewURL(e.tab); wire.CodeOf(err) != wire.CodeNotShared {
		t.Fatalf("unshared tab: got %v, want not_shared", err)
	}
	if _, err := e.live.OpenURL(e.tab); wire.CodeOf(err) != wire.CodeNotShared {
		t.Fatalf("OpenURL of an unshared tab: got %v, want not_shared", err)
	}
}

func TestTicketWorksOnceAndLeadsToANewSession(t *testing.T) {
	e := newEnv(t)
	link, err := e.live.ViewURL(e.tab)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := noRedirect(jar)
	resp, body := get(t, c, link)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first use: status %d, want 200", resp.StatusCode)
	}
	m := refreshRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("first use: no refresh to the session's page in %q", body)
	}
	if sm := sessionPageRE.FindStringSubmatch(m[1]); sm == nil || sm[1] != strconv.Itoa(e.tab) {
		t.Fatalf("first use leads to %q, want the session's page of tab %d", m[1], e.tab)
	}
	if strings.Contains(body, "ticket") {
		t.Fatal("the page that moves on repeats the ticket")
	}
	if resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("first use headers: %v", resp.Header)
	}
	// The page itself now opens with the cookie.
	resp, body = get(t, c, e.base+m[1])
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<canvas id="screen"`) {
		t.Fatalf("page with cookie: status %d", resp.StatusCode)
	}
	// A second use of the same link, even from the same browser, is refused.
	resp, body = get(t, noRedirect(jar), link)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, expiredText) || !strings.Contains(body, "Reins tray") {
		t.Fatalf("second use: status %d body %q", resp.StatusCode, body)
	}
	// And a link without a ticket is the expired page.
	if resp, _ := get(t, noRedirect(nil), e.base+"/live/"+strconv.Itoa(e.tab)); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("link without a ticket: status %d", resp.StatusCode)
	}
}

func TestTicketExpires(t *testing.T) {
	e := newEnv(t)
	late, _ := e.live.ViewURL(e.tab)
	justInTime, _ := e.live.ViewURL(e.tab)
	e.clock.advance(TicketTTL - time.Second)
	if resp, body := get(t, noRedirect(nil), justInTime); resp.StatusCode != http.StatusOK || !refreshRE.MatchString(body) {
		t.Fatalf("ticket 59 s old: status %d, want 200 and the way on", resp.StatusCode)
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
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want refusal", name, resp.StatusCode)
		}
	}
	if resp, _ := get(t, noRedirect(nil), link); resp.StatusCode != http.StatusOK {
		t.Fatalf("the real ticket after the misses: status %d, want 200", resp.StatusCode)
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
		tk, err := a.issueTicket(i+1, "", nil)
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

// The stores keep at most maxTickets tickets and maxSessions sessions; the
// oldest goes first.
func TestTicketAndSessionCaps(t *testing.T) {
	a := newAuth(time.Now)
	first, _ := a.issueTicket(1, "", nil)
	for range maxTickets {
		if _, err := a.issueTicket(2, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.tickets) != maxTickets || a.redeem(1, first) {
		t.Fatalf("%d tickets kept, oldest still valid", len(a.tickets))
	}
	p, c, _ := a.newSession(1)
	for range maxSessions {
		if _, _, err := a.newSession(2); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := a.session(p, []string{c}); len(a.sessions) != maxSessions || ok {
		t.Fatalf("%d sessions kept, oldest still valid", len(a.sessions))
	}
}

// The attack: a session cookie that lives for hours and covers /live on
// every port of 127.0.0.1. The cookie must live an hour at most and cover
// only the session's own random path.
func TestCookieAttributes(t *testing.T) {
	e := newEnv(t)
	link, _ := e.live.ViewURL(e.tab)
	resp, body := get(t, noRedirect(nil), link)
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("got %d cookies, want one", len(cookies))
	}
	c := cookies[0]
	if c.Name != CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Domain != "" || c.Secure {
		t.Errorf("cookie %+v: want %s, HttpOnly, SameSite=Strict, host-only", c, CookieName)
	}
	if c.MaxAge <= 0 || c.MaxAge > 3600 || SessionTTL > time.Hour {
		t.Errorf("cookie Max-Age %d s (session %s), want at most an hour", c.MaxAge, SessionTTL)
	}
	if len(c.Value) < 43 {
		t.Errorf("cookie value too short: %d", len(c.Value))
	}
	m := refreshRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no way on in %q", body)
	}
	if !sessionPageRE.MatchString(c.Path+"/"+strconv.Itoa(e.tab)) || c.Path+"/"+strconv.Itoa(e.tab) != m[1] {
		t.Fatalf("cookie path %q, want the session's own path (page %s)", c.Path, m[1])
	}
	for _, raw := range resp.Header.Values("Set-Cookie") {
		if !strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "SameSite=Strict") || strings.Contains(raw, "Domain") {
			t.Errorf("Set-Cookie %q", raw)
		}
	}
}

func TestPageNeedsTheSessionsPathAndCookie(t *testing.T) {
	e := newEnv(t)
	vs := e.open(t, e.tab)
	u, _ := url.Parse(vs.page)
	sid := strings.Split(u.Path, "/")[3]
	tab := strconv.Itoa(e.tab)

	resp, body := get(t, noRedirect(nil), vs.page)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, expiredText) {
		t.Fatalf("no cookie: status %d", resp.StatusCode)
	}
	if resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatal("expired page without a CSP")
	}
	c := noRedirect(vs.jar)
	if resp, _ := get(t, c, vs.page); resp.StatusCode != http.StatusOK {
		t.Fatalf("with cookie: status %d", resp.StatusCode)
	}
	// The session covers the tab it was opened for, not others.
	if resp, _ := get(t, c, e.base+sessionPrefix+sid+"/"+strconv.Itoa(e.tab+1)); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("other tab under this session: status %d, want 403", resp.StatusCode)
	}
	// The cookie works on its own session's path only: sent to another
	// session's path, or with a guessed path, it opens nothing.
	other := e.open(t, e.tab)
	oh, _ := url.Parse(other.page)
	cookie := vs.jar.Cookies(u)[0].Value
	for name, p := range map[string]string{
		"another session's path": oh.Path,
		"a guessed path":         sessionPrefix + strings.Repeat("A", 43) + "/" + tab,
		"the path one byte off":  sessionPrefix + sid[:42] + "B/" + tab,
	} {
		req, _ := http.NewRequest(http.MethodGet, e.base+p, nil)
		req.AddCookie(&http.Cookie{Name: CookieName, Value: cookie})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with a valid cookie: status %d, want 403", name, resp.StatusCode)
		}
	}
	// A forged cookie on the right path is refused.
	jar2, _ := cookiejar.New(nil)
	jar2.SetCookies(u, []*http.Cookie{{Name: CookieName, Value: strings.Repeat("A", 43), Path: sessionPrefix + sid}})
	if resp, _ := get(t, noRedirect(jar2), vs.page); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged cookie: status %d", resp.StatusCode)
	}
	// Sessions last an hour.
	e.clock.advance(SessionTTL - time.Minute)
	if resp, _ := get(t, c, vs.page); resp.StatusCode != http.StatusOK {
		t.Fatalf("session 59 min old: status %d", resp.StatusCode)
	}
	e.clock.advance(2 * time.Minute)
	if resp, _ := get(t, c, vs.page); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("expired session: status %d", resp.StatusCode)
	}
}

// thief is a server another local user runs on another port of 127.0.0.1.
// It records every live cookie a browser sends it.
type thief struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string
}

func startThief(t *testing.T) *thief {
	th := &thief{}
	th.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		th.mu.Lock()
		th.got = append(th.got, cookieValues(r)...)
		th.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(th.srv.Close)
	return th
}

func (th *thief) cookies() []string {
	th.mu.Lock()
	defer th.mu.Unlock()
	return append([]string(nil), th.got...)
}

// The attack: cookies ignore ports, so a server on another port of
// 127.0.0.1 that the person's browser visits (a dev server, or a page that
// sends the browser there) receives every cookie the browser keeps for
// 127.0.0.1 whose path matches. With the live cookie in hand, it connects
// to the socket itself, forging the companion's Origin (only browsers are
// honest about Origin), and takes the tab over.
func TestLiveCookieDoesNotLeakToOtherPortsAndForgedOriginGetsNothing(t *testing.T) {
	e := newEnv(t)
	vs := e.open(t, e.tab)
	th := startThief(t)
	// The person's browser (its jar, which like a browser ignores ports)
	// visits the thief's pages at every path the thief can name without
	// knowing the session's secret path.
	tab := strconv.Itoa(e.tab)
	for _, p := range []string{"/", "/live", "/live/" + tab, "/live-ws", "/live/s/", "/live/s/x/" + tab, "/live/s/x/ws"} {
		get(t, noRedirect(vs.jar), th.srv.URL+p)
	}
	stolen := th.cookies()
	if len(stolen) > 0 {
		t.Errorf("a server on another port received %d live cookies", len(stolen))
	}
	// Whatever it got, the thief now tries the socket with the companion's
	// own Origin, at every socket address it can name.
	jar, _ := cookiejar.New(nil)
	bu, _ := url.Parse(e.base)
	for _, v := range stolen {
		jar.SetCookies(bu, []*http.Cookie{{Name: CookieName, Value: v, Path: "/"}})
	}
	ws := strings.Replace(e.base, "http://", "ws://", 1)
	for _, u := range []string{ws + "/live-ws?tab=" + tab, ws + sessionPrefix + strings.Repeat("A", 43) + "/ws"} {
		conn, resp, err := e.dialURL(t, u, jar, dialOpts{origin: e.base})
		if err == nil {
			v := startClient(t, conn)
			v.send(t, map[string]any{"kind": KindTakeover, "on": true})
			if m, _ := v.waitKind(t, 0, KindTakeover); m["byYou"] == true || e.live.TakenOver(e.tab) != "" {
				t.Fatalf("the thief took the tab over at %s", u)
			}
			t.Fatalf("the thief's socket at %s was accepted", u)
		}
		if resp == nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound) {
			t.Errorf("the thief's socket at %s: %v, want 403 or 404", u, err)
		}
	}
}

// The attack (session fixation): someone who knows a live session's cookie
// plants it in the person's browser (any local origin can set cookies for
// 127.0.0.1, ports aside). When the person next opens a Live view link,
// the old session must not gain the new tab: redeeming always mints a
// fresh session with a fresh cookie.
func TestRedeemingAlwaysMintsAFreshSession(t *testing.T) {
	e := newEnv(t)
	known := e.open(t, e.tab)
	ku, _ := url.Parse(known.page)
	planted := known.jar.Cookies(ku)[0].Value

	// The person's browser holds the planted cookie on every path the
	// attacker could choose.
	jar, _ := cookiejar.New(nil)
	bu, _ := url.Parse(e.base)
	jar.SetCookies(bu, []*http.Cookie{{Name: CookieName, Value: planted, Path: "/"}})
	link, err := e.live.ViewURL(e.tab)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, noRedirect(jar), link)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("redeeming: status %d", resp.StatusCode)
	}
	var minted []string
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			minted = append(minted, c.Value)
		}
	}
	if len(minted) != 1 || minted[0] == planted {
		t.Fatalf("redeeming with a planted cookie set %d cookies; reused the planted one: %v", len(minted), len(minted) > 0 && minted[0] == planted)
	}
	// The planted cookie alone opens nothing of the new session.
	m := refreshRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no way on in %q", body)
	}
	only, _ := cookiejar.New(nil)
	only.SetCookies(bu, []*http.Cookie{{Name: CookieName, Value: planted, Path: "/"}})
	fresh := viewSession{jar: only, page: e.base + m[1]}
	if resp, _ := get(t, noRedirect(only), fresh.page); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the new session's page with the planted cookie: status %d, want 403", resp.StatusCode)
	}
	conn, resp, err := e.dial(t, fresh, dialOpts{})
	if err == nil {
		conn.CloseNow()
		t.Fatal("the new session's socket accepted the planted cookie")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the new session's socket with the planted cookie: %v, want 403", err)
	}
}

func TestPageCSPAllowsExactlyItsInlineCode(t *testing.T) {
	e := newEnv(t)
	vs := e.open(t, e.tab)
	resp, body := get(t, noRedirect(vs.jar), vs.page)
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
	vs := e.open(t, e.tab)
	other := e.open(t, e.tab)
	ws := strings.Replace(e.base, "http://", "ws://", 1)
	cases := []struct {
		name string
		url  string
		o    dialOpts
	}{
		{"missing Origin", vs.socketURL(), dialOpts{origin: "-"}},
		{"web Origin", vs.socketURL(), dialOpts{origin: "https://evil.example"}},
		{"another local port", vs.socketURL(), dialOpts{origin: "http://127.0.0.1:1"}},
		{"localhost name for 127.0.0.1", vs.socketURL(), dialOpts{origin: strings.Replace(e.base, "127.0.0.1", "localhost", 1)}},
		{"missing cookie", vs.socketURL(), dialOpts{noCookie: true}},
		{"cookie on another session's path", other.socketURL(), dialOpts{}},
		{"cookie on a guessed path", ws + sessionPrefix + strings.Repeat("A", 43) + "/ws", dialOpts{}},
	}
	// Every case sends the first session's cookie (when it sends one),
	// whatever the path.
	jar, _ := cookiejar.New(nil)
	bu, _ := url.Parse(e.base)
	pu, _ := url.Parse(vs.page)
	jar.SetCookies(bu, []*http.Cookie{{Name: CookieName, Value: vs.jar.Cookies(pu)[0].Value, Path: "/"}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, resp, err := e.dialURL(t, tc.url, jar, tc.o)
			if err == nil {
				conn.CloseNow()
				t.Fatal("upgrade accepted")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("got %v, want 403", err)
			}
		})
	}
	// And the real session connects with the right Origin.
	conn, _, err := e.dial(t, vs, dialOpts{})
	if err != nil {
		t.Fatalf("valid viewer refused: %v", err)
	}
	conn.CloseNow()
}

// The attack: the tray used to start the browser with the ticket's link as
// an argument, where every user of the machine can read it
// (/proc/PID/cmdline) and redeem it first. OpenURL's URL carries no secret:
// it names a file only the person can read, which leads to the link, and
// which is gone once the link is used.
func TestOpenURLCarriesNoSecret(t *testing.T) {
	e := newEnv(t)
	raw, err := e.live.OpenURL(e.tab)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || u.RawQuery != "" || u.Fragment != "" {
		t.Fatalf("OpenURL = %q, want a plain file:// URL", raw)
	}
	file := filepath.FromSlash(u.Path)
	if filepath.Dir(file) != e.live.opts.LinkDir {
		t.Fatalf("link file %s is not in %s", file, e.live.opts.LinkDir)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("link file mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(file)
	m := refreshRE.FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("link file has no way on: %q", data)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	lu, _ := url.Parse(link)
	ticket := lu.Query().Get("ticket")
	if len(ticket) != 43 || strings.Contains(raw, ticket) {
		t.Fatalf("link file leads to %q; the URL to open %q must not hold its ticket", link, raw)
	}
	// The file leads to a working view, and is gone once used.
	jar, _ := cookiejar.New(nil)
	resp, _, page := follow(t, jar, link)
	if resp.StatusCode != http.StatusOK || !sessionPageRE.MatchString(strings.TrimPrefix(page, e.base)) {
		t.Fatalf("following the link file: status %d at %s", resp.StatusCode, page)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the link file outlived its ticket: %v", err)
	}
}

func TestLinkFilesGoWhenTheirTicketsExpireOrTheServerCloses(t *testing.T) {
	e := newEnv(t)
	dir := e.live.opts.LinkDir
	files := func() []string {
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		return names
	}
	if _, err := e.live.OpenURL(e.tab); err != nil {
		t.Fatal(err)
	}
	if n := len(files()); n != 1 {
		t.Fatalf("%d link files, want 1", n)
	}
	e.clock.advance(TicketTTL + time.Second)
	e.live.sweep()
	if got := files(); len(got) != 0 {
		t.Fatalf("link files of expired tickets left: %v", got)
	}
	if _, err := e.live.OpenURL(e.tab); err != nil {
		t.Fatal(err)
	}
	e.live.Close()
	if got := files(); len(got) != 0 {
		t.Fatalf("link files left after Close: %v", got)
	}
	// Files a companion that did not stop cleanly left behind go when the
	// next one starts; nothing else in the directory is touched.
	stale := filepath.Join(dir, linkPrefix+"0011223344556677"+linkSuffix)
	keep := filepath.Join(dir, "notes.txt")
	for _, f := range []string{stale, keep} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Hub: e.hub, BaseURL: e.base, LinkDir: dir, Logger: e.live.log})
	defer s.Close()
	if got := files(); len(got) != 1 || got[0] != keep {
		t.Fatalf("after a restart the directory holds %v, want only %s", got, keep)
	}
}
