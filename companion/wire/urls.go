package wire

import (
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
