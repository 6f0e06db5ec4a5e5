// Package shoereader owns the card shoe's serial port and turns the
// shoe's byte stream (shoeproto's by default) into Event values; the table
// controller never sees bytes.
//
// # Port seam
//
// The reader takes an Opener that returns a Port (a subset of
// go.bug.st/serial.Port). The real opener is in the serialport subpackage
// and only cmd/* uses it: go.bug.st/serial and its USB enumerator find and
// configure the tty, and on Linux the bytes go through Go's runtime poller
// (no thread blocked per read, no descriptor limit); tests use shoetest's
// in-memory port or the simulated shoe's pty. Any error from Read or Write
// (serialport.ErrHangup when the device goes away) ends the connection;
// reconnecting is calling the Opener again, with exponential backoff.
//
// # Protocol seam
//
// What the bytes mean is a vendor's codec behind Protocol (Options.Protocol):
// a decoder of device messages and an encoder of ACK, NAK, RESEND and
// CONFIG. ShoeProto (firmware-protocols/shoeproto) is the first and the
// default; shoetest/lineproto, a line-of-text "vendor B", proves the seam
// through a real pty. firmware-protocols/ADDING-A-VENDOR.md lists the
// invariants a codec keeps and the tests to copy.
//
// # Delivery
//
// Each frame is acknowledged. The reader tracks the next device sequence
// number: a duplicate (the device missed an ACK) is dropped and re-ACKed,
// a gap is answered with RESEND, a damaged frame with NAK, so every card is
// delivered exactly once and in order, across reconnections too (the
// session survives a replug when the device's HELLO has the same serial
// number and boot id). Garbage, CRC errors and truncated frames are logged
// and skipped. A frame that arrives malformed MaxMalformed times (the
// device sends the same bytes again) is acknowledged and given up as an
// alarm, Misread for a card's frame, DeviceFault for another's: one
// unreadable payload no longer holds every later card back. A silence watchdog (Options.SilenceTimeout, on
// Options.Clock) raises Silent, then Alive when the shoe is heard again.
//
// # Events
//
// Run sends Event values on its channel and closes it when it returns.
// Event.Input converts the ones the table needs into table inputs (Card to
// table.CardDrawn with its RFID code, CutCard to table.CutCardSeen,
// ShoeIn and ShoeOut with the count returned to table.ShoeIn and
// table.ShoeOut, ShoeID to table.ShoeChanged); Kind.Alarm tells which must
// pause the table (IntegrityAlarm, DeviceRefused, DeviceFault, Silent and
// the card events that leave a card unknown: Misread, DoubleCard, Jam,
// FaceUp, UnknownCard). The reader's own cost is about 1 µs and no
// allocation per card (BenchmarkReaderCards); through a pty its p99
// latency is within 1.2x of a bare read loop's (BenchmarkPtyLatency).
//
// # No game state
//
// The reader is a transport and codec: frames in, cards with their RFID
// code out, ACKs. It checks what a single frame shows (an RFID/barcode
// code that is no card of Options.Decks decks, Options.CodeBook, or that
// names another card: IntegrityAlarm instead of Card) and remembers
// nothing about the shoe. The checks that need the shoe's history (a card
// beyond the composition, the same code twice, dealt plus returned at
// SHOE_OUT, the shuffle check against the last shoes) are the table's
// state machine's (table.Machine): every card reaches it as a journaled
// input, so a restart continues them exactly where they were, which the
// reader's memory could not (nine A♠ of an 8-deck shoe passed when five
// came before a restart).
//
// # Allow-list
//
// Options.AllowSerials and Options.AllowFirmware restrict which devices
// are accepted. A refused device gets one DeviceRefused event with a
// *RefusedError; nothing it sends is acknowledged or delivered until an
// allowed device says HELLO.
package shoereader
