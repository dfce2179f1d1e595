//go:build !nogui

package app

// buildSuffix follows the version: nothing for the desktop build.
const buildSuffix = ""

const withNoCommand = "With no command, reins starts the tray app with the companion."

func extraCommands() []command {
	return []command{
		{"tray", "start the tray app with the companion (the default)", runTray},
	}
}
