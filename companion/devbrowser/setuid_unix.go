//go:build unix

package devbrowser

import (
	"io/fs"
	"os"
	"syscall"
)

func setuidRoot(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&fs.ModeSetuid == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == 0
}
