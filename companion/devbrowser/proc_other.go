//go:build !unix && !windows

package devbrowser

import (
	"errors"
	"os"
	"os/exec"
)

func passPipes(*exec.Cmd, *os.File, *os.File) []string { return nil }

func startProcess(*exec.Cmd) (*process, error) {
	return nil, errors.New("a dev browser needs Linux, macOS, a BSD or Windows")
}
