package round

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// TestEventKeepsItsPlayer: an Event made in one round names the same
// player after the next round starts with other players in its slot, by
// the lone player's path (one plain bet) and by the general one; a round
// with the same players as the last shares its context, made once.
func TestEventKeepsItsPlayer(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second []Bet
	}{
		{"lone player", []Bet{{Seat: 1, Player: "ann", Main: 1000}}, []Bet{{Seat: 1, Player: "bob", Main: 1000}}},
		{"several", []Bet{{Seat: 1, Player: "ann", Main: 1000}, {Seat: 2, Player: "bob", Main: 1000}},
			[]Bet{{Seat: 1, Player: "carl", Main: 1000}, {Seat: 2, Player: "dora", Main: 1000}}},
		{"lone then several", []Bet{{Seat: 1, Player: "ann", Main: 1000}},
			[]Bet{{Seat: 1, Player: "bob", Main: 1000}, {Seat: 2, Player: "ann", Main: 1000}}},
		// The lone player is the first player of the round before: his
		// context names him alone.
		{"several then lone", []Bet{{Seat: 1, Player: "ann", Main: 1000}, {Seat: 2, Player: "bob", Main: 1000}},
			[]Bet{{Seat: 1, Player: "ann", Main: 1000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(game(t, "000"))
			evs, err := r.Start("r1", tc.first, nil)
			require.NoError(t, err)
			// The deal (a card to each box, the dealer's 10, a second card
			// each, his hole 7) and each player's stand: the decisions'
			// events name the players.
			made := func() []Event { return append([]Event(nil), evs...) }
			play := func(bets []Bet) []Event {
				cs := []card.Card{}
				for range bets {
					cs = append(cs, card.MustParse("Ts"))
				}
				cs = append(cs, card.MustParse("Td"))
				for range bets {
					cs = append(cs, card.MustParse("7c"))
				}
				cs = append(cs, card.MustParse("7h"))
				evs, _, err = r.Cards(cs, evs[:0])
				require.NoError(t, err)
				out := made()
				for _, b := range bets {
					evs, err = r.Decide(b.Seat, b.Player, ActStand, evs[:0])
					require.NoError(t, err)
					out = append(out, made()...)
				}
				require.Equal(t, PhaseSettled, r.Phase())
				return out
			}
			first := play(tc.first)
			ctx := r.ctx
			names := func(es []Event) []string {
				var out []string
				for _, e := range es {
					if p := e.Player(); p != "" {
						out = append(out, p)
					}
				}
				return out
			}
			want := names(first)
			for _, b := range tc.first {
				require.Contains(t, want, b.Player)
			}

			// The same players again: the same context.
			_, err = r.Start("r2", tc.first, evs[:0])
			require.NoError(t, err)
			assert.Same(t, ctx, r.ctx, "the same players share the context")
			play(tc.first)

			// Other players: a new context, the first round's events unchanged.
			_, err = r.Start("r3", tc.second, evs[:0])
			require.NoError(t, err)
			assert.NotSame(t, ctx, r.ctx)
			var ids []string
			for _, b := range tc.second {
				ids = append(ids, b.Player)
			}
			assert.Equal(t, ids, r.ctx.players, "the context names the round's players by slot, no others")
			second := play(tc.second)
			assert.Equal(t, want, names(first), "the first round's events after the next round started")
			for _, b := range tc.second {
				assert.Contains(t, names(second), b.Player)
			}
		})
	}
}

// TestEventJSON: an Event's JSON is its note's fields, then the player
// and the settlement it names, as when they were fields of their own.
func TestEventJSON(t *testing.T) {
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{NewEvent(Note{Type: EvDecisionMade, Seat: 2, Hand: 1, Action: ActHit}, "p1", nil),
			`{"action":"hit","hand":1,"seat":2,"player":"p1"}`},
		{NewEvent(Note{Type: EvCardDealt, Card: card.MustParse("As"), Total: 11, Soft: true}, "", nil),
			`{"soft":true,"card":"As","total":11}`},
		{NewEvent(Note{Type: EvSettled}, "", &Settlement{Net: -5}),
			`{"settlement":{"void":false,"dealer":{"cards":null,"total":0,"blackjack":false,"bust":false,"peeked_blackjack":false},"seats":null,"net":-5,"rounding":0}}`},
		// A settlement on another kind of event is not the event's.
		{NewEvent(Note{Type: EvPeeked, Flag: true}, "", &Settlement{}), `{"flag":true}`},
	} {
		b, err := json.Marshal(tc.ev)
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(b))
	}
}

// TestWithSettlement: the settlement replaced, the player kept, the
// event it came from unchanged.
func TestWithSettlement(t *testing.T) {
	s1, s2 := &Settlement{Net: 1}, &Settlement{Net: 2}
	e := NewEvent(Note{Type: EvSettled}, "p1", s1)
	f := e.WithSettlement(s2)
	assert.Same(t, s1, e.Settlement())
	assert.Same(t, s2, f.Settlement())
	assert.Equal(t, "p1", f.Player())
	assert.Equal(t, "", Event{}.Player())
	assert.Nil(t, Event{Note: Note{Type: EvSettled}}.Settlement())
}
