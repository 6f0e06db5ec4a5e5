// Package journaltest provides a file seam for journal tests: segment files
// that run out of space after a byte budget, fail their fsync, block in
// fsync until released, or skip fsync to build large fixtures quickly.
//
// Pass an *FS as journal.Options.FS: it is the operating system's file
// system (vfs.OS) with those faults on the files it opens.
package journaltest

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/livetable/livetable/table/vfs"
)

// FS opens real files through os.OpenFile and applies the faults set on it
// to every file it opened. It is safe for concurrent use.
type FS struct {
	vfs.OS
	mu      sync.Mutex // guards the following
	budget  int64      // bytes that may still be written; <0 means no limit
	noSync  bool
	syncErr error
	gate    chan struct{} // when set, Sync waits for it to be closed
	inSync  int           // Syncs waiting on the gate
	syncs   int
	written int64
}

// NewFS returns an FS without faults.
func NewFS() *FS { return &FS{budget: -1} }

// NoSyncFS returns an FS whose files skip fsync. It exists to build large
// fixtures (benchmarks of recovery) fast; a journal on it is not durable.
func NoSyncFS() *FS { return &FS{budget: -1, noSync: true} }

// SetBudget lets n more bytes be written in total; the write that crosses
// the budget writes what fits and fails with ENOSPC, like a full disk. A
// negative n removes the limit.
func (fs *FS) SetBudget(n int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.budget = n
}

// FailSync makes every later Sync return err (nil restores success).
func (fs *FS) FailSync(err error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.syncErr = err
}

// HoldSync makes later Syncs wait until the returned release function is
// called, so a test can queue appends while the writer is inside an fsync.
func (fs *FS) HoldSync() (release func()) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	gate := make(chan struct{})
	fs.gate = gate
	var once sync.Once
	return func() {
		once.Do(func() {
			fs.mu.Lock()
			if fs.gate == gate {
				fs.gate = nil
			}
			fs.mu.Unlock()
			close(gate)
		})
	}
}

// Waiting is the number of Syncs currently held by HoldSync.
func (fs *FS) Waiting() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.inSync
}

// Syncs is the number of completed Sync calls.
func (fs *FS) Syncs() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.syncs
}

// Written is the number of bytes written through the FS.
func (fs *FS) Written() int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.written
}

var _ vfs.FS = (*FS)(nil)

// OpenFile implements vfs.FS: the file's writes and fsyncs get the faults.
func (fs *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &file{File: f, f: f, fs: fs}, nil
}

// file is a real file whose Write and Sync take the FS's faults; the rest
// is *os.File's.
type file struct {
	vfs.File
	f  *os.File
	fs *FS
}

func (f *file) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	n := len(p)
	full := f.fs.budget >= 0 && int64(n) > f.fs.budget
	if full {
		n = int(f.fs.budget)
	}
	if f.fs.budget >= 0 {
		f.fs.budget -= int64(n)
	}
	f.fs.written += int64(n)
	f.fs.mu.Unlock()
	m, err := f.f.Write(p[:n])
	if err != nil {
		return m, err
	}
	if full {
		return m, &os.PathError{Op: "write", Path: f.f.Name(), Err: syscall.ENOSPC}
	}
	return m, nil
}

func (f *file) Sync() error {
	f.fs.mu.Lock()
	gate := f.fs.gate
	if gate != nil {
		f.fs.inSync++
	}
	f.fs.mu.Unlock()
	if gate != nil {
		<-gate
		f.fs.mu.Lock()
		f.fs.inSync--
		f.fs.mu.Unlock()
	}
	f.fs.mu.Lock()
	err, noSync := f.fs.syncErr, f.fs.noSync
	if err == nil {
		f.fs.syncs++
	}
	f.fs.mu.Unlock()
	if err != nil {
		return &os.PathError{Op: "sync", Path: f.f.Name(), Err: err}
	}
	if noSync {
		return nil
	}
	if err := f.f.Sync(); err != nil {
		return fmt.Errorf("journaltest: %w", err)
	}
	return nil
}
