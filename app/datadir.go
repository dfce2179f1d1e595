package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkDataDir refuses a data dir that someone else could change. The data
// dir holds the token store (with --keyring file), the admin socket that
// every CLI command trusts, and the Live view link files: another user who
// owns it, or may write in it, could plant a socket that impersonates the
// companion or read what the files hold. A dir that does not exist yet is
// fine: Reins creates it with mode 0700.
func checkDataDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking the data dir %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the data dir %s is not a directory; pass --data-dir with a directory of your own", dir)
	}
	return checkDataDirOwner(dir, fi)
}
