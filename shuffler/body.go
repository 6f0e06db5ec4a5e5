package shuffler

// StateChanged reports the swap controller moving to another state, for the
// journal and the console.
type StateChanged struct {
	From string `json:"from"`
	To   string `json:"to"`
	// InPlay is the shoe in play (or being swapped out) after the change:
	// "A", "B" or "" when not known yet.
	InPlay string `json:"in_play,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Kind implements table.Body.
func (StateChanged) Kind() string { return "shuffler" }

// ShoeSwapped reports a completed swap. It goes with the
// table.ShoeChanged input carrying the same ShoeID.
//
// BurnCards is how many cards of the new shoe the table controller must
// burn before the first round of it: the controller takes the first
// BurnCards table.CardDrawn inputs of ShoeID as burned (journalled, not
// dealt to any hand, not counted by the round) and opens betting only
// after them. It is Options.BurnCards, 1 for Speed Blackjack (003: the
// first card of a new shoe is burned face down), 0 for the other games.
type ShoeSwapped struct {
	ShoeID string `json:"shoe_id"`
	// Shoe is the shoe body that came into play, "A" or "B".
	Shoe string `json:"shoe"`
	// Cards is the shuffler's card count, 0 when it gave none.
	Cards     int `json:"cards,omitempty"`
	BurnCards int `json:"burn_cards"`
}

// Kind implements table.Body.
func (ShoeSwapped) Kind() string { return "shoe_swap" }
