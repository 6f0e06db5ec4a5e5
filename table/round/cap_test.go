package round

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// TestRoundCap: seed 004, "La somma delle puntate nel corso di una singola
// mano non potrà in ogni caso superare il limite stabilito dalla normativa
// in vigore (attualmente € 1.000,00)". The cap bounds everything ONE
// player stakes in one hand, over all his positions: main bets, side bets,
// doubles, splits and insurance. A refused wager is a RuleError naming the
// cap and the total, and leaves the round as it was; the hand goes on.
// Games whose documents state no cap (000-003) have none.
func TestRoundCap(t *testing.T) {
	pp := func(stake int64) []SideStake { return []SideStake{{Kind: "perfect_pairs", Stake: stake}} }
	dbl := Input{Type: InDecision, Seat: 1, Player: "ann", Action: ActDouble}
	tests := []struct {
		name  string
		game  string
		bets  []Bet
		cards []string // dealt before the steps
		steps []Input  // all accepted but the last when wantTotal > 0
		// wantTotal is the total the refusal names (0: everything accepted).
		wantTotal int64
		// then is accepted after the refusal: the hand goes on.
		then Input
	}{
		{name: "one position under the cap", game: "004",
			bets: []Bet{{Seat: 1, Player: "ann", Main: 60000, Side: pp(30000)}}},
		{name: "exactly the cap is allowed", game: "004",
			bets: []Bet{{Seat: 1, Player: "ann", Main: 50000}, {Seat: 2, Player: "ann", Main: 50000}}},
		{name: "main and side bet over the cap", game: "004",
			bets:      []Bet{{Seat: 1, Player: "ann", Main: 60000, Side: pp(45000)}},
			wantTotal: 105000},
		{name: "two positions of 600.00", game: "004",
			bets:      []Bet{{Seat: 1, Player: "ann", Main: 60000}, {Seat: 2, Player: "ann", Main: 60000}},
			wantTotal: 120000},
		{name: "five positions of 1,000.00", game: "004",
			bets: []Bet{{Seat: 1, Player: "ann", Main: 100000}, {Seat: 2, Player: "ann", Main: 100000},
				{Seat: 3, Player: "ann", Main: 100000}, {Seat: 4, Player: "ann", Main: 100000}, {Seat: 5, Player: "ann", Main: 100000}},
			wantTotal: 200000},
		{name: "two players of 600.00 each: each under the cap", game: "004",
			bets: []Bet{{Seat: 1, Player: "ann", Main: 60000}, {Seat: 2, Player: "bob", Main: 60000}}},
		{name: "double of 600.00 on one position", game: "004",
			bets:  []Bet{{Seat: 1, Player: "ann", Main: 60000}},
			cards: []string{"5s", "9d", "6c"}, // 11 against a 9 (no hole card in 004)
			steps: []Input{dbl}, wantTotal: 120000,
			then: Input{Type: InDecision, Seat: 1, Player: "ann", Action: ActHit}},
		{name: "double over the cap counting the other position", game: "004",
			bets:  []Bet{{Seat: 1, Player: "ann", Main: 40000}, {Seat: 2, Player: "ann", Main: 40000}},
			cards: []string{"5s", "Td", "9d", "6c", "9h"}, // seat 1: 11, seat 2: 19; dealer 9
			steps: []Input{dbl}, wantTotal: 120000,
			then: Input{Type: InDecision, Seat: 1, Player: "ann", Action: ActStand}},
		{name: "a double within the cap", game: "004",
			bets:  []Bet{{Seat: 1, Player: "ann", Main: 40000}, {Seat: 2, Player: "ann", Main: 20000}},
			cards: []string{"5s", "Td", "9d", "6c", "9h"},
			steps: []Input{dbl}},
		{name: "split then double after split over the cap", game: "004",
			bets:  []Bet{{Seat: 1, Player: "ann", Main: 30000}, {Seat: 2, Player: "ann", Main: 30000}},
			cards: []string{"8s", "Td", "9d", "8c", "9h"}, // seat 1: 8 8 against a 9
			steps: []Input{{Type: InDecision, Seat: 1, Player: "ann", Action: ActSplit},
				cardIn("3s"), cardIn("2h"), dbl}, // both split hands get their card: 8 3, 8 2
			wantTotal: 120000,
			then:      Input{Type: InDecision, Seat: 1, Player: "ann", Action: ActHit}},
		{name: "split over the cap", game: "004",
			bets:  []Bet{{Seat: 1, Player: "ann", Main: 40000}, {Seat: 2, Player: "ann", Main: 40000}},
			cards: []string{"8s", "Td", "9d", "8c", "9h"},
			steps: []Input{{Type: InDecision, Seat: 1, Player: "ann", Action: ActSplit}}, wantTotal: 120000,
			then: Input{Type: InDecision, Seat: 1, Player: "ann", Action: ActHit}},
		{name: "insurance over the cap on the second position", game: "004",
			bets:  []Bet{{Seat: 1, Player: "ann", Main: 40000}, {Seat: 2, Player: "ann", Main: 30000}},
			cards: []string{"5s", "Td", "Ad", "6c", "9h"}, // Ace up: insurance offered
			steps: []Input{
				{Type: InInsurance, Seat: 1, Player: "ann", Take: true},  // 70,000 + 20,000
				{Type: InInsurance, Seat: 2, Player: "ann", Take: true}}, // + 15,000
			wantTotal: 105000,
			then:      Input{Type: InInsurance, Seat: 2, Player: "ann", Take: false}},
		{name: "no cap in a game whose document states none", game: "000",
			bets: []Bet{{Seat: 1, Player: "ann", Main: 500000, Side: pp(50000)}, {Seat: 2, Player: "ann", Main: 500000},
				{Seat: 3, Player: "ann", Main: 500000}},
			cards: []string{"5s", "Td", "9d", "9c", "6c", "9h", "7c", "8h"}, // seat 1: 11 against 9, hole 8
			steps: []Input{dbl}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(game(t, tt.game))
			_, err := r.Start("r1", tt.bets, nil)
			if tt.wantTotal > 0 && len(tt.steps) == 0 {
				assertCapErr(t, err, tt.wantTotal)
				assert.Equal(t, PhaseNew, r.Phase(), "a refused round does not start")
				return
			}
			require.NoError(t, err)
			feed(t, r, tt.cards...)
			for i, in := range tt.steps {
				before := r.Snapshot()
				_, err := r.Apply(in, nil)
				if i < len(tt.steps)-1 || tt.wantTotal == 0 {
					require.NoError(t, err, "step %d", i)
					continue
				}
				assertCapErr(t, err, tt.wantTotal)
				assert.Equal(t, before, r.Snapshot(), "the refusal changed the round")
				_, err = r.Apply(tt.then, nil)
				require.NoError(t, err, "the hand goes on after the refusal")
			}
		})
	}
}

func cardIn(c string) Input { return Input{Type: InCard, Card: card.MustParse(c)} }

func assertCapErr(t *testing.T, err error, total int64) {
	t.Helper()
	require.ErrorIs(t, err, ErrRoundCap)
	var re *RuleError
	require.True(t, errors.As(err, &re))
	assert.EqualValues(t, 100000, re.Cap, "the error names the cap")
	assert.Equal(t, total, re.Total, "the error names the player's total")
	assert.Contains(t, err.Error(), "100000")
}

// TestRoundCapOverRounds: the cap is per hand; a new round starts from
// nothing, whatever the last one staked.
func TestRoundCapOverRounds(t *testing.T) {
	r := New(game(t, "004"))
	bets := []Bet{{Seat: 1, Player: "ann", Main: 50000}, {Seat: 2, Player: "ann", Main: 40000}}
	for i := 0; i < 2; i++ {
		_, err := r.Start("r", bets, nil)
		require.NoError(t, err)
		feed(t, r, "Ts", "Td", "9d", "8c", "9h") // 18 and 19 against a 9
		_, err = r.Apply(Input{Type: InDecision, Seat: 1, Player: "ann", Action: ActDouble}, nil)
		assertCapErr(t, err, 140000)
		decide(t, r, 1, "ann", ActStand)
		decide(t, r, 2, "ann", ActStand)
		feed(t, r, "Tc") // dealer 19
		require.Equal(t, PhaseSettled, r.Phase())
	}
}

// TestInsuranceAllPositions: in 003 one insurance answer covers every
// position the player holds ("l'assicurazione viene applicata a tutte le
// posizioni da lui occupate"); elsewhere each position answers alone.
func TestInsuranceAllPositions(t *testing.T) {
	bets := []Bet{{Seat: 1, Player: "ann", Main: 1000}, {Seat: 2, Player: "ann", Main: 2000}, {Seat: 3, Player: "bob", Main: 1000}}
	deal := []string{"Ts", "9c", "7h", "Ad", "9d", "9s", "Th", "6c"} // Ace up; 003 and 000 deal a hole card
	tests := []struct {
		game        string
		coversAll   bool
		wantInsured int // ann's positions insured after her one answer
	}{
		{"003", true, 2},
		{"000", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.game, func(t *testing.T) {
			r := New(game(t, tt.game))
			_, err := r.Start("r", bets, nil)
			require.NoError(t, err)
			feed(t, r, deal...)
			require.Equal(t, PhaseInsurance, r.Phase())
			evs, err := r.Apply(Input{Type: InInsurance, Seat: 1, Player: "ann", Take: true}, nil)
			require.NoError(t, err)
			insured := 0
			for _, e := range evs {
				if e.Type == EvInsuranceAnswered && e.Player() == "ann" && e.Flag {
					insured++
				}
			}
			assert.Equal(t, tt.wantInsured, insured)
			_, err = r.Apply(Input{Type: InInsurance, Seat: 2, Player: "ann", Take: false}, nil)
			if tt.coversAll {
				require.ErrorIs(t, err, ErrDuplicate, "seat 2 was answered with seat 1")
			} else {
				require.NoError(t, err)
			}
			_, err = r.Apply(Input{Type: InInsurance, Seat: 3, Player: "bob", Take: false}, nil)
			require.NoError(t, err)
			assert.Equal(t, PhasePlay, r.Phase(), "every answer in: the peek, then play")
		})
	}
}
