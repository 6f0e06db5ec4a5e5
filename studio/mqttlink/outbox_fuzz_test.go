package mqttlink

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

// FuzzOutboxLoad feeds arbitrary bytes as events.log: opening must not
// panic, must keep only whole, checksummed records with growing
// positions, and must leave a file that opens again to the same state and
// takes appends.
func FuzzOutboxLoad(f *testing.F) {
	var valid []byte
	for i, e := range entries(1, 4) {
		r := record{pos: uint64(i + 1), seq: e.seq, state: e.state, payload: e.payload}
		valid = appendRecord(valid, &r)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(append(append([]byte{}, valid...), 0xff, 0xff, 0xff, 0xff))
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, outboxLogName), data, 0o640); err != nil {
			t.Fatal(err)
		}
		ob, err := openOutbox(nil, dir, 1<<20, 1<<20, 1<<30, zerolog.Nop())
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		depth, last := ob.Depth(), ob.LastSeq()
		var prev uint64
		for i := range depth {
			ob.mu.Lock()
			r := ob.pending[i]
			ob.mu.Unlock()
			if r.pos <= prev {
				t.Fatalf("positions not increasing: %d after %d", r.pos, prev)
			}
			prev = r.pos
		}
		if err := ob.Close(); err != nil {
			t.Fatal(err)
		}
		ob, err = openOutbox(nil, dir, 1<<20, 1<<20, 1<<30, zerolog.Nop())
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer ob.Close()
		if ob.Depth() != depth || ob.LastSeq() != last {
			t.Fatalf("reopen changed the outbox: depth %d→%d, last seq %d→%d", depth, ob.Depth(), last, ob.LastSeq())
		}
		if err := ob.Append(entries(last+1, last+1)); err != nil {
			t.Fatalf("append after load: %v", err)
		}
		if err := ob.Flush(); err != nil {
			t.Fatalf("write after load: %v", err)
		}
		if ob.Depth() != depth+1 {
			t.Fatalf("depth %d after append, want %d", ob.Depth(), depth+1)
		}
	})
}
