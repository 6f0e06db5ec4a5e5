package mqttlink

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func entries(from, to uint64) []entry {
	var out []entry
	for s := from; s <= to; s++ {
		out = append(out, entry{seq: s, state: s%5 == 0, payload: fmt.Appendf(nil, `{"seq":%d}`, s)})
	}
	return out
}

func open(t *testing.T, dir string, maxBytes, compact int64) *outbox {
	t.Helper()
	ob, err := openOutbox(nil, dir, maxBytes, compact, 1<<30, zerolog.Nop())
	require.NoError(t, err)
	return ob
}

// ackN takes n records off the head, checking their seqs follow on.
func ackN(t *testing.T, ob *outbox, n int) []record {
	t.Helper()
	var got []record
	for range n {
		r, ok := ob.Pending(0)
		require.True(t, ok, "a record at the head")
		require.NoError(t, ob.Ack(r.pos))
		got = append(got, r)
	}
	return got
}

func TestOutboxSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	ob := open(t, dir, 1<<20, 1<<20)
	require.NoError(t, ob.Append(entries(1, 10)))
	got := ackN(t, ob, 4)
	assert.Equal(t, uint64(4), got[3].seq)
	require.NoError(t, ob.Close())

	ob = open(t, dir, 1<<20, 1<<20)
	defer ob.Close()
	assert.Equal(t, 6, ob.Depth())
	assert.Equal(t, uint64(10), ob.LastSeq())
	r, ok := ob.Pending(0)
	require.True(t, ok)
	assert.Equal(t, uint64(5), r.seq)
	assert.True(t, r.state)
	assert.JSONEq(t, `{"seq":5}`, string(r.payload))
	// Positions keep growing across the reopen.
	require.NoError(t, ob.Append(entries(11, 11)))
	rest := ackN(t, ob, 7)
	for i := 1; i < len(rest); i++ {
		assert.Greater(t, rest[i].pos, rest[i-1].pos)
		assert.Equal(t, rest[i-1].seq+1, rest[i].seq)
	}
}

func TestOutboxCutsTornTail(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		depth  int
	}{
		{"half a record", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, fi.Size()-5))
		}, 4},
		{"flipped byte in the last record", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			b[len(b)-2] ^= 0xff
			require.NoError(t, os.WriteFile(path, b, 0o640))
		}, 4},
		{"garbage appended", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3})
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ob := open(t, dir, 1<<20, 1<<20)
			require.NoError(t, ob.Append(entries(1, 5)))
			require.NoError(t, ob.Close())
			tc.damage(t, filepath.Join(dir, outboxLogName))

			ob = open(t, dir, 1<<20, 1<<20)
			assert.Equal(t, tc.depth, ob.Depth())
			// Appending after the cut gives a readable file again.
			require.NoError(t, ob.Append(entries(6, 6)))
			require.NoError(t, ob.Close())
			ob = open(t, dir, 1<<20, 1<<20)
			defer ob.Close()
			assert.Equal(t, tc.depth+1, ob.Depth())
		})
	}
}

func TestOutboxDamagedAckResendsEverything(t *testing.T) {
	dir := t.TempDir()
	ob := open(t, dir, 1<<20, 1<<20)
	require.NoError(t, ob.Append(entries(1, 5)))
	ackN(t, ob, 3)
	require.NoError(t, ob.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, outboxAckName), []byte("nonsense-nonsense-xx"), 0o640))

	ob = open(t, dir, 1<<20, 1<<20)
	defer ob.Close()
	assert.Equal(t, 5, ob.Depth(), "duplicates are acceptable, loss is not")
}

func TestOutboxCompacts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, outboxLogName)
	ob := open(t, dir, 1<<20, 2048)
	defer ob.Close()
	var next uint64 = 1
	for range 50 {
		require.NoError(t, ob.Append(entries(next, next+9)))
		require.NoError(t, ob.Flush()) // compaction is Flush's
		next += 10
		ackN(t, ob, 8)
	}
	fi, err := os.Stat(path)
	require.NoError(t, err)
	// 500 records of ~40 bytes are 20 kB; compaction keeps the file near
	// the threshold plus what is unacknowledged.
	assert.Less(t, fi.Size(), int64(2*2048+100*recordHeaderLen+100*20))
	assert.Equal(t, 100, ob.Depth())

	require.NoError(t, ob.Close())
	ob2 := open(t, dir, 1<<20, 2048)
	defer ob2.Close()
	assert.Equal(t, 100, ob2.Depth())
	got := ackN(t, ob2, 100)
	assert.Equal(t, uint64(401), got[0].seq)
	assert.Equal(t, uint64(500), got[99].seq)
}

// TestOutboxFull: the bound is reported, never waited for (the pump stops
// taking events while it is reached); one batch may go past it, and
// acknowledgements make room again.
func TestOutboxFull(t *testing.T) {
	ob := open(t, t.TempDir(), 100, 1<<20) // room for about ten 10-byte payloads
	defer ob.Close()
	assert.False(t, ob.Full(), "empty")
	require.NoError(t, ob.Append(entries(1, 9)))
	assert.False(t, ob.Full())
	require.NoError(t, ob.Append(entries(10, 19)))
	assert.True(t, ob.Full(), "a batch may go past the bound, and then it is full")
	assert.Equal(t, 19, ob.Depth())
	ackN(t, ob, 10)
	assert.False(t, ob.Full(), "acknowledgements make room")
}

// TestOutboxAppendThenFlush: Append only hands records to the publisher
// (the pump publishes them before the file write); Flush writes them, and
// Close writes what is left. A crash between Append and Flush loses the
// records from the file, which the journal's replay derives again.
func TestOutboxAppendThenFlush(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, outboxLogName)
	size := func() int64 {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Size()
	}
	ob := open(t, dir, 1<<20, 1<<20)
	require.NoError(t, ob.Append(entries(1, 3)))
	assert.Zero(t, size(), "Append makes no write")
	r, ok := ob.Pending(2)
	require.True(t, ok, "the publisher sees the records at once")
	assert.EqualValues(t, 3, r.seq)
	require.NoError(t, ob.Flush())
	written := size()
	assert.Positive(t, written)
	require.NoError(t, ob.Flush())
	assert.Equal(t, written, size(), "nothing left to write")

	require.NoError(t, ob.Append(entries(4, 4)))
	// A crash now: a second outbox reads the file as it is.
	crashed, err := openOutbox(nil, dir, 1<<20, 1<<20, 1<<30, zerolog.Nop())
	require.NoError(t, err)
	assert.EqualValues(t, 3, crashed.LastSeq(), "the unwritten record is not in the file")
	require.NoError(t, crashed.Close())

	require.NoError(t, ob.Close())
	ob = open(t, dir, 1<<20, 1<<20)
	defer ob.Close()
	assert.EqualValues(t, 4, ob.LastSeq(), "Close writes what Flush had not")
	assert.Equal(t, 4, ob.Depth())
}

func TestOutboxClosed(t *testing.T) {
	ob := open(t, t.TempDir(), 1<<20, 1<<20)
	require.NoError(t, ob.Append(entries(1, 2)))
	require.NoError(t, ob.Close())
	require.ErrorIs(t, ob.Append(entries(3, 3)), ErrOutboxClosed)
	require.ErrorIs(t, ob.Ack(1), ErrOutboxClosed)
	_, ok := ob.Pending(0)
	assert.False(t, ok)
}

func TestOutboxAckMustBeHead(t *testing.T) {
	ob := open(t, t.TempDir(), 1<<20, 1<<20)
	defer ob.Close()
	require.NoError(t, ob.Append(entries(1, 2)))
	require.Error(t, ob.Ack(2))
	require.NoError(t, ob.Ack(1))
}

func TestCopyStoreKeepsOrderAndCopies(t *testing.T) {
	s := newCopyStore()
	s.Open()
	for i, key := range []string{"o.9", "o.2", "o.5"} {
		p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
		p.Qos, p.MessageID, p.TopicName, p.Payload = 1, uint16(i+1), "a/b", []byte{byte(i)}
		s.Put(key, p)
	}
	assert.Equal(t, []string{"o.9", "o.2", "o.5"}, s.All())
	p1 := s.Get("o.2").(*packets.PublishPacket)
	p1.Dup = true
	p2 := s.Get("o.2").(*packets.PublishPacket)
	assert.False(t, p2.Dup, "each Get is a fresh packet")
	assert.Equal(t, []byte{1}, p2.Payload)
	s.Del("o.2")
	assert.Nil(t, s.Get("o.2"))
	assert.Equal(t, []string{"o.9", "o.5"}, s.All())
	s.Reset()
	assert.Empty(t, s.All())
}

func TestLedgerPersistsAndForgetsOldest(t *testing.T) {
	dir := t.TempDir()
	l, err := openLedger(nil, dir, 3, zerolog.Nop())
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, l.Record(Reply{Schema: CommandSchema, ID: fmt.Sprintf("c%d", i), Accepted: i%2 == 0}, uint64(100+i)))
	}
	require.NoError(t, l.Close())
	// A torn last line from a crash.
	f, err := os.OpenFile(filepath.Join(dir, ledgerName), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema":1,"id":"c1`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	l, err = openLedger(nil, dir, 3, zerolog.Nop())
	require.NoError(t, err)
	defer l.Close()
	for i := range 10 {
		r, body, ok := l.Lookup(fmt.Sprintf("c%d", i))
		assert.Equal(t, i >= 7, ok, "c%d", i)
		if ok {
			assert.Equal(t, i%2 == 0, r.Accepted)
			assert.Equal(t, uint64(100+i), body, "the body's hash outlives the restart")
		}
	}
}

func TestOutboxLastSeq(t *testing.T) {
	dir := t.TempDir()
	seq, err := OutboxLastSeq(nil, filepath.Join(dir, "new"), zerolog.Nop())
	require.NoError(t, err)
	assert.Zero(t, seq, "a new outbox")

	ob := open(t, dir, 1<<20, 1<<20)
	require.NoError(t, ob.Append(entries(1, 7)))
	// A snapshot carries no seq of its own and changes nothing.
	require.NoError(t, ob.Append([]entry{{state: true, payload: []byte(`{}`)}}))
	ackN(t, ob, 8)
	require.NoError(t, ob.Close())
	seq, err = OutboxLastSeq(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	assert.Equal(t, uint64(7), seq, "acknowledged and compacted away, still remembered")

	// Reading the seq does not disturb a later open.
	ob = open(t, dir, 1<<20, 1<<20)
	defer ob.Close()
	assert.Equal(t, uint64(7), ob.LastSeq())
	assert.Zero(t, ob.Depth())
}

// TestOutboxSyncLoopRests: after an fsync SyncLoop rests for its interval
// however much is written meanwhile (the journal makes events durable; the
// outbox's fsync must not compete with it on every card), and what was
// written but not synced is still read back after a reopen.
func TestOutboxSyncLoopRests(t *testing.T) {
	dir := t.TempDir()
	ob := open(t, dir, 1<<20, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ob.SyncLoop(ctx, time.Hour) }()
	require.NoError(t, ob.Append(entries(1, 1)))
	require.NoError(t, ob.Flush())
	require.Eventually(t, func() bool { return ob.Syncs() == 1 }, 5*time.Second, time.Millisecond)
	for s := uint64(2); s <= 40; s++ {
		require.NoError(t, ob.Append(entries(s, s)))
		require.NoError(t, ob.Flush())
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.EqualValues(t, 1, ob.Syncs(), "one fsync, then a rest of an hour")
	require.NoError(t, ob.Close())

	ob = open(t, dir, 1<<20, 1<<20)
	defer ob.Close()
	assert.Equal(t, 40, ob.Depth())
	assert.EqualValues(t, 40, ob.LastSeq())
}

// TestOutboxSyncLoop: SyncLoop makes written records durable off the
// append path, several appends per fsync when they come quickly, and what
// was written (synced or not) is there after a reopen.
func TestOutboxSyncLoop(t *testing.T) {
	dir := t.TempDir()
	ob := open(t, dir, 1<<20, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ob.SyncLoop(ctx, 0) }()
	for s := uint64(1); s <= 40; s++ {
		require.NoError(t, ob.Append(entries(s, s)))
		require.NoError(t, ob.Flush())
	}
	require.Eventually(t, func() bool { return ob.Syncs() > 0 }, 5*time.Second, time.Millisecond)
	assert.LessOrEqual(t, ob.Syncs(), uint64(40))
	r, ok := ob.Pending(3)
	require.True(t, ok)
	assert.EqualValues(t, 4, r.seq, "Pending(i) is the i-th unacknowledged record")
	_, ok = ob.Pending(40)
	assert.False(t, ok)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, ob.Close())

	ob = open(t, dir, 1<<20, 1<<20)
	defer ob.Close()
	assert.Equal(t, 40, ob.Depth())
	assert.EqualValues(t, 40, ob.LastSeq())
}

// The store holds the pump back from the first connection attempt until
// the broker has acknowledged everything paho resends on resume.
func TestCopyStoreHeldWhilePahoResends(t *testing.T) {
	put := func(s *copyStore, key string) {
		p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
		p.Qos, p.TopicName = 1, "a/b"
		s.Put(key, p)
	}
	type step struct {
		op   string // put, del, connecting, resume (All), reset
		key  string
		held bool // Held() after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"connected: nothing held", []step{
			{"put", "o.1", false}, {"put", "o.2", false}, {"del", "o.1", false},
		}},
		{"reconnect: held until what was in flight is acknowledged", []step{
			{"put", "o.1", false}, {"put", "o.2", false},
			{"connecting", "", true},
			{"resume", "", true},
			{"del", "o.1", true}, {"del", "o.2", false},
			{"put", "o.3", false}, // published after resume: sent in order
		}},
		{"held from the attempt until resume starts", []step{
			{"connecting", "", true}, // nothing stored, but a publish now would be sent twice
			{"resume", "", false},
		}},
		{"stored while connecting is resent too", []step{
			{"connecting", "", true},
			{"put", "o.1", true},
			{"resume", "", true},
			{"del", "o.1", false},
		}},
		{"stored between the loss and the attempt", []step{
			{"put", "o.1", false}, // the connection is gone but paho has not retried yet
			{"resume", "", true},  // resume lists it
			{"del", "o.1", false},
		}},
		{"a failed attempt keeps holding", []step{
			{"put", "o.1", false},
			{"connecting", "", true}, {"connecting", "", true}, {"put", "o.2", true},
			{"resume", "", true}, {"del", "o.1", true}, {"del", "o.2", false},
		}},
		{"inbound keys are not paho's to resend", []step{
			{"connecting", "", true}, {"put", "i.7", true}, {"resume", "", false},
		}},
		{"reset forgets", []step{
			{"put", "o.1", false}, {"connecting", "", true}, {"reset", "", true}, {"resume", "", false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newCopyStore()
			s.Open()
			for i, st := range tc.steps {
				switch st.op {
				case "put":
					put(s, st.key)
				case "del":
					s.Del(st.key)
				case "connecting":
					s.connecting()
				case "resume":
					s.All()
				case "reset":
					s.Reset()
				}
				require.Equal(t, st.held, s.Held(), "after step %d (%s %s)", i, st.op, st.key)
				if i > 0 && tc.steps[i-1].held && !st.held {
					select {
					case <-s.Released():
					default:
						t.Fatalf("step %d (%s %s): no release signal", i, st.op, st.key)
					}
				}
			}
		})
	}
}

// TestOutboxPublishedSeq reads the same seq as OutboxLastSeq without
// changing the files: unacknowledged records, the ack mark, a torn tail.
func TestOutboxPublishedSeq(t *testing.T) {
	dir := t.TempDir()
	seq, err := OutboxPublishedSeq(nil, filepath.Join(dir, "missing"))
	require.NoError(t, err)
	assert.Zero(t, seq)

	ob := open(t, dir, 1<<20, 1<<20)
	require.NoError(t, ob.Append(entries(1, 9)))
	require.NoError(t, ob.Flush())
	ackN(t, ob, 4)
	require.NoError(t, ob.Close())
	path := filepath.Join(dir, outboxLogName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{1, 2, 3}) // a torn record
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	seq, err = OutboxPublishedSeq(nil, dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(9), seq)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing changed")
	last, err := OutboxLastSeq(nil, dir, zerolog.Nop())
	require.NoError(t, err)
	assert.Equal(t, last, seq)
}

// TestOutboxSpillsPastMemoryBound: during a long outage the outbox keeps
// only memMax bytes of payloads in memory; the rest stay in the file and
// come back, identical and in order, when they are published, across
// compactions and a reopen (which streams the file under the same bound).
func TestOutboxSpillsPastMemoryBound(t *testing.T) {
	const memMax = 1 << 10
	dir := t.TempDir()
	ob, err := openOutbox(nil, dir, 1<<30, 2<<10, memMax, zerolog.Nop())
	require.NoError(t, err)
	want := entries(1, 400) // about 4.5 KiB of payloads: 90 fit in memMax
	require.NoError(t, ob.Append(want[:300]))
	last, ok := ob.Pending(299)
	assert.False(t, ok, "a spilled record not yet written is not handed out: %+v", last)
	require.NoError(t, ob.Flush())
	assert.LessOrEqual(t, ob.memBytes, int64(memMax), "payloads held")
	spilled := 0
	for _, r := range ob.pending {
		if r.spilled {
			spilled++
		}
	}
	assert.Greater(t, spilled, 150, "most records wait in the file")

	check := func(got []record, from uint64) {
		t.Helper()
		for i, r := range got {
			assert.Equal(t, from+uint64(i), r.seq)
			assert.Equal(t, string(want[r.seq-1].payload), string(r.payload), "seq %d", r.seq)
			assert.Equal(t, want[r.seq-1].state, r.state)
		}
	}
	// Publishing reads them back; acknowledging compacts the file under
	// them (compactBytes 2 KiB).
	check(ackN(t, ob, 150), 1)
	assert.LessOrEqual(t, ob.memBytes, int64(memMax)+int64(len(want[0].payload))*2)
	require.NoError(t, ob.Close())

	ob, err = openOutbox(nil, dir, 1<<30, 2<<10, memMax, zerolog.Nop())
	require.NoError(t, err)
	defer ob.Close()
	assert.Equal(t, 150, ob.Depth())
	assert.LessOrEqual(t, ob.memBytes, int64(memMax), "the reopen streams under the bound")
	require.NoError(t, ob.Append(want[300:]))
	require.NoError(t, ob.Flush())
	check(ackN(t, ob, 250), 151)
	assert.Zero(t, ob.Depth())
	assert.Zero(t, ob.memBytes)
}
