package table

import (
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/rules"
)

// BenchmarkRestart100kRounds is the daemon's restart on a journal of
// 100,000 rounds of 000 (about 900,000 records): open and check the whole
// journal (checksums, hash chain), then rebuild the table. "checkpoint" is
// how a table restarts (from the checkpoint before the newest);
// "recall-recent" is `tablectl history` (the last rounds, from the
// checkpoint before them); "full" is a replay of every record, what a
// restart cost before checkpoints. The target is under 2 s.
func BenchmarkRestart100kRounds(b *testing.B) {
	const rounds = 100_000
	rs, err := rules.Game("000")
	require.NoError(b, err)
	dir := b.TempDir()
	records := buildJournal(b, rs, dir, rounds)
	b.Logf("journal of %d rounds: %d records", rounds, records)

	const (
		modeRestart = iota
		modeFull
		modeRecent
	)
	restart := func(b *testing.B, mode int) {
		for b.Loop() {
			jr, _, err := journal.Open(journal.Options{Dir: dir, AnchorKind: CheckpointKind}, zerolog.Nop())
			require.NoError(b, err)
			opts := DefaultOptions(rs)
			opts.Clock, opts.Journal = clockwork.NewFakeClock(), NewJournal(jr)
			n := 0
			opts.Replayed = func(Event) { n++ }
			switch mode {
			case modeFull:
				require.NoError(b, ReplayEvents(opts, func(Event) { n++ }))
			case modeRecent: // about the last 20 rounds, as tablectl history asks
				require.NoError(b, ReplayEventsFrom(opts, jr.LastSeq()-20*9, func(Event) { n++ }))
			default:
				c, err := New(opts, zerolog.Nop())
				require.NoError(b, err)
				require.NoError(b, c.start())
				require.Equal(b, rounds, c.Snapshot().Rounds)
				c.stopTimer()
			}
			require.NoError(b, jr.Close())
			b.ReportMetric(float64(n), "events-replayed")
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/restart")
	}
	b.Run("checkpoint", func(b *testing.B) { restart(b, modeRestart) })
	b.Run("recall-recent", func(b *testing.B) { restart(b, modeRecent) })
	b.Run("full", func(b *testing.B) { restart(b, modeFull) })
}

// buildJournal plays rounds rounds of rs through a controller into dir and
// returns the number of records. The controller writes into memory; the
// records then go to the journal in pipelined batches (AppendAsync), the
// same records a live table would have fsync'd one round at a time.
func buildJournal(b *testing.B, rs *rules.Set, dir string, rounds int) int {
	b.Helper()
	mem := &memJournal{}
	opts := DefaultOptions(rs)
	clk := clockwork.NewFakeClockAt(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	opts.Clock, opts.Journal = clk, mem
	c, err := New(opts, zerolog.Nop())
	require.NoError(b, err)
	defer c.stopTimer()
	must := func(in Input) {
		if err := c.handle(in); err != nil {
			b.Fatalf("%s: %v", in.Kind(), err)
		}
	}
	// No shoe is announced: the same five cards every round would break
	// a shoe's composition by the ninth round (the integrity book checks
	// a shoe in play only).
	cards := []card.Card{card.MustParse("Ts"), card.MustParse("6d"), card.MustParse("7c"), card.MustParse("5h")}
	for i := range rounds {
		clk.Advance(30 * time.Second)
		must(BetsClosed{ID: fmt.Sprintf("b%d", i), Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
		for _, cd := range cards {
			must(CardDrawn{Card: cd})
		}
		must(Decision{ID: fmt.Sprintf("d%d", i), Seat: 1, Player: "p1", Action: "stand"})
		must(CardDrawn{Card: card.MustParse("9s")})
		must(c.m.Timer().Fired())
	}
	jr, _, err := journal.Open(journal.Options{Dir: dir, AnchorKind: CheckpointKind, MaxBatch: 4096}, zerolog.Nop())
	require.NoError(b, err)
	pend := make([]*journal.Pending, 0, 4096)
	flush := func() {
		for _, p := range pend {
			_, err := p.Wait()
			require.NoError(b, err)
		}
		pend = pend[:0]
	}
	for i, data := range mem.recs {
		pend = append(pend, jr.AppendAsync(journal.Record{Time: mem.at[i], Kind: mem.kinds[i], Data: data}))
		if len(pend) == cap(pend) {
			flush()
		}
	}
	flush()
	require.NoError(b, jr.Close())
	return len(mem.recs)
}
