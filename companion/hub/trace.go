package hub

import (
	"context"
	"sync"
	"time"
)

// Trace records how long each browser request of one call took, for the
// benchmarks' per-hop timing. A call is traced only when its context
// carries a Trace (WithTrace); otherwise CDP pays one context lookup.
type Trace struct {
	mu    sync.Mutex
	steps []TraceStep
}

// TraceStep is one request: the CDP method and its round trip through
// the hub, the socket and the browser, in ms.
type TraceStep struct {
	Method string  `json:"method"`
	MS     float64 `json:"ms"`
}

type traceKey struct{}

// WithTrace returns a context whose CDP requests are recorded in tr.
func WithTrace(ctx context.Context, tr *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, tr)
}

func traceOf(ctx context.Context) *Trace {
	tr, _ := ctx.Value(traceKey{}).(*Trace)
	return tr
}

func (tr *Trace) add(method string, d time.Duration) {
	tr.mu.Lock()
	tr.steps = append(tr.steps, TraceStep{Method: method, MS: float64(d.Microseconds()) / 1000})
	tr.mu.Unlock()
}

// Steps returns the requests recorded so far, in the order they ended.
func (tr *Trace) Steps() []TraceStep {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]TraceStep(nil), tr.steps...)
}
