package table

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// TestMisreadResume: a card the shoe dealt and could not read. In a round
// that waits for it, resume is refused (ErrMisreadPending: the round
// would go on as if the card on the table had not been dealt): the
// supervisor corrects it or voids the round. Outside a round, or when
// the round waited for no card, resume goes, and the card is counted as
// dealt unread, so the count at shoe out holds (it used to raise a false
// integrity alarm, one card short).
func TestMisreadResume(t *testing.T) {
	misread := DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #9: card misread", Pauses: true}
	// The shoe-out count: 3 cards of dealing() booked, 416 in 8 decks.
	shoeOut := func(x *mt, returned int) Step {
		st, err := x.apply(ShoeOut{Returned: returned})
		require.NoError(x.t, err)
		st.Events = append([]Event(nil), st.Events...)
		return st
	}
	tests := []machineCase{
		{"resume past the round's misread card is refused", func(x *mt) { x.must(misread) },
			Supervisor{Command: "resume", By: "sup"}, ErrMisreadPending, nil},
		{"also under a supervisor's own pause", func(x *mt) {
			x.must(misread, Supervisor{Command: "pause", By: "sup", Reason: "camera"})
		}, Supervisor{Command: "resume", By: "sup"}, ErrMisreadPending, nil},
		{"an unknown card is a card dealt unread too", func(x *mt) {
			x.must(DeviceAlarm{Source: "shoe", Code: "unknown_card", Message: "unknown card X", Pauses: true})
		}, Supervisor{Command: "resume", By: "sup"}, ErrMisreadPending, nil},
		{"correct books the card: the count at shoe out holds", func(x *mt) { x.must(misread) },
			Supervisor{Command: "correct", By: "sup", Card: card.MustParse("5h")}, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.False(t, x.m.State().Paused)
				x.must(Decision{Seat: 1, Action: "stand"})
				x.cards("9s")
				assert.Empty(t, alarmsOf(shoeOut(x, 416-5)), "5 cards dealt, all booked")
			}},
		{"void keeps the card counted: it lies with the round's cards", func(x *mt) { x.must(misread) },
			Supervisor{Command: "void", By: "sup", Reason: "card not read"}, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.False(t, x.m.State().Paused)
				assert.Empty(t, alarmsOf(shoeOut(x, 416-4)), "3 booked + 1 unread")
			}},
		{"a misread while the players decide may be resumed, and is counted", func(x *mt) {
			x.cards("5h")
			x.must(misread)
			assert.Empty(x.t, x.m.State().Misread, "the round waits for no card")
		}, Supervisor{Command: "resume", By: "sup"}, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.False(t, x.m.State().Paused)
				x.must(Decision{Seat: 1, Action: "stand"})
				x.cards("9s")
				assert.Empty(t, alarmsOf(shoeOut(x, 416-6)), "5 booked + 1 unread")
			}},
		{"two cards at once, unread, are set aside and counted", func(x *mt) {
			x.must(DeviceAlarm{Source: "shoe", Code: "double_card", Message: "double_card #4: two cards pulled at once", Pauses: true})
		}, Supervisor{Command: "resume", By: "sup"}, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.False(t, x.m.State().Paused)
				assert.Equal(t, "hole card to dealer", x.m.State().Round.Next, "the round did not get them")
				x.cards("5h")
				x.must(Decision{Seat: 1, Action: "stand"})
				x.cards("9s")
				assert.Empty(t, alarmsOf(shoeOut(x, 416-5-2)), "5 booked + 2 unread")
			}},
		{"the count still catches a card really missing", func(x *mt) {
			x.cards("5h")
			x.must(misread, Supervisor{Command: "resume", By: "sup"})
		}, ShoeOut{Returned: 416 - 6}, nil,
			func(t *testing.T, x *mt, st Step) {
				require.ErrorIs(t, st.Fault, ErrIntegrity)
				a := alarmCoded(t, st, "shoe.integrity_alarm")
				assert.Equal(t, `shoe "S1": count mismatch: 4 dealt + 1 unread + 410 returned = 415 cards, composition is 416`, a.Message)
			}},
		{"a card the integrity book refused may be resumed past: set aside, not counted", func(x *mt) {
			x.m.shoe.comp = card.NewComposition(0) // every card dealt: nothing fits
			st, err := x.apply(CardDrawn{Card: card.MustParse("5h")})
			require.NoError(x.t, err)
			require.ErrorIs(x.t, st.Fault, ErrIntegrity)
			require.NotEmpty(x.t, x.m.State().Misread)
		}, Supervisor{Command: "resume", By: "sup"}, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.False(t, x.m.State().Paused)
				assert.Equal(t, "hole card to dealer", x.m.State().Round.Next)
				assert.Zero(t, x.m.shoe.unread)
			}},
	}
	// A shoe out may report its count as a fault; no other input here.
	notShoeOut := func(in Input) bool { _, out := in.(ShoeOut); return !out }
	runMachineCases(t, tests, notShoeOut, "correct it with the card on the table, or void the round")
}

// TestUnreadAcrossCheckpoint: a misread between rounds, resumed, is
// counted through a checkpoint (ShoeBook.Unread), so a restart does not
// make the shoe-out count cry wolf.
func TestUnreadAcrossCheckpoint(t *testing.T) {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #3: card misread", Pauses: true},
		Supervisor{Command: "resume", By: "sup"})
	require.Equal(t, 1, x.m.Checkpoint().Shoe.Unread)
	y := x.restart()
	st, err := y.apply(ShoeOut{Returned: 415})
	require.NoError(t, err)
	require.NoError(t, st.Fault)
	assert.Empty(t, alarmsOf(st))
}
