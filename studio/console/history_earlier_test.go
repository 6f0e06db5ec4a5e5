package console

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// TestHistoryAddEarlier: rounds read from an earlier stretch of the
// journal go before the rounds held, each once, the oldest dropped beyond
// keep; a failed read changes nothing.
func TestHistoryAddEarlier(t *testing.T) {
	started := func(seq uint64, code string) table.Event {
		return table.Event{Seq: seq, Round: code, Body: round.Event{Note: round.Note{Type: round.EvRoundStarted}}}
	}
	tests := []struct {
		name    string
		keep    int
		held    []string // rounds added live (seqs 100 on)
		earlier []string // rounds of the earlier stretch (seqs 1 on)
		want    []string // Recent, newest first
	}{
		{"before the held", 10, []string{"r4", "r5"}, []string{"r1", "r2", "r3"}, []string{"r5", "r4", "r3", "r2", "r1"}},
		{"keep drops the oldest", 3, []string{"r4", "r5"}, []string{"r1", "r2", "r3"}, []string{"r5", "r4", "r3"}},
		{"a round held is kept once", 10, []string{"r3", "r4"}, []string{"r2", "r3"}, []string{"r4", "r3", "r2"}},
		{"nothing held yet", 10, nil, []string{"r1", "r2"}, []string{"r2", "r1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHistory(tc.keep)
			for i, code := range tc.held {
				h.Add(started(uint64(100+i), code))
			}
			require.NoError(t, h.AddEarlier(func(add func(table.Event)) error {
				for i, code := range tc.earlier {
					add(started(uint64(1+i), code))
				}
				return nil
			}))
			list, err := h.Recent(20)
			require.NoError(t, err)
			var got []string
			for _, r := range list {
				got = append(got, r.Code)
			}
			assert.Equal(t, tc.want, got)
			// Live rounds still come in after it.
			h.Add(started(200, "r9"))
			list, _ = h.Recent(1)
			assert.Equal(t, "r9", list[0].Code)
		})
	}
	h := NewHistory(5)
	h.Add(started(1, "r1"))
	boom := errors.New("boom")
	require.ErrorIs(t, h.AddEarlier(func(add func(table.Event)) error { add(started(0, "r0")); return boom }), boom)
	list, _ := h.Recent(5)
	assert.Len(t, list, 1)
}

// TestHistoryRecallAcrossCheckpoints is tabled's recall across a restart
// on a real journal with checkpoints: the restart replays from the newest
// checkpoint into the history (Options.Replayed), then the rounds between
// the two newest checkpoints are read beside the running table
// (table.ReplayEarlierEvents into AddEarlier, on a read-only open of the
// journal), and recall has every round since the checkpoint before the
// newest, in order, each once, with its cards.
func TestHistoryRecallAcrossCheckpoints(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	dir := t.TempDir()
	clk := clockwork.NewFakeClockAt(epoch)
	run := func(hist *History, rounds int) {
		t.Helper()
		jo := journal.DefaultOptions()
		jo.Dir, jo.AnchorKind = dir, table.CheckpointKind
		jr, _, err := journal.Open(jo, zerolog.Nop())
		require.NoError(t, err)
		defer jr.Close()
		opts := table.DefaultOptions(rs)
		opts.Clock, opts.Journal, opts.CheckpointEvery = clk, table.NewJournal(jr), 2
		if hist != nil {
			opts.Replayed = hist.Add
		}
		ctl, err := table.New(opts, zerolog.Nop())
		require.NoError(t, err)
		evs, _ := ctl.Subscribe("recall", 4096)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ctl.Run(ctx, nil) }()
		if hist != nil {
			// As tabled does: beside the running table, on its own open.
			ro, err := table.OpenForHistory(dir, zerolog.Nop())
			require.NoError(t, err)
			ropts := opts
			ropts.Journal, ropts.Replayed = table.NewJournal(ro), nil
			require.NoError(t, hist.AddEarlier(func(add func(table.Event)) error { return table.ReplayEarlierEvents(ropts, add) }))
			require.NoError(t, ro.Close())
		}
		for range rounds {
			playSettledRound(ctx, t, ctl, clk)
			clk.Advance(5 * time.Second)
			require.Eventually(t, func() bool { return ctl.Snapshot().Phase == table.PhaseBetting }, 5*time.Second, time.Millisecond)
		}
		require.NoError(t, ctl.Ping(ctx)) // the checkpoint of the last betting opened is written
		cancel()
		require.NoError(t, <-done)
		for ev := range evs {
			if hist != nil {
				hist.Add(ev) // as the console is fed live
			}
		}
		clk.Advance(time.Minute)
	}
	run(nil, 5) // checkpoints when betting opens after rounds 0, 2 and 4

	hist := NewHistory(50)
	run(hist, 1)
	list, err := hist.Recent(50)
	require.NoError(t, err)
	// The restart replayed round 5 from the newest checkpoint; rounds 3
	// and 4 came from the stretch before it; round 6 was played live.
	require.Len(t, list, 4)
	for i, s := range list {
		assert.True(t, s.Settled, s.Code)
		assert.Equal(t, cardList(t, "Ts 6d 7c 5h 9s"), s.Cards, s.Code)
		if i > 0 {
			assert.True(t, s.Start.Before(list[i-1].Start), "newest first")
		}
	}
}

// playSettledRound waits for bets to open (a restarted table may already
// be at last call: the fake clock moved on while it was stopped) and plays
// one round of seat 1 to its settlement: Ts 6d 7c 5h, stand, 9s.
func playSettledRound(ctx context.Context, t *testing.T, ctl *table.Controller, clk *clockwork.FakeClock) {
	t.Helper()
	require.Eventually(t, func() bool {
		p := ctl.Snapshot().Phase
		return p == table.PhaseBetting || p == table.PhaseLastCall
	}, 5*time.Second, time.Millisecond)
	require.NoError(t, ctl.Submit(ctx, table.BetsClosed{Bets: []table.Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		clk.Advance(time.Second)
		require.NoError(t, ctl.Submit(ctx, table.CardDrawn{Card: card.MustParse(c)}))
	}
	require.NoError(t, ctl.Submit(ctx, table.Decision{Seat: 1, Action: "stand"}))
	require.NoError(t, ctl.Submit(ctx, table.CardDrawn{Card: card.MustParse("9s")}))
	require.Equal(t, table.PhaseSettled, ctl.Snapshot().Phase)
}
