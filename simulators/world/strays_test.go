package world

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

func cards(s ...string) []card.Card {
	out := make([]card.Card, len(s))
	for i, c := range s {
		out[i] = card.MustParse(c)
	}
	return out
}

// TestAsideCards reads the cards of the set-aside list's alarm, and
// nothing else.
func TestAsideCards(t *testing.T) {
	for _, tc := range []struct {
		body table.Body
		want []card.Card
	}{
		{table.Alarm{Code: "card_set_aside", Message: "3 cards set aside (7h 2c Ks): the round waits for no card (no round in play); booked as dealt, no correction needed; resumed by sim"},
			cards("7h", "2c", "Ks")},
		{table.Alarm{Code: "card_set_aside", Message: "1 card set aside (Td): the round waits for no card (play); booked as dealt, no correction needed; round voided by sim"},
			cards("Td")},
		{table.Alarm{Code: "card_set_aside", Message: "misread #4: card misread: the round waits for no card (settled): the card is set aside, no correction needed"}, nil},
		{table.Alarm{Code: "unexpected_card", Message: "card 7h does not fit the round (no round in play): check the shoe"}, nil},
		{table.Paused{By: "system", Reason: "1 card set aside (7h): x"}, nil},
	} {
		got, ok := asideCards(tc.body)
		assert.Equal(t, tc.want != nil, ok, "%+v", tc.body)
		assert.Equal(t, tc.want, got, "%+v", tc.body)
	}
}

// TestCompareAside: a list lost, doubled or changed is a difference; a
// run that went on further is not.
func TestCompareAside(t *testing.T) {
	ref := [][]card.Card{cards("7h", "2c"), cards("Ks")}
	assert.Empty(t, compareAside(ref, ref))
	assert.Empty(t, compareAside(ref[:1], ref), "the live run stopped before the second")
	assert.Empty(t, compareAside(ref, ref[:1]), "the fault-free run stopped before the second")
	assert.Contains(t, compareAside([][]card.Card{cards("7h")}, ref), "set-aside list 1: the table named [7h], the fault-free run [7h 2c]")
	assert.Contains(t, compareAside([][]card.Card{cards("7h", "2c", "7h", "2c")}, ref), "the fault-free run [7h 2c]")
	assert.Contains(t, compareAside([][]card.Card{cards("7h", "2c"), cards("7h", "2c")}, ref), "set-aside list 2")
}
