//go:build linux

package vfs

import (
	"errors"
	"os"
	"syscall"
)

// allocateOS is fallocate(2) with mode 0 on f. syscall.EOPNOTSUPP (a file
// system without it) matches errors.ErrUnsupported.
func allocateOS(f *os.File, off, size int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Fallocate(int(fd), 0, off, size)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
