package table

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/round"
)

var ckEpoch = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// playRound plays one round of 000 from open betting to the next open
// betting: seat 1 has 17, stands, the dealer makes 20.
func playRound(t *testing.T, h *harness, n int) {
	t.Helper()
	require.NoError(t, h.submit(BetsClosed{ID: "b" + itoa(n), Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	require.NoError(t, h.submit(Decision{ID: "d" + itoa(n), Seat: 1, Player: "p1", Action: "stand"}))
	require.NoError(t, h.card("9s"))
	require.Equal(t, PhaseSettled, h.c.Snapshot().Phase)
	advanceUntil(t, h, func(st State) bool { return st.Phase == PhaseBetting }, 4*time.Second)
}

func itoa(n int) string { return string(rune('a'+n/26)) + string(rune('a'+n%26)) }

// advanceUntil moves the fake clock by step once the controller's timer
// is armed, until cond holds.
func advanceUntil(t *testing.T, h *harness, cond func(State) bool, step time.Duration) {
	t.Helper()
	for range 10 {
		if cond(h.c.Snapshot()) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		require.NoError(t, h.clk.BlockUntilContext(ctx, 1), "a timer is armed")
		cancel()
		h.clk.Advance(step)
		require.NoError(t, h.c.Ping(context.Background()))
		if cond(h.c.Snapshot()) {
			return
		}
		// The timer's input may still be on its way to the loop.
		require.Eventually(t, func() bool { return cond(h.c.Snapshot()) || h.clk.BlockUntilContext(expired(), 1) == nil },
			5*time.Second, time.Millisecond)
	}
	require.True(t, cond(h.c.Snapshot()), "state never reached: %+v", h.c.Snapshot())
}

func expired() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func (m *memJournal) clone() *memJournal {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &memJournal{recs: slices.Clone(m.recs), kinds: slices.Clone(m.kinds), at: slices.Clone(m.at), first: m.first}
}

func (m *memJournal) count(kind string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, k := range m.kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// collect drains the harness's events until the table is in phase p, and
// returns their seq and kind.
func collect(t *testing.T, h *harness, until func(Event) bool) []string {
	t.Helper()
	var out []string
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-h.events:
			if ev.Seq != 0 {
				out = append(out, itoa(int(ev.Seq%600))+":"+ev.Body.Kind())
			}
			if until(ev) {
				return out
			}
		case <-deadline:
			t.Fatalf("events stopped after %v", out)
		}
	}
}

// playTable plays rounds rounds of 000 on a fresh in-memory journal and
// stops the table.
func playTable(t *testing.T, rounds int, opt func(*Options)) (*memJournal, *clockwork.FakeClock, *harness) {
	t.Helper()
	clk := clockwork.NewFakeClockAt(ckEpoch)
	j := &memJournal{}
	h := startWith(t, "000", j, clk, opt)
	h.waitPhase(PhaseBetting)
	for n := range rounds {
		playRound(t, h, n)
	}
	h.stop()
	return j, clk, h
}

// TestCheckpointRestart: a table restarted from a journal whose records
// before the newest checkpoint are gone (retention) is the same table as
// one restarted from the whole journal: same state, and the next round
// gives the same events with the same numbers.
func TestCheckpointRestart(t *testing.T) {
	every := func(o *Options) { o.CheckpointEvery = 2 }
	j, clk, h := playTable(t, 7, every)
	before := h.c.Snapshot()
	require.Equal(t, 7, before.Rounds)
	// One when betting first opened, then every second round.
	require.Equal(t, 4, j.count(CheckpointKind))

	cut := j.clone()
	last := cut.LastOfKind(CheckpointKind)
	cut.dropBefore(last)
	require.Equal(t, CheckpointKind, cut.kinds[0])

	var states []State
	var streams [][]string
	for _, jj := range []*memJournal{j, cut} {
		h := startWith(t, "000", jj, clockwork.NewFakeClockAt(clk.Now()), every)
		h.ping()
		states = append(states, h.c.Snapshot())
		// Drain what the start published, then play a round and record it.
		for len(h.events) > 0 {
			<-h.events
		}
		playRound(t, h, 7)
		streams = append(streams, collect(t, h, func(ev Event) bool {
			pc, ok := ev.Body.(PhaseChanged)
			return ok && pc.Phase == PhaseBetting
		}))
		h.stop()
	}
	for i, st := range states {
		assert.Equal(t, before.Seq, st.Seq, "journal %d: same event number", i)
		assert.Equal(t, before.Rounds, st.Rounds)
		assert.Equal(t, before.Phase, st.Phase)
		assert.Equal(t, before.Shoe, st.Shoe)
		require.NotNil(t, st.Timer)
		assert.Equal(t, "last_call", st.Timer.Name)
		assert.Equal(t, before.Timer.Deadline, st.Timer.Deadline, "the same betting deadline")
	}
	assert.Equal(t, streams[0], streams[1], "the next round is the same table")
	assert.NotEmpty(t, streams[0])

	// Recall of the cut journal starts at its checkpoint.
	var recalled []Event
	opts := DefaultOptions(h.c.opts.Rules)
	opts.Journal = cut
	require.NoError(t, ReplayEvents(opts, func(ev Event) { recalled = append(recalled, ev) }))
	require.NotEmpty(t, recalled)
	assert.Greater(t, recalled[0].Seq, uint64(0))
}

// TestReplayStartsAtACheckpoint: a restart replays from the newest
// checkpoint, not from the first record; the rounds before it are read
// for recall by ReplayEarlierEvents, up to that checkpoint.
func TestReplayStartsAtACheckpoint(t *testing.T) {
	every := func(o *Options) { o.CheckpointEvery = 3 }
	j, clk, _ := playTable(t, 10, every)

	settledIn := func(evs []Event) (n int, last uint64) {
		for _, ev := range evs {
			if ev.Body.Kind() == "settled" {
				n++
			}
			last = max(last, ev.Seq)
		}
		return n, last
	}
	var replayed []Event
	h2 := startWith(t, "000", j, clockwork.NewFakeClockAt(clk.Now()), func(o *Options) {
		every(o)
		o.Replayed = func(ev Event) { replayed = append(replayed, ev) }
	})
	h2.ping()
	// Checkpoints after 0, 3, 6 and 9 rounds: the restart starts at the
	// one after 9, so round 10 is replayed.
	n, _ := settledIn(replayed)
	assert.Equal(t, 1, n)
	assert.Equal(t, 10, h2.c.Snapshot().Rounds)
	h2.stop()

	// Recall's earlier stretch: rounds 7 to 9, every event before the
	// first one the restart replayed.
	var earlier []Event
	opts := DefaultOptions(h2.c.opts.Rules)
	opts.Journal = j
	require.NoError(t, ReplayEarlierEvents(opts, func(ev Event) { earlier = append(earlier, ev) }))
	n, last := settledIn(earlier)
	assert.Equal(t, 3, n)
	require.NotEmpty(t, replayed)
	assert.Equal(t, replayed[0].Seq, last+1, "the earlier stretch ends where the restart's replay begins")

	// A journal whose only checkpoint is the newest has nothing earlier
	// to recall past it.
	j.dropBefore(j.LastOfKind(CheckpointKind))
	earlier = nil
	require.NoError(t, ReplayEarlierEvents(opts, func(ev Event) { earlier = append(earlier, ev) }))
	assert.Empty(t, earlier)
}

// TestCheckpointKeepsVerdicts: a command retried after a restart from a
// checkpoint gets its first verdict back and is not applied again.
func TestCheckpointKeepsVerdicts(t *testing.T) {
	clk := clockwork.NewFakeClockAt(ckEpoch)
	every := func(o *Options) { o.CheckpointEvery = 1 }
	j := &memJournal{}
	h := startWith(t, "000", j, clk, every)
	h.waitPhase(PhaseBetting)
	require.NoError(t, h.submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	require.ErrorIs(t, h.submit(Decision{ID: "x", Seat: 1, Player: "p1", Action: "split"}), round.ErrIllegalAction)
	require.NoError(t, h.submit(Decision{ID: "s", Seat: 1, Player: "p1", Action: "stand"}))
	require.NoError(t, h.card("9s"))
	advanceUntil(t, h, func(st State) bool { return st.Phase == PhaseBetting }, 4*time.Second)
	h.stop()
	j.dropBefore(j.LastOfKind(CheckpointKind))

	h2 := startWith(t, "000", j, clockwork.NewFakeClockAt(clk.Now()), every)
	h2.ping()
	seq := h2.c.Snapshot().Seq
	// A refused command was never journaled nor remembered: retried, it
	// is judged again on the table as it is now (nothing happened then).
	err := h2.submit(Decision{ID: "x", Seat: 1, Player: "p1", Action: "split"})
	require.ErrorIs(t, err, round.ErrFinished)
	require.NoError(t, h2.submit(Decision{ID: "s", Seat: 1, Player: "p1", Action: "stand"}))
	require.NoError(t, h2.submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}),
		"an accepted bets_closed retried: answered, not applied")
	assert.Equal(t, PhaseBetting, h2.c.Snapshot().Phase)
	assert.Equal(t, seq, h2.c.Snapshot().Seq, "nothing happened")
}

// TestNoCheckpointNoStart: a journal cut with no checkpoint after the cut
// cannot be rebuilt; the controller says so instead of inventing a state.
func TestNoCheckpointNoStart(t *testing.T) {
	clk := clockwork.NewFakeClockAt(ckEpoch)
	j := &memJournal{}
	h := startWith(t, "000", j, clk, func(o *Options) { o.CheckpointEvery = 50 })
	h.waitPhase(PhaseBetting)
	playRound(t, h, 0)
	h.stop()
	j.dropBefore(j.LastOfKind(CheckpointKind) + 1) // past the only checkpoint

	rs := h.c.opts.Rules
	opts := DefaultOptions(rs)
	opts.Journal, opts.Clock = j, clk
	c, err := New(opts, h.c.log)
	require.NoError(t, err)
	err = c.Run(context.Background(), nil)
	require.ErrorIs(t, err, ErrNoCheckpoint)
}

// TestCheckpointNotAnInput: nobody outside the table can submit one.
func TestCheckpointNotAnInput(t *testing.T) {
	j := &memJournal{}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	h.ping() // the opening's checkpoint is written after its events went out
	n := j.count(CheckpointKind)
	require.Equal(t, 1, n)
	err := h.submit(Checkpoint{Seq: 99})
	require.ErrorIs(t, err, round.ErrIllegalAction)
	assert.Equal(t, n, j.count(CheckpointKind), "not journaled")
}

// TestDecisionTimerAcrossPause: a paused decision keeps its time left and
// gets it back on resume (at least ResumeGrace); after a restart in the
// middle of a round, the clock stopped at the last journaled input.
func TestDecisionTimerAcrossPause(t *testing.T) {
	grace := func(o *Options) { o.ResumeGrace = time.Second }
	deal := func(h *harness) {
		h.waitPhase(PhaseBetting)
		require.NoError(t, h.submit(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
		for _, c := range []string{"Ts", "6d", "7c", "5h"} {
			require.NoError(t, h.card(c))
		}
		st := h.c.Snapshot()
		require.NotNil(t, st.Timer)
		require.Equal(t, "decision", st.Timer.Name)
		require.EqualValues(t, 10000, st.Timer.LeftMS, "000 gives 10 s")
	}
	stood := func(st State) bool { return st.Round.Next == "card to dealer" }
	// expectTimeout checks the decision times out after left, not before.
	expectTimeout := func(h *harness, left time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, h.clk.BlockUntilContext(ctx, 1))
		h.clk.Advance(left - 100*time.Millisecond)
		require.NoError(t, h.c.Ping(ctx))
		require.False(t, stood(h.c.Snapshot()), "not yet")
		h.clk.Advance(200 * time.Millisecond)
		require.Eventually(t, func() bool { return stood(h.c.Snapshot()) }, 5*time.Second, time.Millisecond)
	}

	t.Run("pause and resume", func(t *testing.T) {
		h := startWith(t, "000", nil, clockwork.NewFakeClockAt(ckEpoch), grace)
		deal(h)
		h.clk.Advance(7 * time.Second)
		require.NoError(t, h.submit(Supervisor{Command: "pause", By: "sup", Reason: "camera"}))
		st := h.c.Snapshot()
		require.NotNil(t, st.Timer)
		assert.True(t, st.Timer.Stopped)
		assert.EqualValues(t, 3000, st.Timer.LeftMS)
		h.clk.Advance(time.Minute)
		require.NoError(t, h.submit(Supervisor{Command: "resume", By: "sup"}))
		expectTimeout(h, 3*time.Second)
	})
	t.Run("grace", func(t *testing.T) {
		h := startWith(t, "000", nil, clockwork.NewFakeClockAt(ckEpoch), grace)
		deal(h)
		h.clk.Advance(9900 * time.Millisecond)
		require.NoError(t, h.submit(Supervisor{Command: "pause", By: "sup", Reason: "camera"}))
		require.NoError(t, h.submit(Supervisor{Command: "resume", By: "sup"}))
		expectTimeout(h, time.Second)
	})
	t.Run("restart", func(t *testing.T) {
		j := &memJournal{}
		clk := clockwork.NewFakeClockAt(ckEpoch)
		h := startWith(t, "000", j, clk, grace)
		deal(h)
		clk.Advance(6 * time.Second)
		// A refused decision is not journaled; an alarm is: the table was
		// alive 6 s in.
		require.ErrorIs(t, h.submit(Decision{Seat: 1, Player: "p1", Action: "split"}), round.ErrIllegalAction)
		require.NoError(t, h.submit(DeviceAlarm{Source: "gpio", Code: "lamp", Message: "lamp flickers"}))
		h.stop()
		clk.Advance(time.Hour) // down for an hour

		h2 := startWith(t, "000", j, clk, grace)
		h2.ping()
		require.Eventually(t, func() bool { return h2.c.Snapshot().Paused }, 5*time.Second, time.Millisecond)
		st := h2.c.Snapshot()
		require.NotNil(t, st.Timer)
		assert.EqualValues(t, 4000, st.Timer.LeftMS, "the clock stopped at the last input")
		require.NoError(t, h2.submit(Supervisor{Command: "resume", By: "sup"}))
		expectTimeout(h2, 4*time.Second)
	})
}

// TestRetentionWithCheckpoints runs the real journal with small segments
// and size retention: old segments go while the table plays, and a table
// restarted on what is left is the same table.
func TestRetentionWithCheckpoints(t *testing.T) {
	dir := t.TempDir()
	jopts := journal.Options{Dir: dir, SegmentBytes: 16 << 10, MaxBytes: 48 << 10, AnchorKind: CheckpointKind}
	open := func() *journal.Journal {
		jr, _, err := journal.Open(jopts, zerolog.Nop())
		require.NoError(t, err)
		return jr
	}
	clk := clockwork.NewFakeClockAt(ckEpoch)
	every := func(o *Options) { o.CheckpointEvery = 5 }
	jr := open()
	h := startWith(t, "000", NewJournal(jr), clk, every)
	h.waitPhase(PhaseBetting)
	for n := range 60 {
		playRound(t, h, n)
	}
	before := h.c.Snapshot()
	h.stop()
	first := jr.FirstSeq()
	require.Greater(t, first, uint64(1), "retention deleted old segments")
	require.NoError(t, jr.Close())

	jr = open()
	defer jr.Close()
	// Open retains too: a checkpoint journaled after the last seal lets
	// it retire the segments wholly before that checkpoint.
	assert.GreaterOrEqual(t, jr.FirstSeq(), first)
	h2 := startWith(t, "000", NewJournal(jr), clockwork.NewFakeClockAt(clk.Now()), every)
	h2.ping()
	after := h2.c.Snapshot()
	assert.Equal(t, before.Seq, after.Seq)
	assert.Equal(t, 60, after.Rounds)
	assert.Equal(t, before.Shoe, after.Shoe)
	playRound(t, h2, 60)
	assert.Equal(t, 61, h2.c.Snapshot().Rounds)
	h2.stop()

	// Recall reads what is retained, starting at the first checkpoint.
	rounds := 0
	opts := DefaultOptions(h.c.opts.Rules)
	opts.Journal = NewJournal(jr)
	require.NoError(t, ReplayEvents(opts, func(ev Event) {
		if ev.Body.Kind() == "settled" {
			rounds++
		}
	}))
	assert.Greater(t, rounds, 5)
	assert.Less(t, rounds, 61, "the oldest rounds went with their segments")
}

// TestReplayEventsFrom: recall of one round reads from the checkpoint
// before it, and gets the round whole.
func TestReplayEventsFrom(t *testing.T) {
	j, _, h := playTable(t, 10, func(o *Options) { o.CheckpointEvery = 3 })
	var bets []uint64 // journal seq of each round's bets_closed
	for i, k := range j.kinds {
		if k == "bets_closed" {
			bets = append(bets, j.first+uint64(i))
		}
	}
	require.Len(t, bets, 10)
	tests := []struct {
		name    string
		from    uint64
		settled int
	}{
		{"everything", 0, 10},
		{"round 8: from the checkpoint after round 6", bets[7] + 1, 4},
		{"round 7: the same checkpoint", bets[6], 4},
		{"round 6: the checkpoint after round 3", bets[5], 7},
		{"round 1: the first checkpoint", bets[0], 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions(h.c.opts.Rules)
			opts.Journal = j
			settled, started := 0, 0
			require.NoError(t, ReplayEventsFrom(opts, tc.from, func(ev Event) {
				switch ev.Body.Kind() {
				case "settled":
					settled++
				case "round_started":
					started++
				}
			}))
			assert.Equal(t, tc.settled, settled)
			assert.Equal(t, settled, started, "every round recalled whole")
		})
	}
}

// TestReplayEventsSince: a resend from event seq N replays from the newest
// checkpoint before N, and gives N and everything after it exactly as the
// full replay does.
func TestReplayEventsSince(t *testing.T) {
	j, _, h := playTable(t, 10, func(o *Options) { o.CheckpointEvery = 3 })
	opts, all, last := publishedEvents(t, h, j)
	require.Greater(t, last, uint64(100))
	tests := []struct {
		name      string
		from      uint64
		fromStart bool // no checkpoint before it: the whole journal
	}{
		{"the first event", 1, true},
		{"the middle", last / 2, false},
		{"the newest", last, false},
		{"past the newest", last + 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[uint64]Event{}
			var first uint64
			require.NoError(t, ReplayEventsSince(opts, tc.from, func(ev Event) {
				if ev.Seq == 0 {
					return
				}
				if first == 0 {
					first = ev.Seq
				}
				got[ev.Seq] = ev
			}))
			for seq := tc.from; seq <= last; seq++ {
				require.Contains(t, got, seq)
				require.Equal(t, all[seq], got[seq], "event %d", seq)
			}
			if tc.fromStart {
				assert.EqualValues(t, 1, first)
			} else {
				assert.Greater(t, first, uint64(1), "started at a checkpoint")
				assert.Less(t, tc.from-first, last/2, "at the newest checkpoint before it, not an older one")
			}
		})
	}
}

// TestRepublishAfter is what makes publishing before the outbox's fsync
// safe: a restart publishes again, identical, every event after the
// outbox's last one (a power cut took the outbox's unsynced tail), and
// none before, even when they are older than the newest checkpoint.
func TestRepublishAfter(t *testing.T) {
	every := func(o *Options) { o.CheckpointEvery = 2 }
	j, clk, h := playTable(t, 7, every)
	_, all, last := publishedEvents(t, h, j)
	require.Greater(t, last, uint64(60))
	for _, after := range []uint64{last, last - 3, last - 50, 1} {
		t.Run(fmt.Sprintf("outbox at %d of %d", after, last), func(t *testing.T) {
			h := startWith(t, "000", j.clone(), clockwork.NewFakeClockAt(clk.Now()), func(o *Options) {
				every(o)
				o.RepublishAfter = after
			})
			h.ping()
			h.stop()
			var got []uint64
			for ev := range h.events {
				if ev.Seq == 0 || ev.Seq > last {
					continue // states, and what the restart itself does
				}
				require.Greater(t, ev.Seq, after, "the outbox has it already")
				require.Equal(t, all[ev.Seq], ev, "event %d as first published", ev.Seq)
				got = append(got, ev.Seq)
			}
			require.Len(t, got, int(last-after), "every event after the outbox's last, once")
			for i, seq := range got {
				require.Equal(t, after+1+uint64(i), seq, "in order")
			}
		})
	}
}

// publishedEvents replays j whole: the options to replay it again, every
// numbered event by seq, and the last seq.
func publishedEvents(t *testing.T, h *harness, j *memJournal) (opts Options, all map[uint64]Event, last uint64) {
	t.Helper()
	opts = DefaultOptions(h.c.opts.Rules)
	opts.Journal = j
	all = map[uint64]Event{}
	require.NoError(t, ReplayEvents(opts, func(ev Event) {
		if ev.Seq != 0 {
			all[ev.Seq], last = ev, max(last, ev.Seq)
		}
	}))
	return opts, all, last
}
