package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/sidebets"
)

func TestGamesValidate(t *testing.T) {
	for _, code := range Codes() {
		t.Run(code, func(t *testing.T) {
			rs, err := Game(code)
			require.NoError(t, err)
			require.NoError(t, rs.Validate())
			assert.Equal(t, code, rs.Code)
		})
	}
	for alias, code := range map[string]string{"standard": "000", "premium": "001", "freebet": "002", "speed": "003", "sisal": "004"} {
		rs, err := Game(alias)
		require.NoError(t, err)
		assert.Equal(t, code, rs.Code)
	}
	_, err := Game("005")
	require.ErrorIs(t, err, ErrUnknownGame)
}

func TestValidateRejects(t *testing.T) {
	tests := map[string]func(*Set){
		"no decks":          func(s *Set) { s.Decks = 0 },
		"eight seats":       func(s *Set) { s.MaxSeats = 8 },
		"resplit":           func(s *Set) { s.MaxSplits = 2 },
		"charlie of 3":      func(s *Set) { s.Charlie = 3 },
		"no min bet":        func(s *Set) { s.MinBet = 0 },
		"peek without hole": func(s *Set) { s.HoleCard = false },
		"deep cut":          func(s *Set) { s.Penetration = 9 * 52 },
		"empty paytable":    func(s *Set) { s.SideBets[0].Paytable = nil },
		"side twice":        func(s *Set) { s.SideBets = append(s.SideBets, s.SideBets[0]) },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			rs, err := Game("000")
			require.NoError(t, err)
			mutate(rs)
			require.ErrorIs(t, rs.Validate(), ErrInvalid)
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	a, err := Game("002")
	require.NoError(t, err)
	b := a.Clone()
	b.FreeDoubleHard[0] = 8
	b.SideBets[0].Paytable["perfect_pair"] = 1
	assert.Equal(t, 9, a.FreeDoubleHard[0])
	assert.EqualValues(t, 25, a.SideBets[0].Paytable["perfect_pair"])
}

func TestRuleHelpers(t *testing.T) {
	free, err := Game("002")
	require.NoError(t, err)
	assert.True(t, free.IsFreeDouble(10, false))
	assert.False(t, free.IsFreeDouble(10, true), "a soft total is not a hard 9-11")
	assert.False(t, free.IsFreeDouble(12, false))
	assert.True(t, free.Peeks(1))
	assert.False(t, free.Peeks(10))
	sisal, err := Game("004")
	require.NoError(t, err)
	assert.False(t, sisal.Peeks(1), "no hole card, no peek")
	win, rounding := Ratio{3, 2}.Of(1001)
	assert.EqualValues(t, 1501, win)
	assert.EqualValues(t, 1, rounding, "half a cent rounded down and reported")
	for _, s := range []string{"all", "dbl_back", "obo"} {
		l, err := ParseLateBJ(s)
		require.NoError(t, err)
		assert.Equal(t, s, l.String())
	}
	_, err = ParseLateBJ("some")
	require.Error(t, err)
}

// TestPaytables pins the documents' paytables as the games carry them.
func TestPaytables(t *testing.T) {
	want := map[string]map[string]map[string]int64{
		"000": {"perfect_pairs": {"perfect_pair": 25, "coloured_pair": 12, "mixed_pair": 6},
			"21+3": {"suited_trips": 100, "straight_flush": 40, "three_of_a_kind": 30, "straight": 10, "flush": 5}},
		"002": {"hot3": {"777": 100, "suited_21": 20, "21": 4, "20": 2, "19": 1},
			"bust_it": {"bust_3_cards": 1, "bust_4_cards": 2, "bust_5_cards": 9, "bust_6_cards": 50, "bust_7_cards": 100, "bust_8_cards": 250}},
		"003": {"top3": {"suited_trips": 270, "straight_flush": 180, "three_of_a_kind": 90}},
		"004": {"perfect_pairs": {"perfect_pair": 30, "coloured_pair": 10, "mixed_pair": 5}},
	}
	for code, bets := range want {
		rs, err := Game(code)
		require.NoError(t, err)
		for kind, pt := range bets {
			sb, ok := rs.Side(sidebets.Kind(kind))
			require.True(t, ok, "%s offers %s", code, kind)
			got := map[string]int64{}
			for r, pays := range sb.Paytable {
				got[string(r)] = pays
			}
			assert.Equal(t, pt, got, "%s %s", code, kind)
		}
	}
}
