package table

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// newGameMT is newMT for another game.
func newGameMT(t *testing.T, game string) *mt {
	t.Helper()
	rs, err := rules.Game(game)
	require.NoError(t, err)
	m, err := NewMachine(MachineConfig{Table: "t1", Rules: rs, SettleDelay: 4 * time.Second,
		BetsGrace: 5 * time.Second, ResumeGrace: 5 * time.Second})
	require.NoError(t, err)
	return &mt{t: t, m: m, at: ckEpoch}
}

func burned(st Step) []card.Card {
	var out []card.Card
	for _, ev := range st.Events {
		if b, ok := ev.Body.(Burned); ok {
			out = append(out, b.Card)
		}
	}
	return out
}

// TestSimulationFindings: what the deterministic simulation
// (simulators/world) found in the machine, each with its seed.
func TestSimulationFindings(t *testing.T) {
	misread := DeviceAlarm{Source: "shoe", Code: "misread", Message: "card misread", Pauses: true}

	t.Run("seed 36: a correction that ends the round leaves the settlement's pause before bets open", func(t *testing.T) {
		x := dealing(t) // 000: seat 1 Ts 7c, dealer 6d; the hole card next
		x.cards("9h")   // dealer 15
		x.must(Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d1"})
		st, err := x.apply(misread) // the dealer's third card is not read
		require.NoError(t, err)
		require.NoError(t, st.Fault)
		x.must(Supervisor{Command: "correct", By: "sup", Card: card.MustParse("Kc"), ID: "c1"})
		s := x.m.State()
		assert.Equal(t, PhaseSettled, s.Phase, "bets do not open at once: the dealer collects and pays (001 and 004 reshuffle)")
		assert.Equal(t, round.PhaseSettled.String(), s.Round.Phase)
		require.Equal(t, TimerNext, x.m.Timer().Name)
		assert.Equal(t, x.at.Add(4*time.Second), x.m.Timer().At)
		x.fire()
		assert.Equal(t, PhaseBetting, x.m.State().Phase)
	})

	t.Run("seed 288: a misread burn card corrected is burned", func(t *testing.T) {
		x := newGameMT(t, "003")
		x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"},
			BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
		_, err := x.apply(misread)
		require.NoError(t, err)
		st, err := x.apply(Supervisor{Command: "correct", By: "sup", Card: card.MustParse("9s"), ID: "c1"})
		require.NoError(t, err)
		assert.Equal(t, []card.Card{card.MustParse("9s")}, burned(st))
		s := x.m.State()
		assert.False(t, s.Paused)
		assert.Zero(t, s.Shoe.BurnPending)
		assert.Equal(t, 1, s.Shoe.Booked)
		assert.Empty(t, s.Round.Seats[0].Cards, "the round still waits for its first card")
		x.cards("Jh")
		assert.Equal(t, []card.Card{card.MustParse("Jh")}, x.m.State().Round.Seats[0].Cards)
	})

	t.Run("seed 53: a burn card held while paused is burned at the resume", func(t *testing.T) {
		x := newGameMT(t, "003")
		x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"},
			BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}},
			Supervisor{Command: "pause", By: "system", Cause: PauseRestart, ID: "p1"})
		x.cards("9s") // held
		st, err := x.apply(Supervisor{Command: "resume", By: "sup", ID: "r1"})
		require.NoError(t, err)
		assert.Equal(t, []card.Card{card.MustParse("9s")}, burned(st))
		assert.Empty(t, x.m.State().Round.Seats[0].Cards)
		x.cards("Jh")
		assert.Equal(t, []card.Card{card.MustParse("Jh")}, x.m.State().Round.Seats[0].Cards)
	})
}

// TestRestartAfterClockStepBack: the simulation's seed 270. A deadline
// restored after a restart is a wall-clock time from the journal; the wall
// clock stepped back an hour while the daemon was down made the table wait
// an hour more. It waits no longer than the timer's own length.
func TestRestartAfterClockStepBack(t *testing.T) {
	j := &memJournal{}
	clk := clockwork.NewFakeClockAt(ckEpoch)
	h := startWith(t, "000", j, clk, nil)
	h.waitPhase(PhaseBetting) // the last call comes in BettingTime - LastCallTime
	h.stop()

	back := clockwork.NewFakeClockAt(clk.Now().Add(-time.Hour))
	h2 := startWith(t, "000", j, back, nil)
	h2.ping() // the replay is done and the timer armed
	rs := h2.c.opts.Rules
	back.Advance(rs.BettingTime - rs.LastCallTime)
	h2.waitPhase(PhaseLastCall)
}
