package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/reinshq/reins/companion/wire"
)

// cdp is the escape hatch: one raw DevTools protocol command on a tab, for
// the agents the person marked as developer agents (Options.Developer). It
// goes through hub.CDP like every other command, so sharing and the URL
// rules for navigating commands apply. What a developer agent may reach
// stays the tab: domains that act beyond it (other targets, the browser,
// other sites' storage, the machine) are refused, and so are the commands
// of allowed domains that reach past the tab's own site or onto the disk.

type cdpArgs struct {
	TabID  int            `json:"tabId" jsonschema:"tab id"`
	Method string         `json:"method" jsonschema:"e.g. DOM.getDocument"`
	Params map[string]any `json:"params,omitempty" jsonschema:"its parameters"`
}

func registerCDP(e *Engine) {
	define(e, Info{
		Name:        "cdp",
		Description: "Send a raw Chrome DevTools Protocol command to a tab when no other tool reaches; for developer agents the person marked.",
		Destructive: true, Mutating: true, Batchable: true, Extended: true,
	}, nil, runCDP)
}

// cdpDomains are the protocol domains whose commands act on the tab's own
// page and debugging session.
var cdpDomains = []string{
	"Accessibility", "Animation", "Audits", "CSS", "Console", "DOM", "DOMDebugger", "DOMSnapshot", "Debugger",
	"DeviceOrientation", "Emulation", "EventBreakpoints", "Fetch", "HeapProfiler", "IO", "Input", "Inspector",
	"LayerTree", "Log", "Media", "Network", "Overlay", "Page", "Performance", "PerformanceTimeline", "Profiler",
	"Runtime", "WebAudio",
}

// cdpRefusedDomains say why some well-known domains are out of reach; any
// other domain outside cdpDomains is refused with a general reason.
var cdpRefusedDomains = map[string]string{
	"Target":            "it reaches other tabs, frames and workers, and can open new targets outside the tab",
	"Browser":           "it acts on the whole browser, not the tab",
	"Storage":           "it reaches every site's storage and cookies; use the storage tool",
	"DOMStorage":        "it reaches other sites' storage; use the storage tool",
	"IndexedDB":         "it reaches other sites' databases by origin",
	"CacheStorage":      "it reaches other sites' caches by origin",
	"FileSystem":        "it reaches other sites' file systems by origin",
	"ServiceWorker":     "it reaches every site's service workers",
	"Tracing":           "a trace records the whole browser, other sites' tabs included; use devtools trace_start",
	"SystemInfo":        "it describes the person's machine and its processes",
	"Memory":            "it samples the whole browser",
	"Security":          "it changes certificate checks for the whole browser",
	"Extensions":        "it loads and reads extensions",
	"PWA":               "it installs and launches apps",
	"FedCm":             "it signs in with the person's identity providers",
	"WebAuthn":          "a virtual authenticator could enrol passkeys to the person's accounts",
	"Autofill":          "it fills forms with autofill data",
	"Tethering":         "it opens ports on the person's machine",
	"Cast":              "it reaches the person's cast devices",
	"BackgroundService": "it reads other sites' background events",
}

// cdpRefusedMethods are commands of allowed domains that reach past the tab.
var cdpRefusedMethods = map[string]string{
	"Network.getAllCookies":       "it returns every site's cookies; use Network.getCookies with the tab's URL, or the storage tool",
	"Network.clearBrowserCookies": "it deletes every site's cookies",
	"Network.clearBrowserCache":   "it clears every site's cache",
	"Network.setCookieControls":   "it changes cookie rules for the whole browser",
	"Network.loadNetworkResource": "it fetches any site with the person's cookies and no CORS check",
	"Page.setDownloadBehavior":    "it lets downloads land anywhere on the person's disk",
	"Page.crash":                  "it crashes a renderer other tabs may share",
	"DOM.setFileInputFiles":       "it reads any file on the person's disk into the page",
	"DOM.getFileInfo":             "it reveals where the person's chosen files live on their disk",
}

// cdpRefusal says why a developer agent may not send method with params to
// a tab on pageURL, or "" if it may.
func cdpRefusal(method string, params json.RawMessage, pageURL string) string {
	domain, name, ok := strings.Cut(method, ".")
	if !ok || domain == "" || name == "" {
		return fmt.Sprintf("%q is not a DevTools method (Domain.method)", method)
	}
	if why, ok := cdpRefusedMethods[method]; ok {
		return method + " is refused: " + why
	}
	if !slices.Contains(cdpDomains, domain) {
		why := cdpRefusedDomains[domain]
		if why == "" {
			why = "only the domains that act on the tab itself are open: " + strings.Join(cdpDomains, ", ")
		}
		return "the " + domain + " domain is refused: " + why
	}
	var p map[string]json.RawMessage
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return method + " params are not an object"
		}
	}
	str := func(k string) (string, bool) {
		var s string
		raw, ok := p[k]
		if !ok {
			return "", false
		}
		if json.Unmarshal(raw, &s) != nil {
			return "\x00", true // not a string: refused below as off-site
		}
		return s, true
	}
	switch method {
	case "Network.getCookies":
		var urls []string
		if err := json.Unmarshal(p["urls"], &urls); err != nil || len(urls) == 0 {
			return "Network.getCookies needs urls: without them it also returns the cookies of the page's third-party frames"
		}
		for _, u := range urls {
			if !sameCookieSite(u, pageURL) {
				return fmt.Sprintf("Network.getCookies for %s is refused: only the tab's own site %s", truncate(u, 200), siteOf(pageURL))
			}
		}
	case "Network.setCookie", "Network.deleteCookies":
		if why := cookieScope(method, p, pageURL); why != "" {
			return why
		}
	case "Network.setCookies":
		var cookies []map[string]json.RawMessage
		if err := json.Unmarshal(p["cookies"], &cookies); err != nil {
			return "Network.setCookies needs a list of cookies"
		}
		for _, ck := range cookies {
			if why := cookieScope(method, ck, pageURL); why != "" {
				return why
			}
		}
	case "Input.dispatchDragEvent":
		var d struct {
			Data struct {
				Files []string `json:"files"`
			} `json:"data"`
		}
		_ = json.Unmarshal(params, &d)
		if len(d.Data.Files) > 0 {
			return "Input.dispatchDragEvent with files is refused: it reads files from the person's disk"
		}
	case "Fetch.continueRequest":
		if u, ok := str("url"); ok {
			if why := wire.NavigationRefusal(u, wire.EngineChromium); why != "" {
				return "Fetch.continueRequest to " + truncate(u, 200) + " is refused: " + why
			}
		}
	}
	return ""
}

// cookieScope checks the url and domain of one cookie command: the cookie
// must be one the tab's own site could set or see.
func cookieScope(method string, p map[string]json.RawMessage, pageURL string) string {
	var u, domain string
	_ = json.Unmarshal(p["url"], &u)
	_ = json.Unmarshal(p["domain"], &domain)
	if u == "" && domain == "" {
		return method + " needs a url or domain of the tab's own site: without them it acts on every site's cookies of that name"
	}
	if u != "" && !sameCookieSite(u, pageURL) {
		return fmt.Sprintf("%s for %s is refused: only the tab's own site %s", method, truncate(u, 200), siteOf(pageURL))
	}
	if domain != "" && !domainMatches(hostOf(pageURL), domain) {
		return fmt.Sprintf("%s for domain %s is refused: only cookies the tab's own site %s can see", method, truncate(domain, 200), siteOf(pageURL))
	}
	return ""
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

func siteOf(raw string) string {
	if h := hostOf(raw); h != "" {
		return h
	}
	return "(none: the tab is not on a web page)"
}

// sameCookieSite reports whether a command's URL is on the host of the
// tab's page: cookies are kept by host, whatever the port or scheme.
func sameCookieSite(raw, pageURL string) bool {
	h := hostOf(raw)
	return h != "" && h == hostOf(pageURL)
}

// domainMatches reports whether a cookie for domain is one host sees: the
// host itself or a parent domain of it (RFC 6265 domain matching).
func domainMatches(host, domain string) bool {
	domain = strings.ToLower(strings.TrimPrefix(domain, "."))
	if host == "" || domain == "" {
		return false
	}
	return host == domain || strings.HasSuffix(host, "."+domain)
}

// maxCDPResult bounds a raw result as shown.
const maxCDPResult = 50_000

func runCDP(ctx context.Context, c *call, in *cdpArgs) (*Result, error) {
	if c.e.opts.Developer == nil || !c.e.opts.Developer(c.s.Principal) {
		return nil, wire.Errorf(wire.CodeNotAllowed, "raw DevTools commands are only for developer agents; the person can mark %s as one in Reins' Agents view", c.s.Label)
	}
	ts, t, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	if t.BrowserEngine == wire.EngineFirefox {
		return nil, wire.Errorf(wire.CodeUnsupported, "raw DevTools commands need Chromium: Firefox has no DevTools protocol for extensions")
	}
	var params json.RawMessage
	if in.Params != nil {
		if params, err = json.Marshal(in.Params); err != nil {
			return nil, wire.Errorf(wire.CodeBadParams, "params: %v", err)
		}
	}
	href, err := ts.helper(ctx, c.s.Label, "info", nil)
	if err != nil {
		return nil, err
	}
	if err := c.guard(in.TabID, href); err != nil {
		return nil, err
	}
	if why := cdpRefusal(in.Method, params, href); why != "" {
		return nil, wire.Errorf(wire.CodeNotAllowed, "%s", why)
	}
	var raw json.RawMessage
	if err := c.cdp(ctx, in.TabID, in.Method, params, &raw); err != nil {
		return nil, err
	}
	if in.Method == "Page.navigate" {
		// The agent chose where the tab goes.
		if u, ok := in.Params["url"].(string); ok {
			c.observe(in.TabID, u)
		}
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", " ") != nil {
		out.Reset()
		out.Write(raw)
	}
	text, omitted := clip(out.String(), maxCDPResult)
	if omitted > 0 {
		text += fmt.Sprintf("\n[cut: %d more bytes]", omitted)
	}
	return textResult(text), nil
}
