package ev

import (
	"errors"
	"fmt"
)

// ErrUnknownGame is returned by Game for a code other than "000".."004".
var ErrUnknownGame = errors.New("ev: unknown game")

// ErrBadRules is returned by New for rule parameters it cannot compute.
var ErrBadRules = errors.New("ev: bad rules")

// LateBJ is what a dealer blackjack found only at the end of the round (no
// peek) takes from a hand that is neither a natural nor bust.
type LateBJ uint8

// The late-blackjack rules of the five games (scenario-format.md).
const (
	// LateAll: every stake on the hand is lost, a double included.
	LateAll LateBJ = iota
	// LateDoubleBack: the doubling stake is returned; a split hand still
	// loses its own bet.
	LateDoubleBack
)

// Rules are the rule parameters that change basic strategy, a small mirror
// of variants.md kept here so the calculator depends on nothing else.
// Every game doubles on any first two cards, splits once, gives split aces
// one card, pays a natural 3:2 and pushes a natural against a dealer
// natural.
type Rules struct {
	Decks     int  // decks in the shoe
	HitSoft17 bool // the dealer hits soft 17 (003)
	PeekAce   bool // with an ace up the dealer checks for blackjack before play
	PeekTen   bool // with a ten up the dealer checks for blackjack before play
	// LateAce and LateTen say what a late dealer blackjack takes when the
	// up card is an ace or a ten and the dealer did not peek.
	LateAce, LateTen LateBJ
	DAS              bool // double after split
	// Charlie is the number of cards with which a hand of 21 or less wins
	// at once (0: no charlie).
	Charlie int
	// CharlieBeatsBJ says a charlie also beats a late dealer blackjack (002).
	CharlieBeatsBJ bool
	Dealer22Push   bool // a dealer total of 22 pushes every live hand (002)
	FreeDouble     bool // a two-card hard 9, 10 or 11 doubles for free (002)
	FreeSplit      bool // a pair other than tens splits for free (002)
}

// Game returns the rule parameters of a game code, "000" to "004", as
// variants.md and scenario-format.md describe them.
func Game(code string) (Rules, error) {
	switch code {
	case "000": // Live Blackjack: 8 decks S17, peek on ace only, late BJ takes all, no DAS
		return Rules{Decks: 8, PeekAce: true, LateTen: LateAll}, nil
	case "001": // Premium: 6 decks S17, no peek, ace up takes all, ten up double back, DAS, 10-card charlie
		return Rules{Decks: 6, LateAce: LateAll, LateTen: LateDoubleBack, DAS: true, Charlie: 10}, nil
	case "002": // Free Bet: 8 decks S17, peek on ace, free doubles and splits, dealer 22 pushes, 6-card charlie
		return Rules{Decks: 8, PeekAce: true, LateTen: LateAll, Charlie: 6, CharlieBeatsBJ: true,
			Dealer22Push: true, FreeDouble: true, FreeSplit: true}, nil
	case "003": // Speed: 8 decks H17, peek on ace, ten up double back, DAS, 10-card charlie
		return Rules{Decks: 8, HitSoft17: true, PeekAce: true, LateTen: LateDoubleBack, DAS: true, Charlie: 10}, nil
	case "004": // Sisal: 6 decks S17, no hole card, late BJ takes all, DAS
		return Rules{Decks: 6, LateAce: LateAll, LateTen: LateAll, DAS: true}, nil
	}
	return Rules{}, fmt.Errorf("%w %q", ErrUnknownGame, code)
}

func (r Rules) validate() error {
	switch {
	case r.Decks < 1 || r.Decks > 8:
		return fmt.Errorf("%w: %d decks (want 1..8)", ErrBadRules, r.Decks)
	case r.Charlie != 0 && (r.Charlie < 3 || r.Charlie > 21):
		return fmt.Errorf("%w: charlie of %d cards", ErrBadRules, r.Charlie)
	}
	return nil
}

func (r Rules) peek(up int) bool {
	return (up == 1 && r.PeekAce) || (up == 10 && r.PeekTen)
}

func (r Rules) late(up int) LateBJ {
	if up == 1 {
		return r.LateAce
	}
	return r.LateTen
}
