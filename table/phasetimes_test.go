package table

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/rules"
)

// withTimes sets the table's phase times as tabled does from timing:
// (rules.Set.SetTimes and the settle delay) on a rule set of its own.
func withTimes(betting, lastCall, decision, settle time.Duration) func(*Options) {
	return func(o *Options) {
		rs := *o.Rules
		rs.SetTimes(rules.Times{Betting: betting, LastCall: lastCall, Decision: decision})
		o.Rules, o.SettleDelay, o.CheckpointEvery = &rs, settle, 2
	}
}

// replayBytes is every event a read-only replay of j under opt derives,
// as bytes by seq: what a resend publishes again.
func replayBytes(t *testing.T, j Journal, opt func(*Options)) map[uint64]string {
	t.Helper()
	rs, err := rules.Game("000")
	require.NoError(t, err)
	opts := DefaultOptions(rs)
	opts.Journal = j
	if opt != nil {
		opt(&opts)
	}
	out := map[uint64]string{}
	require.NoError(t, ReplayEventsFrom(opts, 0, func(ev Event) {
		if ev.Seq == 0 {
			return // a state: no number, never resent
		}
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		out[ev.Seq] = string(b)
	}))
	return out
}

// TestPhaseTimesFromTheJournal: the phase events' deadlines and the
// timers come from the table's phase times, which tabled takes from its
// configuration (timing:). A replay took them from the configuration of
// its own day: restarted with other timing over the same journal, the
// daemon's resend re-derived the published phase events with other
// deadlines under the same seqs (tried on the demo: seqs 4 and 30 of a
// resend of 1-60 differed from what the backend had), and tablectl's
// replays (round, history, verify), which know only the game, derived a
// table with timing overrides so. From epoch 10 the controller journals
// the times at start whenever they are not the journal's, and a
// checkpoint carries them: every replay derives the bytes published.
func TestPhaseTimesFromTheJournal(t *testing.T) {
	timesA := withTimes(30*time.Second, 10*time.Second, 20*time.Second, 9*time.Second)
	timesB := withTimes(12*time.Second, 3*time.Second, 7*time.Second, 2*time.Second)
	j, clk, h := playTable(t, 3, timesA)
	var live []Event
	for len(h.events) > 0 {
		live = append(live, <-h.events)
	}
	// What the table published: the live events, and the replay under
	// the same configuration derives each of them byte for byte.
	published := replayBytes(t, j, timesA)
	require.Len(t, published, int(h.c.Snapshot().Seq))
	for _, ev := range live {
		if ev.Seq > 0 {
			b, err := json.Marshal(ev)
			require.NoError(t, err)
			require.Equal(t, published[ev.Seq], string(b))
		}
	}
	// A betting phase's deadline is the configured 30 s after it opened.
	for _, ev := range live {
		if pc, ok := ev.Body.(PhaseChanged); ok && pc.Phase == PhaseBetting && ev.Seq > 0 {
			assert.Equal(t, 30*time.Second, pc.Deadline.Sub(ev.Time))
		}
	}

	for name, opt := range map[string]func(*Options){
		"another timing (a restart's)": timesB,
		"the game's own (tablectl's)":  nil,
	} {
		assert.Equal(t, published, replayBytes(t, j, opt), "%s: the published bytes", name)
	}
	// Retention kept the newest checkpoint on: it carries the times.
	cut := j.clone()
	cut.dropBefore(cut.LastOfKind(CheckpointKind))
	for seq, b := range replayBytes(t, cut, timesB) {
		assert.Equal(t, published[seq], b, "seq %d replayed from the checkpoint", seq)
	}

	// Restarted with timing B: the times are journaled once, and the
	// rounds after it run on them; the events of before keep A's.
	n := j.count(PhaseTimes{}.Kind())
	h2 := startWith(t, "000", j, clockwork.NewFakeClockAt(clk.Now()), timesB)
	h2.ping()
	assert.Equal(t, n+1, j.count(PhaseTimes{}.Kind()), "B's times journaled at the restart")
	for len(h2.events) > 0 {
		<-h2.events
	}
	playRound(t, h2, 3)
	var settled []Event
	for len(h2.events) > 0 {
		settled = append(settled, <-h2.events)
	}
	seen := false
	for _, ev := range settled {
		if pc, ok := ev.Body.(PhaseChanged); ok && pc.Phase == PhaseSettled && ev.Seq > 0 {
			assert.Equal(t, 2*time.Second, pc.Deadline.Sub(ev.Time), "B's settle pause")
			seen = true
		}
	}
	assert.True(t, seen, "a settled phase after the restart")
	h2.stop()
	after := replayBytes(t, j, timesA)
	for seq, b := range published {
		assert.Equal(t, b, after[seq], "seq %d after the restart with B", seq)
	}
	assert.Equal(t, after, replayBytes(t, j, nil), "tablectl's replay")

	// Started again with B: nothing more journaled.
	m := j.count(PhaseTimes{}.Kind())
	h3 := startWith(t, "000", j, clockwork.NewFakeClockAt(clk.Now()), timesB)
	h3.ping()
	h3.stop()
	assert.Equal(t, m, j.count(PhaseTimes{}.Kind()))
}

// TestPhaseTimesInput: the times are the controller's to journal, whole
// and consistent, and only under epoch 10 on.
func TestPhaseTimesInput(t *testing.T) {
	h := start(t, "000", &memJournal{})
	h.ping()
	ok := PhaseTimes{BettingMS: 15000, LastCallMS: 5000, InsuranceMS: 8000, DecisionMS: 10000, SettleMS: 4000}
	require.ErrorIs(t, h.submit(ok), errIllegal, "not from outside")

	for _, tt := range []struct {
		name  string
		epoch int
		in    PhaseTimes
		ok    bool
	}{
		{"epoch 10", CurrentRulesEpoch, ok, true},
		{"epoch 9", epochRoundFence, ok, false},
		{"no settle", CurrentRulesEpoch, PhaseTimes{BettingMS: 15000, LastCallMS: 5000, InsuranceMS: 8000, DecisionMS: 10000}, false},
		{"last call past betting", CurrentRulesEpoch, PhaseTimes{BettingMS: 5000, LastCallMS: 6000, InsuranceMS: 8000, DecisionMS: 10000, SettleMS: 1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := newMT(t)
			x.m.epoch = tt.epoch
			before := x.m.PhaseTimes()
			_, err := x.apply(tt.in)
			if !tt.ok {
				require.ErrorIs(t, err, errIllegal)
				assert.Equal(t, before, x.m.PhaseTimes(), "nothing changed")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.in, x.m.PhaseTimes())
		})
	}
}
