// Package shoereader owns the card shoe's serial port and turns the
// shoeproto byte stream into Event values; the table controller never sees
// bytes.
//
// # Port seam
//
// The reader takes an Opener that returns a Port (a subset of
// go.bug.st/serial.Port). The real opener, over go.bug.st/serial and its
// USB enumerator, is in the serialport subpackage and only cmd/* uses it;
// tests use shoetest's in-memory port or the simulated shoe's pty.
// Reconnecting is calling the Opener again, with exponential backoff.
//
// # Delivery
//
// Each frame is acknowledged. The reader tracks the next device sequence
// number: a duplicate (the device missed an ACK) is dropped and re-ACKed,
// a gap is answered with RESEND, a damaged frame with NAK, so every card is
// delivered exactly once and in order, across reconnections too (the
// session survives a replug when the device's HELLO has the same serial
// number and boot id). Garbage, CRC errors and truncated frames are logged
// and skipped. A silence watchdog (Options.SilenceTimeout, on
// Options.Clock) raises Silent, then Alive when the shoe is heard again.
//
// # Events
//
// Run sends Event values on its channel and closes it when it returns.
// Event.Input converts the ones the round needs into table inputs (Card to
// table.CardDrawn, CutCard to table.CutCardSeen, ShoeID to
// table.ShoeChanged); Kind.Alarm tells which must pause the table
// (IntegrityAlarm, ShuffleAlarm, DeviceRefused, DeviceFault, Silent and the
// card events that leave a card unknown: Misread, DoubleCard, Jam, FaceUp,
// UnknownCard). The reader's own cost is about 1 µs and no allocation per
// card (BenchmarkReaderCards); through a pty its p99 latency is within
// 1.2x of a bare read loop's (BenchmarkPtyLatency).
//
// # Integrity
//
// Every card is checked against the composition of Options.Decks decks: a
// card beyond its count, an RFID/barcode code that is not a card of this
// shoe (Options.CodeBook), a code naming another card, or the same code
// twice in one shoe raises IntegrityAlarm instead of Card. At SHOE_OUT,
// cards dealt plus cards returned must equal Decks x 52, else
// IntegrityAlarm: this is the check that catches a short deck.
//
// # Shuffle check
//
// The dealing order of the shoe in play is compared, card by card, with
// the last Options.ShuffleHistory finished shoes. A run is a stretch of
// consecutive cards dealt in the same order as somewhere in an old shoe;
// a run of Options.ShuffleRun cards raises ShuffleAlarm.
//
// The threshold comes from the false-alarm rate of properly shuffled
// shoes. With n = 52·D cards, a new card matches D positions of an old
// shoe, and each alignment continues to the next card with probability
// about q = D/(n−1) (the next new card must be the same rank and suit as the
// old shoe's next card). So the expected number of runs of length L or
// more between two random shoes is about n·D·q^(L−1), and per new shoe,
// compared with H old ones, H·n·D·q^(L−1) (ShuffleFalseAlarmRate).
// For D = 8, H = 4:
//
//	L = 5   1.8e-3 per shoe   (a false alarm every ~550 shoes: a few days)
//	L = 6   3.5e-5 per shoe   (every ~28,000 shoes: about 1.5 years at 50 shoes/day)
//	L = 7   6.8e-7 per shoe   (every ~1.5 million shoes: decades per table)
//
// We use L = 7. An unshuffled shoe repeats its predecessor entirely, so it
// is caught at the 7th card, inside the first round; a partial or
// "strip-only" shuffle that leaves runs of 7 or more is caught as well.
// A test checks the formula against seeded random shoes.
//
// # Allow-list
//
// Options.AllowSerials and Options.AllowFirmware restrict which devices
// are accepted. A refused device gets one DeviceRefused event with a
// *RefusedError; nothing it sends is acknowledged or delivered until an
// allowed device says HELLO.
package shoereader
