package shoereader

import (
	"fmt"
	"time"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// Kind is what an Event reports.
type Kind uint8

// Event kinds. The first group mirrors the shoe's messages; the second is
// the reader's own findings.
const (
	// Card: a card was dealt and passed the integrity check.
	Card Kind = iota + 1
	// CutCard: the cut card came out.
	CutCard
	// ShoeIn: a loaded shoe was inserted; a new shoe begins.
	ShoeIn
	// ShoeOut: the shoe was removed; Returned holds the cards left in it.
	ShoeOut
	// ShoeID: the identifier of the shuffled set now in play.
	ShoeID
	// Misread: a card passed unrecognised, or its frame stayed malformed
	// (Err is a *MalformedError, Reader's MaxMalformed).
	Misread
	// DoubleCard: two cards passed at once.
	DoubleCard
	// Jam: the card path is blocked.
	Jam
	// FaceUp: a card came out face up (Card is set when it was read).
	FaceUp
	// UnknownCard: the device read a tag it does not know (Code).
	UnknownCard
	// DeviceFault: the device reported a hardware fault (Err is a
	// *FaultError), or a frame other than a card's stayed malformed
	// (Err is a *MalformedError; a card's is a Misread).
	DeviceFault

	// Connected: a device said HELLO on a new connection and was accepted.
	Connected
	// Disconnected: the port failed or closed; the reader reconnects.
	Disconnected
	// Silent: nothing heard for Options.SilenceTimeout.
	Silent
	// Alive: the shoe is heard again after Silent.
	Alive
	// IntegrityAlarm: a card's RFID code is no card of the shoe, or names
	// another card (Err is an *IntegrityError). The card is not delivered
	// as Card. The checks that need memory are the table's (table.Machine).
	IntegrityAlarm
	// DeviceRefused: the device is not allowed (Err is a *RefusedError);
	// nothing it sends is delivered.
	DeviceRefused
	// DeviceChanged: a shoe with another serial number said HELLO where
	// another had a session (Device is the new one, Err ErrDeviceChanged):
	// a shoe swapped at the table, whose cards may belong to no shoe the
	// table knows. An alarm: the table pauses until a supervisor has
	// checked which shoe deals.
	DeviceChanged
)

var kindNames = [...]string{"", "card", "cut_card", "shoe_in", "shoe_out", "shoe_id", "misread",
	"double_card", "jam", "face_up", "unknown_card", "device_fault", "connected", "disconnected",
	"silent", "alive", "integrity_alarm", "device_refused", "device_changed"}

// String names the kind in snake case ("card", "integrity_alarm").
func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Alarm reports whether the kind must stop the game until a supervisor
// looks: the reader's alarms (a bad code, refused device, silence),
// a device fault, and every card event that leaves the round without a
// known card (misread, double card, jam, face-up, unknown card).
// Disconnected is not an alarm by itself: a replug within the silence
// timeout is harmless, and a longer one raises Silent.
func (k Kind) Alarm() bool {
	switch k {
	case IntegrityAlarm, DeviceRefused, DeviceChanged, DeviceFault, Silent,
		Misread, DoubleCard, Jam, FaceUp, UnknownCard:
		return true
	}
	return false
}

// DeviceInfo is what a shoe says about itself in HELLO.
type DeviceInfo struct {
	Vendor, Model, Serial, Firmware string
	Proto                           uint8
	BootID                          uint32
}

// Event is the reader's output: the controller never sees bytes.
type Event struct {
	Kind Kind
	// Time is when the reader handled it (Options.Clock).
	Time time.Time
	// Seq is the device's frame sequence number, 0 for the reader's own
	// events (Connected, Silent...).
	Seq uint32
	// DeviceTime is the device's clock in milliseconds since power-up.
	DeviceTime uint32
	// Card is set for Card, FaceUp and IntegrityAlarm on a card.
	Card card.Card
	// Confidence is the optical recognition's confidence, 0..100.
	Confidence uint8
	// Code is the card's unique RFID/barcode code, when the shoe reads one.
	Code string
	// ShoeID is the shuffled set's id, on ShoeID.
	ShoeID string
	// Returned is the cards left in the shoe at ShoeOut.
	Returned int
	// Device is set on Connected and DeviceRefused.
	Device DeviceInfo
	// Err is the typed cause of an alarm or a disconnection.
	Err error
	// Message is a sentence for the dealer's console and the log.
	Message string
	// Session identifies the device session ("serial/boot"): Seq numbers
	// are unique within it, so a consumer can drop a frame it has already
	// journaled when the device sends it again after a host restart.
	Session string
}

// String is a one-line summary for logs and consoles.
func (e Event) String() string {
	s := e.Kind.String()
	if e.Seq != 0 {
		s += fmt.Sprintf(" #%d", e.Seq)
	}
	if e.Card.Valid() {
		s += " " + e.Card.String()
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Input converts the events the table needs into table inputs: Card to
// CardDrawn (with its RFID code), CutCard to CutCardSeen, ShoeIn, ShoeOut
// (with the count returned) and ShoeID to ShoeChanged. ok is false for
// every other kind; alarms are for the caller to submit as
// table.DeviceAlarm.
func (e Event) Input() (in table.Input, ok bool) {
	switch e.Kind {
	case Card:
		return table.CardDrawn{Card: e.Card, DeviceSeq: uint64(e.Seq), DeviceTimeMS: int64(e.DeviceTime), Device: e.Session, Code: e.Code}, true
	case CutCard:
		return table.CutCardSeen{Source: "shoe", Device: e.Session, DeviceSeq: uint64(e.Seq)}, true
	case ShoeIn:
		return table.ShoeIn{Device: e.Session, DeviceSeq: uint64(e.Seq)}, true
	case ShoeOut:
		return table.ShoeOut{Returned: e.Returned, Device: e.Session, DeviceSeq: uint64(e.Seq)}, true
	case ShoeID:
		return table.ShoeChanged{ShoeID: e.ShoeID, Device: e.Session, DeviceSeq: uint64(e.Seq)}, true
	}
	return nil, false
}
