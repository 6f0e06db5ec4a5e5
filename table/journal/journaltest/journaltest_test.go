package journaltest_test

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal/journaltest"
)

func TestFS(t *testing.T) {
	tests := []struct {
		name      string
		fs        func() *journaltest.FS
		writes    []string
		wantFile  string
		wantErr   error // of the last write
		syncErr   error
		wantSyncs int
	}{
		{name: "no faults", fs: journaltest.NewFS, writes: []string{"abc", "def"}, wantFile: "abcdef", wantSyncs: 1},
		{name: "budget ends inside a write", fs: func() *journaltest.FS {
			fs := journaltest.NewFS()
			fs.SetBudget(4)
			return fs
		}, writes: []string{"abc", "def"}, wantFile: "abcd", wantErr: syscall.ENOSPC, wantSyncs: 1},
		{name: "budget ends at a write boundary", fs: func() *journaltest.FS {
			fs := journaltest.NewFS()
			fs.SetBudget(3)
			return fs
		}, writes: []string{"abc", "def"}, wantFile: "abc", wantErr: syscall.ENOSPC, wantSyncs: 1},
		{name: "failing sync", fs: func() *journaltest.FS {
			fs := journaltest.NewFS()
			fs.FailSync(syscall.EIO)
			return fs
		}, writes: []string{"abc"}, wantFile: "abc", syncErr: syscall.EIO},
		{name: "no sync", fs: journaltest.NoSyncFS, writes: []string{"abc"}, wantFile: "abc", wantSyncs: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := tc.fs()
			path := filepath.Join(t.TempDir(), "f")
			f, err := fs.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			require.NoError(t, err)
			var werr error
			for _, w := range tc.writes {
				_, werr = f.Write([]byte(w))
			}
			if tc.wantErr != nil {
				require.ErrorIs(t, werr, tc.wantErr)
			} else {
				require.NoError(t, werr)
			}
			serr := f.Sync()
			if tc.syncErr != nil {
				require.ErrorIs(t, serr, tc.syncErr)
			} else {
				require.NoError(t, serr)
			}
			require.NoError(t, f.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.wantFile, string(got))
			assert.Equal(t, tc.wantSyncs, fs.Syncs())
			assert.Equal(t, int64(len(tc.wantFile)), fs.Written())
		})
	}
}

func TestHoldSync(t *testing.T) {
	fs := journaltest.NewFS()
	f, err := fs.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	release := fs.HoldSync()
	done := make(chan error)
	go func() { done <- f.Sync() }()
	for fs.Waiting() != 1 {
		select {
		case err := <-done:
			t.Fatalf("Sync returned while held: %v", err)
		default:
		}
		runtime.Gosched() // poll: the goroutine reaches the gate on its own schedule
	}
	assert.Zero(t, fs.Syncs())
	release()
	release() // idempotent
	require.NoError(t, <-done)
	assert.Equal(t, 1, fs.Syncs())
	assert.Zero(t, fs.Waiting())
	require.NoError(t, f.Sync(), "later syncs are not held")
	assert.Equal(t, 2, fs.Syncs())
}

func TestOpenFileError(t *testing.T) {
	_, err := journaltest.NewFS().OpenFile(filepath.Join(t.TempDir(), "missing", "f"), os.O_WRONLY, 0)
	require.ErrorIs(t, err, os.ErrNotExist)
}
