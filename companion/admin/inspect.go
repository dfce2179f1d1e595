package admin

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/reinshq/reins/companion/hub"
	"github.com/reinshq/reins/companion/wire"
)

// The inspection routes serve the hub's Go API as JSON, for end-to-end tests,
// benchmarks and diagnostics (`reins headless --inspect`). They live on the
// admin channel, so only this user reaches them, and answer not_implemented
// unless the companion turned them on.
//
//	GET  /v1/inspect/browsers       connected browsers (hub.Browsers)
//	GET  /v1/inspect/tabs           every tab with public ids (hub.Tabs)
//	GET  /v1/inspect/changes        NDJSON: a {browsers, tabs} snapshot now and after every change signal
//	GET  /v1/inspect/events?tab=N   NDJSON: the tab's events (hub.SubscribeTab) until the client leaves
//	POST /v1/inspect/request        {browserId, method, params} → the raw result of one wire request
//	POST /v1/inspect/cdp            {tabId, method, params, sessionId} → hub.CDP
//	POST /v1/inspect/tabs/create    {browserId, url, active, group, owner} → the new tab
//	POST /v1/inspect/tabs/close     {tabId} → {}
//	GET  /v1/inspect/runtime        goroutines, heap and per-tab state counts (Runtime), for soak tests
//
// The four POST routes act on browsers as freely as every tool together, so
// each asks Inspect.Allow first: nothing reaches a browser through them while
// the person has paused automation or turned a tool off.

// Inspect is what the inspection routes act on.
type Inspect struct {
	Hub *hub.Hub
	// Changes subscribes to state changes: the channel receives a coalesced
	// signal on every change (and one at once), and is closed when the
	// source shuts down; cancel ends the subscription. Companion.Changes is
	// one. Without it /changes answers not_implemented: the hub alone offers
	// no change subscription, and polling would hide the missing hookup.
	Changes func() (<-chan struct{}, func())
	// Allow is asked before every request the routes send to a browser; its
	// error (paused, tool_disabled) refuses the request. Nil allows all.
	Allow func() error
	// Runtime reports the counts a soak test watches for leaks. Nil
	// leaves /runtime answering not_implemented.
	Runtime func() Runtime
	// StreamQueue bounds the events waiting for one /events client
	// (default DefaultStreamQueue).
	StreamQueue int
}

// DefaultStreamQueue is the default bound on the events waiting for one
// /events client. A client that falls this far behind is cut off instead of
// stalling the hub's reader.
const DefaultStreamQueue = 1024

// inspectRoutes is the inspection part of the route table.
func (h *Handler) inspectRoutes() map[string]http.Handler {
	routes := map[string]http.HandlerFunc{
		"GET /v1/inspect/browsers":     h.inspectBrowsers,
		"GET /v1/inspect/tabs":         h.inspectTabs,
		"GET /v1/inspect/changes":      h.inspectChanges,
		"GET /v1/inspect/events":       h.inspectEvents,
		"POST /v1/inspect/request":     h.inspectRequest,
		"POST /v1/inspect/cdp":         h.inspectCDP,
		"POST /v1/inspect/tabs/create": h.inspectCreateTab,
		"POST /v1/inspect/tabs/close":  h.inspectCloseTab,
		"GET /v1/inspect/runtime":      h.inspectRuntime,
	}
	out := make(map[string]http.Handler, len(routes))
	for p, fn := range routes {
		if h.opts.Inspect == nil || h.opts.Inspect.Hub == nil {
			out[p] = h.serve(func(*http.Request) (any, error) {
				return nil, wire.Errorf(wire.CodeNotImplemented, "this companion serves no inspection routes (start it with reins headless --inspect)")
			})
			continue
		}
		out[p] = fn
	}
	return out
}

func (h *Handler) hub() *hub.Hub { return h.opts.Inspect.Hub }

// allow is the check in front of every route that talks to a browser.
func (h *Handler) allow() error {
	if h.opts.Inspect.Allow == nil {
		return nil
	}
	return h.opts.Inspect.Allow()
}

// inspectBody reads a JSON request body into v, capped at the wire frame
// limit (a CDP command's params may be that large).
func inspectBody(r *http.Request, v any) error {
	body := http.MaxBytesReader(nil, r.Body, wire.MaxFrameBytes)
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return wire.Errorf(wire.CodeBadParams, "malformed request body: %w", err)
	}
	return nil
}

func writeResult(w http.ResponseWriter, res json.RawMessage) {
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	writeRaw(w, http.StatusOK, res)
}

func (h *Handler) inspectBrowsers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.hub().Browsers())
}

func (h *Handler) inspectTabs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, nonNil(h.hub().Tabs()))
}

func nonNil(t []hub.Tab) []hub.Tab {
	if t == nil {
		return []hub.Tab{}
	}
	return t
}

// RequestBody is the body of POST /v1/inspect/request.
type RequestBody struct {
	BrowserID string          `json:"browserId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
}

// CDPBody is the body of POST /v1/inspect/cdp.
type CDPBody struct {
	TabID     int             `json:"tabId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

// CreateBody is the body of POST /v1/inspect/tabs/create.
type CreateBody struct {
	BrowserID string `json:"browserId"`
	URL       string `json:"url"`
	Active    bool   `json:"active"`
	Group     string `json:"group,omitempty"`
	Owner     string `json:"owner,omitempty"`
}

// CloseBody is the body of POST /v1/inspect/tabs/close.
type CloseBody struct {
	TabID int `json:"tabId"`
}

// act decodes a POST route's body into in, asks Allow, and runs do; its
// result (raw JSON, or a value to encode) or error is the answer.
func act[In any](h *Handler, w http.ResponseWriter, r *http.Request, check func(*In) error, do func(context.Context, *In) (any, error)) {
	in := new(In)
	if err := inspectBody(r, in); err != nil {
		writeError(w, err)
		return
	}
	if check != nil {
		if err := check(in); err != nil {
			writeError(w, err)
			return
		}
	}
	if err := h.allow(); err != nil {
		writeError(w, err)
		return
	}
	out, err := do(r.Context(), in)
	if err != nil {
		writeError(w, err)
		return
	}
	if raw, ok := out.(json.RawMessage); ok {
		writeResult(w, raw)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// rawParams is a body's params as the hub takes them: nil when absent.
func rawParams(p json.RawMessage) any {
	if len(p) == 0 || string(p) == "null" {
		return nil
	}
	return p
}

func (h *Handler) inspectRequest(w http.ResponseWriter, r *http.Request) {
	act(h, w, r, func(in *RequestBody) error {
		if in.BrowserID == "" || in.Method == "" {
			return wire.Errorf(wire.CodeBadParams, "browserId and method are required")
		}
		return nil
	}, func(ctx context.Context, in *RequestBody) (any, error) {
		return h.hub().Request(ctx, in.BrowserID, in.Method, rawParams(in.Params))
	})
}

func (h *Handler) inspectCDP(w http.ResponseWriter, r *http.Request) {
	act(h, w, r, func(in *CDPBody) error {
		if in.Method == "" {
			return wire.Errorf(wire.CodeBadParams, "method is required")
		}
		return nil
	}, func(ctx context.Context, in *CDPBody) (any, error) {
		return h.hub().CDP(ctx, in.TabID, in.Method, rawParams(in.Params), in.SessionID, "inspect")
	})
}

func (h *Handler) inspectCreateTab(w http.ResponseWriter, r *http.Request) {
	act(h, w, r, nil, func(ctx context.Context, in *CreateBody) (any, error) {
		return h.hub().TabsCreate(ctx, in.BrowserID, in.URL, in.Active, in.Group, in.Owner)
	})
}

func (h *Handler) inspectCloseTab(w http.ResponseWriter, r *http.Request) {
	act(h, w, r, nil, func(ctx context.Context, in *CloseBody) (any, error) {
		return struct{}{}, h.hub().TabsClose(ctx, in.TabID)
	})
}

// Runtime is what a long run watches for leaks: counts that must stay flat
// while the same work repeats.
type Runtime struct {
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heapAlloc"`
	// TabStates is how many tabs the tool engine follows (its per-tab
	// state); HubTabs the tabs the hub lists.
	TabStates int `json:"tabStates"`
	HubTabs   int `json:"hubTabs"`
	// Remembered is what the hub keeps of browsers that left, for their
	// return: instances, browser sessions and tab ids.
	RememberedInstances int `json:"rememberedInstances"`
	RememberedSessions  int `json:"rememberedSessions"`
	RememberedTabs      int `json:"rememberedTabs"`
}

func (h *Handler) inspectRuntime(w http.ResponseWriter, r *http.Request) {
	if h.opts.Inspect.Runtime == nil {
		writeError(w, wire.Errorf(wire.CodeNotImplemented, "this companion reports no runtime counts"))
		return
	}
	writeJSON(w, http.StatusOK, h.opts.Inspect.Runtime())
}
