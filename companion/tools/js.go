package tools

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/reinshq/reins/companion/wire"
)

type javascriptArgs struct {
	Text  string `json:"text" jsonschema:"JavaScript to run in the page; returns the last expression's value (top-level await and return work)"`
	TabID int    `json:"tabId" jsonschema:"tab id"`
}

const maxJSOutput = 50000

func registerJS(e *Engine) {
	define(e, Info{
		Name:        "javascript_tool",
		Description: "Run JavaScript in a tab's page context and return its value (JSON-ish) or the exception it threw. Promises are awaited.",
		Destructive: true, Mutating: true, Batchable: true,
	}, nil, runJavaScript)
}

// serializeJS turns any value into readable JSON-ish text inside the page:
// DOM nodes become their outer HTML, cycles and deep nesting are cut.
const serializeJS = `function() {
  const seen = new WeakSet();
  const walk = (v, depth) => {
    if (v === null || typeof v !== 'object' && typeof v !== 'function') {
      if (typeof v === 'bigint') return v.toString() + 'n';
      if (typeof v === 'number' && !isFinite(v)) return String(v);
      if (typeof v === 'undefined') return '[undefined]';
      if (typeof v === 'symbol') return v.toString();
      return v;
    }
    if (typeof v === 'function') return '[function ' + (v.name || 'anonymous') + ']';
    if (typeof Node !== 'undefined' && v instanceof Node) {
      const h = v.outerHTML !== undefined ? v.outerHTML : (v.textContent || v.nodeName);
      return h.length > 500 ? h.slice(0, 500) + '…' : h;
    }
    if (seen.has(v)) return '[circular]';
    if (depth > 6) return '[…]';
    seen.add(v);
    if (v instanceof Error) return v.name + ': ' + v.message;
    if (v instanceof Date) return v.toISOString();
    if (v instanceof RegExp) return v.toString();
    if (v instanceof Map) return { '[Map]': [...v.entries()].slice(0, 200).map(([k, x]) => [walk(k, depth + 1), walk(x, depth + 1)]) };
    if (v instanceof Set) return { '[Set]': [...v].slice(0, 200).map((x) => walk(x, depth + 1)) };
    if (Array.isArray(v) || (typeof NodeList !== 'undefined' && v instanceof NodeList) || (typeof HTMLCollection !== 'undefined' && v instanceof HTMLCollection)) {
      const a = Array.from(v).slice(0, 500).map((x) => walk(x, depth + 1));
      if (v.length > 500) a.push('[… ' + (v.length - 500) + ' more]');
      return a;
    }
    const out = {};
    let n = 0;
    for (const k in v) {
      if (++n > 200) { out['…'] = 'more keys'; break; }
      try { out[k] = walk(v[k], depth + 1); } catch (e) { out[k] = '[unreadable]'; }
    }
    return out;
  };
  return JSON.stringify(walk(this, 0), null, 1);
}`

// navigatedMarker starts the exception originGuard throws, followed by the
// page's URL. A script that throws it itself only refuses its own call.
const navigatedMarker = "reins:navigated_away "

// originGuard is a statement that throws navigatedMarker unless the page is
// still on origin (as originOf computes it). It runs in the same task as the
// script, so nothing can navigate between the check and the script. It
// reads location, which a page can neither redefine nor shadow, so a page
// cannot make the check pass. "" means origin cannot be checked there.
func originGuard(origin string) string {
	var expr string
	switch {
	case strings.HasPrefix(origin, "http://"), strings.HasPrefix(origin, "https://"):
		expr = "location.origin"
	case origin == "file://":
		expr, origin = "location.protocol", "file:"
	case strings.HasSuffix(origin, ":") && !strings.Contains(origin, "/"):
		expr = "location.protocol" // opaque pages: about:, data:, blob: …
	default:
		return ""
	}
	return "if (" + expr + " !== " + jsString(origin) + ") throw " + jsString(navigatedMarker) + " + location.href; "
}

func runJavaScript(ctx context.Context, c *call, in *javascriptArgs) (*Result, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, wire.Errorf(wire.CodeBadParams, "text (the script) is required")
	}
	ts, t, err := c.page(ctx, in.TabID, accessAct)
	if err != nil {
		return nil, err
	}
	// A script acts on the page the agent last looked at, like a click:
	// if the tab went to another origin since, nothing runs.
	guard := ""
	if want := c.s.observed(in.TabID); want != "" {
		// Chromium's REPL mode returns the script's own completion value
		// with the guard in front. Firefox's adapter emulates REPL mode by
		// retrying a top-level await as a function body, where a guard in
		// front would swallow the value; there, and for an origin the page
		// cannot be asked about, the isolated world checks just before.
		if t.BrowserEngine == wire.EngineChromium {
			guard = originGuard(want)
		}
		if guard == "" {
			if err := c.focusedGuard(ctx, ts, in.TabID); err != nil {
				return nil, err
			}
		}
	}
	// A script stuck in a loop is stopped before the call's own deadline.
	timeout := 30000
	if dl, ok := ctx.Deadline(); ok {
		if ms := int(time.Until(dl).Milliseconds()) - 200; ms < timeout {
			timeout = max(ms, 1)
		}
	}
	// Objects the script returned (or threw) stay alive in the page until
	// their group is released; a primitive result leaves nothing behind,
	// which spares the common case a second round trip.
	held := false
	eval := func(expr string) (evalResult, error) {
		var res evalResult
		err := c.cdp(ctx, in.TabID, "Runtime.evaluate", map[string]any{
			"expression": expr, "awaitPromise": true, "replMode": true, "userGesture": true,
			"objectGroup": "reins-js", "timeout": timeout,
		}, &res)
		held = held || res.holdsObjects()
		if err == nil && res.ExceptionDetails == nil && res.Result.Subtype == "promise" && res.Result.ObjectID != "" {
			// REPL mode awaits top-level await but hands back a promise the
			// script ends with; agents want what it resolves to.
			var awaited evalResult
			if err := c.cdp(ctx, in.TabID, "Runtime.awaitPromise", map[string]any{"promiseObjectId": res.Result.ObjectID}, &awaited); err != nil {
				return res, err
			}
			res = awaited
			held = held || res.holdsObjects()
		}
		return res, err
	}
	defer func() {
		if held {
			_ = c.cdp(context.WithoutCancel(ctx), in.TabID, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": "reins-js"}, nil)
		}
	}()
	// The guard shares the script's first line, so line numbers in errors
	// stay the script's own.
	res, err := eval(guard + in.Text)
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil && strings.Contains(res.ExceptionDetails.text(), "Illegal return statement") {
		// A syntax error means nothing ran; scripts written as function
		// bodies get wrapped in one.
		res, err = eval(guard + "(async () => {\n" + in.Text + "\n})()")
		if err != nil {
			return nil, err
		}
	}
	if href, ok := navigatedAway(res); ok && guard != "" {
		if err := c.guard(in.TabID, href); err != nil {
			return nil, err
		}
		return nil, wire.Errorf(wire.CodeNavigatedAway, "tab %d left the origin you last looked at; nothing was run. Take a screenshot or read_page, then run it again", in.TabID)
	}
	if res.ExceptionDetails != nil {
		return nil, wire.Errorf(wire.CodeScriptError, "the script threw: %s", truncate(res.ExceptionDetails.text(), 4000))
	}
	out, err := c.jsValue(ctx, in.TabID, res.Result)
	if err != nil {
		return nil, err
	}
	if len(out) > maxJSOutput {
		out = truncate(out, maxJSOutput) + "\n[output cut at 50000 characters]"
	}
	return textResult(out), nil
}

// navigatedAway reports whether res is originGuard's refusal, and the URL
// the page was on.
func navigatedAway(res evalResult) (string, bool) {
	d := res.ExceptionDetails
	if d == nil || d.Exception == nil || d.Exception.Type != "string" {
		return "", false
	}
	var s string
	if json.Unmarshal(d.Exception.Value, &s) != nil {
		return "", false
	}
	return strings.CutPrefix(s, navigatedMarker)
}

func (c *call) jsValue(ctx context.Context, tabID int, r remoteObject) (string, error) {
	switch r.Type {
	case "undefined":
		return "undefined", nil
	case "string":
		var s string
		_ = json.Unmarshal(r.Value, &s)
		return s, nil
	case "number", "boolean", "bigint":
		if r.Unserial != "" {
			return r.Unserial, nil
		}
		return string(r.Value), nil
	case "symbol":
		return r.Description, nil
	}
	if r.Subtype == "null" {
		return "null", nil
	}
	if r.ObjectID == "" {
		if len(r.Value) > 0 {
			return string(r.Value), nil
		}
		return r.Description, nil
	}
	var res evalResult
	if err := c.cdp(ctx, tabID, "Runtime.callFunctionOn", map[string]any{
		"objectId": r.ObjectID, "functionDeclaration": serializeJS, "returnByValue": true, "objectGroup": "reins-js",
	}, &res); err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return r.Description, nil
	}
	var s string
	if err := json.Unmarshal(res.Result.Value, &s); err != nil {
		return r.Description, nil
	}
	return s, nil
}
