package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func seat(bet int64, decisions ...string) Seat { return Seat{Bet: bet, Decisions: decisions} }

// TestRules pins engine behaviour on the rules most easily got wrong; the
// hand-written cases of testdata/scenarios cover the rest.
func TestRules(t *testing.T) {
	tests := []struct {
		name  string
		in    Input
		check func(t *testing.T, o *Output)
	}{
		{
			name: "000 natural pays 3:2",
			in:   Input{Variant: "000", Cards: []string{"As", "9d", "Kc", "7h"}, Seats: []Seat{seat(1000)}},
			check: func(t *testing.T, o *Output) {
				assert.Equal(t, "blackjack", o.Seats[0].Hands[0].Outcome)
				assert.EqualValues(t, 1500, o.Seats[0].TotalNet)
				assert.Equal(t, []string{"9d", "7h"}, o.Dealer.Cards, "no live hand: the dealer draws nothing")
			},
		},
		{
			name: "000 split both_first deals both second cards before play",
			// seat 8 8, dealer up 6, hole T; split: hand1 gets 3, hand2 gets 2; hand1 11 double? no DAS: hit gets 9=20 stand; hand2 10 hit K=20
			in: Input{Variant: "000", Cards: []string{"8s", "6d", "8c", "Th", "3s", "2s", "9c", "Kd", "5h"},
				Seats: []Seat{seat(1000, "split", "hit", "stand", "hit", "stand")}},
			check: func(t *testing.T, o *Output) {
				h := o.Seats[0].Hands
				require.Len(t, h, 2)
				assert.Equal(t, []string{"8s", "3s", "9c"}, h[0].Cards)
				assert.Equal(t, []string{"8c", "2s", "Kd"}, h[1].Cards)
				assert.Equal(t, 21, o.Dealer.Total)
				assert.EqualValues(t, -2000, o.Seats[0].MainNet)
			},
		},
		{
			name: "001 split sequential plays hand 1 out first",
			in: Input{Variant: "001", Cards: []string{"8s", "6d", "8c", "Th", "3s", "9c", "2s", "Kd", "5h"},
				Seats: []Seat{seat(1000, "split", "hit", "stand", "hit", "stand")}},
			check: func(t *testing.T, o *Output) {
				h := o.Seats[0].Hands
				assert.Equal(t, []string{"8s", "3s", "9c"}, h[0].Cards)
				assert.Equal(t, []string{"8c", "2s", "Kd"}, h[1].Cards)
			},
		},
		{
			name: "002 free double on hard 10 wins both",
			in: Input{Variant: "002", Cards: []string{"6s", "9d", "4c", "8h", "Ts", "5c"},
				Seats: []Seat{seat(1000, "double")}},
			check: func(t *testing.T, o *Output) {
				h := o.Seats[0].Hands[0]
				assert.EqualValues(t, 1000, h.Stake)
				assert.EqualValues(t, 1000, h.Free)
				assert.Equal(t, 20, h.Total)
				// dealer 9 8 = 17 stands
				assert.Equal(t, "win", h.Outcome)
				assert.EqualValues(t, 2000, h.Net)
			},
		},
		{
			name: "002 dealer 22 pushes, dealer always completes",
			in: Input{Variant: "002", Cards: []string{"Ts", "6d", "8c", "6h", "Ks"},
				Seats: []Seat{{Bet: 1000, Side: map[string]int64{"bust_it": 100}, Decisions: []string{"stand"}}}},
			check: func(t *testing.T, o *Output) {
				assert.Equal(t, 22, o.Dealer.Total)
				assert.Equal(t, "push", o.Seats[0].Hands[0].Outcome)
				assert.Equal(t, "bust_3_cards", o.Seats[0].Side["bust_it"].Result)
				assert.EqualValues(t, 100, o.Seats[0].TotalNet)
			},
		},
		{
			name: "000 late dealer BJ under a ten takes the double",
			in: Input{Variant: "000", Cards: []string{"6s", "Td", "5c", "Ah", "9s"},
				Seats: []Seat{seat(1000, "double")}},
			check: func(t *testing.T, o *Output) {
				assert.True(t, o.Dealer.Blackjack)
				assert.False(t, o.Dealer.PeekedBlackjack)
				assert.EqualValues(t, -2000, o.Seats[0].MainNet)
			},
		},
		{
			name: "003 late dealer BJ under a ten returns the double",
			in: Input{Variant: "003", Cards: []string{"6s", "Td", "5c", "Ah", "9s"},
				Seats: []Seat{seat(1000, "double")}},
			check: func(t *testing.T, o *Output) {
				assert.EqualValues(t, -1000, o.Seats[0].MainNet)
			},
		},
		{
			name: "000 peeked BJ ends the round; insurance pays",
			in: Input{Variant: "000", Cards: []string{"Ts", "Ad", "9c", "Kh"},
				Seats: []Seat{{Bet: 1000, Insurance: true}}},
			check: func(t *testing.T, o *Output) {
				assert.True(t, o.Dealer.PeekedBlackjack)
				require.NotNil(t, o.Seats[0].InsuranceNet)
				assert.EqualValues(t, 1000, *o.Seats[0].InsuranceNet)
				assert.EqualValues(t, 0, o.Seats[0].TotalNet)
			},
		},
		{
			name: "004 no hole card: second dealer card after the players",
			in: Input{Variant: "004", Cards: []string{"Ts", "6d", "7c", "Th", "5s"},
				Seats: []Seat{seat(1000, "stand")}},
			check: func(t *testing.T, o *Output) {
				assert.Equal(t, []string{"6d", "Th"}, o.Dealer.Cards[:2])
				assert.Equal(t, []string{"Ts", "7c"}, o.Seats[0].Hands[0].Cards)
			},
		},
		{
			name: "003 H17: dealer hits soft 17",
			in: Input{Variant: "003", Cards: []string{"Ts", "6d", "9c", "Ah", "2s"},
				Seats: []Seat{seat(1000, "stand")}},
			check: func(t *testing.T, o *Output) {
				assert.Equal(t, []string{"6d", "Ah", "2s"}, o.Dealer.Cards)
				assert.Equal(t, 19, o.Dealer.Total)
			},
		},
		{
			name: "003 Speed: first decisions together, cards in seat order, then seat by seat",
			// seats: s1 5+6=11, s2 4+3=7; up 9, hole 8. s1 hit, s2 hit at once:
			// card 2s to s1 (13), 3d to s2 (10); then s1 hit again 5c (18) stand; s2 hit Kh (20) stand.
			in: Input{Variant: "003", Cards: []string{"5s", "4s", "9d", "6c", "3h", "8c", "2s", "3d", "5c", "Kh"},
				Seats: []Seat{seat(1000, "hit", "hit", "stand"), seat(1000, "hit", "hit", "stand")}},
			check: func(t *testing.T, o *Output) {
				assert.Equal(t, []string{"5s", "6c", "2s", "5c"}, o.Seats[0].Hands[0].Cards)
				assert.Equal(t, []string{"4s", "3h", "3d", "Kh"}, o.Seats[1].Hands[0].Cards)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Run(tt.in)
			require.NoError(t, err)
			tt.check(t, o)
		})
	}
}

func TestScenarioErrors(t *testing.T) {
	tests := []struct {
		name string
		in   Input
	}{
		{"unknown variant", Input{Variant: "999", Cards: []string{"As"}, Seats: []Seat{seat(100)}}},
		{"odd bet", Input{Variant: "000", Cards: []string{"As", "9d", "Kc", "7h"}, Seats: []Seat{seat(101)}}},
		{"bad card", Input{Variant: "000", Cards: []string{"Zz"}, Seats: []Seat{seat(100)}}},
		{"side not offered", Input{Variant: "004", Cards: []string{"As", "9d", "Kc", "7h"},
			Seats: []Seat{{Bet: 100, Side: map[string]int64{"21+3": 10}}}}},
		{"double on three cards", Input{Variant: "000", Cards: []string{"2s", "9d", "3c", "7h", "4s", "Kd"},
			Seats: []Seat{seat(100, "hit", "double")}}},
		{"split a non-pair", Input{Variant: "000", Cards: []string{"2s", "9d", "3c", "7h"}, Seats: []Seat{seat(100, "split")}}},
		{"insurance without an ace", Input{Variant: "000", Cards: []string{"Ts", "9d", "Kc", "7h"},
			Seats: []Seat{{Bet: 100, Insurance: true, Decisions: []string{"stand"}}}}},
		{"decisions left over", Input{Variant: "000", Cards: []string{"Ts", "9d", "Kc", "7h"}, Seats: []Seat{seat(100, "stand", "hit")}}},
		{"ran out of decisions", Input{Variant: "000", Cards: []string{"Ts", "9d", "6c", "7h"}, Seats: []Seat{seat(100)}}},
		{"ran out of cards", Input{Variant: "000", Cards: []string{"Ts", "9d", "6c"}, Seats: []Seat{seat(100)}}},
		{"first_decisions outside 003", Input{Variant: "000", FirstDecisions: []int{1}, Cards: []string{"Ts", "9d", "Kc", "7h"},
			Seats: []Seat{seat(100, "stand")}}},
		{"unknown supervisor command", Input{Variant: "000", Cards: []string{"Ts", "9d", "Kc", "7h"}, Seats: []Seat{seat(100, "stand")},
			Supervisor: []Command{{Command: "reboot"}}}},
		{"void never reached", Input{Variant: "000", Cards: []string{"Ts", "7c", "9d", "Th"}, Seats: []Seat{seat(100, "stand")},
			Supervisor: []Command{{Command: "void", AfterCards: 9}}}},
		{"correction with no misread", Input{Variant: "000", Cards: []string{"Ts", "7c", "9d", "Th"}, Seats: []Seat{seat(100, "stand")},
			Supervisor: []Command{{Command: "correct", Card: "9s"}}}},
		{"bad corrected card", Input{Variant: "000", Cards: []string{"Ts", "9d", "??", "7h"}, Seats: []Seat{seat(100, "stand")},
			Supervisor: []Command{{Command: "correct", Card: "Zz"}}}},
		{"seats out of dealing order", Input{Variant: "000", Cards: []string{"Ts", "9d", "Kc", "7h"},
			Seats: []Seat{{Seat: 2, Bet: 100, Decisions: []string{"stand"}}, {Seat: 1, Bet: 100, Decisions: []string{"stand"}}}}},
		{"two players on one seat outside common draw", Input{Variant: "000", Cards: []string{"Ts", "9d", "Kc", "7h"},
			Seats: []Seat{{Seat: 1, Player: "a", Bet: 100, Decisions: []string{"stand"}}, {Seat: 1, Player: "b", Bet: 100, Decisions: []string{"stand"}}}}},
		{"bet behind without a player", Input{Variant: "000", Cards: []string{"Ts", "9d", "Kc", "7h"}, Seats: []Seat{seat(100, "stand")},
			Behind: []Behind{{Seat: 1, Bet: 100}}}},
		{"cap over two positions of one player (004)", Input{Variant: "004", Cards: []string{"Ts", "9d", "Kc", "7h", "8s", "9c"},
			Seats: []Seat{seat(60000, "stand"), seat(60000, "stand")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.in)
			require.ErrorIs(t, err, ErrScenario)
		})
	}
}
