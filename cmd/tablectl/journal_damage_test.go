package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalCommandsOnDamage: verify, salvage and accept-loss on the
// damage a power cut or a disk leaves: a torn tail, a tail of zeros (ext4
// after a power cut: the file grew, its data never came) and a sealed
// segment whose trailer is corrupt (the first one, and the one before the
// active segment). Each says what it found and what to do, exits with a
// defined status, and changes nothing it need not: a torn tail is tabled's
// to cut at start, a bad trailer loses no record (Open reads that
// segment record by record), and there is no loss to accept.
func TestJournalCommandsOnDamage(t *testing.T) {
	dataDir, _, stop := smallSegmentTable(t, 6)
	stop()
	segs, err := filepath.Glob(filepath.Join(dataDir, "journal", "*.ltj"))
	require.NoError(t, err)
	require.Greater(t, len(segs), 3)

	rewrite := func(dir string, pick func(segs []string) string, fn func(b []byte) []byte) {
		s, err := filepath.Glob(filepath.Join(dir, "journal", "*.ltj"))
		require.NoError(t, err)
		path := pick(s)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, fn(b), 0o644))
	}
	last := func(s []string) string { return s[len(s)-1] }
	for _, tt := range []struct {
		name    string
		damage  func(dir string)
		verify  []string // in verify's output
		salvage string
	}{
		{"torn tail", func(dir string) { rewrite(dir, last, func(b []byte) []byte { return b[:len(b)-7] }) },
			[]string{"torn tail (a power cut mid-write; tabled cuts it back on start)", "last whole record seq"}, "nothing to salvage: only a torn tail"},
		{"tail of zeros", func(dir string) {
			rewrite(dir, last, func(b []byte) []byte { return append(b, make([]byte, 4096)...) })
		},
			[]string{"torn tail (a power cut mid-write; tabled cuts it back on start)", "bad length"}, "nothing to salvage: only a torn tail"},
		{"first trailer", func(dir string) {
			rewrite(dir, func(s []string) string { return s[1] }, func(b []byte) []byte { b[len(b)-10] ^= 0xff; return b })
		}, []string{"WARNING: trailer not usable", "no record is lost", "OK: every checksum and the hash chain verify"}, "nothing to salvage: every checksum and the hash chain verify"},
		{"trailer before the active segment", func(dir string) {
			rewrite(dir, func(s []string) string { return s[len(s)-2] }, func(b []byte) []byte { b[len(b)-30] ^= 0xff; return b })
		}, []string{"WARNING: trailer not usable", "no record is lost", "OK: every checksum and the hash chain verify"}, "nothing to salvage: every checksum and the hash chain verify"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(dataDir)))
			tt.damage(dir)
			before := snapshotDir(t, filepath.Join(dir, "journal"))

			code, out, errOut := tablectl(t, "", "journal", "verify", "--data-dir", dir)
			require.Equal(t, 0, code, out+errOut)
			for _, w := range tt.verify {
				assert.Contains(t, out, w)
			}
			code, out, errOut = tablectl(t, "", "journal", "salvage", "--data-dir", dir, "--by", "anna", "--reason", "power cut")
			require.Equal(t, 0, code, out+errOut)
			assert.Contains(t, out, tt.salvage)
			code, out, errOut = tablectl(t, "", "journal", "accept-loss", "--data-dir", dir, "--by", "anna", "--reason", "power cut")
			assert.Equal(t, 1, code, out+errOut)
			assert.Contains(t, out+errOut, "nothing to accept")
			assert.NoFileExists(t, filepath.Join(dir, "accepted-loss.jsonl"))
			assert.Equal(t, before, snapshotDir(t, filepath.Join(dir, "journal")), "no command changed the journal")
			salvaged, err := filepath.Glob(filepath.Join(dir, "journal-salvaged-*"))
			require.NoError(t, err)
			assert.Empty(t, salvaged)
		})
	}
}

// snapshotDir is every file of dir with its content.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}
