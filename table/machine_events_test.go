package table

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// TestRoundEventsOutliveTheRound: a published round event names its
// player and carries its settlement through a context it shares with
// the round's other events (round.Event), and the round engine is reused
// for the next round. The events of a round must keep what they say
// while the next round, with other players in other slots, is played:
// the daemon encodes them on another goroutine while the machine applies
// the next inputs. The reader below runs beside the second round, so
// that -race sees any write to what the first round's events read.
func TestRoundEventsOutliveTheRound(t *testing.T) {
	x := newMT(t)
	var first []round.Event
	play := func(keep *[]round.Event, ins ...Input) {
		t.Helper()
		for _, in := range ins {
			st, err := x.apply(in)
			require.NoError(t, err, "%s %+v", in.Kind(), in)
			require.NoError(t, st.Fault)
			for _, ev := range st.Events {
				if re, ok := ev.Body.(round.Event); ok && keep != nil {
					*keep = append(*keep, re)
				}
			}
		}
	}
	cards := func(cs ...string) []Input {
		var ins []Input
		for _, c := range cs {
			ins = append(ins, CardDrawn{Card: card.MustParse(c)})
		}
		return ins
	}
	play(nil, ShoeIn{}, ShoeChanged{ShoeID: "S1"})
	play(&first, BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "ann", Main: 1000}, {Seat: 2, Player: "bob", Main: 2000}}})
	// Ann 10+7, Bob 9+8, the dealer 6 up and K in the hole: both stand,
	// the dealer draws a 5 to 21.
	play(&first, cards("Ts", "9s", "6d", "7c", "8h", "Kd")...)
	play(&first, Decision{Seat: 1, Action: "stand"}, Decision{Seat: 2, Action: "stand"})
	play(&first, cards("5s")...)
	require.Equal(t, round.EvSettled, first[len(first)-1].Type)

	// What the first round's events say, read once as it ended.
	type said struct {
		player     string
		settlement string
	}
	read := func() []said {
		out := make([]said, len(first))
		for i, e := range first {
			out[i].player = e.Player()
			if s := e.Settlement(); s != nil {
				b, err := json.Marshal(s)
				if err != nil {
					panic(err)
				}
				out[i].settlement = string(b)
			}
		}
		return out
	}
	before := read()
	players := map[string]int{}
	for _, s := range before {
		players[s.player]++
	}
	require.Positive(t, players["ann"], "events name ann")
	require.Positive(t, players["bob"], "events name bob")
	require.Contains(t, before[len(before)-1].settlement, `"player":"bob"`)

	// The second round, other players in the first round's slots, played
	// while a reader goes over the first round's events again and again
	// (it has read them once before the round starts).
	stop, started, done := make(chan struct{}), make(chan struct{}), make(chan []said, 1)
	go func() {
		var changed []said
		for n := 0; ; n++ {
			if got := read(); !assert.ObjectsAreEqual(before, got) && changed == nil {
				changed = got
			}
			if n == 0 {
				close(started)
			}
			select {
			case <-stop:
				done <- changed
				return
			default:
			}
		}
	}()
	<-started
	x.fire() // the next round's bets open
	var second []round.Event
	play(&second, BetsClosed{ID: "b2", Bets: []Bet{{Seat: 3, Player: "carl", Main: 1000}, {Seat: 1, Player: "dora", Main: 5000}}})
	// Dora (seat 1) 9+9 and Carl (seat 3) 10+10, the dealer's 10 up and 9
	// in the hole: both stand, the dealer stands at 19.
	play(&second, cards("9c", "Th", "Tc", "9d", "Js", "9h")...)
	play(&second, Decision{Seat: 1, Action: "stand"}, Decision{Seat: 3, Action: "stand"})
	require.Equal(t, round.EvSettled, second[len(second)-1].Type)
	close(stop)
	assert.Nil(t, <-done, "read while the second round was played")
	assert.Equal(t, before, read(), "read after the second round")
	assert.Contains(t, second[len(second)-1].Settlement().String(), "seat 3")
	for _, e := range second {
		assert.NotContains(t, []string{"ann", "bob"}, e.Player(), "%s", e.Type)
	}
}
