package sidebets

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSettle(t *testing.T) {
	tests := []struct {
		name  string
		stake int64
		r     Result
		pt    Paytable
		want  int64
	}{
		{"perfect pair 25 to one", 100, PerfectPair, PerfectPairsPaytable(), 2500},
		{"coloured pair 12 to one", 100, ColouredPair, PerfectPairsPaytable(), 1200},
		{"mixed pair 6 to one", 100, MixedPair, PerfectPairsPaytable(), 600},
		{"sisal perfect 30 to one", 50, PerfectPair, SisalPairsPaytable(), 1500},
		{"sisal coloured 10 to one", 50, ColouredPair, SisalPairsPaytable(), 500},
		{"sisal mixed 5 to one", 50, MixedPair, SisalPairsPaytable(), 250},
		{"suited trips", 100, SuitedTrips, TwentyOnePlus3Paytable(), 10000},
		{"straight flush", 100, StraightFlush, TwentyOnePlus3Paytable(), 4000},
		{"three of a kind", 100, ThreeOfAKind, TwentyOnePlus3Paytable(), 3000},
		{"straight", 100, Straight, TwentyOnePlus3Paytable(), 1000},
		{"flush", 100, Flush, TwentyOnePlus3Paytable(), 500},
		{"top3 suited trips", 100, SuitedTrips, Top3Paytable(), 27000},
		{"top3 straight flush", 100, StraightFlush, Top3Paytable(), 18000},
		{"top3 trips", 100, ThreeOfAKind, Top3Paytable(), 9000},
		{"top3 does not pay a straight", 100, Straight, Top3Paytable(), -100},
		{"top3 does not pay a flush", 100, Flush, Top3Paytable(), -100},
		{"777", 100, Sevens, Hot3Paytable(), 10000},
		{"suited 21", 100, Suited21, Hot3Paytable(), 2000},
		{"21", 100, Total21, Hot3Paytable(), 400},
		{"20", 100, Total20, Hot3Paytable(), 200},
		{"19 pays even money", 100, Total19, Hot3Paytable(), 100},
		{"bust 3 cards", 100, Bust3, BustItPaytable(), 100},
		{"bust 4 cards", 100, Bust4, BustItPaytable(), 200},
		{"bust 5 cards", 100, Bust5, BustItPaytable(), 900},
		{"bust 6 cards", 100, Bust6, BustItPaytable(), 5000},
		{"bust 7 cards", 100, Bust7, BustItPaytable(), 10000},
		{"bust 8 cards", 100, Bust8, BustItPaytable(), 25000},
		{"bust it push", 100, PushPlayerBlackjack, BustItPaytable(), 0},
		{"lose", 100, Lose, PerfectPairsPaytable(), -100},
		{"lose even if a table names it", 100, Lose, Paytable{Lose: 5}, -100},
		{"odd cents", 33, MixedPair, PerfectPairsPaytable(), 198},
		{"nil paytable loses", 100, PerfectPair, nil, -100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Settle(tt.stake, tt.r, tt.pt)
			assert.Equal(t, Outcome{Result: tt.r, Net: tt.want}, got)
		})
	}
}

func TestCheckStake(t *testing.T) {
	tests := []struct {
		name    string
		stake   int64
		pt      Paytable
		wantErr error
	}{
		{"ordinary", 500, BustItPaytable(), nil},
		{"largest that fits", math.MaxInt64 / 250, BustItPaytable(), nil},
		{"overflowing win", math.MaxInt64/250 + 1, BustItPaytable(), ErrStake},
		{"zero", 0, PerfectPairsPaytable(), ErrStake},
		{"negative", -100, PerfectPairsPaytable(), ErrStake},
		{"negative pays", 100, Paytable{PerfectPair: -1}, ErrPaytable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckStake(tt.stake, tt.pt)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func TestPaytableValidate(t *testing.T) {
	tests := []struct {
		name    string
		kind    Kind
		pt      Paytable
		wantErr error
	}{
		{"default pairs", KindPerfectPairs, PerfectPairsPaytable(), nil},
		{"sisal pairs on the dealer pair", KindDealerPair, SisalPairsPaytable(), nil},
		{"21+3", KindTwentyOnePlus3, TwentyOnePlus3Paytable(), nil},
		{"top3", KindTop3, Top3Paytable(), nil},
		{"hot3", KindHot3, Hot3Paytable(), nil},
		{"bust it", KindBustIt, BustItPaytable(), nil},
		{"empty table is legal", KindTop3, Paytable{}, nil},
		{"foreign result", KindPerfectPairs, Paytable{Flush: 5}, ErrPaytable},
		{"paying lose", KindHot3, Paytable{Lose: 1}, ErrPaytable},
		{"paying the push", KindBustIt, Paytable{PushPlayerBlackjack: 1}, ErrPaytable},
		{"negative", KindHot3, Paytable{Total19: -1}, ErrPaytable},
		{"unknown kind", Kind("x"), Paytable{}, ErrUnknownKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.pt.Validate(tt.kind)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func TestDefaultPaytableIsFresh(t *testing.T) {
	for _, k := range Kinds() {
		pt, err := DefaultPaytable(k)
		require.NoError(t, err, k)
		require.NoError(t, pt.Validate(k), k)
		for r := range pt {
			pt[r] = 0
		}
		again, err := DefaultPaytable(k)
		require.NoError(t, err)
		for r, pays := range again {
			assert.Positive(t, pays, "%s %s changed by a caller", k, r)
		}
	}
	_, err := DefaultPaytable("x")
	assert.ErrorIs(t, err, ErrUnknownKind)
}
