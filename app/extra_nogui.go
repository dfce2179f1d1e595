//go:build nogui

package app

import "errors"

// The server build (-tags nogui, no cgo: make build writes it to
// bin/server/reins, make dist-server packs it) leaves out the
// tray and links no GUI toolkit, so it runs on a machine with no display
// libraries and keeps the companion's memory to the companion.
func extraCommands() []command {
	return []command{
		{"tray", "not in this build: the server build has no tray; run `reins headless`", runNoTray},
	}
}

const buildSuffix = " (server build)"

const withNoCommand = "This is the server build of reins: it has no tray, and `reins headless` runs the companion."

var errServerBuild = errors.New("this is the server build of reins, which has no tray: run `reins headless`")

func runNoTray(Env, []string) error { return errServerBuild }
