package dealer

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// countingShoe records what the dealer does with it.
type countingShoe struct {
	pulls, newShoes int
	fail            error // returned by the next Pull
}

func (s *countingShoe) Pull(context.Context) error {
	if err := s.fail; err != nil {
		s.fail = nil
		return err
	}
	s.pulls++
	return nil
}

func (s *countingShoe) NewShoe(context.Context, []card.Card) error {
	s.newShoes++
	return nil
}

// snap is a snapshot as the dealer sees it; its seq follows the cards
// dealt from shoes of 100 ("A", "B", ...), as the table's events would.
func snap(phase table.Phase, next, shoe string, dealt int) *table.State {
	st := &table.State{Phase: phase, Shoe: table.ShoeState{ID: shoe, Dealt: dealt}}
	st.Seq = uint64(100*int(shoe[0]-'A') + dealt)
	st.Round.Next = next
	return st
}

func TestDealerFollowsTheInstructionLine(t *testing.T) {
	type look struct {
		st        *table.State
		pullFails bool
		pulls     int // total after this look
		newShoes  int
	}
	dealing := table.PhaseDealing
	for _, tc := range []struct {
		name  string
		opts  Options
		looks []look
	}{
		{"a card per snapshot that shows the last one", Options{}, []look{
			{st: snap(dealing, "card to seat 1", "A", 0), pulls: 1},
			{st: snap(dealing, "card to seat 1", "A", 0), pulls: 1}, // stale: the card is on its way
			{st: snap(dealing, "card to seat 2", "A", 1), pulls: 2},
			{st: snap(dealing, "hole card to dealer", "A", 2), pulls: 3},
			{st: snap(dealing, "wait: seat 1 to decide (hit,stand)", "A", 3), pulls: 3},
			{st: snap(dealing, "burn one card", "A", 3), pulls: 4},
		}},
		{"the shuffler's next shoe starts counting again", Options{ShufflerSwaps: true}, []look{
			{st: snap(dealing, "card to dealer", "A", 80), pulls: 1},
			{st: snap(table.PhaseClosed, "change shoe", "A", 81), pulls: 1},
			{st: snap(table.PhaseBetting, "wait: bets open", "B", 0), pulls: 1},
			{st: snap(dealing, "card to seat 1", "B", 0), pulls: 2},
			{st: snap(dealing, "card to seat 2", "B", 1), pulls: 3},
		}},
		{"the dealer changes the shoe himself, once", Options{}, []look{
			{st: snap(table.PhaseClosed, "change shoe", "A", 81), newShoes: 1},
			{st: snap(table.PhaseClosed, "change shoe", "A", 81), newShoes: 1},
			{st: snap(table.PhaseBetting, "wait: bets open", "B", 0), newShoes: 1},
			{st: snap(dealing, "card to seat 1", "B", 0), pulls: 1, newShoes: 1},
		}},
		{"with a shuffler the dealer leaves the shoe alone", Options{ShufflerSwaps: true}, []look{
			{st: snap(table.PhaseClosed, "change shoe", "A", 81)},
		}},
		{"an old snapshot after a broker crash is ignored", Options{}, []look{
			{st: snap(table.PhaseClosed, "change shoe", "A", 81), newShoes: 1},
			{st: snap(dealing, "card to seat 1", "B", 0), pulls: 1, newShoes: 1},
			{st: snap(dealing, "card to seat 2", "B", 1), pulls: 2, newShoes: 1},
			{st: snap(table.PhaseClosed, "change shoe", "A", 81), pulls: 2, newShoes: 1}, // redelivered
			{st: snap(dealing, "card to seat 1", "B", 0), pulls: 2, newShoes: 1},         // stale
			{st: snap(dealing, "card to seat 3", "B", 2), pulls: 3, newShoes: 1},
		}},
		{"nothing while paused", Options{}, []look{
			{st: func() *table.State { s := snap(dealing, "card to seat 1", "A", 0); s.Paused = true; return s }()},
		}},
		{"a pull that brought nothing is tried again", Options{}, []look{
			{st: snap(dealing, "card to seat 1", "A", 0), pullFails: true},
			{st: snap(dealing, "card to seat 1", "A", 0), pulls: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shoe := &countingShoe{}
			d := New(shoe, tc.opts, zerolog.Nop())
			for i, l := range tc.looks {
				if l.pullFails {
					shoe.fail = errors.New("shoe jammed")
				}
				err := d.step(context.Background(), l.st)
				if l.pullFails {
					require.Error(t, err, "look %d", i)
				} else {
					require.NoError(t, err, "look %d", i)
				}
				assert.Equal(t, l.pulls, shoe.pulls, "pulls after look %d (%s)", i, l.st.Round.Next)
				assert.Equal(t, l.newShoes, shoe.newShoes, "new shoes after look %d", i)
			}
		})
	}
}
