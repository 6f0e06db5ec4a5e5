package sidebets

import (
	"fmt"
	"math"
)

// Outcome is a settled side bet: the result and the net amount in cents
// (+stake x pays on a win, 0 on a push, -stake on a loss).
type Outcome struct {
	Result Result
	Net    int64
}

// Settle settles a stake (cents) on result r with paytable pt. A result the
// table pays wins stake x pays; the Bust It push returns the stake (net 0);
// every other result, Lose included, loses the stake. The stake must have
// passed CheckStake against the same table, which rules out an overflow.
func Settle(stake int64, r Result, pt Paytable) Outcome {
	if r == PushPlayerBlackjack {
		return Outcome{Result: r, Net: 0}
	}
	if pays, ok := pt[r]; ok && r != Lose {
		return Outcome{Result: r, Net: stake * pays}
	}
	return Outcome{Result: r, Net: -stake}
}

// CheckStake reports whether stake (cents) can be accepted on a bet with
// paytable pt: it must be positive, and its best win must fit in an int64 so
// that Settle cannot overflow. The engine calls it when bets close.
func CheckStake(stake int64, pt Paytable) error {
	if stake <= 0 {
		return fmt.Errorf("%w: %d cents", ErrStake, stake)
	}
	for r, pays := range pt {
		if pays < 0 {
			return fmt.Errorf("%w: negative pays %d on %q", ErrPaytable, pays, string(r))
		}
		if pays > 0 && stake > math.MaxInt64/pays {
			return fmt.Errorf("%w: %d cents at %d to one on %q overflows", ErrStake, stake, pays, string(r))
		}
	}
	return nil
}
