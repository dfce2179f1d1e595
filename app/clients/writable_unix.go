//go:build !windows

package clients

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// writable says whether the person lets this file be written. A rename
// would replace a read-only file all the same (and root may write
// anything), so the mode the person set is checked here, before anything
// is written, and then the OS is asked.
func writable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o200 == 0 {
		return errors.New("the file is marked read-only")
	}
	return unix.Access(path, unix.W_OK)
}
