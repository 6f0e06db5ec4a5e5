package rtp

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/strategy"
)

func setup(t testing.TB, code string) (*rules.Set, *strategy.Table) {
	rs, err := rules.Game(code)
	require.NoError(t, err)
	st, err := strategy.ForGame(code)
	require.NoError(t, err)
	return rs, st
}

// TestRunIsDeterministicAndPlausible plays every game briefly: a seeded run
// repeats exactly, and the return lands in a band no real game leaves.
func TestRunIsDeterministicAndPlausible(t *testing.T) {
	for _, code := range rules.Codes() {
		t.Run(code, func(t *testing.T) {
			rs, st := setup(t, code)
			opts := Options{Rules: rs, Table: st, Rounds: 20000, Seed: 7, Workers: 2}
			a, err := Run(context.Background(), opts)
			require.NoError(t, err)
			b, err := Run(context.Background(), opts)
			require.NoError(t, err)
			require.Equal(t, a, b, "a seeded run repeats")
			require.EqualValues(t, 20000, a.Rounds)
			require.InDelta(t, 0.99, a.RTP, 0.05, "RTP %.4f", a.RTP)
			require.Zero(t, a.Rounding, "an even bet pays 3:2 in whole cents")
		})
	}
}

// TestRunPinned: seeded runs give the nets they gave when this test was
// written (200,000 rounds per game, dealt shoes and first hands), so a
// change of the deal or the round that moves one card or one payout
// fails here. The published figures (docs/game-maths.md) are seeded runs.
func TestRunPinned(t *testing.T) {
	for _, c := range []struct {
		code          string
		first         bool
		net, rounding int64
	}{
		{"000", false, -749000, 0},
		{"000", true, -1180500, 0},
		{"001", false, -1599500, 0},
		{"001", true, -1599500, 0},
		{"002", false, -2667500, 0},
		{"002", true, -2810000, 0},
		{"003", false, -1586500, 0},
		{"003", true, -1442500, 0},
		{"004", false, -2948000, 0},
		{"004", true, -2948000, 0},
	} {
		rs, st := setup(t, c.code)
		r, err := Run(context.Background(), Options{Rules: rs, Table: st, Rounds: 200000, Seed: 3, Workers: 2, FirstHandOnly: c.first})
		require.NoError(t, err)
		require.Equal(t, [2]int64{c.net, c.rounding}, [2]int64{r.Net, r.Rounding}, "game %s, first hand only %t", c.code, c.first)
	}
}

// BenchmarkRound000 is the engine's speed on game 000: one seat, main bet,
// basic strategy, on every core given with -cpu. "simulator" keeps only
// the decision requests (what bjsim rtp reads); "daemon-events" keeps
// every event, builds every settlement and makes every note the Event
// the table's machine publishes, with the function the machine calls
// (Round.EventTo), as the live table does (issue 19's figure: rounds per
// CPU-second with the events the daemon needs).
// Both deal a fresh 8-deck shoe every round, the work of the specialised
// simulator issue 19 compares with: each round's cards are a uniform
// draw without replacement from all 416 cards (the incremental
// Fisher-Yates shuffle restarted every round), drawn from the PCG as the
// round takes them (the initial deal's four in one batch). The
// "-dealt-shoe" cases deal each shoe to its cut
// card instead, as bjsim rtp and the live table do for game 000.
// rounds/cpu-s is the process's CPU time, which a loaded machine does not
// inflate the way it does wall time.
//
// The headline: go test -run '^$' -bench 'Round000/daemon-events$' -cpu 1 ./table/rtp/
func BenchmarkRound000(b *testing.B) {
	rs, st := setup(b, "000")
	for _, bc := range []struct {
		name     string
		keep     []round.EventKind // nil: every event
		fresh    bool              // a fresh shoe every round
		oneByOne bool              // every card its own call, as the live table's inputs
	}{
		{"simulator", []round.EventKind{round.EvDecisionRequested}, true, false},
		{"daemon-events", nil, true, false},
		{"daemon-events-per-card", nil, true, true},
		{"simulator-dealt-shoe", []round.EventKind{round.EvDecisionRequested}, false, false},
		{"daemon-events-dealt-shoe", nil, false, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuSeconds()
			b.RunParallel(func(pb *testing.PB) {
				p := newPlayer(rs, st, 1, 1000, bc.fresh)
				p.oneByOne = bc.oneByOne
				p.rnd.KeepEvents(bc.keep...)
				if bc.keep == nil {
					// The daemon's cases: its players have ids, and its
					// events name them.
					p.bets[0].Player = "p1"
				}
				for pb.Next() {
					if _, _, err := p.Round(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
			if cpu := cpuSeconds() - start; cpu > 0 {
				b.ReportMetric(float64(b.N)/cpu, "rounds/cpu-s")
			}
		})
	}
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// TestShuffleIsRandIntN: the card draw reads the PCG directly; it must
// choose exactly what math/rand/v2's IntN chooses on the same seed, or
// seeded runs would change from one version to the next. Shoes of a power
// of two and deep cuts are there for IntN's other branches; the draws are
// done in batches of every size, as newShoe and drawNow do them.
func TestShuffleIsRandIntN(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 52, 64, 311, 312, 416, 1024} {
		ref := rand.New(rand.NewPCG(9, uint64(n)))
		src := rand.NewPCG(9, uint64(n))
		want, got := make([]card.Card, n), make([]card.Card, n)
		for i := range want {
			want[i] = card.FromIndex(i % 52)
			got[i] = want[i]
		}
		for round := 0; round < 20; round++ {
			for pos := 0; pos < n; pos++ {
				j := pos + ref.IntN(n-pos)
				want[pos], want[j] = want[j], want[pos]
			}
			for pos, step := 0, 1; pos < n; pos, step = pos+step, step%5+1 {
				shuffle(src, got, pos, min(pos+step, n))
			}
			require.Equal(t, want, got, "n=%d shoe %d", n, round)
		}
	}
}

// TestRejectIsRandIntN: the rejection loop, which a shoe's size almost
// never reaches, gives IntN's numbers for sizes where it is frequent.
func TestRejectIsRandIntN(t *testing.T) {
	for _, n := range []uint64{1<<62 + 1, 3 << 61, math.MaxInt} {
		ref := rand.New(rand.NewPCG(9, n))
		src := rand.NewPCG(9, n)
		for i := 0; i < 2000; i++ {
			hi, lo := bits.Mul64(src.Uint64(), n)
			if lo < n {
				hi = reject(src, n, hi, lo)
			}
			require.Equal(t, uint64(ref.IntN(int(n))), hi, "n=%d draw %d", n, i)
		}
	}
}

// TestMemoIsDecide: the player's memo answers every request as the
// strategy table does, in whatever order the requests come: two requests
// that share a memo entry get the same answer from the table.
func TestMemoIsDecide(t *testing.T) {
	for _, code := range append(rules.Codes(), "004-auto") {
		var rs *rules.Set
		var st *strategy.Table
		if code == "004-auto" {
			// 004's automatic-play table, which bjsim exact --table auto
			// plays through the same player.
			rs, _ = setup(t, "004")
			st = strategy.SisalNoDoubleNoSplit()
		} else {
			rs, st = setup(t, code)
		}
		var evs []round.Event
		for cards := 2; cards <= 13; cards++ {
			for total := 2; total <= 31; total++ {
				for pair := 0; pair <= 10; pair++ {
					for up := 1; up <= 10; up++ {
						for opts := 0; opts < 4; opts++ {
							for _, soft := range []bool{false, true} {
								e := round.Note{Type: round.EvDecisionRequested, Total: int8(total), Soft: soft,
									PairValue: int8(pair), Cards: int8(cards), Up: int8(up)}
								e.Options = 1<<round.ActHit | 1<<round.ActStand
								if opts&1 != 0 {
									e.Options |= 1 << round.ActDouble
								}
								if opts&2 != 0 {
									e.Options |= 1 << round.ActSplit
								}
								evs = append(evs, round.Event{Note: e})
							}
						}
					}
				}
			}
		}
		p := NewPlayer(rs, st, 1, 1000)
		for _, order := range []int{1, -1} {
			for i := range evs {
				if order < 0 {
					i = len(evs) - 1 - i
				}
				e := &evs[i].Note
				if want, got := p.ask(e), p.decide(evs[i:i+1]); got != want {
					t.Fatalf("game %s request %+v: %v, the table says %v", code, *e, got, want)
				}
			}
		}
	}
}

// TestDrawNowIsShuffle: a card drawn by drawNow is the card shuffle draws
// at that position with the same numbers, over whole shoes and past their
// end (a new shoe mid-round), for shoes of a power of two too.
func TestDrawNowIsShuffle(t *testing.T) {
	for _, n := range []int{1, 2, 52, 64, 416} {
		src := rand.NewPCG(4, uint64(n))
		p := &Player{rng: rand.NewPCG(4, uint64(n)), shoe: make([]card.Card, n)}
		want := make([]card.Card, n)
		for i := range want {
			want[i] = card.FromIndex(i % 52)
			p.shoe[i] = want[i]
		}
		for i := 0; i < 3*n+1; i++ {
			pos := i % n
			shuffle(src, want, pos, pos+1)
			require.Equal(t, want[pos], p.drawNow(), "n=%d draw %d", n, i)
			require.Equal(t, want, p.shoe, "n=%d draw %d", n, i)
		}
	}
}

// TestDaemonEvents: the daemon cases' round reports the events the table
// publishes as they are: the last input's end with the settlement, whose
// net is the round's, and the events that name a player name his id.
func TestDaemonEvents(t *testing.T) {
	rs, st := setup(t, "000")
	p := NewPlayer(rs, st, 5, 1000)
	p.rnd.KeepEvents()
	p.bets[0].Player = "p1"
	named := 0
	for range 200 {
		net, _, err := p.Round()
		require.NoError(t, err)
		// The player's slice holds the round's last input's events.
		evs := p.evs[:cap(p.evs)]
		last := -1
		for i := range evs {
			if evs[i].Type == round.EvSettled {
				last = i
				break
			}
		}
		require.GreaterOrEqual(t, last, 0, "a settled event")
		require.NotNil(t, evs[last].Settlement())
		require.Equal(t, net, evs[last].Settlement().Net)
		for _, e := range evs[:last+1] {
			if e.Who != 0 {
				require.Equal(t, "p1", e.Player(), "%s", e.Type)
				named++
			}
		}
	}
	require.Positive(t, named)
}
