package shoe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/table/card"
)

// InjectNoise writes n random bytes on the line now, between frames.
func (d *Device) InjectNoise(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.port != nil && !d.silent {
		d.noiseLocked(n)
	}
}

// CorruptNext flips a bit in each of the next n frame transmissions.
func (d *Device) CorruptNext(n int) { d.mu.Lock(); d.corruptNext += n; d.mu.Unlock() }

// DropNext loses the next n frame transmissions.
func (d *Device) DropNext(n int) { d.mu.Lock(); d.dropNext += n; d.mu.Unlock() }

// DuplicateNext sends each of the next n frame transmissions twice.
func (d *Device) DuplicateNext(n int) { d.mu.Lock(); d.dupNext += n; d.mu.Unlock() }

// SetSilent stops (true) or resumes (false) all transmission, heartbeats
// included, as a hung firmware would. Frames queued meanwhile go out on
// resume.
func (d *Device) SetSilent(silent bool) {
	d.mu.Lock()
	d.silent = silent
	d.mu.Unlock()
}

// Unplug pulls the cable: the pty pair is closed and its path disappears.
// Unacknowledged frames are kept and sent again after Replug.
func (d *Device) Unplug() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.port == nil {
		return fmt.Errorf("%w: already unplugged", ErrUnplugged)
	}
	d.port.close()
	d.port = nil
	d.unlinkLocked()
	d.helloAcked = false
	return nil
}

// Replug plugs the cable back in: a new pty pair, usually under a new
// path (Options.Link follows it), and a HELLO that resumes the session.
func (d *Device) Replug() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if d.port != nil {
		return fmt.Errorf("%w: already plugged in", ErrUnplugged)
	}
	p, err := openPty()
	if err != nil {
		return err
	}
	if err := d.linkLocked(p.path); err != nil {
		p.close()
		return err
	}
	d.port = p
	d.portGen++
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return nil
}

// InjectForeign makes the next Pull deal c, a card that is not part of the
// shoe (with an RFID code of deck 99, which no shoe has).
func (d *Device) InjectForeign(c card.Card) { d.InjectCard(c, 99) }

// InjectCard makes the next Pull deal c, not from the shoe, with the RFID
// code of deck deck (an RFID shoe): a card of deck 1 already dealt comes
// out again with the same code, as a tag read twice or a cloned card would.
func (d *Device) InjectCard(c card.Card, deck int) {
	d.mu.Lock()
	d.foreign = append(d.foreign, injected{c, deck})
	d.mu.Unlock()
}

// injected is a card InjectCard put in front of the shoe.
type injected struct {
	card card.Card
	deck int
}

// Misread reports a card that passed unrecognised.
func (d *Device) Misread(ctx context.Context) error {
	return d.send(ctx, shoeproto.Message{Type: shoeproto.TypeMisread})
}

// PullMisread is the dealer pulling the next card past a sensor that
// cannot read it: the card leaves the shoe (SHOE_OUT's count no longer
// has it) and the host gets MISREAD instead of its frame. It returns the
// card, acknowledged: the one the supervisor corrects with. Misread
// alone reports a misread and keeps every card in the shoe, so a shoe
// that reported misreads came out with more cards than the table had
// seen dealt, and a table that booked the corrected cards raised a
// count mismatch at shoe out.
func (d *Device) PullMisread(ctx context.Context) (card.Card, error) {
	c, q, err := d.QueuePullMisread()
	if err != nil {
		return c, err
	}
	return c, q.Wait(ctx)
}

// QueuePullMisread is PullMisread without the wait: the misread is in
// the send queue when it returns.
func (d *Device) QueuePullMisread() (card.Card, Queued, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return card.Card{}, Queued{}, ErrClosed
	}
	if d.pos >= len(d.cards) {
		d.mu.Unlock()
		return card.Card{}, Queued{}, ErrShoeEmpty
	}
	now := time.Now()
	if !d.cutOut && d.pos >= d.cutAt {
		d.cutOut = true
		d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeCutCard}, now)
	}
	c := d.cards[d.pos]
	d.pos++
	if d.cutOut {
		d.afterCut++
	}
	d.dealt = append(d.dealt, c)
	p := d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeMisread}, now)
	d.mu.Unlock()
	return c, Queued{p}, nil
}

// DoubleCard reports two cards pulled at once.
func (d *Device) DoubleCard(ctx context.Context) error {
	return d.send(ctx, shoeproto.Message{Type: shoeproto.TypeDoubleCard})
}

// Jam reports a blocked card path.
func (d *Device) Jam(ctx context.Context) error {
	return d.send(ctx, shoeproto.Message{Type: shoeproto.TypeJam})
}

// QueueJam is Jam without the wait.
func (d *Device) QueueJam() (Queued, error) {
	return d.queue(shoeproto.Message{Type: shoeproto.TypeJam})
}

// FaceUp reports a card that came out face up (c may be the zero Card).
func (d *Device) FaceUp(ctx context.Context, c card.Card) error {
	return d.send(ctx, shoeproto.Message{Type: shoeproto.TypeFaceUp, Card: c})
}

// UnknownCard reports a tag the device does not recognise.
func (d *Device) UnknownCard(ctx context.Context, code string) error {
	return d.send(ctx, shoeproto.Message{Type: shoeproto.TypeUnknownCard, Code: []byte(code)})
}

// DeviceFault reports a hardware fault.
func (d *Device) DeviceFault(ctx context.Context, code uint16, text string) error {
	return d.send(ctx, shoeproto.Message{Type: shoeproto.TypeDeviceFault, FaultCode: code, Text: []byte(text)})
}

// WaitIdle returns once every frame sent so far is acknowledged.
func (d *Device) WaitIdle(ctx context.Context) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		d.mu.Lock()
		idle := len(d.outstanding) == 0 && len(d.waiting) == 0 && d.helloAcked
		d.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shoe: waiting for idle: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// LastWrite is when the device last started writing bytes to the pty: the
// start of the card path that BenchmarkPtyLatency times.
func (d *Device) LastWrite() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastWrite
}

// PowerGlitch is the shoe's power failing for a moment mid-shoe: the
// firmware restarts, loses what it held unacknowledged (its RAM: those
// frames' waits end with ErrReset), numbers from seq again (1 after a
// clean power-up, but any number is allowed), restarts its clock and says
// HELLO. A firmware that draws the same boot id at every power-up
// (keepBoot, against SPEC.md) claims the old session. The cards stay in
// the shoe, as physical cards do.
func (d *Device) PowerGlitch(seq uint32, keepBoot bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.dropAllLocked(ErrReset)
	d.nextSeq = max(seq, 1)
	if !keepBoot {
		d.bootID = rand.Uint32()
	}
	d.start = now
	d.helloAcked = false
	if d.port != nil {
		d.sendHelloLocked(now)
	}
}
