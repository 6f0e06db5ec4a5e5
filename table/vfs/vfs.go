// Package vfs is the small file-system seam under the table's journal and
// the MQTT link's outbox. Production uses OS (the operating system's files);
// the deterministic simulation (simulators/disk) implements the same
// interface with a disk that loses unsynced writes at a crash, tears the
// last write, fails with EIO or fills up.
//
// The interface holds only what those two stores use: open a file, list,
// remove and rename entries, make a directory entry durable (SyncDir), and
// lock a directory against a second process.
package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// File is an open file. *os.File satisfies it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Seeker
	io.Closer
	// Sync makes the file's written data durable (fsync).
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Stat describes the file (its size above all).
	Stat() (fs.FileInfo, error)
	// Name is the name the file was opened with.
	Name() string
}

// FS is a file system. Paths are OS paths (filepath.Join).
type FS interface {
	// OpenFile opens a file like os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// ReadDir lists a directory, sorted by name, like os.ReadDir.
	ReadDir(name string) ([]fs.DirEntry, error)
	// Stat describes a file like os.Stat.
	Stat(name string) (fs.FileInfo, error)
	// Remove deletes a file like os.Remove.
	Remove(name string) error
	// Rename replaces newpath by oldpath atomically, like os.Rename.
	Rename(oldpath, newpath string) error
	// MkdirAll creates a directory and its parents, like os.MkdirAll.
	MkdirAll(name string, perm fs.FileMode) error
	// SyncDir makes the entries created, renamed or removed in the
	// directory durable (fsync of the directory): without it a power cut
	// may lose them even when the files' data was synced.
	SyncDir(name string) error
	// Lock takes an exclusive lock on the file name (created if missing)
	// for as long as the process lives or until the Closer is closed;
	// ErrLocked when another holder has it.
	Lock(name string) (io.Closer, error)
}

// ErrLocked is returned by Lock when the lock is held elsewhere.
var ErrLocked = errors.New("vfs: locked by another process")

// Open opens a file for reading.
func Open(fsys FS, name string) (File, error) { return fsys.OpenFile(name, os.O_RDONLY, 0) }

// OrOS returns fsys, or OS when it is nil: the default of every Options
// struct that takes an FS.
func OrOS(fsys FS) FS {
	if fsys == nil {
		return OS{}
	}
	return fsys
}

// OS is the operating system's file system.
type OS struct{}

var _ FS = OS{}

// OpenFile implements FS.
func (OS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		// A nil *os.File in a File interface would not be nil.
		return nil, err
	}
	return f, nil
}

// ReadDir implements FS.
func (OS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// Stat implements FS.
func (OS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Remove implements FS.
func (OS) Remove(name string) error { return os.Remove(name) }

// Rename implements FS.
func (OS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// MkdirAll implements FS.
func (OS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }

// SyncDir implements FS.
func (OS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("vfs: open dir %s: %w", name, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("vfs: sync dir %s: %w", name, err)
	}
	return nil
}

// Lock implements FS with an advisory flock where the system has one.
func (OS) Lock(name string) (io.Closer, error) { return lockFile(name) }
