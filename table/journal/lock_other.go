//go:build !unix

package journal

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir only creates dir/LOCK where advisory locks are not available; the
// table box runs Linux, where lock_unix.go applies.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: lock %s: %w", path, err)
	}
	return f, nil
}
