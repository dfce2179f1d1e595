package devbrowser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reinshq/reins/companion/wire"
)

// RoundTrip answers a browspark v3 request by translating it to CDP, so the
// hub and the tool engine treat the dev browser like an extension.
func (l *link) RoundTrip(ctx context.Context, method string, params any) (json.RawMessage, error) {
	switch method {
	case wire.MethodCDP:
		var p wire.CDPParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		// The raw request path reaches here without the hub's check.
		if reason := wire.CDPNavigationRefusal(p.Method, p.Params, wire.EngineChromium); reason != "" {
			return nil, wire.Errorf(wire.CodeRestrictedURL, "%s refused: %s", p.Method, reason)
		}
		return l.cdp(ctx, p)
	case wire.MethodTabsList:
		if err := l.refresh(ctx); err != nil {
			return nil, err
		}
		return json.Marshal(l.tabInfos())
	case wire.MethodTabsCreate:
		var p wire.CreateParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return l.create(ctx, p)
	case wire.MethodTabsClose:
		t, err := l.tabFromParams(params)
		if err != nil {
			return nil, err
		}
		if _, err := l.send(ctx, "", "Target.closeTarget", map[string]any{"targetId": t.id}); err != nil {
			return nil, fmt.Errorf("closing tab %d: %w", t.tab, err)
		}
		l.tmu.Lock()
		l.dropLocked(t)
		l.tmu.Unlock()
		l.emitTabs()
		return json.RawMessage(`{}`), nil
	case wire.MethodTabsActivate:
		t, err := l.tabFromParams(params)
		if err != nil {
			return nil, err
		}
		if err := l.activate(ctx, t); err != nil {
			return nil, err
		}
		return json.RawMessage(`{}`), nil
	case wire.MethodTabsPrepare:
		t, err := l.tabFromParams(params)
		if err != nil {
			return nil, err
		}
		// A dev browser has no privileged New Tab page to escape, but the
		// contract is that the tab ends up on about:blank.
		if _, err := l.cdp(ctx, wire.CDPParams{TabID: t.tab, Method: "Page.navigate", Params: json.RawMessage(`{"url":"about:blank"}`)}); err != nil {
			return nil, fmt.Errorf("preparing tab %d: %w", t.tab, err)
		}
		return json.RawMessage(`{}`), nil
	case wire.MethodTabsHold:
		// The dev transport never detaches on idle, so there is nothing to hold.
		if _, err := l.tabFromParams(params); err != nil {
			return nil, err
		}
		return json.RawMessage(`{}`), nil
	case wire.MethodWindowSize:
		var p wire.WindowSizeParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return l.windowSize(ctx, p)
	case wire.MethodToolsCatalog:
		return json.RawMessage(`{}`), nil
	case wire.MethodGraphState:
		return json.RawMessage(`{"received":false}`), nil
	default:
		return nil, wire.Errorf(wire.CodeUnknownMethod, "%s is not available for a dev browser", method)
	}
}

// decodeParams converts the hub's typed params into the type the
// transport needs; the hub passes values, not JSON.
func decodeParams(params any, out any) error {
	switch p := params.(type) {
	case wire.CDPParams:
		if o, ok := out.(*wire.CDPParams); ok {
			*o = p
			return nil
		}
	case *wire.CDPParams:
		if o, ok := out.(*wire.CDPParams); ok {
			*o = *p
			return nil
		}
	}
	var raw []byte
	switch p := params.(type) {
	case nil:
		raw = []byte(`{}`)
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		var err error
		if raw, err = json.Marshal(p); err != nil {
			return wire.Errorf(wire.CodeBadParams, "encoding params: %w", err)
		}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return wire.Errorf(wire.CodeBadParams, "malformed params: %w", err)
	}
	return nil
}

func (l *link) tabFromParams(params any) (*target, error) {
	var p wire.TabParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return l.tab(p.TabID)
}

func (l *link) tab(id int) (*target, error) {
	l.tmu.Lock()
	t := l.byTab[id]
	l.tmu.Unlock()
	if t == nil {
		return nil, wire.Errorf(wire.CodeNoSuchTab, "the dev browser has no tab %d", id)
	}
	return t, nil
}

func (l *link) create(ctx context.Context, p wire.CreateParams) (json.RawMessage, error) {
	url := p.URL
	if url == "" {
		url = "about:blank"
	}
	if reason := wire.NavigationRefusal(url, wire.EngineChromium); reason != "" {
		return nil, wire.Errorf(wire.CodeRestrictedURL, "cannot open %s: %s", url, reason)
	}
	background := p.Active != nil && !*p.Active
	// Each tab gets a window of its own: a background tab in a shared
	// window renders no frames, so its screenshots and input would stall,
	// and two agents must be able to drive their tabs at the same time.
	params := map[string]any{"url": url, "background": background, "newWindow": true}
	if l.winW > 0 && l.winH > 0 {
		params["width"], params["height"] = l.winW, l.winH
	}
	raw, err := l.send(ctx, "", "Target.createTarget", params)
	if err != nil {
		return nil, fmt.Errorf("creating a tab: %w", err)
	}
	var res struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.TargetID == "" {
		return nil, wire.Errorf(wire.CodeInternal, "Target.createTarget returned no target id")
	}
	l.tmu.Lock()
	t := l.targets[res.TargetID]
	if t == nil {
		// The targetCreated event has not arrived yet; record the tab now so
		// the caller can use its id at once.
		t = l.upsertLocked(targetInfo{TargetID: res.TargetID, Type: "page", URL: url})
	}
	// The owner stays with the tab, as the extension keeps it: the engine
	// decides who sees the tab from what the listing reports.
	t.agent = true
	t.owner = p.Owner
	info := l.infoLocked(t)
	l.tmu.Unlock()
	l.emitTabs()
	return json.Marshal(info)
}

// attach returns the tab's flattened CDP session, attaching on first use.
func (l *link) attach(ctx context.Context, t *target) (string, error) {
	l.tmu.Lock()
	s := t.session
	l.tmu.Unlock()
	if s != "" {
		return s, nil
	}
	t.attachMu.Lock()
	defer t.attachMu.Unlock()
	l.tmu.Lock()
	s = t.session
	l.tmu.Unlock()
	if s != "" {
		return s, nil
	}
	raw, err := l.send(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.id, "flatten": true})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err() // the caller gave up; the tab is fine
		}
		return "", wire.Errorf(wire.CodeAttachFailed, "attaching to tab %d: %w", t.tab, err)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.SessionID == "" {
		return "", wire.Errorf(wire.CodeAttachFailed, "attaching to tab %d: no session id", t.tab)
	}
	l.tmu.Lock()
	if l.targets[t.id] != t {
		l.tmu.Unlock()
		return "", wire.Errorf(wire.CodeNoSuchTab, "tab %d was closed", t.tab)
	}
	t.session = res.SessionID
	l.sessions[res.SessionID] = t
	l.tmu.Unlock()
	l.emitTabs()
	return res.SessionID, nil
}

func (l *link) cdp(ctx context.Context, p wire.CDPParams) (json.RawMessage, error) {
	t, err := l.tab(p.TabID)
	if err != nil {
		return nil, err
	}
	params := any(p.Params)
	if len(p.Params) == 0 {
		params = nil
	}
	if p.SessionID != "" {
		l.tmu.Lock()
		owner := l.children[p.SessionID]
		l.tmu.Unlock()
		if owner != t {
			return nil, wire.Errorf(wire.CodeBadParams, "session %s does not belong to tab %d", p.SessionID, p.TabID)
		}
		return l.send(ctx, p.SessionID, p.Method, params)
	}
	reload := p.Method == "Page.navigate" || p.Method == "Page.reload"
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l.tmu.Lock()
	if t.crashed && !reload {
		l.tmu.Unlock()
		return nil, crashErr()
	}
	if t.inflight == nil {
		t.inflight = map[*context.CancelCauseFunc]struct{}{}
	}
	t.inflight[&cancel] = struct{}{}
	l.tmu.Unlock()
	defer func() {
		l.tmu.Lock()
		delete(t.inflight, &cancel)
		l.tmu.Unlock()
	}()
	if strings.HasPrefix(p.Method, "Input.") || p.Method == "Page.captureScreenshot" {
		if err := l.toFront(ctx, t); err != nil {
			return nil, cutByCrash(ctx, t, err)
		}
	}
	for attempt := 0; ; attempt++ {
		s, err := l.attach(ctx, t)
		if err != nil {
			return nil, cutByCrash(ctx, t, err)
		}
		res, err := l.send(ctx, s, p.Method, params)
		err = cutByCrash(ctx, t, err)
		if err == nil && reload {
			l.tmu.Lock()
			t.crashed = false
			l.tmu.Unlock()
		}
		if err != nil && isSessionGone(err) && attempt == 0 {
			// The target swapped or detached under us: forget the session
			// and attach again once.
			l.tmu.Lock()
			if t.session == s {
				t.session = ""
				delete(l.sessions, s)
			}
			l.tmu.Unlock()
			continue
		}
		return res, err
	}
}

// toFront makes t the active tab of its window before input or a
// screenshot reaches it. Chromium renders only the active tab of a window,
// so a page left behind another (a popup it opened, which Chromium puts in
// the same window) would stall them; focus emulation keeps such a page
// visible, but its frames still stop once it scrolls. The dev browser is
// Reins' own, so raising the tab an agent works in takes nothing from the
// person.
func (l *link) toFront(ctx context.Context, t *target) error {
	l.tmu.Lock()
	win, front := t.window, l.fronts[t.window]
	l.tmu.Unlock()
	if win != 0 && front == t.id {
		return nil
	}
	return l.activate(ctx, t)
}

// activate brings t to the front of its window and remembers it there.
func (l *link) activate(ctx context.Context, t *target) error {
	l.tmu.Lock()
	win := t.window
	l.tmu.Unlock()
	if win == 0 {
		raw, err := l.send(ctx, "", "Browser.getWindowForTarget", map[string]any{"targetId": t.id})
		if err != nil {
			return fmt.Errorf("finding the window of tab %d: %w", t.tab, err)
		}
		var res struct {
			WindowID int `json:"windowId"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("decoding Browser.getWindowForTarget: %w", err)
		}
		win = res.WindowID
	}
	if _, err := l.send(ctx, "", "Target.activateTarget", map[string]any{"targetId": t.id}); err != nil {
		return fmt.Errorf("activating tab %d: %w", t.tab, err)
	}
	l.tmu.Lock()
	if l.targets[t.id] == t {
		t.window = win
		l.fronts[win] = t.id
	}
	l.tmu.Unlock()
	return nil
}

// cutByCrash is err, or for a call cut short by a renderer crash or by
// the tab closing the error that says so.
func cutByCrash(ctx context.Context, t *target, err error) error {
	if err == nil {
		return nil
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errCrashed):
		return crashErr()
	case errors.Is(cause, errClosed):
		return wire.Errorf(wire.CodeNoSuchTab, "tab %d was closed", t.tab)
	}
	return err
}

// crashErr names no tab: the call names its own, and the browser's id for
// it would only confuse.
func crashErr() error {
	return wire.Errorf(wire.CodeAttachFailed, "the page crashed; navigate to load it again")
}

func (l *link) windowSize(ctx context.Context, p wire.WindowSizeParams) (json.RawMessage, error) {
	t, err := l.tab(p.TabID)
	if err != nil {
		return nil, err
	}
	type bounds struct {
		Left        int    `json:"left,omitempty"`
		Top         int    `json:"top,omitempty"`
		Width       int    `json:"width,omitempty"`
		Height      int    `json:"height,omitempty"`
		WindowState string `json:"windowState,omitempty"`
	}
	get := func() (int, bounds, error) {
		raw, err := l.send(ctx, "", "Browser.getWindowForTarget", map[string]any{"targetId": t.id})
		if err != nil {
			return 0, bounds{}, fmt.Errorf("reading the window of tab %d: %w", t.tab, err)
		}
		var res struct {
			WindowID int    `json:"windowId"`
			Bounds   bounds `json:"bounds"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return 0, bounds{}, fmt.Errorf("decoding Browser.getWindowForTarget: %w", err)
		}
		return res.WindowID, res.Bounds, nil
	}
	win, b, err := get()
	if err != nil {
		return nil, err
	}
	if p.Width > 0 || p.Height > 0 {
		if b.WindowState != "" && b.WindowState != "normal" {
			// Bounds cannot change while a window is maximized or fullscreen.
			if _, err := l.send(ctx, "", "Browser.setWindowBounds", map[string]any{"windowId": win, "bounds": bounds{WindowState: "normal"}}); err != nil {
				return nil, fmt.Errorf("restoring the window of tab %d: %w", t.tab, err)
			}
		}
		nb := bounds{Width: p.Width, Height: p.Height}
		if nb.Width == 0 {
			nb.Width = b.Width
		}
		if nb.Height == 0 {
			nb.Height = b.Height
		}
		if _, err := l.send(ctx, "", "Browser.setWindowBounds", map[string]any{"windowId": win, "bounds": nb}); err != nil {
			return nil, fmt.Errorf("resizing the window of tab %d: %w", t.tab, err)
		}
		if _, b, err = get(); err != nil {
			return nil, err
		}
	}
	return json.Marshal(wire.WindowSize{Width: b.Width, Height: b.Height})
}
