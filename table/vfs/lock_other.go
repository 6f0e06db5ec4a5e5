//go:build !unix

package vfs

import (
	"fmt"
	"io"
	"os"
)

// lockFile only creates the file where advisory locks are not available;
// the table box runs Linux, where lock_unix.go applies.
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, fmt.Errorf("vfs: lock %s: %w", name, err)
	}
	return f, nil
}
