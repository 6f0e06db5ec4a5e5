package shoereader

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table"
)

// Bridge hands the reader's events to the table, on the reader's own
// goroutine (RunFunc: no bridging goroutine, no wake-up more on a card's
// path): cards (with their RFID code), the cut card, shoe in and out and
// the shoe's id become table inputs; alarms (Kind.Alarm) become pausing
// table.DeviceAlarm inputs. Each frame is acknowledged to the shoe
// (Reader.Commit, with Options.AckOnCommit) once the table has journaled
// its input or refused it as a duplicate or by its rules, never when the
// journal failed or the daemon is stopping: the shoe then keeps the frame
// and sends it again.
type Bridge struct {
	// Reader is the reader whose frames are committed.
	Reader *Reader
	// Submit hands an input to the table and returns its verdict
	// (table.Controller.Submit).
	Submit func(context.Context, table.Input) error
	// Observe, when set, sees every event first (the health check, the
	// demo's cut-card sensor).
	Observe func(Event)
	// Log gets what is neither an input nor an alarm, and refusals.
	Log zerolog.Logger

	up bool // a device accepted on the connection, not lost or refused since
	// repeats counts each alarm kind's repeats the table coalesced
	// (table.ErrAlarmRepeated) since it last took one: the next one it
	// takes says how many.
	repeats map[Kind]int
}

// counted books the table's verdict on an alarm: a repeat it coalesced
// is counted (and logged at the 1st, 10th, 100th...: a flood must not
// flood the log either), one it took carries the count, now cleared.
func (b *Bridge) counted(k Kind, err error) {
	switch {
	case errors.Is(err, table.ErrAlarmRepeated):
		if b.repeats == nil {
			b.repeats = map[Kind]int{}
		}
		b.repeats[k]++
		if n := b.repeats[k]; isPowerOf10(n) {
			b.Log.Warn().Str("alarm", k.String()).Int("coalesced", n).Msg("shoe alarm repeated while the table is paused by it: coalesced")
		}
	case err == nil:
		delete(b.repeats, k)
	}
}

func isPowerOf10(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}

// Deliver is the consumer for Reader.RunFunc:
//
//	r.RunFunc(ctx, func(ev Event) { bridge.Deliver(ctx, ev) })
func (b *Bridge) Deliver(ctx context.Context, ev Event) {
	if b.Observe != nil {
		b.Observe(ev)
	}
	if ev.Kind == DeviceRefused {
		b.up = false
	}
	in, ok := ev.Input()
	switch {
	case ok:
	case ev.Kind.Alarm():
		msg := ev.String()
		if n := b.repeats[ev.Kind]; n > 0 {
			msg += fmt.Sprintf(" (and %d more like it since the last, coalesced)", n)
		}
		in = table.DeviceAlarm{Source: "shoe", Code: ev.Kind.String(), Message: msg, Pauses: true,
			Device: ev.Session, DeviceSeq: uint64(ev.Seq)}
	case ev.Kind == Disconnected:
		b.up = false
		b.Log.Info().Str("shoe", ev.Kind.String()).Msg(ev.String())
		return
	case ev.Kind == Connected || ev.Kind == Alive && b.up:
		// Alive on a new connection (or before the first) is its HELLO
		// heard, before the device is accepted or refused: Connected
		// says it is back. On an accepted connection it is a mute shoe
		// heard again.
		b.up = true
		// The table hears the shoe is back, which it needs after a
		// Silent (it refuses resume until then); one that was never
		// down is refused (table.ErrShoeUp) and journals nothing.
		in = table.DeviceAlarm{Source: "shoe", Code: ev.Kind.String(), Message: ev.String()}
		b.Log.Info().Str("shoe", ev.Kind.String()).Msg(ev.String())
	default:
		b.Log.Info().Str("shoe", ev.Kind.String()).Msg(ev.String())
		b.Reader.Commit(ev.Seq)
		return
	}
	err := b.Submit(ctx, in)
	if a, ok := in.(table.DeviceAlarm); ok && a.Pauses {
		b.counted(ev.Kind, err)
	}
	switch {
	case err == nil, errors.Is(err, table.ErrDuplicateFrame), errors.Is(err, table.ErrShoeUp), errors.Is(err, table.ErrAlarmRepeated):
	case ctx.Err() != nil:
		return // stopping: not acknowledged, the shoe keeps the frame
	case errors.Is(err, table.ErrJournal):
		// Not durable: no ACK, the shoe keeps the frame.
		b.Log.Error().Err(err).Msg("shoe input not journaled")
		return
	default:
		// Journaled and reported (a card that does not fit, an integrity
		// alarm), or refused by the rules: the table has decided.
		b.Log.Warn().Err(err).Str("input", in.Kind()).Msg("shoe input rejected")
	}
	b.Reader.Commit(ev.Seq)
}
