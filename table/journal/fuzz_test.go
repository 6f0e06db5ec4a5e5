package journal_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/journal/journaltest"
)

// FuzzSegment writes arbitrary bytes over part of a valid journal's last
// segment. Whatever the damage, Verify and Open must not panic; Open either
// refuses with ErrCorrupt or recovers a prefix of the records, after which
// the journal verifies and appends continue.
func FuzzSegment(f *testing.F) {
	f.Add(uint16(0), []byte{})
	f.Add(uint16(60), []byte{0, 0, 0, 0})
	f.Add(uint16(68), []byte{0xff})
	f.Add(uint16(200), []byte("garbage at the end of a record"))
	f.Add(uint16(10), []byte("LTJRNL\r\n"))
	f.Add(uint16(400), make([]byte, 600))
	f.Fuzz(func(t *testing.T, at uint16, junk []byte) {
		dir := t.TempDir()
		// No fsync: durability is not under test here, and it keeps the
		// fuzzer fast.
		fs := journaltest.NoSyncFS()
		j, _, err := journal.Open(journal.Options{Dir: dir, FS: fs}, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		const n = 4
		for i := range n {
			if _, err := j.Append(rec(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "00000000000000000001.ltj")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pos := min(int(at), len(b))
		b = append(b[:pos:pos], append(junk, b[min(pos+len(junk), len(b)):]...)...)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}

		_, verr := journal.Verify(dir)
		if verr != nil && !errors.Is(verr, journal.ErrCorrupt) && !errors.Is(verr, journal.ErrTornTail) {
			t.Fatalf("Verify: unexpected error %v", verr)
		}
		j, rep, err := journal.Open(journal.Options{Dir: dir, FS: fs}, zerolog.Nop())
		if errors.Is(err, journal.ErrCorrupt) {
			return
		}
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer j.Close()
		if rep.LastSeq > n+uint64(len(junk)) {
			t.Fatalf("recovered %d records from %d", rep.LastSeq, n)
		}
		count := uint64(0)
		if err := j.Replay(0, func(r journal.Record) error {
			count++
			if r.Seq != count {
				t.Fatalf("replay seq %d at position %d", r.Seq, count)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if count != rep.LastSeq {
			t.Fatalf("replayed %d, report says %d", count, rep.LastSeq)
		}
		if _, err := j.Append(rec(0)); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := journal.Verify(dir); err != nil {
			t.Fatalf("Verify after recovery: %v", err)
		}
	})
}
