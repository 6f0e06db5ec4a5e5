package disk_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/simulators/disk"
	"github.com/livetable/livetable/table/vfs"
)

func create(t *testing.T, d *disk.Disk, name string) vfs.File {
	t.Helper()
	f, err := d.OpenFile(name, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	require.NoError(t, err)
	return f
}

func content(t *testing.T, d *disk.Disk, name string) (string, bool) {
	t.Helper()
	f, err := vfs.Open(d, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return string(b), true
}

func write(t *testing.T, f vfs.File, s string) {
	t.Helper()
	_, err := f.Write([]byte(s))
	require.NoError(t, err)
}

// TestPowerCutModel checks the durability model of the package comment,
// with a power cut that keeps nothing unsynced.
func TestPowerCutModel(t *testing.T) {
	tests := []struct {
		name  string
		run   func(t *testing.T, d *disk.Disk)
		file  string
		want  string
		exist bool
	}{
		{"synced data in a synced entry survives", func(t *testing.T, d *disk.Disk) {
			f := create(t, d, "/d/a")
			write(t, f, "abc")
			require.NoError(t, f.Sync())
			require.NoError(t, d.SyncDir("/d"))
			write(t, f, "def") // not synced
		}, "/d/a", "abc", true},
		{"a new file without a directory fsync is lost, data and all", func(t *testing.T, d *disk.Disk) {
			f := create(t, d, "/d/a")
			write(t, f, "abc")
			require.NoError(t, f.Sync())
		}, "/d/a", "", false},
		{"a rename without a directory fsync leaves the old name", func(t *testing.T, d *disk.Disk) {
			f := create(t, d, "/d/tmp")
			write(t, f, "new")
			require.NoError(t, f.Sync())
			require.NoError(t, d.SyncDir("/d"))
			require.NoError(t, d.Rename("/d/tmp", "/d/a"))
		}, "/d/tmp", "new", true},
		{"a rename with a directory fsync replaces", func(t *testing.T, d *disk.Disk) {
			old := create(t, d, "/d/a")
			write(t, old, "old")
			require.NoError(t, old.Sync())
			f := create(t, d, "/d/tmp")
			write(t, f, "new")
			require.NoError(t, f.Sync())
			require.NoError(t, d.Rename("/d/tmp", "/d/a"))
			require.NoError(t, d.SyncDir("/d"))
		}, "/d/a", "new", true},
		{"a removal without a directory fsync is undone", func(t *testing.T, d *disk.Disk) {
			f := create(t, d, "/d/a")
			write(t, f, "abc")
			require.NoError(t, f.Sync())
			require.NoError(t, d.SyncDir("/d"))
			require.NoError(t, d.Remove("/d/a"))
		}, "/d/a", "abc", true},
		{"a failed fsync loses its writes, though a later one succeeds", func(t *testing.T, d *disk.Disk) {
			f := create(t, d, "/d/a")
			require.NoError(t, d.SyncDir("/d"))
			write(t, f, "abc")
			require.NoError(t, f.Sync())
			d.Inject(disk.Fault{Op: disk.OpSync, Err: syscall.EIO})
			write(t, f, "def")
			require.ErrorIs(t, f.Sync(), syscall.EIO)
			got, _ := content(t, d, "/d/a")
			require.Equal(t, "abcdef", got, "reads still see it")
			write(t, f, "ghi")
			require.NoError(t, f.Sync())
		}, "/d/a", "abc\x00\x00\x00ghi", true},
		{"a truncation is a write like the others", func(t *testing.T, d *disk.Disk) {
			f := create(t, d, "/d/a")
			write(t, f, "abcdef")
			require.NoError(t, f.Sync())
			require.NoError(t, d.SyncDir("/d"))
			require.NoError(t, f.Truncate(2))
		}, "/d/a", "abcdef", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := disk.New(disk.Options{Seed: 1})
			require.NoError(t, d.MkdirAll("/d", 0o755))
			tc.run(t, d)
			d.PowerCut()
			d.Reboot()
			got, ok := content(t, d, tc.file)
			assert.Equal(t, tc.exist, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestPowerCutKeepsAPrefix: with KeepUnsynced, what a power cut leaves of
// a file appended to is the synced part and a prefix of the unsynced
// writes, the last one torn (and, with TearZeros, zeros past the tear):
// over many seeds every shape comes up, and one seed is one result.
func TestPowerCutKeepsAPrefix(t *testing.T) {
	stream := "0123456789abcdefghijklmnopqrstuvwxyz"
	shapes := map[string]bool{}
	run := func(seed uint64) string {
		d := disk.New(disk.Options{Seed: seed, KeepUnsynced: true, TearZeros: true})
		require.NoError(t, d.MkdirAll("/d", 0o755))
		f := create(t, d, "/d/a")
		require.NoError(t, d.SyncDir("/d"))
		write(t, f, stream[:6])
		require.NoError(t, f.Sync())
		for i := 6; i < len(stream); i += 6 {
			write(t, f, stream[i:i+6])
		}
		d.PowerCut()
		d.Reboot()
		got, ok := content(t, d, "/d/a")
		require.True(t, ok)
		return got
	}
	for seed := range uint64(300) {
		got := run(seed)
		require.Equal(t, got, run(seed), "seed %d is one run", seed)
		data := bytes.TrimRight([]byte(got), "\x00")
		require.True(t, bytes.HasPrefix([]byte(stream), data), "seed %d: %q is a prefix", seed, got)
		require.GreaterOrEqual(t, len(data), 6, "the synced part survives")
		switch {
		case len(got) == len(stream):
			shapes["all"] = true
		case len(data) < len(got):
			shapes["zeros"] = true
		case len(got)%6 != 0:
			shapes["torn"] = true
		default:
			shapes["whole writes"] = true
		}
	}
	assert.Len(t, shapes, 4, "%v", shapes)
}

func TestPowerCutAt(t *testing.T) {
	d := disk.New(disk.Options{Seed: 3})
	require.NoError(t, d.MkdirAll("/d", 0o755))
	f := create(t, d, "/d/a")
	require.NoError(t, d.SyncDir("/d"))
	d.PowerCutAt(2)
	write(t, f, "abc")
	_, err := f.Write([]byte("def"))
	require.ErrorIs(t, err, disk.ErrPowerCut)
	require.True(t, d.IsCut())
	_, err = d.OpenFile("/d/b", os.O_CREATE|os.O_WRONLY, 0o644)
	require.ErrorIs(t, err, disk.ErrPowerCut)
	d.Reboot()
	_, err = f.Write([]byte("x"))
	require.ErrorIs(t, err, disk.ErrPowerCut, "a handle from before the cut stays dead")
	got, ok := content(t, d, "/d/a")
	require.True(t, ok)
	assert.Empty(t, got)
	assert.Equal(t, 1, d.Cuts())
}

func TestNoPowerCut(t *testing.T) {
	d := disk.New(disk.Options{Seed: 3})
	require.NoError(t, d.MkdirAll("/d", 0o755))
	f := create(t, d, "/d/a")
	d.PowerCutAt(1)
	d.NoPowerCut()
	write(t, f, "abc")
	require.NoError(t, f.Sync())
	assert.False(t, d.IsCut())
	assert.Zero(t, d.Cuts())
}

func TestDiskFull(t *testing.T) {
	d := disk.New(disk.Options{Seed: 3, Capacity: 10})
	require.NoError(t, d.MkdirAll("/d", 0o755))
	f := create(t, d, "/d/a")
	write(t, f, "abcdefgh")
	n, err := f.Write([]byte("ijkl"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.Equal(t, 2, n)
	got, _ := content(t, d, "/d/a")
	assert.Equal(t, "abcdefghij", got)
	d.SetCapacity(0)
	write(t, f, "k")
}

func TestInjectedFaults(t *testing.T) {
	d := disk.New(disk.Options{Seed: 3})
	require.NoError(t, d.MkdirAll("/d", 0o755))
	d.Inject(disk.Fault{Op: disk.OpWrite, Path: "/d/b", N: 2, Err: syscall.EIO})
	d.Inject(disk.Fault{Op: disk.OpOpen, Path: "/d/c", Err: syscall.EACCES})
	a, b := create(t, d, "/d/a"), create(t, d, "/d/b")
	write(t, a, "1")
	write(t, a, "2")
	write(t, b, "1")
	_, err := b.Write([]byte("2"))
	require.ErrorIs(t, err, syscall.EIO)
	write(t, b, "3")
	_, err = d.OpenFile("/d/c", os.O_CREATE|os.O_WRONLY, 0o644)
	require.ErrorIs(t, err, syscall.EACCES)
	_, err = d.OpenFile("/d/a", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	require.ErrorIs(t, err, fs.ErrExist)
	_, err = d.OpenFile("/nodir/a", os.O_CREATE|os.O_WRONLY, 0o644)
	require.ErrorIs(t, err, fs.ErrNotExist)
	l, err := d.Lock("/d/LOCK")
	require.NoError(t, err)
	_, err = d.Lock("/d/LOCK")
	require.ErrorIs(t, err, vfs.ErrLocked)
	require.NoError(t, l.Close())
	ents, err := d.ReadDir("/d")
	require.NoError(t, err)
	require.Len(t, ents, 2)
	assert.Equal(t, "a", ents[0].Name())
}

func TestBackupRestoreAndLostSegment(t *testing.T) {
	d := disk.New(disk.Options{Seed: 3})
	require.NoError(t, d.MkdirAll("/j", 0o755))
	for _, name := range []string{"/j/1.ltj", "/j/2.ltj"} {
		f := create(t, d, name)
		write(t, f, name)
		require.NoError(t, f.Sync())
	}
	require.NoError(t, d.SyncDir("/j"))
	img := d.Backup()
	f := create(t, d, "/j/3.ltj")
	write(t, f, "newest")
	require.NoError(t, f.Sync())
	require.NoError(t, d.SyncDir("/j"))
	d.Restore(img)
	_, ok := content(t, d, "/j/3.ltj")
	assert.False(t, ok, "the restore lost the newest segment")
	_, err := f.Write([]byte("x"))
	require.ErrorIs(t, err, disk.ErrPowerCut)
	assert.Equal(t, "/j/2.ltj", d.RemoveNewest("/j", ".ltj"))
	ents, err := d.ReadDir("/j")
	require.NoError(t, err)
	require.Len(t, ents, 1)
}
