package vfs_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/vfs"
)

func TestOSRoundTrip(t *testing.T) {
	dir := t.TempDir()
	fsys := vfs.OrOS(nil)
	sub := filepath.Join(dir, "a", "b")
	require.NoError(t, fsys.MkdirAll(sub, 0o755))
	name := filepath.Join(sub, "f")
	f, err := fsys.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = f.Write([]byte("hello world"))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Truncate(5))
	require.NoError(t, f.Close())
	require.NoError(t, fsys.SyncDir(sub))
	require.NoError(t, fsys.Rename(name, name+"2"))
	ents, err := fsys.ReadDir(sub)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	require.Equal(t, "f2", ents[0].Name())
	r, err := vfs.Open(fsys, name+"2")
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "hello", string(b))
	require.NoError(t, r.Close())
	require.NoError(t, fsys.Remove(name+"2"))
	_, err = fsys.Stat(name + "2")
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = fsys.OpenFile(filepath.Join(dir, "missing", "f"), os.O_RDONLY, 0)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestOSLockExcludesASecondHolder(t *testing.T) {
	name := filepath.Join(t.TempDir(), "LOCK")
	fsys := vfs.OS{}
	l, err := fsys.Lock(name)
	require.NoError(t, err)
	_, err = fsys.Lock(name)
	require.ErrorIs(t, err, vfs.ErrLocked)
	require.NoError(t, l.Close())
	l, err = fsys.Lock(name)
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

// TestOSAllocate: a preallocated region reads as zeros, keeps the data
// already there, and takes writes in place without the size changing.
func TestOSAllocate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("fallocate is Linux's")
	}
	name := filepath.Join(t.TempDir(), "f")
	f, err := vfs.OS{}.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write([]byte("header"))
	require.NoError(t, err)
	err = vfs.Allocate(f, 6, 4096)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("the temporary directory's file system has no fallocate: %v", err)
	}
	require.NoError(t, err)
	fi, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(4102), fi.Size())
	_, err = f.WriteAt([]byte("record"), 6)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Len(t, b, 4102)
	require.Equal(t, "headerrecord", string(b[:12]))
	require.Equal(t, make([]byte, 4090), b[12:])
	// Inside the file's size it changes nothing.
	require.NoError(t, vfs.Allocate(f, 0, 100))
	fi, err = f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(4102), fi.Size())
}

// TestAllocateUnsupported: a File that cannot preallocate says so with
// errors.ErrUnsupported, which the journal takes as "grow as you write".
func TestAllocateUnsupported(t *testing.T) {
	f, err := vfs.OS{}.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f.Close()
	err = vfs.Allocate(plainFile{f}, 0, 10)
	require.ErrorIs(t, err, errors.ErrUnsupported)
}

// plainFile hides *os.File's type: a File without Allocate.
type plainFile struct{ vfs.File }
