package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/emersion/go-autostart"
)

// Autostart registers Reins to start at login: an XDG autostart entry on
// Linux, a LaunchAgent on macOS, a shortcut in the Startup folder on Windows.
type Autostart struct {
	app *autostart.App
}

// NewAutostart describes the running executable as the login item.
func NewAutostart() (*Autostart, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the reins executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return &Autostart{app: &autostart.App{
		Name:        "reins",
		DisplayName: "Reins",
		Exec:        []string{exe},
	}}, nil
}

// Enabled reports whether Reins starts at login.
func (a *Autostart) Enabled() bool { return a.app.IsEnabled() }

// SetEnabled turns start at login on or off.
func (a *Autostart) SetEnabled(on bool) error {
	if on == a.app.IsEnabled() {
		return nil
	}
	if on {
		if err := a.app.Enable(); err != nil {
			return fmt.Errorf("enabling start at login: %w", err)
		}
		return nil
	}
	if err := a.app.Disable(); err != nil {
		return fmt.Errorf("disabling start at login: %w", err)
	}
	return nil
}
