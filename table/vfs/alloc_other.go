//go:build !linux

package vfs

import (
	"errors"
	"os"
)

// allocateOS is not available outside Linux (the table box runs Linux):
// the journal then grows its files as it writes.
func allocateOS(*os.File, int64, int64) error { return errors.ErrUnsupported }
