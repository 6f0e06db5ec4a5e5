package shoereader

import (
	"errors"
	"fmt"

	"github.com/livetable/livetable/table/card"
)

// ErrIntegrity is matched (errors.Is) by every *IntegrityError: a card's
// code is not a card of the shoe.
var ErrIntegrity = errors.New("shoereader: shoe integrity")

// ErrRefused is matched by every *RefusedError: the device is not on the
// allow-list or speaks another protocol version.
var ErrRefused = errors.New("shoereader: device refused")

// ErrSilent is the error of a Silent event: nothing heard from the shoe
// for longer than Options.SilenceTimeout.
var ErrSilent = errors.New("shoereader: shoe silent")

// ErrDeviceFault is matched by every *FaultError: the device reported a
// hardware fault.
var ErrDeviceFault = errors.New("shoereader: device fault")

// ErrDeviceChanged is the error of a DeviceChanged event: a shoe with
// another serial number took over the line mid-session.
var ErrDeviceChanged = errors.New("shoereader: another shoe connected")

// ErrStreamRestarted is wrapped by the RefusedError of a device that
// restarted its frame numbering under the boot id of the session it had
// (its firmware does not draw a new BOOT at power-up, against SPEC.md
// section 3): its new frames cannot be told from the ones already
// delivered under the same numbers, so nothing more it sends is taken.
var ErrStreamRestarted = errors.New("shoereader: device restarted its numbering under the same boot id")

// ErrRunTwice is returned by a second call of Reader.Run: the reader's
// session state belongs to one run.
var ErrRunTwice = errors.New("shoereader: Run called twice")

// Reason says which rule a card's code broke. The rules that need the
// shoe's history (a card beyond the composition, a code seen twice, the
// count at shoe out, the shuffle check) are the table's: table.Machine.
type Reason uint8

// Integrity reasons.
const (
	// UnknownCode: an RFID/barcode code that is not a card of this shoe.
	UnknownCode Reason = iota + 1
	// CodeMismatch: the code names another card than the one reported.
	CodeMismatch
)

var reasonNames = [...]string{"", "unknown code", "code mismatch"}

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
	Card   card.Card // the card read
	Code   string    // the offending code
}

// Error implements error.
func (e *IntegrityError) Error() string {
	return fmt.Sprintf("shoereader: %v: card %v code %q", e.Reason, e.Card, e.Code)
}

// Is makes errors.Is(err, ErrIntegrity) true.
func (e *IntegrityError) Is(target error) bool { return target == ErrIntegrity }

// RefusedError says why a device was refused.
type RefusedError struct {
	Serial   string
	Firmware string
	Proto    uint8
	Why      string
	// Err is the cause when it is one of this package's sentinels
	// (ErrStreamRestarted), nil for an allow-list or protocol refusal.
	Err error
}

// Error implements error.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("shoereader: device %q firmware %q (protocol %d) refused: %s", e.Serial, e.Firmware, e.Proto, e.Why)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Unwrap returns the cause, if any.
func (e *RefusedError) Unwrap() error { return e.Err }

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
