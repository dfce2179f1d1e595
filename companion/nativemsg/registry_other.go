//go:build !windows

package nativemsg

import "errors"

// systemRegistry exists so Installer compiles everywhere; only a Windows
// layout reaches it, and off Windows there is no registry to write.
type systemRegistry struct{}

var errNoRegistry = errors.New("the registry exists only on windows")

func (systemRegistry) SetDefault(string, string) error { return errNoRegistry }
func (systemRegistry) DeleteKey(string) error          { return errNoRegistry }
