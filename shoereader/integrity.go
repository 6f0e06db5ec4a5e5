package shoereader

import (
	"github.com/livetable/livetable/table/card"
)

// shoeState is the integrity book of the shoe in play.
type shoeState struct {
	// started is set when SHOE_IN was seen: only then is the dealt count
	// the whole shoe's, so only then is the count checked at SHOE_OUT (a
	// reader restarted mid-shoe would otherwise raise a false alarm).
	started bool
	id      string
	comp    card.Composition
	dealt   int
	codes   map[string]struct{}
	order   []card.Card // dealing order, for the shuffle check
}

func newShoeState(decks int) *shoeState {
	return &shoeState{comp: card.NewComposition(decks), codes: map[string]struct{}{}, order: make([]card.Card, 0, decks*card.DeckSize)}
}

// takeCard checks one dealt card and books it. A card that breaks a rule
// is not booked, so one bad read does not cascade into more alarms.
func (s *shoeState) takeCard(c card.Card, code []byte, book func([]byte) (card.Card, bool)) *IntegrityError {
	if len(code) > 0 {
		named, ok := book(code)
		switch {
		case !ok:
			return &IntegrityError{Reason: UnknownCode, ShoeID: s.id, Card: c, Code: string(code)}
		case named != c:
			return &IntegrityError{Reason: CodeMismatch, ShoeID: s.id, Card: c, Code: string(code)}
		}
		if _, dup := s.codes[string(code)]; dup {
			return &IntegrityError{Reason: DuplicateCode, ShoeID: s.id, Card: c, Code: string(code)}
		}
	}
	if s.comp.Count(c) == 0 {
		return &IntegrityError{Reason: OverCount, ShoeID: s.id, Card: c, Code: string(code)}
	}
	_ = s.comp.Take(c) // cannot fail: the count was checked
	if len(code) > 0 {
		s.codes[string(code)] = struct{}{}
	}
	s.dealt++
	s.order = append(s.order, c)
	return nil
}

// finish checks the count when the shoe comes out.
func (s *shoeState) finish(returned, decks int) *IntegrityError {
	if !s.started {
		return nil
	}
	want := decks * card.DeckSize
	if s.dealt+returned != want {
		return &IntegrityError{Reason: CountMismatch, ShoeID: s.id, Dealt: s.dealt, Returned: returned, Want: want}
	}
	return nil
}
