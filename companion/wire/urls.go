package wire

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// The URL rules are duplicated in extension/lib/urlrules.js. Both sides test
// against testdata/url_rules.json so they cannot drift apart.

var chromiumNewTabs = []string{
	"chrome://newtab",
	"chrome://new-tab-page",
	"chrome://new-tab-page-third-party",
	"chrome-search://local-ntp",
	"edge://newtab",
	"brave://newtab",
	"vivaldi://newtab",
	"opera://startpage",
}

var firefoxNewTabs = []string{"about:newtab", "about:home", "about:privatebrowsing"}

// Schemes that belong to the browser itself on Chromium-family browsers.
var chromiumInternalSchemes = map[string]bool{
	"chrome": true, "chrome-untrusted": true, "chrome-search": true, "devtools": true,
	"edge": true, "brave": true, "vivaldi": true, "opera": true, "view-source": true,
	"chrome-error": true, "about": true,
}

var extensionSchemes = map[string]bool{
	"chrome-extension": true, "moz-extension": true, "extension": true,
}

// Hosts where the browsers themselves forbid extensions from scripting.
var webStores = []string{
	"chromewebstore.google.com",
	"chrome.google.com/webstore",
	"microsoftedge.microsoft.com/addons",
}

// Firefox's protected Mozilla domains (extensions.webextensions.restrictedDomains).
var mozillaProtected = map[string]bool{
	"accounts-static.cdn.mozilla.net": true,
	"accounts.firefox.com":            true,
	"addons.cdn.mozilla.net":          true,
	"addons.mozilla.org":              true,
	"api.accounts.firefox.com":        true,
	"content.cdn.mozilla.net":         true,
	"discovery.addons.mozilla.org":    true,
	"install.mozilla.org":             true,
	"oauth.accounts.firefox.com":      true,
	"profile.accounts.firefox.com":    true,
	"support.mozilla.org":             true,
	"sync.services.mozilla.com":       true,
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// IsNewTab reports whether u is a New Tab page that may be shared and
// navigated but not inspected.
func IsNewTab(u string) bool {
	u = strings.TrimSpace(u)
	for _, p := range append(chromiumNewTabs, firefoxNewTabs...) {
		if hasPrefixFold(u, p) {
			rest := u[len(p):]
			if rest == "" || rest[0] == '/' || rest[0] == '?' || rest[0] == '#' {
				return true
			}
		}
	}
	return false
}

// UnsupportedReason says why a tab at u cannot be automated on engine, or ""
// when it can. New Tab pages and about:blank are supported: they can be
// navigated away from.
func UnsupportedReason(u string, engine Engine) string {
	u = strings.TrimSpace(u)
	if u == "" || strings.EqualFold(u, "about:blank") || IsNewTab(u) {
		return ""
	}
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme == "" {
		return "unrecognized URL"
	}
	scheme := strings.ToLower(parsed.Scheme)
	if extensionSchemes[scheme] {
		return "extension pages cannot be automated"
	}
	if engine == EngineFirefox {
		if scheme != "http" && scheme != "https" {
			return "Firefox only automates http and https pages"
		}
		if mozillaProtected[strings.ToLower(parsed.Hostname())] {
			return "Firefox protects this Mozilla site from extensions"
		}
		return ""
	}
	if chromiumInternalSchemes[scheme] {
		return "browser-internal pages cannot be automated"
	}
	hostPath := strings.ToLower(parsed.Host + parsed.EscapedPath())
	for _, store := range webStores {
		if hostPath == store || strings.HasPrefix(hostPath, store+"/") {
			return "the browser forbids automating its extension store"
		}
	}
	return ""
}

// NavigationRefusal says why an agent may not open u on engine, or "" when
// it may. Where agents may go is an allowlist: http, https and about:blank.
// Every other scheme is refused: file: reads local files (the data dir's
// secrets among them) and file://host/share sends Windows credentials to
// that host; vscode:, ms-settings: and their kind hand the URL to local
// applications; javascript:, data: and blob: run or show content no site
// vouches for. Within http(s) the UnsupportedReason rules still apply (web
// stores, Firefox's protected Mozilla sites).
//
// UnsupportedReason stays the rule for tabs the person shared: reading a
// page already open is not going somewhere.
func NavigationRefusal(u string, engine Engine) string {
	u = strings.TrimSpace(u)
	if strings.EqualFold(u, "about:blank") {
		return ""
	}
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme == "" {
		return "unrecognized URL"
	}
	switch strings.ToLower(parsed.Scheme) {
	case "http", "https":
	default:
		return "agents may open only http, https and about:blank"
	}
	if parsed.Host == "" {
		return "the URL names no host"
	}
	return UnsupportedReason(u, engine)
}

// cdpURLParams names the DevTools commands that load a URL the caller
// chose, and the param that carries it. The extension mirrors this table;
// testdata/url_rules.json holds it for both sides' tests.
var cdpURLParams = map[string]string{
	"Page.navigate":               "url",
	"Target.createTarget":         "url",
	"Network.loadNetworkResource": "url",
}

// CDPNavigationRefusal applies NavigationRefusal to a raw DevTools command:
// it says why method with params would load a URL no agent may open, or ""
// when the command names no URL or an allowed one. Params that do not
// decode, or that name the URL twice (parsers disagree on which one wins),
// are refused, so a malformed command cannot slip a URL past the check.
func CDPNavigationRefusal(method string, params json.RawMessage, engine Engine) string {
	field, ok := cdpURLParams[method]
	if !ok {
		return ""
	}
	var p map[string]json.RawMessage
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return method + " params are not an object"
		}
		if countKey(params, field) > 1 {
			return method + " names its " + field + " twice"
		}
	}
	raw, ok := p[field]
	if !ok {
		return "" // nothing to load: the browser refuses the command itself
	}
	var u string
	if err := json.Unmarshal(raw, &u); err != nil {
		return method + " " + field + " is not a string"
	}
	return NavigationRefusal(u, engine)
}

// countKey counts the top-level keys of a JSON object equal to key, which a
// map decode cannot see (it keeps the last).
func countKey(obj json.RawMessage, key string) int {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return n
		}
		if k, ok := t.(string); ok && k == key {
			n++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n
		}
	}
	return n
}
