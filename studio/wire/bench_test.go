package wire_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// sevenSeatState is a state in the middle of a 7-seat round: two cards
// per seat, the dealer's up card, a decision timer.
func sevenSeatState() *table.State {
	cs := func(s ...string) []card.Card {
		out := make([]card.Card, len(s))
		for i, x := range s {
			out[i] = card.MustParse(x)
		}
		return out
	}
	v := round.View{ID: "#10:00:00", Phase: "play", Dealer: round.HandView{Cards: cs("Kd"), Total: 10, Hidden: 1},
		Next: "wait: seat 3 to decide"}
	for seat := 1; seat <= 7; seat++ {
		c := cs("9h", "7c")
		v.Seats = append(v.Seats, round.SeatView{Seat: seat, Player: "player-" + string(rune('a'+seat)), Players: 1, Cards: c,
			Hands: []round.HandView{{Cards: c, Total: 16, Stake: 2500}}, Bet: 2500})
	}
	return &table.State{Seq: 4242, Table: "t1", Game: "000", Phase: table.PhaseDealing, Round: v,
		Shoe:  table.ShoeState{ID: "S-20261124-1", Decks: 8, Dealt: 123},
		Timer: &table.TimerView{Name: "decision", Deadline: time.Date(2026, 11, 24, 10, 0, 12, 0, time.UTC), LeftMS: 9000}}
}

// BenchmarkEncodeState encodes the state after a card, as the link does
// for every card: through the wire types, and, as the baseline in the
// same run, the table's own types with encoding/json (the encoder before
// package wire: nulls for empty lists, no contract).
func BenchmarkEncodeState(b *testing.B) {
	ev := table.Event{Seq: 0, Time: time.Date(2026, 11, 24, 10, 0, 3, 0, time.UTC), Table: "t1", Round: "#10:00:00", Body: sevenSeatState()}
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			p, err := wire.Encode(ev)
			if err != nil {
				b.Fatal(err)
			}
			n = len(p)
		}
		b.ReportMetric(float64(n), "bytes/state")
	})
	b.Run("baseline-table-types", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			p, err := json.Marshal(struct {
				Schema int        `json:"schema"`
				Seq    uint64     `json:"seq"`
				Time   time.Time  `json:"time"`
				Table  string     `json:"table"`
				Round  string     `json:"round,omitempty"`
				Kind   string     `json:"kind"`
				Data   table.Body `json:"data"`
			}{1, ev.Seq, ev.Time, ev.Table, ev.Round, ev.Kind(), ev.Body})
			if err != nil {
				b.Fatal(err)
			}
			n = len(p)
		}
		b.ReportMetric(float64(n), "bytes/state")
	})
}
