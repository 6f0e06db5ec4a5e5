package shoereader

import (
	"context"
	"io"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/table/card"
)

// Port is what the reader needs from a serial port: a subset of
// go.bug.st/serial.Port, so tests pass an in-memory pipe
// (shoetest.Pipe) and cmd passes the real port (serialport.Open).
//
// SetReadTimeout bounds each Read; a Read that times out returns 0, nil,
// as go.bug.st/serial does. The reader relies on it to notice a cancelled
// context and an idle line.
type Port interface {
	io.ReadWriteCloser
	SetReadTimeout(t time.Duration) error
}

// Opener opens the shoe's port. The reader calls it again to reconnect, so
// it may look the device up anew each time (by USB serial number after a
// replug moved it to another /dev path).
type Opener func(ctx context.Context) (Port, error)

// Options configure a Reader. Zero fields take their DefaultOptions value.
type Options struct {
	// Decks is the number of 52-card decks in a shoe (default 8).
	Decks int
	// ReadTimeout bounds one port read (default 20ms). It is how quickly
	// the reader notices cancellation and flushes a frame cut short.
	ReadTimeout time.Duration
	// Heartbeat is the interval asked of the device in CONFIG (default 1s).
	Heartbeat time.Duration
	// SilenceTimeout is how long without any frame before a Silent event
	// (default 3 heartbeats).
	SilenceTimeout time.Duration
	// Window is the device's send window asked in CONFIG (default 8).
	Window int
	// BackoffMin and BackoffMax bound the delay between reconnection
	// attempts, doubled after each failure (defaults 100ms and 5s).
	BackoffMin, BackoffMax time.Duration
	// AllowSerials, when not empty, lists the only device serial numbers
	// accepted.
	AllowSerials []string
	// AllowFirmware, when not empty, lists the only firmware versions
	// accepted.
	AllowFirmware []string
	// CodeBook resolves an RFID/barcode code to its card. Nil means the
	// shoeproto card-code format with a deck number up to Decks.
	CodeBook func(code []byte) (card.Card, bool)
	// AckOnCommit delays each frame's ACK until the consumer has called
	// Reader.Commit for every event of the frame (after journaling them).
	// If the host dies in between, the device still holds the frame and
	// sends it again after the restart (its HELLO names the oldest frame
	// it holds), so no card is lost between the line and the journal; the
	// consumer drops what it had already journaled by Event.Session and Seq.
	AckOnCommit bool
	// Protocol is the shoe vendor's wire protocol (default ShoeProto, the
	// first vendor's: firmware-protocols/shoeproto).
	Protocol Protocol
	// Clock gives event times and drives the silence watchdog and the
	// reconnection backoff (default the real clock; tests pass a fake).
	Clock clockwork.Clock
}

// DefaultOptions returns the options for an 8-deck shoe.
func DefaultOptions() Options {
	return Options{
		Decks:          8,
		ReadTimeout:    20 * time.Millisecond,
		Heartbeat:      time.Second,
		SilenceTimeout: 3 * time.Second,
		Window:         8,
		BackoffMin:     100 * time.Millisecond,
		BackoffMax:     5 * time.Second,
	}
}

func (o *Options) ensureDefaults() {
	def := DefaultOptions()
	if o.Decks <= 0 {
		o.Decks = def.Decks
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = def.ReadTimeout
	}
	if o.Heartbeat <= 0 || o.Heartbeat > time.Minute {
		o.Heartbeat = def.Heartbeat
	}
	if o.SilenceTimeout <= 0 {
		o.SilenceTimeout = 3 * o.Heartbeat
	}
	if o.Window <= 0 || o.Window > 32 {
		o.Window = def.Window
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = def.BackoffMin
	}
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = max(def.BackoffMax, o.BackoffMin)
	}
	if o.CodeBook == nil {
		decks := o.Decks
		o.CodeBook = func(code []byte) (card.Card, bool) {
			deck, c, err := shoeproto.ParseCode(code)
			return c, err == nil && deck <= decks
		}
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Protocol == nil {
		o.Protocol = ShoeProto{}
	}
}
