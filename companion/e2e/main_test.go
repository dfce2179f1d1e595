package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/reinshq/reins/companion/e2e/internal/harness"
)

func TestMain(m *testing.M) {
	code := m.Run()
	closeBenchStacks()
	harness.Cleanup()
	harness.CleanupFirefox()
	os.Exit(code)
}

// setupTimeout bounds starting a stack; Chromium's first start on a busy
// 2-core machine takes a few seconds.
const setupTimeout = 60 * time.Second

// newStack starts reins, Chromium and the pages for one test and stops them
// when it ends, checking that reins exits cleanly on SIGTERM.
func newStack(t testing.TB, opts ...harness.ChromiumOption) *harness.Stack {
	t.Helper()
	return startFor(t, "chromium", setupTimeout, func(ctx context.Context) (*harness.Stack, error) {
		return harness.StartStack(ctx, opts...)
	})
}

// stack is what startFor needs of a harness stack.
type stack interface {
	Close() error
	Diagnostics() string
	ReinsOutput() string
}

// startFor starts a stack for one test within d and stops it when the test
// ends, checking that reins exits cleanly on SIGTERM; a failed test logs
// the processes' output.
func startFor[S stack](t testing.TB, browser string, d time.Duration, start func(context.Context) (S, error)) S {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	s, err := start(ctx)
	if err != nil {
		t.Fatalf("starting reins and %s: %v", browser, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(s.Diagnostics())
		}
		if err := s.Close(); err != nil {
			t.Errorf("stopping reins: %v\n%s", err, harness.Tail(s.ReinsOutput(), 40))
		}
	})
	return s
}

// within is a context for one step of a test.
func within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// startReins runs reins headless with args, stopped (and required to exit
// cleanly) when the test ends.
func startReins(ctx context.Context, t testing.TB, args ...string) *harness.Reins {
	t.Helper()
	r, err := harness.StartReins(ctx, args...)
	if err != nil {
		t.Fatalf("starting reins %v: %v", args, err)
	}
	t.Cleanup(func() {
		if err := r.Stop(15 * time.Second); err != nil {
			t.Errorf("stopping reins: %v\n%s", err, harness.Tail(r.Output(), 40))
		}
		r.Close()
	})
	return r
}
