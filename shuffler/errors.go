package shuffler

import "errors"

// Errors returned by the Controller's methods.
var (
	// ErrNoPin is a required line missing from Pins.
	ErrNoPin = errors.New("shuffler: pin not wired")
	// ErrNotInPlay is a swap requested while no shoe is being dealt
	// (starting up, or a swap already under way).
	ErrNotInPlay = errors.New("shuffler: no shoe in play to swap")
	// ErrFault is a swap requested while the controller is in Fault; a
	// supervisor must Reset it first.
	ErrFault = errors.New("shuffler: in fault")
	// ErrNotInFault is a supervisor's ResetFault while the controller is
	// not in Fault: nothing to reset, and a reset would drop the swap
	// under way.
	ErrNotInFault = errors.New("shuffler: not in fault")
	// ErrRunTwice is a second call of Run: one controller owns one set of
	// lines for its lifetime.
	ErrRunTwice = errors.New("shuffler: Run called twice")
	// ErrStopped is a command sent after Run returned.
	ErrStopped = errors.New("shuffler: controller stopped")
)

// Alarm codes, as table.DeviceAlarm.Code (the table publishes them as
// table.Alarm codes "shuffler.<code>"). They are part of the wire form: the
// console and the backend match on them.
const (
	// AlarmNoShoe: no shoe in the dealing slot after start-up.
	AlarmNoShoe = "shuffler_no_shoe"
	// AlarmBothShoes: both shoes seen in the dealing slot.
	AlarmBothShoes = "shuffler_both_shoes"
	// AlarmShoeRemoved: the shoe in play left the slot while dealing.
	AlarmShoeRemoved = "shoe_removed"
	// AlarmShuffleSlow: the shuffle is taking longer than expected; the
	// table goes on dealing, so this alarm does not pause.
	AlarmShuffleSlow = "shuffle_slow"
	// AlarmNotReady: a swap was requested and the shuffler never had a
	// shuffled shoe ready.
	AlarmNotReady = "shuffler_not_ready"
	// AlarmNoAck: the swap was requested and never acknowledged.
	AlarmNoAck = "swap_not_acknowledged"
	// AlarmAckStuck: a swap was requested with the shuffler ready, and
	// swap_done stayed asserted from the last swap (a second, stuck
	// acknowledgement): the handshake cannot start. Pauses.
	AlarmAckStuck = "swap_done_stuck"
	// AlarmCutNoShoe: the cut-card sensor asserted while no shoe was in
	// play in its slot (starting, mid-swap, the shoe lifted out): no
	// cut card can have come out, so it is not reported as one, which
	// would end the shoe in play. Does not pause.
	AlarmCutNoShoe = "cutcard_no_shoe"
	// AlarmSwapPresence: the shuffler acknowledged a swap that the presence
	// sensors do not show.
	AlarmSwapPresence = "swap_presence_mismatch"
	// AlarmCardCount: the shuffler's card count differs from the expected
	// count of a full shoe.
	AlarmCardCount = "shoe_card_count"
	// AlarmWrongShoe: the shuffler's report names the shoe in play, not the
	// one that was swapped in.
	AlarmWrongShoe = "shoe_report_mismatch"
	// AlarmReset is not a fault: a supervisor took the controller out of
	// Fault (ResetFault). It does not pause; the table journals and
	// publishes it ("shuffler.reset", the message names who and which
	// fault), so the audit trail holds who reset the shuffler when.
	AlarmReset = "reset"
)
