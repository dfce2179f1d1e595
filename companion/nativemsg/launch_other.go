//go:build !unix && !windows

package nativemsg

import (
	"os"
	"os/exec"
)

func startDetached(bin, dir string) (*os.Process, error) {
	cmd := exec.Command(bin)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd.Process, nil
}
