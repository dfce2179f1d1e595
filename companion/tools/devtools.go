package tools

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinshq/reins/companion/wire"
)

// devtools is the DevTools depth an agent needs to debug a page: console
// messages by level with their stacks, one request's headers and body, a
// wait for a response, and a performance trace summarised in text.

const (
	// maxBodyShown bounds a response body in an answer; the rest is cut
	// with a marker.
	maxBodyShown = 64 << 10
	// defaultWaitResponse and maxWaitResponse bound wait_response.
	defaultWaitResponse = 10 * time.Second
	maxWaitResponse     = 60 * time.Second
)

type devtoolsArgs struct {
	TabID   int    `json:"tabId" jsonschema:"tab id"`
	Action  string `json:"action" jsonschema:"what to do"`
	Pattern string `json:"pattern,omitempty" jsonschema:"console: text or regexp; else part of the URL, /regexp/ or a request id"`
	Level   string `json:"level,omitempty" jsonschema:"console: lowest level (default info)"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"wait_response seconds (default 10)"`
}

// maxConsoleListed is how many of the newest messages console shows.
const maxConsoleListed = 50

func registerDevtools(e *Engine) {
	define(e, Info{
		Name: "devtools",
		Description: "Debug a tab: console messages with stacks, a request's headers and body, wait_response for one your last action caused, " +
			"or a trace (trace_start, trace_stop) of LCP, CLS, INP and long tasks.",
		ReadOnly: true, Batchable: true, Extended: true,
	}, func(s *jsonschema.Schema) {
		enum(s, "action", "console", "request", "wait_response", "trace_start", "trace_stop")
		enum(s, "level", consoleLevels...)
		bounds(s, "timeout", 1, maxWaitResponse.Seconds())
	}, runDevtools)
}

func runDevtools(ctx context.Context, c *call, in *devtoolsArgs) (*Result, error) {
	ts, t, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	firefox := t.BrowserEngine == wire.EngineFirefox
	switch in.Action {
	case "console":
		return devConsole(ts, in), nil
	case "request":
		if in.Pattern == "" {
			return nil, wire.Errorf(wire.CodeBadParams, "request needs a pattern: part of the URL, or a request id")
		}
		match := urlMatcher(in.Pattern)
		e, ok := ts.network.newest(func(e *netEntry) bool { return e.id == in.Pattern })
		if !ok {
			e, ok = ts.network.newest(func(e *netEntry) bool { return match(e.url) })
		}
		if !ok {
			return nil, wire.Errorf(wire.CodeBadParams, "no captured request of tab %d matches; read_network_requests lists them", in.TabID)
		}
		return c.describeRequest(ctx, in, e, firefox)
	case "wait_response":
		if in.Pattern == "" {
			return nil, wire.Errorf(wire.CodeBadParams, "wait_response needs a pattern (part of the URL)")
		}
		e, err := c.waitResponse(ctx, ts, in)
		if err != nil {
			return nil, err
		}
		return c.describeRequest(ctx, in, e, firefox)
	case "trace_start", "trace_stop":
		if firefox {
			return nil, wire.Errorf(wire.CodeUnsupported, "performance traces need Chromium: in Firefox, Reins cannot run its measuring script in the page's isolated world")
		}
		return c.trace(ctx, ts, in)
	}
	return nil, wire.Errorf(wire.CodeBadParams, "action must be console, request, wait_response, trace_start or trace_stop")
}

// urlMatcher matches URLs against pattern: a pattern written /like this/
// is a regular expression; one with '*' in it is a wildcard over the whole
// URL ('*' matches any run of characters, '/' included); anything else
// matches URLs that contain it. URLs are full of characters that mean
// something else in a regular expression (. and ?), so plain text is the
// default.
func urlMatcher(pattern string) func(string) bool {
	if len(pattern) > 2 && strings.HasPrefix(pattern, "/") && strings.HasSuffix(pattern, "/") {
		if re, err := regexp.Compile(pattern[1 : len(pattern)-1]); err == nil {
			return func(u string) bool { return re.MatchString(u) || strings.Contains(u, pattern) }
		}
	}
	if !strings.Contains(pattern, "*") {
		return func(u string) bool { return strings.Contains(u, pattern) }
	}
	// path.Match's '*' stops at '/'; split on '*' and match the parts in
	// order instead.
	parts := strings.Split(pattern, "*")
	return func(u string) bool {
		if !strings.HasPrefix(u, parts[0]) {
			return false
		}
		rest := u[len(parts[0]):]
		last := len(parts) - 1
		for i := 1; i < last; i++ {
			j := strings.Index(rest, parts[i])
			if j < 0 {
				return false
			}
			rest = rest[j+len(parts[i]):]
		}
		return strings.HasSuffix(rest, parts[last])
	}
}

func devConsole(ts *tabState, in *devtoolsArgs) *Result {
	min := levelRank("info")
	if in.Level != "" {
		min = levelRank(in.Level)
	}
	match := matcher(in.Pattern)
	entries, dropped := ts.console.snapshot(false)
	var lines []string
	for _, e := range entries {
		l := formatConsole(e)
		if levelRank(l.level) < min || !match(l.text) {
			continue
		}
		lines = append(lines, consoleText(e, l, true))
	}
	level := in.Level
	if level == "" {
		level = "info"
	}
	return listing(lines, maxConsoleListed, "console message(s) at "+level+" or above", in.TabID, dropped, false)
}

// waitResponse waits, driven by the tab's network events, for a response
// whose URL matches: one that started since the session's previous call on
// the tab (the action that caused it), one in flight when this call began,
// or one that starts later. The first to finish wins.
func (c *call) waitResponse(ctx context.Context, ts *tabState, in *devtoolsArgs) (netEntry, error) {
	timeout := defaultWaitResponse
	if in.Timeout > 0 {
		timeout = min(time.Duration(in.Timeout)*time.Second, maxWaitResponse)
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	since := c.since
	if since.IsZero() {
		since = c.start
	}
	match := urlMatcher(in.Pattern)
	crashed := ts.crashNotice()
	var first netEntry
	found := false
	for {
		changed := ts.network.next()
		ts.network.newest(func(e *netEntry) bool {
			if !e.finished || !match(e.url) {
				return false
			}
			if e.at.Before(since) && e.ended.Before(c.start) {
				return false // done before this call, caused by older calls
			}
			if !found || e.ended.Before(first.ended) {
				first, found = *e, true
			}
			return false
		})
		if found {
			return first, nil
		}
		select {
		case <-changed:
		case <-crashed:
			return netEntry{}, crashError(ts.id)
		case <-wctx.Done():
			if ctx.Err() != nil {
				return netEntry{}, ctx.Err()
			}
			return netEntry{}, wire.Errorf(wire.CodeTimeout, "no response of tab %d matching %q finished within %s", in.TabID, in.Pattern, timeout)
		}
	}
}

// describeRequest shows one request: its line, headers and body.
func (c *call) describeRequest(ctx context.Context, in *devtoolsArgs, e netEntry, firefox bool) (*Result, error) {
	status := "pending"
	switch {
	case e.failed != "":
		status = "failed: " + e.failed
	case e.status != 0:
		status = fmt.Sprint(e.status)
	}
	head := fmt.Sprintf("Request %s of tab %d: %s %s → %s", e.id, in.TabID, e.method, truncate(e.url, 1000), status)
	if e.typ != "" {
		head += " [" + e.typ + "]"
	}
	if e.mime != "" {
		head += " " + e.mime
	}
	if !e.ended.IsZero() {
		head += fmt.Sprintf(", %d ms", e.ended.Sub(e.at).Milliseconds())
	}
	lines := []string{head}
	indent := func(h string) string {
		if h == "" {
			return "  (none captured)"
		}
		return "  " + strings.ReplaceAll(h, "\n", "\n  ")
	}
	lines = append(lines, "Request headers:", indent(e.reqHeaders))
	if e.status != 0 {
		lines = append(lines, "Response headers:", indent(e.respHeaders))
	}
	switch {
	case firefox:
		lines = append(lines, "Body: [unsupported] not available in Firefox, which gives extensions no response bodies.")
	case !e.finished:
		lines = append(lines, "Body: the response has not finished loading; ask again with devtools wait_response.")
	case e.failed != "":
	default:
		lines = append(lines, c.body(ctx, in.TabID, e))
	}
	return textResult(lines...), nil
}

// body fetches a finished response's body from the browser, which keeps
// bodies for a while after they load, and shows text up to maxBodyShown.
func (c *call) body(ctx context.Context, tabID int, e netEntry) string {
	var res struct {
		Body          string `json:"body"`
		Base64Encoded bool   `json:"base64Encoded"`
	}
	if err := c.cdp(ctx, tabID, "Network.getResponseBody", map[string]any{"requestId": e.id}, &res); err != nil {
		return "Body: not available (" + oneLine(err.Error()) + "); the browser keeps bodies only for a while."
	}
	data := []byte(res.Body)
	if res.Base64Encoded {
		raw, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			return "Body: undecodable"
		}
		data = raw
	}
	if !utf8.Valid(data[:min(len(data), 4096)]) && !textMIME(e.mime) {
		return fmt.Sprintf("Body: %d bytes of binary %s, not shown.", len(data), e.mime)
	}
	shown, omitted := clip(string(data), maxBodyShown)
	out := fmt.Sprintf("Body (%d bytes):\n%s", len(data), shown)
	if omitted > 0 {
		out += fmt.Sprintf("\n[cut: %d more bytes]", omitted)
	}
	return out
}

func textMIME(m string) bool {
	return strings.HasPrefix(m, "text/") || strings.Contains(m, "json") || strings.Contains(m, "xml") || strings.Contains(m, "javascript")
}

//go:embed perf.js
var perfJS string

// perfDeclaration is perf.js without its leading comment.
var perfDeclaration = perfJS[strings.Index(perfJS, "function"):]

type perfReport struct {
	URL       string   `json:"url"`
	Started   bool     `json:"started"`
	Load      bool     `json:"load"`
	Elapsed   float64  `json:"elapsed"`
	Supported []string `json:"supported"`
	LCP       *struct {
		T      float64 `json:"t"`
		Size   float64 `json:"size"`
		El     string  `json:"el"`
		URL    string  `json:"url"`
		Before bool    `json:"before"`
	} `json:"lcp"`
	CLS *struct {
		Value  float64 `json:"value"`
		Shifts int     `json:"shifts"`
	} `json:"cls"`
	INP *struct {
		Count    int     `json:"count"`
		Value    float64 `json:"value"`
		Name     string  `json:"name"`
		Observed bool    `json:"observed"`
	} `json:"inp"`
	Tasks *struct {
		Count    int     `json:"count"`
		Total    float64 `json:"total"`
		Blocking float64 `json:"blocking"`
		Longest  float64 `json:"longest"`
	} `json:"tasks"`
}

// traceWorld is the isolated world the trace runs in, apart from the
// engine's helper world.
const traceWorld = "reins-trace"

// trace starts or stops a trace in the tab's trace world. While a trace is
// on, every new document of the tab runs perf.js's "load" at its start, so
// a reload or a navigation is measured from its beginning. The browser's
// own Tracing domain is not used: a trace started through one tab records
// the whole browser, other sites' tabs included.
func (c *call) trace(ctx context.Context, ts *tabState, in *devtoolsArgs) (*Result, error) {
	action := strings.TrimPrefix(in.Action, "trace_")
	if action == "start" {
		if err := ts.traceNewDocuments(ctx, c.s.Label, true); err != nil {
			return nil, err
		}
	}
	raw, err := c.inTraceWorld(ctx, ts, in.TabID, action)
	if action == "stop" {
		if err := ts.traceNewDocuments(ctx, c.s.Label, false); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	if action == "start" {
		var st struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal([]byte(raw), &st)
		return textResult(fmt.Sprintf("Tracing tab %d (%s). Load or use the page, then call devtools trace_stop; a page loaded meanwhile is measured from its start.", in.TabID, truncate(st.URL, 300))), nil
	}
	var r perfReport
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, wire.Errorf(wire.CodeInternal, "decoding the trace: %v", err)
	}
	return textResult(r.summary(in.TabID)...), nil
}

// inTraceWorld runs perf.js with action in the trace world of the tab's
// main frame and returns its JSON answer.
func (c *call) inTraceWorld(ctx context.Context, ts *tabState, tabID int, action string) (string, error) {
	for attempt := 0; ; attempt++ {
		frame, err := ts.mainFrameNow(ctx, c.s.Label)
		if err != nil {
			return "", err
		}
		var world struct {
			ID int `json:"executionContextId"`
		}
		if err := c.cdp(ctx, tabID, "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": traceWorld}, &world); err != nil {
			return "", err
		}
		var res evalResult
		err = c.cdp(ctx, tabID, "Runtime.callFunctionOn", map[string]any{
			"functionDeclaration": perfDeclaration, "executionContextId": world.ID,
			"arguments": []map[string]any{{"value": action}}, "returnByValue": true, "awaitPromise": true,
		}, &res)
		if err != nil && attempt == 0 && contextGone(err) {
			continue // the document changed under the call
		}
		if err != nil {
			return "", err
		}
		if res.ExceptionDetails != nil {
			return "", wire.Errorf(wire.CodeInternal, "the trace script failed: %s", firstLine(res.ExceptionDetails.text()))
		}
		var raw string
		if err := json.Unmarshal(res.Result.Value, &raw); err != nil {
			return "", wire.Errorf(wire.CodeInternal, "the trace script answered %s", truncate(string(res.Result.Value), 200))
		}
		return raw, nil
	}
}

// traceNewDocuments has every new document of the tab start measuring at
// its beginning (on), or stops that (off). ensure puts it back after the
// debugger detached, which drops it.
func (ts *tabState) traceNewDocuments(ctx context.Context, agent string, on bool) error {
	ts.mu.Lock()
	old := ts.traceScript
	ts.traceScript, ts.tracing = "", on
	ts.mu.Unlock()
	if old != "" {
		if _, err := ts.e.hub.CDP(ctx, ts.id, "Page.removeScriptToEvaluateOnNewDocument", map[string]any{"identifier": old}, "", agent); err != nil && ts.ready.Load() {
			return fmt.Errorf("ending the trace of tab %d: %w", ts.id, err)
		}
	}
	if !on {
		return nil
	}
	var added struct {
		Identifier string `json:"identifier"`
	}
	raw, err := ts.e.hub.CDP(ctx, ts.id, "Page.addScriptToEvaluateOnNewDocument", map[string]any{
		"source": "(" + perfDeclaration + ")('load')", "worldName": traceWorld,
	}, "", agent)
	if err != nil {
		return fmt.Errorf("starting the trace of tab %d: %w", ts.id, err)
	}
	if err := json.Unmarshal(raw, &added); err != nil || added.Identifier == "" {
		return wire.Errorf(wire.CodeInternal, "Page.addScriptToEvaluateOnNewDocument returned no identifier")
	}
	ts.mu.Lock()
	ts.traceScript = added.Identifier
	ts.mu.Unlock()
	return nil
}

// rate grades a metric by the Web Vitals thresholds.
func rate(v, good, poor float64) string {
	switch {
	case v <= good:
		return "good"
	case v <= poor:
		return "needs improvement"
	}
	return "poor"
}

func (r perfReport) summary(tab int) []string {
	span := "since trace_start"
	switch {
	case r.Load:
		span = "since the page loaded, after trace_start"
	case !r.Started:
		span = "since the page loaded (no trace_start in this document)"
	}
	lines := []string{fmt.Sprintf("Trace of tab %d, %s: %.1f s %s.", tab, truncate(r.URL, 300), r.Elapsed/1000, span)}
	unsupported := func(metric, entry string) string {
		return fmt.Sprintf("%s: not measured; this browser has no %q performance entries.", metric, entry)
	}
	if r.LCP != nil {
		l := fmt.Sprintf("LCP: %.0f ms (%s", r.LCP.T, r.LCP.El)
		if r.LCP.URL != "" {
			l += " " + r.LCP.URL
		}
		l += fmt.Sprintf(", %.0f px²), %s", r.LCP.Size, rate(r.LCP.T, 2500, 4000))
		if r.LCP.Before {
			l += "; painted before the trace started"
		}
		lines = append(lines, l)
	} else if supports(r.Supported, "largest-contentful-paint") {
		lines = append(lines, "LCP: none yet (nothing painted, or the page is hidden).")
	} else {
		lines = append(lines, unsupported("LCP", "largest-contentful-paint"))
	}
	if r.CLS != nil {
		lines = append(lines, fmt.Sprintf("CLS: %.3f from %d layout shift(s), %s", r.CLS.Value, r.CLS.Shifts, rate(r.CLS.Value, 0.1, 0.25)))
	} else {
		lines = append(lines, unsupported("CLS", "layout-shift"))
	}
	switch {
	case r.INP == nil:
		lines = append(lines, unsupported("INP", "event"))
	case r.INP.Count == 0:
		note := ""
		if !r.INP.Observed {
			note = " (without trace_start in this document only interactions over 104 ms are seen)"
		}
		lines = append(lines, "INP: no interactions"+note+".")
	default:
		lines = append(lines, fmt.Sprintf("INP: %.0f ms (%s, worst of %d interaction(s)), %s", r.INP.Value, r.INP.Name, r.INP.Count, rate(r.INP.Value, 200, 500)))
	}
	if r.Tasks != nil {
		lines = append(lines, fmt.Sprintf("Long tasks: %d, longest %.0f ms, %.0f ms in all, total blocking time %.0f ms.", r.Tasks.Count, r.Tasks.Longest, r.Tasks.Total, math.Round(r.Tasks.Blocking)))
	} else {
		lines = append(lines, unsupported("Long tasks", "longtask"))
	}
	return lines
}

func supports(list []string, t string) bool {
	for _, s := range list {
		if s == t {
			return true
		}
	}
	return false
}
