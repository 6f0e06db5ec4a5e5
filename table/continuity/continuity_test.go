package continuity_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/embedbroker"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/continuity"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

var epoch = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// recorded is one table's run: its data directory (journal and outbox, the
// outbox as far as the link got: every event acknowledged) and the
// payload the backend received for each seq.
type recorded struct {
	dir       string
	published map[uint64]string
	last      uint64
}

func tableOptions(t *testing.T, j table.Journal, clk clockwork.Clock) table.Options {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	o := table.DefaultOptions(rs)
	o.Studio, o.Table = "s1", "t1"
	o.Journal, o.Clock, o.CheckpointEvery = j, clk, 2
	return o
}

func journalOptions(dir string) journal.Options {
	return journal.Options{Dir: filepath.Join(dir, "journal"), SegmentBytes: 2 << 10, AnchorKind: table.CheckpointKind}
}

// record plays rounds rounds of 000 through the real controller, journal,
// MQTT link and outbox (an embedded broker, a subscriber as the backend).
func record(t *testing.T, rounds int) recorded {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	b, err := embedbroker.Start(ctx, "127.0.0.1:0", log)
	require.NoError(t, err)
	defer b.Close()
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Events, mqttlinktest.SubscriberOptions{CleanSession: true})

	j, _, err := journal.Open(journalOptions(dir), log)
	require.NoError(t, err)
	clk := clockwork.NewFakeClockAt(epoch)
	c, err := table.New(tableOptions(t, table.NewJournal(j), clk), log)
	require.NoError(t, err)
	evs, _ := c.Subscribe("mqtt", 4096)
	mo := mqttlink.DefaultOptions()
	mo.Studio, mo.Table, mo.BrokerURL, mo.OutboxDir = "s1", "t1", b.URL(), filepath.Join(dir, "outbox")
	link, err := mqttlink.New(mo, log)
	require.NoError(t, err)
	linkDone, ctrlDone := make(chan error, 1), make(chan error, 1)
	lctx, lcancel := context.WithCancel(ctx)
	go func() { linkDone <- link.Run(lctx, evs, c) }()
	go func() { ctrlDone <- c.Run(ctx, nil) }()

	waitFor(t, func() bool { return c.Snapshot().Phase == table.PhaseBetting })
	for n := range rounds {
		require.NoError(t, c.Submit(ctx, table.BetsClosed{ID: fmt.Sprintf("b%d", n), Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
		for _, s := range []string{"Ts", "6d", "7c", "5h"} {
			require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse(s)}))
		}
		require.NoError(t, c.Submit(ctx, table.Decision{ID: fmt.Sprintf("d%d", n), Seat: 1, Action: "stand"}))
		require.NoError(t, c.Submit(ctx, table.CardDrawn{Card: card.MustParse("9s")}))
		// The pause after the settlement, then betting opens again.
		require.NoError(t, clk.BlockUntilContext(ctx, 1))
		clk.Advance(5 * time.Second)
		waitFor(t, func() bool { return c.Snapshot().Phase == table.PhaseBetting })
	}
	last := c.Snapshot().Seq
	waitFor(t, func() bool { return link.Stats().Published >= last && sub.MaxSeq() == last })
	cancel()
	require.NoError(t, <-ctrlDone)
	lcancel()
	require.NoError(t, <-linkDone)
	require.NoError(t, j.Close())

	rec := recorded{dir: dir, published: map[uint64]string{}, last: last}
	for _, e := range sub.Events() {
		rec.published[e.Seq] = string(e.Data) + "|" + e.Kind
	}
	require.Len(t, rec.published, int(last))
	return rec
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond)
}

// cutPoint is where a copy of the journal is cut: segment seg (index in
// name order) is truncated to off bytes and every later segment removed.
type cutPoint struct {
	seg  int
	off  int64
	what string
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "journal", "*.ltj"))
	require.NoError(t, err)
	sort.Strings(names)
	return names
}

// recordEnds lists the offsets where each record of a segment ends, from
// the frame lengths (format.go: a 60-byte header, then u32 length, u32
// CRC and the body per record), up to a sealed segment's trailer
// (trailer.go: it starts with "LTJSEAL\n").
func recordEnds(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var ends []int64
	off := int64(60)
	for off+8 <= int64(len(b)) && !bytes.HasPrefix(b[off:], []byte("LTJSEAL\n")) {
		off += 8 + int64(binary.LittleEndian.Uint32(b[off:]))
		ends = append(ends, off)
	}
	require.LessOrEqual(t, off, int64(len(b)))
	return ends
}

// cutPoints are every record boundary of the journal (whole records kept,
// later segments lost: a restore from an older backup) and random bytes
// (torn tails, torn headers).
func cutPoints(t *testing.T, dir string, random int) []cutPoint {
	t.Helper()
	segs := segmentFiles(t, dir)
	require.Greater(t, len(segs), 2, "several segments")
	var cuts []cutPoint
	for i, s := range segs {
		cuts = append(cuts, cutPoint{seg: i, off: 60, what: "header only"})
		for _, end := range recordEnds(t, s) {
			cuts = append(cuts, cutPoint{seg: i, off: end, what: "record boundary"})
		}
	}
	rng := rand.New(rand.NewPCG(16, 4))
	for range random {
		i := rng.IntN(len(segs))
		fi, err := os.Stat(segs[i])
		require.NoError(t, err)
		cuts = append(cuts, cutPoint{seg: i, off: rng.Int64N(fi.Size()), what: "random byte"})
	}
	return cuts
}

func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if fi.Name() == "LOCK" {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			return err
		}
		return out.Close()
	}))
	return dst
}

func (cp cutPoint) apply(t *testing.T, dir string) {
	t.Helper()
	segs := segmentFiles(t, dir)
	require.NoError(t, os.Truncate(segs[cp.seg], cp.off))
	for _, s := range segs[cp.seg+1:] {
		require.NoError(t, os.Remove(s))
	}
}

// TestJournalBehindOutbox is issue 16's continuity proof. A recorded run's
// journal is cut at every record boundary and at random bytes while its
// outbox keeps everything it published. At every cut: a journal behind
// the outbox is refused with both seqs named; after an operator accepts
// the loss the table starts paused, with an alarm naming the lost seqs,
// and numbers every event above the highest published seq; no seq is ever
// handed to the link twice with other content; and the next start finds
// the journal no longer behind.
func TestJournalBehindOutbox(t *testing.T) {
	rec := record(t, 6)
	cuts := cutPoints(t, rec.dir, 40)
	t.Logf("recorded %d events, %d segments; %d cuts", rec.last, len(segmentFiles(t, rec.dir)), len(cuts))
	behind, whole := 0, 0
	for _, cp := range cuts {
		name := fmt.Sprintf("segment %d at %d (%s)", cp.seg, cp.off, cp.what)
		dir := copyTree(t, rec.dir)
		cp.apply(t, dir)

		outboxSeq, err := mqttlink.OutboxPublishedSeq(nil, filepath.Join(dir, "outbox"))
		require.NoError(t, err)
		require.Equal(t, rec.last, outboxSeq, name)

		j, _, err := journal.Open(journalOptions(dir), zerolog.Nop())
		require.NoError(t, err, name)
		clk := clockwork.NewFakeClockAt(epoch.Add(time.Hour))
		opts := tableOptions(t, table.NewJournal(j), clk)
		opts.RepublishAfter = outboxSeq
		acceptPath := continuity.AcceptPath(dir)

		n, gap, err := continuity.Start(opts, nil, acceptPath, outboxSeq, clk.Now())
		if _, _, lost := n.Lost(); !lost {
			// The whole journal, or one cut only after its last event
			// (a checkpoint derives none), is not behind.
			require.NoError(t, err, name)
			require.Nil(t, gap)
			require.Equal(t, rec.last, n.Journal, name)
			whole++
			require.NoError(t, j.Close())
			continue
		}
		behind++
		var ge *continuity.GapError
		require.ErrorAs(t, err, &ge, name)
		require.ErrorIs(t, err, continuity.ErrGap)
		assert.Contains(t, err.Error(), fmt.Sprintf("last event is seq %d but the outbox published up to seq %d", n.Journal, outboxSeq), name)
		require.Nil(t, gap)

		// A refusal journals nothing: asked again, the same answer.
		_, _, err = continuity.Start(opts, nil, acceptPath, outboxSeq, clk.Now())
		require.ErrorIs(t, err, continuity.ErrGap)

		// An acceptance of another gap does not cover this one.
		from, to, _ := n.Lost()
		require.NoError(t, continuity.Accept(nil, acceptPath, continuity.Acceptance{LostFrom: from, LostTo: to + 1, By: "x", Reason: "y", At: epoch}))
		_, _, err = continuity.Start(opts, nil, acceptPath, outboxSeq, clk.Now())
		require.ErrorIs(t, err, continuity.ErrGap)

		require.NoError(t, continuity.Accept(nil, acceptPath, continuity.Acceptance{LostFrom: from, LostTo: to, By: "ops", Reason: "restored", At: epoch}))
		_, gap, err = continuity.Start(opts, nil, acceptPath, outboxSeq, clk.Now())
		require.NoError(t, err, name)
		require.Equal(t, &table.SeqGap{LostFrom: from, LostTo: to, By: "ops", Reason: "restored"}, gap)

		// The table: paused, an alarm naming the seqs, numbering above.
		c, err := table.New(opts, zerolog.Nop())
		require.NoError(t, err)
		evs, _ := c.Subscribe("mqtt", 4096)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx, nil) }()
		require.NoError(t, c.Ping(ctx))
		st := c.Snapshot()
		require.True(t, st.Paused, name)
		assert.Contains(t, st.PauseReason, gap.Message(), name)
		// Play goes on after a resume, above the lost seqs.
		require.NoError(t, c.Submit(ctx, table.Supervisor{Command: "resume", By: "ops"}), name)
		cancel()
		require.NoError(t, <-done)

		var handed []table.Event
		for ev := range evs {
			handed = append(handed, ev)
		}
		sawAlarm := false
		for _, ev := range handed {
			if ev.Seq == 0 {
				continue
			}
			require.Greater(t, ev.Seq, outboxSeq, "%s: seq %d handed to the link again", name, ev.Seq)
			if a, ok := ev.Body.(table.Alarm); ok && a.Code == "seq_gap" {
				sawAlarm = true
				require.Equal(t, outboxSeq+1, ev.Seq, name)
				want := fmt.Sprintf("seq %d-%d;", from, to)
				if from == to {
					want = fmt.Sprintf("seq %d;", from)
				}
				assert.Contains(t, a.Message, want, name)
			}
			b, err := json.Marshal(ev)
			require.NoError(t, err)
			var env struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			}
			require.NoError(t, json.Unmarshal(b, &env))
			if prev, ok := rec.published[ev.Seq]; ok {
				require.Equal(t, prev, string(env.Data)+"|"+env.Kind, "%s: seq %d with other content", name, ev.Seq)
			}
		}
		require.True(t, sawAlarm, name)

		// The gap is journaled: the next start is not behind.
		n2, gap2, err := continuity.Start(opts, nil, acceptPath, outboxSeq, clk.Now())
		require.NoError(t, err, name)
		require.Nil(t, gap2)
		require.Greater(t, n2.Journal, outboxSeq)
		require.NoError(t, j.Close())
		vr, err := journal.Verify(filepath.Join(dir, "journal"))
		require.NoError(t, err, name)
		require.NotZero(t, vr.Records)
	}
	t.Logf("%d cuts behind the outbox, %d not", behind, whole)
	assert.Positive(t, whole, "the uncut journal is not behind")
	// Cuts that lose only the final checkpoint (it derives no event) or
	// fall in a last segment holding only its header are not behind: how
	// many depends on the records' sizes.
	assert.Greater(t, behind, len(cuts)*3/4)
}

func TestAcceptancesSurviveATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), continuity.AcceptFile)
	a := continuity.Acceptance{LostFrom: 3, LostTo: 9, By: "ops", Reason: "backup", At: epoch}
	require.NoError(t, continuity.Accept(nil, path, a))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"lost_from":1,"lost_to"`) // torn by a power cut
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b := a
	b.LostFrom, b.LostTo, b.By = 10, 12, "eve"
	require.NoError(t, continuity.Accept(nil, path, b))
	got, err := continuity.Acceptances(nil, path)
	require.NoError(t, err)
	assert.Equal(t, []continuity.Acceptance{a, b}, got)

	for _, bad := range []continuity.Acceptance{{LostFrom: 1, LostTo: 2, Reason: "r"}, {LostFrom: 1, LostTo: 2, By: "b"}, {LostFrom: 3, LostTo: 2, By: "b", Reason: "r"}} {
		require.ErrorIs(t, continuity.Accept(nil, path, bad), continuity.ErrAcceptance)
	}
	none, err := continuity.Acceptances(nil, filepath.Join(t.TempDir(), "missing"))
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestResolve(t *testing.T) {
	acc := []continuity.Acceptance{{LostFrom: 5, LostTo: 9, By: "a", Reason: "old"}, {LostFrom: 5, LostTo: 9, By: "b", Reason: "new"}}
	tests := []struct {
		name    string
		n       continuity.Numbers
		want    *table.SeqGap
		wantErr error
	}{
		{"journal ahead (a crash before the outbox)", continuity.Numbers{Journal: 12, Outbox: 9}, nil, nil},
		{"equal", continuity.Numbers{Journal: 9, Outbox: 9}, nil, nil},
		{"empty both", continuity.Numbers{}, nil, nil},
		{"accepted: the newest acceptance names who", continuity.Numbers{Journal: 4, Outbox: 9}, &table.SeqGap{LostFrom: 5, LostTo: 9, By: "b", Reason: "new"}, nil},
		{"a larger gap than accepted", continuity.Numbers{Journal: 3, Outbox: 9}, nil, continuity.ErrGap},
		{"more published since", continuity.Numbers{Journal: 4, Outbox: 10}, nil, continuity.ErrGap},
		{"an empty journal", continuity.Numbers{Journal: 0, Outbox: 1}, nil, continuity.ErrGap},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := continuity.Resolve(tc.n, acc)
			if tc.wantErr != nil {
				require.True(t, errors.Is(err, tc.wantErr), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestStartSeenTheBroker: a data directory restored whole from an older
// backup has a journal and an outbox that agree; the broker's retained
// state names a later seq. StartSeen refuses it as a gap naming the
// broker's seq; an acceptance of exactly that loss journals the gap; and
// one accepted from the broker that begins right after the journal
// applies even at a start that could not read the broker.
func TestStartSeenTheBroker(t *testing.T) {
	rec := record(t, 2)
	const high = 90 // what the broker's retained state names
	require.Less(t, rec.last, uint64(high))
	for _, tc := range []struct {
		name     string
		broker   uint64 // the retained state's seq (0: not read)
		accept   *continuity.Acceptance
		wantGap  bool
		wantText string
	}{
		{name: "the broker not ahead", broker: rec.last},
		{name: "the broker not read", broker: 0},
		{name: "the broker ahead", broker: high, wantText: fmt.Sprintf("the journal's last event is seq %d and the outbox's seq %d, but the table's retained state at the broker names seq %d", rec.last, rec.last, high)},
		{name: "accepted", broker: high, wantGap: true,
			accept: &continuity.Acceptance{LostFrom: rec.last + 1, LostTo: high, By: "ops", Reason: "restored", FromBroker: true}},
		{name: "accepted, the broker not read at this start", broker: 0, wantGap: true,
			accept: &continuity.Acceptance{LostFrom: rec.last + 1, LostTo: high, By: "ops", Reason: "restored", FromBroker: true}},
		{name: "an outbox's acceptance is not applied without its loss", broker: 0,
			accept: &continuity.Acceptance{LostFrom: rec.last + 1, LostTo: high, By: "ops", Reason: "restored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, rec.dir)
			j, _, err := journal.Open(journalOptions(dir), zerolog.Nop())
			require.NoError(t, err)
			defer j.Close()
			clk := clockwork.NewFakeClockAt(epoch.Add(time.Hour))
			opts := tableOptions(t, table.NewJournal(j), clk)
			opts.RepublishAfter = rec.last
			acceptPath := continuity.AcceptPath(dir)
			if tc.accept != nil {
				a := *tc.accept
				a.At = epoch
				require.NoError(t, continuity.Accept(nil, acceptPath, a))
			}
			n, gap, err := continuity.StartSeen(opts, nil, acceptPath, continuity.Numbers{Outbox: rec.last, Broker: tc.broker}, clk.Now())
			if tc.wantText != "" {
				require.ErrorIs(t, err, continuity.ErrGap)
				assert.Contains(t, err.Error(), tc.wantText)
				assert.Contains(t, err.Error(), fmt.Sprintf("--published-seq %d", high))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, rec.last, n.Journal)
			if !tc.wantGap {
				assert.Nil(t, gap)
				return
			}
			assert.Equal(t, &table.SeqGap{LostFrom: rec.last + 1, LostTo: high, By: "ops", Reason: "restored"}, gap)
			after, err := table.LastEventSeq(opts)
			require.NoError(t, err)
			assert.Greater(t, after, uint64(high), "numbering continues above the broker's seq")
		})
	}
}
