//go:build !linux

package browsers

import (
	"context"
	"errors"
)

// Stop is only needed on Linux, where the package offers the packed
// extension at the browser's next start.
func Stop(ctx context.Context, exe string) error {
	return errors.New("restarting a browser from Reins is only supported on Linux; close and reopen it")
}
