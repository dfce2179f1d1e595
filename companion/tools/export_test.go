package tools

import "testing"

// OnWait calls fn whenever a call starts to wait on a tab's events, until
// the test ends: a test makes its fault once the call it checks waits.
func OnWait(t testing.TB, fn func(tab int)) {
	waitHook.Store(&fn)
	t.Cleanup(func() { waitHook.Store(nil) })
}
