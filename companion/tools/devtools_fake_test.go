package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/hub/hubtest"
	"github.com/reinshq/reins/companion/tools"
	"github.com/reinshq/reins/companion/wire"
)

// devPage is a fake extension whose page answers the commands of the page
// state and DevTools tools (storage, devtools, emulate, extensions, cdp) and
// records every command it receives, so these tests pin what reaches the
// browser and what never does.
type devPage struct {
	t    *testing.T
	hub  *hub.Hub
	ext  *hubtest.Ext
	e    *tools.Engine
	tab  int      // public id of the shared tab
	page *fakeEnv // answers as a page does, on page.href
	mu   sync.Mutex
	sent []sentCDP
	ext1 []string // extensions.* requests received

	developer  func(string) bool
	manageExt  atomic.Bool
	extCount   atomic.Int32 // extensions the browser lists (default 1)
	helperless atomic.Int64 // an isolated world whose helper is missing
	activities []tools.Activity
}

type sentCDP struct {
	method string
	params json.RawMessage
}

func newDevPage(t *testing.T, engine wire.Engine, developer func(string) bool) *devPage {
	t.Helper()
	changed := make(chan struct{}, 1)
	h := hub.New(hub.Options{Logger: quietLogger(), OnChange: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	srv := httptest.NewServer(h)
	p := &devPage{t: t, hub: h, page: &fakeEnv{href: "http://127.0.0.1:8080/app/page"}, developer: developer}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ext, err := hubtest.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/", wire.Hello{Version: 3, ExtensionVersion: "test", Browser: "Test", BrowserEngine: engine, InstanceID: "i1", BrowserSessionID: "s1"}, hubtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.ext = ext
	tabs := []wire.TabInfo{
		{ID: 1, URL: p.href(), Title: "App", Shared: true, Agent: true, Owner: "agent:alice", WindowID: 1},
		{ID: 2, URL: "https://bank.test/", Title: "Bank", Shared: true, Agent: true, Owner: "agent:bob", WindowID: 1},
	}
	ext.Handle(wire.MethodTabsList, func(json.RawMessage) (any, error) { return tabs, nil })
	ext.Handle(wire.MethodCDP, p.cdp)
	for _, m := range []string{wire.MethodExtensionsList, wire.MethodExtensionsSetEnabled} {
		ext.Handle(m, func(params json.RawMessage) (any, error) {
			p.mu.Lock()
			p.ext1 = append(p.ext1, m+" "+string(params))
			p.mu.Unlock()
			x := map[string]any{"id": "abc", "name": "Ad Blocker", "version": "1.2", "enabled": m == wire.MethodExtensionsList, "type": "extension", "installType": "normal"}
			if m == wire.MethodExtensionsList {
				list := []any{x}
				for i := 1; i < int(p.extCount.Load()); i++ {
					list = append(list, map[string]any{"id": fmt.Sprint("ext", i), "name": "Other", "version": "1", "enabled": true})
				}
				return list, nil
			}
			return x, nil
		})
	}
	if err := ext.SendTabs(tabs); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for len(h.Tabs()) < len(tabs) {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the hub never saw the fake extension's tabs")
		}
	}
	for _, tb := range h.Tabs() {
		if tb.Native == 1 {
			p.tab = tb.ID
		}
	}
	var mu sync.Mutex
	p.e = tools.NewEngine(tools.Options{
		Hub: h, Logger: quietLogger(), Developer: developer,
		ManageExtensions: p.manageExt.Load,
		OnActivity: func(a tools.Activity) {
			mu.Lock()
			p.activities = append(p.activities, a)
			mu.Unlock()
		},
	})
	t.Cleanup(func() {
		p.e.Close()
		ext.Kill()
		h.Close()
		srv.Close()
	})
	return p
}

// cdp records every command with its params and answers those of the new
// tools; the page's other answers are fakeEnv's.
func (p *devPage) cdp(params json.RawMessage) (any, error) {
	var c wire.CDPParams
	if err := json.Unmarshal(params, &c); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.sent = append(p.sent, sentCDP{c.Method, c.Params})
	p.mu.Unlock()
	switch c.Method {
	case "Runtime.callFunctionOn":
		var cp struct {
			FunctionDeclaration string `json:"functionDeclaration"`
		}
		json.Unmarshal(c.Params, &cp)
		if strings.Contains(cp.FunctionDeclaration, "__reinsPerf") {
			return map[string]any{"result": map[string]any{"type": "string", "value": `{"url":"` + p.href() + `"}`}}, nil
		}
		h := helperOf(c.Params)
		if h.context != 0 && int64(h.context) == p.helperless.Load() {
			return map[string]any{"result": map[string]any{"type": "object"}, "exceptionDetails": map[string]any{
				"text": "Uncaught", "exception": map[string]any{"type": "object", "description": "TypeError: Cannot read properties of undefined (reading 'call')"},
			}}, nil
		}
		if h.fn == "storage" {
			return map[string]any{"result": map[string]any{"type": "object", "value": map[string]any{
				"ok":   map[string]any{"origin": "http://127.0.0.1:8080", "items": [][]any{{"theme", "dark", 4}}, "total": 1},
				"href": p.href(), "title": "App",
			}}}, nil
		}
	case "Network.getCookies":
		return map[string]any{"cookies": []map[string]any{{"name": "sid", "value": "s3cret", "domain": "127.0.0.1", "path": "/", "expires": -1, "session": true, "httpOnly": true}}}, nil
	case "Network.setCookie":
		return map[string]any{"success": true}, nil
	case "Page.addScriptToEvaluateOnNewDocument":
		return map[string]any{"identifier": "script-1"}, nil
	case "DOM.getOuterHTML":
		return map[string]any{"outerHTML": strings.Repeat("x", 60_000)}, nil
	}
	return p.page.cdp(params)
}

func (p *devPage) href() string {
	p.page.mu.Lock()
	defer p.page.mu.Unlock()
	return p.page.href
}

// navigate makes the fake page report another URL, as after a navigation.
func (p *devPage) navigate(href string) {
	p.page.mu.Lock()
	p.page.href = href
	p.page.mu.Unlock()
}

// commands lists the methods sent to the page, in order.
func (p *devPage) commands() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, s := range p.sent {
		out = append(out, s.method)
	}
	return out
}

func (p *devPage) paramsOf(method string) []json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []json.RawMessage
	for _, s := range p.sent {
		if s.method == method {
			out = append(out, s.params)
		}
	}
	return out
}

func (p *devPage) forget() {
	p.mu.Lock()
	p.sent = nil
	p.mu.Unlock()
}

func (p *devPage) call(s *tools.Session, tool string, args map[string]any) *tools.Result {
	p.t.Helper()
	raw, _ := json.Marshal(args)
	return p.e.Call(context.Background(), s, tool, raw)
}

func (p *devPage) ok(s *tools.Session, tool string, args map[string]any) string {
	p.t.Helper()
	res := p.call(s, tool, args)
	if res.IsError {
		p.t.Fatalf("%s %v: %s", tool, args, text(res))
	}
	return text(res)
}

// The attack: an agent the person never marked as a developer agent sends a
// raw command. It is refused with not_allowed and nothing reaches the tab;
// marking is per principal, so another agent with the same label gains
// nothing from it.
func TestCDPOnlyForDeveloperAgents(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, func(principal string) bool { return principal == "agent:alice" })
	impostor := p.e.NewSession("agent:mallory", "alice")
	res := p.call(impostor, "cdp", map[string]any{"tabId": p.tab, "method": "Runtime.evaluate", "params": map[string]any{"expression": "document.cookie"}})
	msg := wantCode(t, res, wire.CodeNotAllowed)
	if !strings.Contains(msg, "developer agent") {
		t.Errorf("refusal does not say why: %s", msg)
	}
	if len(p.commands()) != 0 {
		t.Fatalf("a refused cdp call reached the browser: %v", p.commands())
	}
	nobody := newDevPage(t, wire.EngineChromium, nil)
	wantCode(t, nobody.call(nobody.e.NewSession("agent:alice", "alice"), "cdp", map[string]any{"tabId": nobody.tab, "method": "DOM.getDocument"}), wire.CodeNotAllowed)

	alice := p.e.NewSession("agent:alice", "alice")
	out := p.ok(alice, "cdp", map[string]any{"tabId": p.tab, "method": "DOM.getDocument", "params": map[string]any{"depth": 1}})
	if got := p.paramsOf("DOM.getDocument"); len(got) != 1 || string(got[0]) != `{"depth":1}` {
		t.Fatalf("DOM.getDocument reached the page as %s (answer %s)", got, out)
	}
}

// The attacks a developer agent could try with raw commands, to reach past
// its tab: other targets, the browser, every site's cookies or storage,
// files on disk. Each is refused and never reaches the browser.
func TestCDPRefusesWhatReachesBeyondTheTab(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, func(string) bool { return true })
	alice := p.e.NewSession("agent:alice", "alice")
	p.ok(alice, "read_page", map[string]any{"tabId": p.tab}) // observe the page: the guard passes
	for _, c := range []struct {
		method string
		params map[string]any
		code   wire.Code
	}{
		{"Target.createTarget", map[string]any{"url": "https://example.com/"}, wire.CodeNotAllowed},
		{"Target.attachToTarget", map[string]any{"targetId": "T", "flatten": true}, wire.CodeNotAllowed},
		{"Target.getTargets", nil, wire.CodeNotAllowed},
		{"Browser.close", nil, wire.CodeNotAllowed},
		{"Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": "/tmp"}, wire.CodeNotAllowed},
		{"Storage.getCookies", nil, wire.CodeNotAllowed},
		{"Storage.clearDataForOrigin", map[string]any{"origin": "https://bank.test", "storageTypes": "all"}, wire.CodeNotAllowed},
		{"DOMStorage.getDOMStorageItems", map[string]any{"storageId": map[string]any{"securityOrigin": "https://bank.test", "isLocalStorage": true}}, wire.CodeNotAllowed},
		{"IndexedDB.requestDatabaseNames", map[string]any{"securityOrigin": "https://bank.test"}, wire.CodeNotAllowed},
		{"SystemInfo.getProcessInfo", nil, wire.CodeNotAllowed},
		{"Tracing.start", nil, wire.CodeNotAllowed},
		{"Network.getAllCookies", nil, wire.CodeNotAllowed},
		{"Network.clearBrowserCookies", nil, wire.CodeNotAllowed},
		{"Network.getCookies", nil, wire.CodeNotAllowed},
		{"Network.getCookies", map[string]any{"urls": []string{"https://bank.test/"}}, wire.CodeNotAllowed},
		{"Network.getCookies", map[string]any{"urls": []string{p.href(), "https://bank.test/"}}, wire.CodeNotAllowed},
		{"Network.setCookie", map[string]any{"name": "sid", "value": "x", "url": "https://bank.test/"}, wire.CodeNotAllowed},
		{"Network.setCookie", map[string]any{"name": "sid", "value": "x", "domain": "bank.test"}, wire.CodeNotAllowed},
		{"Network.setCookies", map[string]any{"cookies": []map[string]any{{"name": "a", "value": "b", "url": p.href()}, {"name": "sid", "value": "x", "domain": ".bank.test"}}}, wire.CodeNotAllowed},
		{"Network.deleteCookies", map[string]any{"name": "sid"}, wire.CodeNotAllowed},
		{"Network.deleteCookies", map[string]any{"name": "sid", "domain": "bank.test"}, wire.CodeNotAllowed},
		{"Network.loadNetworkResource", map[string]any{"url": "https://bank.test/statement", "frameId": "F1", "options": map[string]any{"disableCache": true, "includeCredentials": true}}, wire.CodeNotAllowed},
		{"DOM.setFileInputFiles", map[string]any{"files": []string{"/home/person/.ssh/id_ed25519"}, "nodeId": 5}, wire.CodeNotAllowed},
		{"Input.dispatchDragEvent", map[string]any{"type": "drop", "x": 5, "y": 5, "data": map[string]any{"items": []any{}, "files": []string{"/etc/shadow"}, "dragOperationsMask": 1}}, wire.CodeNotAllowed},
		{"Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": "/home/person/.config/autostart"}, wire.CodeNotAllowed},
		{"Fetch.continueRequest", map[string]any{"requestId": "r1", "url": "file:///etc/passwd"}, wire.CodeNotAllowed},
		{"WebAuthn.addVirtualAuthenticator", map[string]any{"options": map[string]any{"protocol": "ctap2", "transport": "internal"}}, wire.CodeNotAllowed},
		{"Page.navigate", map[string]any{"url": "file:///etc/passwd"}, wire.CodeRestrictedURL},
		{"Page.navigate", map[string]any{"url": "chrome://settings"}, wire.CodeRestrictedURL},
	} {
		p.forget()
		args := map[string]any{"tabId": p.tab, "method": c.method}
		if c.params != nil {
			args["params"] = c.params
		}
		res := p.call(alice, "cdp", args)
		if !res.IsError || res.Code != c.code {
			t.Errorf("%s %v: want %s, got %v %q: %s", c.method, c.params, c.code, res.IsError, res.Code, text(res))
		}
		for _, m := range p.commands() {
			if m == c.method {
				t.Errorf("%s reached the browser", c.method)
			}
		}
	}
	// What stays within the tab and its own site goes through.
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"Network.getCookies", map[string]any{"urls": []string{p.href()}}},
		{"Network.setCookie", map[string]any{"name": "a", "value": "b", "url": "http://127.0.0.1:9999/"}},
		{"Network.deleteCookies", map[string]any{"name": "a", "domain": "127.0.0.1"}},
		{"Input.dispatchDragEvent", map[string]any{"type": "dragEnter", "x": 5, "y": 5, "data": map[string]any{"items": []any{}, "dragOperationsMask": 1}}},
		{"Fetch.continueRequest", map[string]any{"requestId": "r1", "url": "https://example.com/"}},
		{"Runtime.evaluate", map[string]any{"expression": "1+1"}},
	} {
		p.ok(alice, "cdp", map[string]any{"tabId": p.tab, "method": c.method, "params": c.params})
	}
}

// A raw command goes to the page the agent last looked at: if the tab left
// that origin, nothing is sent.
func TestCDPGuardsTheOrigin(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, func(string) bool { return true })
	alice := p.e.NewSession("agent:alice", "alice")
	p.ok(alice, "read_page", map[string]any{"tabId": p.tab})
	p.navigate("https://elsewhere.test/")
	p.forget()
	wantCode(t, p.call(alice, "cdp", map[string]any{"tabId": p.tab, "method": "Input.insertText", "params": map[string]any{"text": "hi"}}), wire.CodeNavigatedAway)
	for _, m := range p.commands() {
		if m == "Input.insertText" {
			t.Fatal("the command was sent after the tab navigated away")
		}
	}
}

// Cookies are asked for with the tab's own URL: Network.getCookies without
// urls would also return the cookies of every third-party frame in it.
func TestStorageCookiesNameTheTabsURL(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, nil)
	alice := p.e.NewSession("agent:alice", "alice")
	out := p.ok(alice, "storage", map[string]any{"tabId": p.tab, "action": "get", "area": "cookies"})
	if !strings.Contains(out, "sid=s3cret; Domain=127.0.0.1; Path=/; HttpOnly") {
		t.Fatalf("get cookies: %s", out)
	}
	if got := p.paramsOf("Network.getCookies"); len(got) != 1 || string(got[0]) != `{"urls":["`+p.href()+`"]}` {
		t.Fatalf("Network.getCookies params %s", got)
	}
	p.ok(alice, "storage", map[string]any{"tabId": p.tab, "action": "set", "area": "cookies", "name": "seed", "value": "v"})
	var set map[string]any
	json.Unmarshal(p.paramsOf("Network.setCookie")[0], &set)
	if set["url"] != "http://127.0.0.1:8080/" || set["path"] != "/" || set["name"] != "seed" || set["value"] != "v" || set["domain"] != nil {
		t.Fatalf("Network.setCookie params %v", set)
	}
	p.ok(alice, "storage", map[string]any{"tabId": p.tab, "action": "clear", "area": "cookies"})
	var del map[string]any
	json.Unmarshal(p.paramsOf("Network.deleteCookies")[0], &del)
	if del["url"] != "http://127.0.0.1:8080/" || del["domain"] != "127.0.0.1" || del["name"] != "sid" {
		t.Fatalf("Network.deleteCookies params %v", del)
	}
	// Another agent's tab is out of reach, like every tool's.
	wantCode(t, p.call(p.e.NewSession("agent:carol", "carol"), "storage", map[string]any{"tabId": p.tab, "action": "get", "area": "local"}), wire.CodeTabNotInSession)
	out = p.ok(alice, "storage", map[string]any{"tabId": p.tab, "action": "get", "area": "local"})
	if !strings.Contains(out, "theme = dark") || !strings.Contains(out, "localStorage of http://127.0.0.1:8080") {
		t.Fatalf("get local: %s", out)
	}
	big := strings.Repeat("x", 1<<20+1)
	wantCode(t, p.call(alice, "storage", map[string]any{"tabId": p.tab, "action": "set", "area": "local", "name": "k", "value": big}), wire.CodeBadParams)
}

// Changing page state acts on the page the agent last looked at.
func TestStorageSetGuardsTheOrigin(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, nil)
	alice := p.e.NewSession("agent:alice", "alice")
	p.ok(alice, "storage", map[string]any{"tabId": p.tab, "action": "get", "area": "cookies"})
	p.navigate("https://elsewhere.test/")
	p.forget()
	wantCode(t, p.call(alice, "storage", map[string]any{"tabId": p.tab, "action": "set", "area": "cookies", "name": "a", "value": "b"}), wire.CodeNavigatedAway)
	wantCode(t, p.call(alice, "storage", map[string]any{"tabId": p.tab, "action": "clear", "area": "local"}), wire.CodeNavigatedAway)
	for _, m := range p.commands() {
		if strings.HasPrefix(m, "Network.") {
			t.Fatalf("%s was sent after the tab navigated away", m)
		}
	}
}

// Managing extensions is refused until the person allows it; then the
// browser's extensions.* requests carry it out.
func TestExtensionsNeedThePersonsSwitch(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, nil)
	alice := p.e.NewSession("agent:alice", "alice")
	for _, action := range []string{"list", "disable"} {
		wantCode(t, p.call(alice, "extensions", map[string]any{"action": action, "id": "abc"}), wire.CodeNotAllowed)
	}
	if len(p.ext1) != 0 {
		t.Fatalf("a refused call reached the browser: %v", p.ext1)
	}
	p.manageExt.Store(true)
	out := p.ok(alice, "extensions", map[string]any{"action": "list"})
	if !strings.Contains(out, "abc  Ad Blocker 1.2 (enabled)") {
		t.Fatalf("list: %s", out)
	}
	out = p.ok(alice, "extensions", map[string]any{"action": "disable", "id": "abc"})
	if !strings.Contains(out, "Disabled abc  Ad Blocker 1.2 (disabled)") || !strings.Contains(p.ext1[1], `"enabled":false`) {
		t.Fatalf("disable: %s; requests %v", out, p.ext1)
	}
	wantCode(t, p.call(alice, "extensions", map[string]any{"action": "enable"}), wire.CodeBadParams)
}

// Emulation and a trace last: when the debugger detached from an idle tab,
// the browser dropped them, and the next call on the tab puts them back
// first.
func TestEmulationSurvivesADetach(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, nil)
	alice := p.e.NewSession("agent:alice", "alice")
	p.ok(alice, "devtools", map[string]any{"tabId": p.tab, "action": "trace_start"})
	if n := len(p.newDocumentScripts("reins-trace")); n != 1 {
		t.Fatalf("trace_start added %d new-document scripts", n)
	}
	out := p.ok(alice, "emulate", map[string]any{"tabId": p.tab, "device": "iphone", "colorScheme": "dark", "cpu": 4, "position": "38.7, -9.1"})
	if !strings.Contains(out, "device iphone (393×852), colour scheme dark, position 38.70000, -9.10000, CPU 4× slower") {
		t.Fatalf("emulate: %s", out)
	}
	var metrics map[string]any
	json.Unmarshal(p.paramsOf("Emulation.setDeviceMetricsOverride")[0], &metrics)
	if metrics["width"] != float64(393) || metrics["mobile"] != true {
		t.Fatalf("device metrics %v", metrics)
	}
	// A second call sends only what changed.
	p.forget()
	p.ok(alice, "emulate", map[string]any{"tabId": p.tab, "network": "offline"})
	if got := strings.Join(p.commands(), ","); got != "Network.emulateNetworkConditions" {
		t.Fatalf("offline sent %s", got)
	}
	p.forget()
	if err := p.ext.Send(wire.EventDetached, wire.Detached{TabID: 1, Reason: "idle"}); err != nil {
		t.Fatal(err)
	}
	// The detach reaches the engine on the link's reader; the next call
	// runs after it, since the fake answers on the same link in order.
	waitFor(t, func() bool {
		p.forget()
		p.ok(alice, "devtools", map[string]any{"tabId": p.tab, "action": "console"})
		return len(p.paramsOf("Page.enable")) > 0
	})
	for _, m := range []string{"Emulation.setDeviceMetricsOverride", "Emulation.setEmulatedMedia", "Emulation.setCPUThrottlingRate", "Emulation.setGeolocationOverride", "Network.emulateNetworkConditions"} {
		if len(p.paramsOf(m)) != 1 {
			t.Errorf("after the detach %s was sent %d times: %v", m, len(p.paramsOf(m)), p.commands())
		}
	}
	// The trace's script and the page helper's, each once.
	for _, world := range []string{"reins-trace", "reins"} {
		if n := len(p.newDocumentScripts(world)); n != 1 {
			t.Errorf("after the detach the %s world's new-document script was added %d times: %v", world, n, p.commands())
		}
	}
	p.forget()
	out = p.ok(alice, "emulate", map[string]any{"tabId": p.tab, "reset": true})
	if !strings.Contains(out, "no longer emulating") {
		t.Fatalf("reset: %s", out)
	}
	for _, m := range []string{"Emulation.clearDeviceMetricsOverride", "Emulation.clearGeolocationOverride"} {
		if len(p.paramsOf(m)) != 1 {
			t.Errorf("reset did not send %s: %v", m, p.commands())
		}
	}
	var media map[string]any
	json.Unmarshal(p.paramsOf("Emulation.setEmulatedMedia")[0], &media)
	if fmt.Sprint(media["features"]) != "[]" {
		t.Fatalf("reset media %v", media)
	}
	for _, bad := range []string{"north", "91,0", "10", "1,181"} {
		wantCode(t, p.call(alice, "emulate", map[string]any{"tabId": p.tab, "position": bad}), wire.CodeBadParams)
	}
}

// newDocumentScripts are the new-document scripts added for world.
func (p *devPage) newDocumentScripts(world string) []json.RawMessage {
	var out []json.RawMessage
	for _, raw := range p.paramsOf("Page.addScriptToEvaluateOnNewDocument") {
		var s struct {
			WorldName string `json:"worldName"`
		}
		if json.Unmarshal(raw, &s) == nil && s.WorldName == world {
			out = append(out, raw)
		}
	}
	return out
}

// waitFor retries cond, which does one round trip to the fake each time,
// until it holds; each try waits for the browser's answer, never a timer.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
	}
}

// Firefox cannot emulate, trace or take raw commands: each says so with
// unsupported, and nothing is sent.
func TestFirefoxSaysUnsupported(t *testing.T) {
	p := newDevPage(t, wire.EngineFirefox, func(string) bool { return true })
	alice := p.e.NewSession("agent:alice", "alice")
	p.forget()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"emulate", map[string]any{"colorScheme": "dark"}},
		{"devtools", map[string]any{"action": "trace_start"}},
		{"devtools", map[string]any{"action": "trace_stop"}},
		{"cdp", map[string]any{"method": "DOM.getDocument"}},
	} {
		c.args["tabId"] = p.tab
		msg := wantCode(t, p.call(alice, c.tool, c.args), wire.CodeUnsupported)
		if !strings.Contains(msg, "Chromium") {
			t.Errorf("%s: %s", c.tool, msg)
		}
	}
	for _, m := range p.commands() {
		if strings.HasPrefix(m, "Emulation.") || m == "DOM.getDocument" {
			t.Errorf("%s was sent to Firefox", m)
		}
	}
}

// Every new tool honours pause and records its calls in the activity.
func TestDevtoolsToolsHonourPauseAndActivity(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, func(string) bool { return true })
	paused := newFakeWithPause(t, p)
	alice := paused.NewSession("agent:alice", "alice")
	for _, tool := range []string{"storage", "devtools", "emulate", "extensions", "cdp"} {
		wantCode(t, paused.Call(context.Background(), alice, tool, json.RawMessage(`{"tabId":1,"action":"list"}`)), wire.CodePaused)
	}
	alice = p.e.NewSession("agent:alice", "alice")
	p.ok(alice, "devtools", map[string]any{"tabId": p.tab, "action": "console"})
	p.call(alice, "storage", map[string]any{"tabId": p.tab, "action": "get", "area": "cookies"})
	found := 0
	for _, a := range p.activities {
		if (a.Tool == "devtools" || a.Tool == "storage") && a.TabID == p.tab && a.Outcome == "ok" && a.Principal == "agent:alice" {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("activity %+v", p.activities)
	}
}

func newFakeWithPause(t *testing.T, p *devPage) *tools.Engine {
	e := tools.NewEngine(tools.Options{Hub: p.hub, Logger: quietLogger(), Paused: func() error { return fmt.Errorf("paused") }})
	t.Cleanup(e.Close)
	return e
}

// The bounds of the new tools' answers: console shows the newest 50
// messages, extensions lists 200, a raw result is cut at 50,000 bytes, and
// the CPU is slowed 20 times at most.
func TestDevtoolsAnswersAreBounded(t *testing.T) {
	p := newDevPage(t, wire.EngineChromium, func(string) bool { return true })
	alice := p.e.NewSession("agent:alice", "alice")
	p.ok(alice, "devtools", map[string]any{"tabId": p.tab, "action": "console"}) // the tab's capture starts
	for i := range 60 {
		if err := p.ext.Send(wire.EventCDPEvent, wire.CDPEvent{TabID: 1, Method: "Runtime.consoleAPICalled", Params: json.RawMessage(fmt.Sprintf(`{"type":"log","args":[{"type":"string","value":"message %d"}]}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	var out string
	waitFor(t, func() bool {
		out = p.ok(alice, "devtools", map[string]any{"tabId": p.tab, "action": "console"})
		return strings.HasPrefix(out, "60 console message(s)")
	})
	if !strings.Contains(out, "showing the newest 50") || strings.Contains(out, "message 9\n") || !strings.Contains(out, "message 59") {
		t.Fatalf("console:\n%s", out)
	}

	p.manageExt.Store(true)
	p.extCount.Store(205)
	out = p.ok(alice, "extensions", map[string]any{"action": "list"})
	if !strings.HasPrefix(out, "205 extension(s)") || !strings.Contains(out, "[5 more not shown]") || strings.Count(out, "\n") != 201 {
		t.Fatalf("a long list: %.200s … %s", out, out[len(out)-100:])
	}

	out = p.ok(alice, "cdp", map[string]any{"tabId": p.tab, "method": "DOM.getOuterHTML", "params": map[string]any{"nodeId": 1}})
	if len(out) > 50_100 || !strings.Contains(out, "[cut: ") {
		t.Fatalf("a 60 kB raw result answered %d bytes", len(out))
	}

	wantCode(t, p.call(alice, "emulate", map[string]any{"tabId": p.tab, "cpu": 21}), wire.CodeBadParams)
	p.ok(alice, "emulate", map[string]any{"tabId": p.tab, "cpu": 20})
}
