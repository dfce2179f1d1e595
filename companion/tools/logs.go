package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Each tab's console and network buffers are bounded by count and by bytes;
// the oldest entries go first.
const (
	maxLogEntries = 500
	maxLogBytes   = 2 << 20
	// maxConsoleEntryBytes bounds one console entry. A bigger event (a
	// console.log of a huge string) is formatted at once and its text cut
	// with a marker, so it is never held whole.
	maxConsoleEntryBytes = 16 << 10
	// maxNetURLBytes bounds a request's URL as kept (data: URLs can be
	// megabytes); maxNetTextBytes its MIME type and error text.
	maxNetURLBytes  = 4 << 10
	maxNetTextBytes = 256
	// maxConsoleShown bounds one message in read_console_messages' answer.
	maxConsoleShown = 2000
	// maxStackFrames bounds the call frames kept and shown for a message.
	maxStackFrames = 8
	// maxNetHeaderBytes bounds a request's headers as kept, each way.
	maxNetHeaderBytes = 8 << 10
)

type consoleArgs struct {
	TabID      int    `json:"tabId" jsonschema:"tab id"`
	Pattern    string `json:"pattern,omitempty" jsonschema:"only messages matching this regexp or text"`
	Limit      int    `json:"limit,omitempty" jsonschema:"newest N (default 100)"`
	OnlyErrors bool   `json:"onlyErrors,omitempty" jsonschema:"only errors and uncaught exceptions"`
	Clear      bool   `json:"clear,omitempty" jsonschema:"empty the buffer after reading"`
}

type networkArgs struct {
	TabID      int    `json:"tabId" jsonschema:"tab id"`
	URLPattern string `json:"urlPattern,omitempty" jsonschema:"only requests whose URL contains this text"`
	Limit      int    `json:"limit,omitempty" jsonschema:"newest N (default 100)"`
	Clear      bool   `json:"clear,omitempty" jsonschema:"empty the buffer after reading"`
}

func registerLogs(e *Engine) {
	define(e, Info{
		Name:        "read_console_messages",
		Description: "Read a tab's console messages and uncaught exceptions since Reins first used the tab (newest last; 500 kept, each cut at 16 KiB).",
		ReadOnly:    true, Batchable: true,
	}, func(s *jsonschema.Schema) { bounds(s, "limit", 0, maxLogEntries) }, runConsole)
	define(e, Info{
		Name:        "read_network_requests",
		Description: "Read a tab's network requests (method, URL, status, type), captured since Reins first used the tab (at most 500 or 2 MiB kept).",
		ReadOnly:    true, Batchable: true,
	}, func(s *jsonschema.Schema) { bounds(s, "limit", 0, maxLogEntries) }, runNetwork)
}

// ---- console buffer

type consoleEntry struct {
	at     time.Time
	method string
	params json.RawMessage
	// line is set instead of params for an event too big to keep raw.
	line *consoleLine
}

// size is what the entry holds, for the byte bound.
func (e consoleEntry) size() int {
	if e.line != nil {
		n := len(e.line.level) + len(e.line.text) + len(e.line.where)
		for _, f := range e.line.stack {
			n += len(f)
		}
		return n
	}
	return len(e.params)
}

type consoleLog struct {
	mu       sync.Mutex
	max      int // entries
	maxBytes int
	entries  []consoleEntry
	bytes    int
	dropped  int
}

func newConsoleLog(max, maxBytes int) *consoleLog { return &consoleLog{max: max, maxBytes: maxBytes} }

// add keeps the raw event; formatting waits until someone reads, so the
// reader goroutine that delivers events does no extra work. An event over
// maxConsoleEntryBytes is the exception: it is formatted now and cut.
func (l *consoleLog) add(method string, params json.RawMessage) {
	e := consoleEntry{at: time.Now(), method: method, params: params}
	if len(params) > maxConsoleEntryBytes {
		line := formatConsole(e)
		var omitted int
		line.text, omitted = clip(line.text, maxConsoleEntryBytes-512)
		line.omitted += omitted
		line.where = truncate(line.where, 256)
		for i, f := range line.stack {
			line.stack[i] = truncate(f, 256)
		}
		e.params, e.line = nil, &line
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
	l.bytes += e.size()
	n := 0
	for len(l.entries)-n > l.max || (l.bytes > l.maxBytes && len(l.entries)-n > 1) {
		l.bytes -= l.entries[n].size()
		n++
	}
	if n > 0 {
		l.dropped += n
		l.entries = append(l.entries[:0:0], l.entries[n:]...)
	}
}

func (l *consoleLog) snapshot(clear bool) ([]consoleEntry, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]consoleEntry(nil), l.entries...)
	dropped := l.dropped
	if clear {
		l.entries = nil
		l.bytes = 0
		l.dropped = 0
	}
	return out, dropped
}

// clip shortens s to at most n bytes (on a rune boundary, marked with an
// ellipsis) and says how many bytes it left out.
func clip(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	kept := truncate(s, n)
	return kept, len(s) - (len(kept) - len("…"))
}

type consoleLine struct {
	level string
	text  string
	where string
	// stack is the call stack, innermost first, at most maxStackFrames.
	stack []string
	// omitted counts the bytes of the message cut off before text.
	omitted int
}

// stackTrace is the DevTools protocol's Runtime.StackTrace.
type stackTrace struct {
	CallFrames []struct {
		Function string `json:"functionName"`
		URL      string `json:"url"`
		Line     int    `json:"lineNumber"`
		Column   int    `json:"columnNumber"`
	} `json:"callFrames"`
}

// where is the innermost frame's place, and frames the stack as text.
func (st *stackTrace) where() string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf("%s:%d", f.URL, f.Line+1)
}

func (st *stackTrace) frames() []string {
	if st == nil {
		return nil
	}
	var out []string
	for i, f := range st.CallFrames {
		if i == maxStackFrames {
			out = append(out, fmt.Sprintf("… %d more frames", len(st.CallFrames)-i))
			break
		}
		fn := f.Function
		if fn == "" {
			fn = "(anonymous)"
		}
		out = append(out, fmt.Sprintf("%s (%s:%d:%d)", fn, f.URL, f.Line+1, f.Column+1))
	}
	return out
}

// Console levels, lowest first; a level filter keeps its own and higher.
var consoleLevels = []string{"debug", "info", "warn", "error"}

// levelRank orders a message's level among consoleLevels: log, trace,
// table and the like count as info.
func levelRank(level string) int {
	switch level {
	case "debug", "verbose":
		return 0
	case "warn":
		return 2
	case "error":
		return 3
	}
	return 1
}

func formatConsole(e consoleEntry) consoleLine {
	if e.line != nil {
		return *e.line
	}
	switch e.method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type       string         `json:"type"`
			Args       []remoteObject `json:"args"`
			StackTrace *stackTrace    `json:"stackTrace"`
		}
		_ = json.Unmarshal(e.params, &p)
		parts := make([]string, 0, len(p.Args))
		for _, a := range p.Args {
			parts = append(parts, remoteText(a))
		}
		lvl := p.Type
		switch lvl {
		case "warning":
			lvl = "warn"
		case "assert":
			lvl = "error"
		}
		return consoleLine{level: lvl, text: strings.Join(parts, " "), where: p.StackTrace.where(), stack: p.StackTrace.frames()}
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails exceptionDetails `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(e.params, &p)
		var st struct {
			ExceptionDetails struct {
				StackTrace *stackTrace `json:"stackTrace"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(e.params, &st)
		d := p.ExceptionDetails
		where := ""
		if d.URL != "" {
			where = fmt.Sprintf("%s:%d", d.URL, d.Line+1)
		}
		return consoleLine{level: "error", text: "Uncaught " + firstLine(strings.TrimPrefix(d.text(), "Uncaught ")), where: where, stack: st.ExceptionDetails.StackTrace.frames()}
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Source string `json:"source"`
				Level  string `json:"level"`
				Text   string `json:"text"`
				URL    string `json:"url"`
				Line   int    `json:"lineNumber"`
			} `json:"entry"`
		}
		_ = json.Unmarshal(e.params, &p)
		lvl := p.Entry.Level
		if lvl == "warning" {
			lvl = "warn"
		}
		where := p.Entry.URL
		if where != "" && p.Entry.Line > 0 {
			where = fmt.Sprintf("%s:%d", where, p.Entry.Line+1)
		}
		return consoleLine{level: lvl, text: "[" + p.Entry.Source + "] " + p.Entry.Text, where: where}
	}
	return consoleLine{level: "info", text: e.method}
}

func remoteText(a remoteObject) string {
	switch {
	case a.Type == "string":
		var s string
		_ = json.Unmarshal(a.Value, &s)
		return s
	case a.Unserial != "":
		return a.Unserial
	case len(a.Value) > 0:
		return string(a.Value)
	case a.Type == "undefined":
		return "undefined"
	case a.Description != "":
		return a.Description
	}
	return a.Type
}

func matcher(pattern string) func(string) bool {
	if pattern == "" {
		return func(string) bool { return true }
	}
	if re, err := regexp.Compile(pattern); err == nil {
		return re.MatchString
	}
	return func(s string) bool { return strings.Contains(s, pattern) }
}

func runConsole(ctx context.Context, c *call, in *consoleArgs) (*Result, error) {
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 100
	}
	entries, dropped := ts.console.snapshot(in.Clear)
	match := matcher(in.Pattern)
	var lines []string
	for _, e := range entries {
		l := formatConsole(e)
		if in.OnlyErrors && l.level != "error" {
			continue
		}
		if !match(l.text) {
			continue
		}
		lines = append(lines, consoleText(e, l, false))
	}
	return listing(lines, limit, "console message(s)", in.TabID, dropped, in.Clear), nil
}

// consoleText is one message as an agent reads it: level, time, text (cut
// at maxConsoleShown), where it came from and, with stack, its call stack
// on indented lines.
func consoleText(e consoleEntry, l consoleLine, stack bool) string {
	text := l.text
	if l.omitted > 0 {
		text = strings.TrimSuffix(text, "…") // clip marks the cut again
	}
	shown, omitted := clip(text, maxConsoleShown)
	s := fmt.Sprintf("[%s] %s %s", l.level, e.at.Format("15:04:05.000"), shown)
	if omitted += l.omitted; omitted > 0 {
		s += fmt.Sprintf(" [cut: %d more bytes]", omitted)
	}
	if l.where != "" {
		s += " (" + l.where + ")"
	}
	if stack {
		for _, f := range l.stack {
			s += "\n    at " + f
		}
	}
	return s
}

// ---- network buffer

type netEntry struct {
	id       string
	at       time.Time
	method   string
	url      string
	typ      string
	status   int
	mime     string
	failed   string
	size     int64
	finished bool
	// ended is when the response finished loading or failed.
	ended time.Time
	// reqHeaders and respHeaders are "Name: value" lines, at most
	// maxNetHeaderBytes each.
	reqHeaders  string
	respHeaders string
}

// held is what the entry may hold, for the byte bound: its strings as
// first recorded, room for the capped MIME type and error text, its
// headers, and the struct itself.
func (e *netEntry) held() int {
	return len(e.id) + len(e.method) + len(e.url) + len(e.typ) + 2*maxNetTextBytes + len(e.reqHeaders) + len(e.respHeaders) + 128
}

type networkLog struct {
	mu       sync.Mutex
	max      int // entries
	maxBytes int
	byID     map[string]*netEntry
	order    []*netEntry
	bytes    int
	dropped  int
	// changed is closed at the next change, for whoever waits on one;
	// nil when nobody does.
	changed chan struct{}
}

func newNetworkLog(max, maxBytes int) *networkLog {
	return &networkLog{max: max, maxBytes: maxBytes, byID: map[string]*netEntry{}}
}

// headerText turns a DevTools Headers object into sorted "Name: value"
// lines, cut at maxNetHeaderBytes.
func headerText(raw json.RawMessage) string {
	var h map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil || len(h) == 0 {
		return ""
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		v, _ := h[k].(string)
		for _, one := range strings.Split(v, "\n") {
			b.WriteString(k + ": " + one + "\n")
		}
		if b.Len() > maxNetHeaderBytes {
			break
		}
	}
	out, _ := clip(strings.TrimSuffix(b.String(), "\n"), maxNetHeaderBytes)
	return out
}

// add records one Network event. For the main document's response it
// reports the status and loader id, for navigate's result.
func (l *networkLog) add(method string, params json.RawMessage) (status int, loader string, doc bool) {
	var p struct {
		RequestID string `json:"requestId"`
		LoaderID  string `json:"loaderId"`
		Type      string `json:"type"`
		Request   struct {
			URL     string          `json:"url"`
			Method  string          `json:"method"`
			Headers json.RawMessage `json:"headers"`
		} `json:"request"`
		Response struct {
			Status   int             `json:"status"`
			MimeType string          `json:"mimeType"`
			Headers  json.RawMessage `json:"headers"`
		} `json:"response"`
		ErrorText         string  `json:"errorText"`
		Canceled          bool    `json:"canceled"`
		EncodedDataLength float64 `json:"encodedDataLength"`
		RedirectResponse  *struct {
			Status int `json:"status"`
		} `json:"redirectResponse"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == "" || len(p.RequestID) > maxNetTextBytes {
		return 0, "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.signal()
	e := l.byID[p.RequestID]
	switch method {
	case "Network.requestWillBeSent":
		if e != nil && p.RedirectResponse != nil {
			// A redirect reuses the request id: close the old hop.
			e.status = p.RedirectResponse.Status
			e.finished, e.ended = true, time.Now()
			delete(l.byID, p.RequestID)
		}
		e = &netEntry{
			id: p.RequestID, at: time.Now(), method: truncate(p.Request.Method, maxNetTextBytes),
			url: truncate(p.Request.URL, maxNetURLBytes), typ: truncate(p.Type, maxNetTextBytes),
			reqHeaders: headerText(p.Request.Headers),
		}
		l.byID[p.RequestID] = e
		l.order = append(l.order, e)
		l.bytes += e.held()
		l.trim()
	case "Network.responseReceived":
		if e == nil {
			return 0, "", false
		}
		before := e.held()
		e.status, e.mime = p.Response.Status, truncate(p.Response.MimeType, maxNetTextBytes)
		e.respHeaders = headerText(p.Response.Headers)
		l.bytes += e.held() - before
		if p.Type != "" {
			e.typ = p.Type
		}
		l.trim()
		if p.Type == "Document" && p.LoaderID != "" {
			return p.Response.Status, p.LoaderID, true
		}
	case "Network.loadingFinished":
		if e != nil {
			e.finished, e.size, e.ended = true, int64(p.EncodedDataLength), time.Now()
		}
	case "Network.loadingFailed":
		if e != nil {
			e.finished, e.ended = true, time.Now()
			e.failed = truncate(p.ErrorText, maxNetTextBytes)
			if p.Canceled {
				e.failed = "canceled"
			}
		}
	}
	return 0, "", false
}

// trim drops the oldest entries beyond the bounds, keeping the newest one
// whatever its size. l.mu must be held.
func (l *networkLog) trim() {
	n := 0
	for len(l.order)-n > l.max || (l.bytes > l.maxBytes && len(l.order)-n > 1) {
		old := l.order[n]
		if l.byID[old.id] == old {
			delete(l.byID, old.id)
		}
		l.bytes -= old.held()
		n++
	}
	if n > 0 {
		l.dropped += n
		l.order = append(l.order[:0:0], l.order[n:]...)
	}
}

// signal wakes whoever waits for a change. l.mu must be held.
func (l *networkLog) signal() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// next returns a channel closed at the log's next change.
func (l *networkLog) next() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// newest returns a copy of the newest entry ok accepts.
func (l *networkLog) newest(ok func(*netEntry) bool) (netEntry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.order) - 1; i >= 0; i-- {
		if ok(l.order[i]) {
			return *l.order[i], true
		}
	}
	return netEntry{}, false
}

func (l *networkLog) snapshot(clear bool) ([]netEntry, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]netEntry, len(l.order))
	for i, e := range l.order {
		out[i] = *e
	}
	dropped := l.dropped
	if clear {
		l.order = nil
		l.byID = map[string]*netEntry{}
		l.bytes = 0
		l.dropped = 0
	}
	return out, dropped
}

func runNetwork(ctx context.Context, c *call, in *networkArgs) (*Result, error) {
	ts, _, err := c.page(ctx, in.TabID, accessRead)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 100
	}
	entries, dropped := ts.network.snapshot(in.Clear)
	var lines []string
	for _, e := range entries {
		if in.URLPattern != "" && !strings.Contains(e.url, in.URLPattern) {
			continue
		}
		status := "pending"
		switch {
		case e.failed != "":
			status = "failed: " + e.failed
		case e.status != 0:
			status = fmt.Sprint(e.status)
		}
		s := fmt.Sprintf("%s %s %s → %s", e.at.Format("15:04:05.000"), e.method, truncate(e.url, 300), status)
		if e.typ != "" {
			s += " [" + e.typ + "]"
		}
		if e.mime != "" {
			s += " " + e.mime
		}
		if e.size > 0 {
			s += fmt.Sprintf(" %d B", e.size)
		}
		lines = append(lines, s)
	}
	return listing(lines, limit, "request(s)", in.TabID, dropped, in.Clear), nil
}

// listing keeps the newest limit lines of a captured buffer and heads them
// with what was found, shown, dropped and cleared.
func listing(lines []string, limit int, noun string, tab, dropped int, cleared bool) *Result {
	total := len(lines)
	if len(lines) > limit {
		lines = lines[len(lines)-limit:]
	}
	head := fmt.Sprintf("%d %s from tab %d", total, noun, tab)
	if total > len(lines) {
		head += fmt.Sprintf(", showing the newest %d", len(lines))
	}
	if dropped > 0 {
		head += fmt.Sprintf("; %d older ones were dropped", dropped)
	}
	if cleared {
		head += "; buffer cleared"
	}
	return textResult(append([]string{head + ":"}, lines...)...)
}
