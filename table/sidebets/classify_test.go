package sidebets

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

func cards(t *testing.T, ss ...string) []card.Card {
	t.Helper()
	cs, err := card.ParseList(ss)
	require.NoError(t, err)
	return cs
}

func TestPair(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want Result
	}{
		{"perfect same suit", "7h", "7h", PerfectPair},
		{"perfect aces of spades", "As", "As", PerfectPair},
		{"coloured red", "7h", "7d", ColouredPair},
		{"coloured black", "Qs", "Qc", ColouredPair},
		{"mixed hearts spades", "Th", "Ts", MixedPair},
		{"mixed diamonds clubs", "2d", "2c", MixedPair},
		{"same value other rank is no pair", "Ks", "Qs", Lose},
		{"ten and jack is no pair", "Th", "Jh", Lose},
		{"different ranks", "As", "2s", Lose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := cards(t, tt.a, tt.b)
			assert.Equal(t, tt.want, Pair(cs[0], cs[1]))
			assert.Equal(t, tt.want, Pair(cs[1], cs[0]), "order must not matter")
		})
	}
	t.Run("invalid card loses", func(t *testing.T) {
		assert.Equal(t, Lose, Pair(card.Card{}, card.Card{}))
	})
}

// permutations3 returns the six orders of three items.
func permutations3[T any](a, b, c T) [][3]T {
	return [][3]T{{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}}
}

func TestThreeCard(t *testing.T) {
	tests := []struct {
		name    string
		a, b, c string
		want    Result
	}{
		{"suited trips", "Qh", "Qh", "Qh", SuitedTrips},
		{"trips two suits", "Qh", "Qh", "Qd", ThreeOfAKind},
		{"trips three suits", "5s", "5d", "5c", ThreeOfAKind},
		{"straight flush", "Ts", "Js", "Qs", StraightFlush},
		{"straight flush A-2-3", "Ad", "2d", "3d", StraightFlush},
		{"straight flush Q-K-A", "Qc", "Kc", "Ac", StraightFlush},
		{"straight 2-3-4", "2s", "3c", "4h", Straight},
		{"straight A-2-3", "Ah", "2s", "3d", Straight},
		{"straight Q-K-A", "Qh", "Ks", "Ad", Straight},
		{"straight 9-T-J", "9h", "Ts", "Jd", Straight},
		{"K-A-2 does not wrap", "Kh", "As", "2d", Lose},
		{"K-A-2 suited is only a flush", "Kh", "Ah", "2h", Flush},
		{"flush", "2c", "6c", "Tc", Flush},
		{"pair is nothing", "Qh", "Qd", "Ks", Lose},
		{"suited pair is a flush", "Qh", "Qh", "Kh", Flush},
		{"gap", "2s", "3c", "5h", Lose},
		{"ten-values are not trips", "Ts", "Jd", "Kc", Lose},
		{"J-Q-K straight", "Js", "Qd", "Kc", Straight},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := cards(t, tt.a, tt.b, tt.c)
			for _, p := range permutations3(cs[0], cs[1], cs[2]) {
				assert.Equal(t, tt.want, ThreeCard(p[0], p[1], p[2]), "%v", p)
			}
		})
	}
	t.Run("invalid card loses", func(t *testing.T) {
		q := card.MustParse("Qh")
		assert.Equal(t, Lose, ThreeCard(q, q, card.Card{}))
	})
}

func TestHot3(t *testing.T) {
	tests := []struct {
		name    string
		a, b, c string
		want    Result
	}{
		{"three sevens", "7h", "7d", "7s", Sevens},
		{"three suited sevens pay as 777", "7h", "7h", "7h", Sevens},
		{"suited 21", "9d", "2d", "Td", Suited21},
		{"21 mixed suits", "9h", "2d", "Ts", Total21},
		{"21 hard with ace as 1", "Ah", "Kd", "Ts", Total21},
		{"soft 21 ace as 11", "Ah", "9d", "As", Total21},
		{"suited soft 21", "Ac", "2c", "8c", Suited21},
		{"two aces and a nine", "Ah", "Ad", "9s", Total21},
		{"soft 20", "Ah", "Ad", "8s", Total20},
		{"20", "8h", "2d", "Ts", Total20},
		{"suited 20 is just 20", "8h", "2h", "Th", Total20},
		{"19", "8h", "2d", "9s", Total19},
		{"soft 19", "Ah", "5d", "3s", Total19},
		{"18 loses", "8h", "Kd", "Qs", Lose},
		{"three aces are 13", "Ah", "Ad", "As", Lose},
		{"bust 30", "Th", "Jd", "Ks", Lose},
		{"ace counts 1 rather than bust", "Ah", "Kd", "Js", Total21},
		{"bust 22", "2h", "Kd", "Js", Lose},
		{"6-7-8 is 21", "6h", "7d", "8s", Total21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := cards(t, tt.a, tt.b, tt.c)
			for _, p := range permutations3(cs[0], cs[1], cs[2]) {
				assert.Equal(t, tt.want, Hot3(p[0], p[1], p[2]), "%v", p)
			}
		})
	}
	t.Run("invalid card loses", func(t *testing.T) {
		s := card.MustParse("7h")
		assert.Equal(t, Lose, Hot3(s, s, card.Card{}))
	})
}

func TestBustIt(t *testing.T) {
	tests := []struct {
		name    string
		dealer  []string
		bust    bool
		natural bool
		want    Result
	}{
		{"dealer stands", []string{"Th", "7d"}, false, false, Lose},
		{"dealer 22 with three cards is a bust", []string{"Th", "2d", "Ks"}, true, false, Bust3},
		{"three cards", []string{"6h", "6d", "Ks"}, true, false, Bust3},
		{"four cards", []string{"2h", "4d", "Ks", "9c"}, true, false, Bust4},
		{"five cards", []string{"2h", "2d", "2s", "Kc", "Qc"}, true, false, Bust5},
		{"six cards", []string{"2h", "2d", "2s", "2c", "5c", "Tc"}, true, false, Bust6},
		{"seven cards", []string{"2h", "2d", "2s", "2c", "2h", "2d", "Tc"}, true, false, Bust7},
		{"eight cards", []string{"2h", "2d", "2s", "2c", "2h", "2d", "2s", "Tc"}, true, false, Bust8},
		{"ten cards pay as eight", []string{"2h", "2d", "2s", "2c", "2h", "2d", "Ah", "Ad", "As", "Tc"}, true, false, Bust8},
		{"player blackjack pushes a bust", []string{"6h", "6d", "Ks"}, true, true, PushPlayerBlackjack},
		{"player blackjack pushes a stand", []string{"Th", "7d"}, false, true, PushPlayerBlackjack},
		{"inconsistent two-card bust loses", []string{"Th", "Kd"}, true, false, Lose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, BustIt(cards(t, tt.dealer...), tt.bust, tt.natural))
		})
	}
}

func TestClassify(t *testing.T) {
	hand := func(p1, p2 string, dealer ...string) Hand {
		ps := cards(t, p1, p2)
		return Hand{Player: [2]card.Card{ps[0], ps[1]}, Dealer: cards(t, dealer...)}
	}
	tests := []struct {
		name    string
		kind    Kind
		hand    Hand
		want    Result
		wantErr error
	}{
		{"player pair", KindPerfectPairs, hand("8s", "8s"), PerfectPair, nil},
		{"player pair ignores the dealer", KindPerfectPairs, hand("8s", "8c", "8s", "8s"), ColouredPair, nil},
		{"dealer pair uses up and hole card", KindDealerPair, hand("2s", "3c", "Kh", "Ks", "Kd"), MixedPair, nil},
		{"dealer pair needs the hole card", KindDealerPair, hand("8s", "8s", "Kh"), Lose, ErrDealerCards},
		{"21+3 uses the up card only", KindTwentyOnePlus3, hand("Ts", "Js", "Qs", "2d"), StraightFlush, nil},
		{"21+3 needs the up card", KindTwentyOnePlus3, hand("Ts", "Js"), Lose, ErrDealerCards},
		{"top3 classifies like 21+3", KindTop3, hand("Ts", "Js", "Qs"), StraightFlush, nil},
		{"hot3", KindHot3, hand("7s", "7d", "7h", "Ts"), Sevens, nil},
		{"bust it counts 22 as a bust", KindBustIt, hand("9s", "8d", "Th", "2s", "Jc"), Bust3, nil},
		{"bust it dealer 21 loses", KindBustIt, hand("9s", "8d", "Th", "5s", "6c"), Lose, nil},
		{"bust it player blackjack pushes", KindBustIt, hand("As", "Kd", "Th", "6s", "Jc"), PushPlayerBlackjack, nil},
		{"bust it natural either order", KindBustIt, hand("Qd", "Ah", "Th", "6s", "Jc"), PushPlayerBlackjack, nil},
		{"bust it needs the hole card", KindBustIt, hand("9s", "8d", "Th"), Lose, ErrDealerCards},
		{"unknown kind", Kind("lucky_ladies"), hand("9s", "8d", "Th"), Lose, ErrUnknownKind},
		{"invalid player card", KindPerfectPairs, Hand{}, Lose, ErrInvalidCard},
		{"invalid dealer card", KindHot3, Hand{Player: [2]card.Card{card.MustParse("7s"), card.MustParse("7s")}, Dealer: []card.Card{{}}}, Lose, ErrInvalidCard},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Classify(tt.kind, tt.hand)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds() {
		got, err := ParseKind(string(k))
		require.NoError(t, err, k)
		assert.Equal(t, k, got)
	}
	for _, bad := range []string{"", "insurance", "perfect pairs", "21+3 "} {
		_, err := ParseKind(bad)
		assert.ErrorIs(t, err, ErrUnknownKind, bad)
	}
}
