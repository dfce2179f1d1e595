package clients

import (
	"errors"
	"os"
)

// writable honours the read-only attribute, which Go reports as a missing
// owner write bit; a rename would replace the file all the same.
func writable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o200 == 0 {
		return errors.New("the file is marked read-only")
	}
	return nil
}
