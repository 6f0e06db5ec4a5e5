package round

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error Apply returns wraps one of them, so callers
// branch with errors.Is; *RuleError adds the detail.
var (
	// ErrIllegalAction is an action the rules do not allow now: double on
	// three cards, split a non-pair, insurance without an Ace up...
	ErrIllegalAction = errors.New("round: illegal action")
	// ErrOutOfTurn is a decision from a seat or player the round is not waiting for.
	ErrOutOfTurn = errors.New("round: out of turn")
	// ErrDuplicate is an answer given twice (insurance).
	ErrDuplicate = errors.New("round: duplicate input")
	// ErrUnexpectedCard is a card the round has no place for (e.g. after
	// settlement, or during the insurance offer). The controller raises it
	// as an alarm for the supervisor: a card is never silently absorbed.
	ErrUnexpectedCard = errors.New("round: unexpected card")
	// ErrBetLimit is a wager below the minimum or above the maximum.
	ErrBetLimit = errors.New("round: bet outside the limits")
	// ErrRoundCap is a wager that would take a player's stakes in the
	// round, over all his positions, past the game's regulatory cap (004:
	// 1,000.00 EUR). Its RuleError carries Cap and Total.
	ErrRoundCap = errors.New("round: over the per-round cap")
	// ErrBadBet is a malformed bet: unknown seat, seat twice, side bet not offered.
	ErrBadBet = errors.New("round: invalid bet")
	// ErrFinished is any input after the round was settled or voided.
	ErrFinished = errors.New("round: round is over")
)

// RuleError is the typed error of an input the rules reject. It leaves the
// round exactly as it was.
type RuleError struct {
	Err    error  // one of the sentinels
	Seat   int    // 0 when not about a seat
	Player string // empty when not about a player
	Msg    string
	// Cap and Total are set for ErrRoundCap: the game's cap and the
	// player's total stakes in the round had the wager been accepted,
	// both in minor units.
	Cap, Total int64
}

// Error is the rule broken and, when set, the input that broke it.
func (e *RuleError) Error() string {
	s := e.Err.Error()
	if e.Seat != 0 {
		s += fmt.Sprintf(" (seat %d", e.Seat)
		if e.Player != "" {
			s += ", player " + e.Player
		}
		s += ")"
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// Unwrap makes errors.Is(err, ErrIllegalAction) and friends work.
func (e *RuleError) Unwrap() error { return e.Err }

func ruleErr(err error, seat int, player, f string, a ...any) error {
	return &RuleError{Err: err, Seat: seat, Player: player, Msg: fmt.Sprintf(f, a...)}
}

// capErr is the ErrRoundCap error of a wager (what) that would bring
// player's stakes in the round to total, over limit.
func capErr(seat int, player string, limit, total int64, what string) error {
	return &RuleError{Err: ErrRoundCap, Seat: seat, Player: player, Cap: limit, Total: total,
		Msg: fmt.Sprintf("%s: the player's stakes this hand would total %d, over the cap of %d", what, total, limit)}
}
