//go:build unix

package app

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

func checkDataDirOwner(dir string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("checking the data dir %s: no owner information", dir)
	}
	return dataDirProblem(dir, int(st.Uid), os.Geteuid(), fi.Mode())
}

// dataDirProblem says what is wrong with a data dir owned by owner with
// mode, for the user uid, or nil.
func dataDirProblem(dir string, owner, uid int, mode fs.FileMode) error {
	if owner != uid {
		return fmt.Errorf("the data dir %s belongs to user id %d, not to you (user id %d): its owner could read and change what Reins keeps there; use a directory of your own (--data-dir DIR), or take this one over with: chown %d %s && chmod 700 %s",
			dir, owner, uid, uid, dir, dir)
	}
	if perm := mode.Perm(); perm&0o022 != 0 {
		return fmt.Errorf("the data dir %s is writable by its group or by everyone (mode %04o): other users could plant files in it; fix it with: chmod 700 %s",
			dir, perm, dir)
	}
	return nil
}
