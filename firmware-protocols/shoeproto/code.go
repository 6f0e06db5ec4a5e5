package shoeproto

import (
	"fmt"

	"github.com/livetable/livetable/table/card"
)

// Card codes (SPEC.md, "Card codes"). An RFID or barcode shoe reports each
// physical card's unique code. The format is "D" followed by the two-digit
// deck number (01..99) within the shuffled set and the card's wire form:
// "D03Td" is the ten of diamonds of deck 3. Because the code names its card,
// the reader checks it against the reported rank and suit and against the
// shoe's deck count without a lookup table.

// CodeLen is the length of a card code.
const CodeLen = 5

// AppendCode appends the code of card c of deck deck (1..99) to dst.
func AppendCode(dst []byte, deck int, c card.Card) []byte {
	return append(dst, 'D', byte('0'+deck/10%10), byte('0'+deck%10), c.Rank.String()[0], c.Suit.String()[0])
}

// ParseCode reads a card code. It fails with ErrBadCode for anything that is
// not "D", two digits from 01, and a valid card.
func ParseCode(code []byte) (deck int, c card.Card, err error) {
	if len(code) != CodeLen || code[0] != 'D' || !isDigit(code[1]) || !isDigit(code[2]) {
		return 0, card.Card{}, fmt.Errorf("%w: %q", ErrBadCode, code)
	}
	deck = int(code[1]-'0')*10 + int(code[2]-'0')
	if deck == 0 {
		return 0, card.Card{}, fmt.Errorf("%w: %q: deck 00", ErrBadCode, code)
	}
	c, perr := card.ParseBytes(code[3:])
	if perr != nil {
		return 0, card.Card{}, fmt.Errorf("%w: %q: %w", ErrBadCode, code, perr)
	}
	return deck, c, nil
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
