// Package osenv is the person's machine as the first-run code sees it: the
// system, the home dir, the environment and the commands on PATH. It is
// injected everywhere so that the Linux, macOS and Windows layouts of
// browsers and MCP clients are all tested on one machine.
package osenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Env is one user on one machine.
type Env struct {
	GOOS   string // "linux", "darwin", "windows"
	Home   string
	Getenv func(string) string
	// LookPath finds a command on PATH (exec.LookPath).
	LookPath func(string) (string, error)
	// Run runs a command and returns its combined output.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
	Now func() time.Time
}

// System is this user on this machine.
func System() (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, err
	}
	return Env{
		GOOS: runtime.GOOS, Home: home, Getenv: os.Getenv, LookPath: exec.LookPath, Now: time.Now,
		Run: func(ctx context.Context, name string, args ...string) ([]byte, error) {
			return exec.CommandContext(ctx, name, args...).CombinedOutput()
		},
	}, nil
}

// Env reads an environment variable ("" without one).
func (e Env) Env(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// Join builds a path with the target system's separator, so a Windows
// layout can be computed (and tested) on Linux.
func (e Env) Join(elem ...string) string {
	if e.GOOS == "windows" && runtime.GOOS != "windows" {
		out := elem[0]
		for _, p := range elem[1:] {
			out = strings.TrimRight(out, `\/`) + `\` + p
		}
		return out
	}
	return filepath.Join(elem...)
}

// ConfigHome is where desktop apps keep settings: $XDG_CONFIG_HOME (or
// ~/.config) on Linux, ~/Library/Application Support on macOS, %APPDATA%
// (Roaming) on Windows.
func (e Env) ConfigHome() string {
	switch e.GOOS {
	case "darwin":
		return e.Join(e.Home, "Library", "Application Support")
	case "windows":
		if d := e.Env("APPDATA"); d != "" {
			return d
		}
		return e.Join(e.Home, "AppData", "Roaming")
	default:
		if d := e.Env("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
			return d
		}
		return e.Join(e.Home, ".config")
	}
}

// LocalAppData is %LOCALAPPDATA% on Windows, where per-user programs and
// Chromium's profiles live.
func (e Env) LocalAppData() string {
	if d := e.Env("LOCALAPPDATA"); d != "" {
		return d
	}
	return e.Join(e.Home, "AppData", "Local")
}

// ProgramFiles is %ProgramFiles% (and with x86, %ProgramFiles(x86)%).
func (e Env) ProgramFiles(x86 bool) string {
	k, def := "ProgramFiles", `C:\Program Files`
	if x86 {
		k, def = "ProgramFiles(x86)", `C:\Program Files (x86)`
	}
	if d := e.Env(k); d != "" {
		return d
	}
	return def
}

// OnPath finds cmd on PATH.
func (e Env) OnPath(cmd string) (string, bool) {
	if e.LookPath == nil {
		return "", false
	}
	p, err := e.LookPath(cmd)
	return p, err == nil
}

// Exists reports whether p exists.
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
