package sidebets

import "errors"

// ErrUnknownKind is returned for a side-bet name that is none of the Kinds.
var ErrUnknownKind = errors.New("sidebets: unknown side bet")

// ErrInvalidCard is returned when a card handed to Classify is not a real card.
var ErrInvalidCard = errors.New("sidebets: invalid card")

// ErrDealerCards is returned when Classify is not given the dealer cards the
// bet needs (one up card for the three-card bets, two for the dealer pair,
// at least two for Bust It).
var ErrDealerCards = errors.New("sidebets: not enough dealer cards")

// ErrPaytable is returned for a paytable that names a result the bet cannot
// produce or pays a negative amount.
var ErrPaytable = errors.New("sidebets: invalid paytable")

// ErrDecks is returned by the return analysis for a number of decks outside
// 1..MaxDecks.
var ErrDecks = errors.New("sidebets: invalid number of decks")

// ErrStake is returned by CheckStake for a stake that is not positive or
// whose best win would not fit in an int64 of cents.
var ErrStake = errors.New("sidebets: invalid stake")
