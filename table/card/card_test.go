package card

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Card
		wantErr bool
	}{
		{"As", Card{Ace, Spades}, false},
		{"Td", Card{Ten, Diamonds}, false},
		{"10h", Card{Ten, Hearts}, false},
		{"kc", Card{King, Clubs}, false},
		{"7H", Card{Seven, Hearts}, false},
		{"", Card{}, true},
		{"A", Card{}, true},
		{"1s", Card{}, true},
		{"Ax", Card{}, true},
		{"Asd", Card{}, true},
		{"11s", Card{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrSyntax)
				assert.False(t, got.Valid())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStringRoundTripAndIndex(t *testing.T) {
	seen := map[int]bool{}
	for i := 0; i < DeckSize; i++ {
		c := FromIndex(i)
		require.True(t, c.Valid())
		assert.Equal(t, i, c.Index())
		p, err := Parse(c.String())
		require.NoError(t, err)
		assert.Equal(t, c, p)
		seen[c.Index()] = true
	}
	assert.Len(t, seen, DeckSize)
}

func TestValues(t *testing.T) {
	assert.Equal(t, 1, MustParse("Ah").Value())
	assert.Equal(t, 9, MustParse("9h").Value())
	for _, s := range []string{"Th", "Jh", "Qh", "Kh"} {
		assert.Equal(t, 10, MustParse(s).Value(), s)
	}
	assert.True(t, Hearts.Red())
	assert.True(t, Diamonds.Red())
	assert.False(t, Spades.Red())
	assert.False(t, Clubs.Red())
}

func TestJSON(t *testing.T) {
	b, err := json.Marshal([]Card{MustParse("As"), MustParse("Td")})
	require.NoError(t, err)
	assert.JSONEq(t, `["As","Td"]`, string(b))
	var back []Card
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, "Td", back[1].String())
	require.Error(t, json.Unmarshal([]byte(`["Zz"]`), &back))
	_, err = json.Marshal(Card{})
	require.Error(t, err)
}

func TestCompositionAndShoe(t *testing.T) {
	comp := NewComposition(8)
	assert.Equal(t, 416, comp.Total())
	assert.Equal(t, 32, comp.RankCount(Ace))
	shoe := NewShoe(8, rand.New(rand.NewPCG(1, 2)))
	require.Len(t, shoe, 416)
	for _, c := range shoe {
		require.NoError(t, comp.Take(c))
	}
	assert.Equal(t, 0, comp.Total())
	err := comp.Take(MustParse("As"))
	require.ErrorIs(t, err, ErrOverCount)
	assert.Equal(t, 0, comp.Total(), "a failed Take changes nothing")
	// Deterministic for a seed.
	again := NewShoe(8, rand.New(rand.NewPCG(1, 2)))
	assert.Equal(t, shoe, again)
}

// TestValidBounds: Valid is an unsigned range test; every byte value of a
// rank and a suit gets the answer of the plain bounds.
func TestValidBounds(t *testing.T) {
	for i := 0; i < 256; i++ {
		assert.Equal(t, i >= 1 && i <= 13, Rank(i).Valid(), "rank %d", i)
		assert.Equal(t, i >= 1 && i <= 4, Suit(i).Valid(), "suit %d", i)
	}
}
