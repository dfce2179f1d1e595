// Package e2e holds the end-to-end tests and benchmarks of Reins: the real
// `reins headless` binary, a real headless Chromium loading the real
// unpacked extension/, and local test pages, all on 127.0.0.1. The tests
// drive and observe the companion through the inspection routes of its admin
// socket (companion/admin, `reins headless --inspect`) and the browser
// through its own DevTools port.
//
// They need Chromium at $REINS_CHROMIUM (default /usr/lib/chromium/chromium)
// and fail, never skip, without it. $REINS_BIN names the binary under test;
// without it the tests build one. Run them with `make test-e2e`, the
// benchmarks with `make bench`.
package e2e
