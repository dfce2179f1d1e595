//go:build !unix && !windows

package tokens

// lockDir is a no-op where the platform offers no file locks; one process at
// a time is then the caller's promise.
func lockDir(string) (func(), error) { return func() {}, nil }
