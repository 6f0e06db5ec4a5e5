package vfs_test

import (
	"io"
	"os"
	"path/filepath"
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
