package shoereader

import (
	"errors"
	"fmt"

	"github.com/livetable/livetable/table/card"
)

// ErrIntegrity is matched (errors.Is) by every *IntegrityError: the cards
// coming out of the shoe do not fit its composition.
var ErrIntegrity = errors.New("shoereader: shoe integrity")

// ErrNotShuffled is matched by every *ShuffleError: a new shoe deals in the
// same order as a previous one.
var ErrNotShuffled = errors.New("shoereader: shoe not shuffled")

// ErrRefused is matched by every *RefusedError: the device is not on the
// allow-list or speaks another protocol version.
var ErrRefused = errors.New("shoereader: device refused")

// ErrSilent is the error of a Silent event: nothing heard from the shoe
// for longer than Options.SilenceTimeout.
var ErrSilent = errors.New("shoereader: shoe silent")

// ErrDeviceFault is matched by every *FaultError: the device reported a
// hardware fault.
var ErrDeviceFault = errors.New("shoereader: device fault")

// ErrRunTwice is returned by a second call of Reader.Run: the reader's
// session state belongs to one run.
var ErrRunTwice = errors.New("shoereader: Run called twice")

// Reason says which integrity rule a card or a shoe broke.
type Reason uint8

// Integrity reasons.
const (
	// OverCount: more of this card than N decks hold (a foreign card, or a
	// card read twice).
	OverCount Reason = iota + 1
	// UnknownCode: an RFID/barcode code that is not a card of this shoe.
	UnknownCode
	// DuplicateCode: the same unique card code seen twice in one shoe.
	DuplicateCode
	// CodeMismatch: the code names another card than the one reported.
	CodeMismatch
	// CountMismatch: at SHOE_OUT, cards dealt plus cards returned is not
	// the composition (a short or padded deck).
	CountMismatch
)

var reasonNames = [...]string{"", "over count", "unknown code", "duplicate code", "code mismatch", "count mismatch"}

// String names the reason.
func (r Reason) String() string {
	if int(r) < len(reasonNames) && r != 0 {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// IntegrityError describes one integrity violation.
type IntegrityError struct {
	Reason Reason
	ShoeID string
	Card   card.Card // the offending card, when there is one
	Code   string    // the offending code, RFID/barcode shoes
	// Dealt, Returned and Want are the counts of a CountMismatch.
	Dealt, Returned, Want int
}

// Error implements error.
func (e *IntegrityError) Error() string {
	switch e.Reason {
	case CountMismatch:
		return fmt.Sprintf("shoereader: shoe %q: %d dealt + %d returned = %d cards, composition is %d",
			e.ShoeID, e.Dealt, e.Returned, e.Dealt+e.Returned, e.Want)
	case OverCount:
		return fmt.Sprintf("shoereader: shoe %q: %v: more than the shoe holds", e.ShoeID, e.Card)
	default:
		return fmt.Sprintf("shoereader: shoe %q: %v: card %v code %q", e.ShoeID, e.Reason, e.Card, e.Code)
	}
}

// Is makes errors.Is(err, ErrIntegrity) true.
func (e *IntegrityError) Is(target error) bool { return target == ErrIntegrity }

// ShuffleError says a shoe repeats a run of a previous shoe's order.
type ShuffleError struct {
	ShoeID     string
	PreviousID string
	// Run is the number of consecutive cards dealt in the same order as in
	// the previous shoe.
	Run int
}

// Error implements error.
func (e *ShuffleError) Error() string {
	return fmt.Sprintf("shoereader: shoe %q deals %d cards in the same order as shoe %q: not shuffled", e.ShoeID, e.Run, e.PreviousID)
}

// Is makes errors.Is(err, ErrNotShuffled) true.
func (e *ShuffleError) Is(target error) bool { return target == ErrNotShuffled }

// RefusedError says why a device was refused.
type RefusedError struct {
	Serial   string
	Firmware string
	Proto    uint8
	Why      string
}

// Error implements error.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("shoereader: device %q firmware %q (protocol %d) refused: %s", e.Serial, e.Firmware, e.Proto, e.Why)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// FaultError is a DEVICE_FAULT report.
type FaultError struct {
	Code uint16
	Text string
}

// Error implements error.
func (e *FaultError) Error() string {
	return fmt.Sprintf("shoereader: device fault 0x%04X: %s", e.Code, e.Text)
}

// Is makes errors.Is(err, ErrDeviceFault) true.
func (e *FaultError) Is(target error) bool { return target == ErrDeviceFault }
