package shoe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/table/card"
)

// ErrShoeEmpty is returned by Pull when every card of the shoe has been
// dealt; call NewShoe.
var ErrShoeEmpty = errors.New("shoe: shoe is empty")

// ErrClosed is returned by calls on a Device after Close.
var ErrClosed = errors.New("shoe: device closed")

// ErrReset is returned to callers waiting for an acknowledgement when the
// device dropped its queue: the host sent RESET, or the power glitched
// (PowerGlitch).
var ErrReset = errors.New("shoe: frame dropped by a RESET or a power glitch")

// ErrRunTwice is returned by a second call of Run.
var ErrRunTwice = errors.New("shoe: Run called twice")

// ErrUnplugged is returned by Replug when the device is plugged in and by
// Unplug when it is not.
var ErrUnplugged = errors.New("shoe: cable state")

// Options configure a simulated shoe. The zero value of a field means its
// default (see DefaultOptions).
type Options struct {
	// Decks is the number of 52-card decks in a shoe (default 8).
	Decks int
	// Seed seeds the PCG generator that shuffles every shoe and makes the
	// line noise, so a run is reproducible.
	Seed uint64
	// Script, when set, is stacked on top of the first shoe: those cards
	// come out first, in order, and the rest of the composition follows
	// shuffled. It must fit in the composition of Decks decks.
	Script []card.Card
	// Penetration is the fraction of the shoe dealt before the cut card
	// comes out (default 0.75).
	Penetration float64
	// RFID makes the device an RFID shoe: every CARD carries the card's
	// unique code (shoeproto card-code format) and confidence 100.
	RFID bool

	// Vendor, Model, Serial and Firmware are sent in HELLO.
	Vendor, Model, Serial, Firmware string

	// Heartbeat is the idle interval after which the device sends HEARTBEAT
	// (default 1s; the host may change it with CONFIG).
	Heartbeat time.Duration
	// Retransmit is how long the device waits for an ACK before sending
	// its unacknowledged frames again (default 100ms).
	Retransmit time.Duration
	// Window is the most frames outstanding without ACK (default 8).
	Window int

	// Rate, when positive, makes Run pull cards by itself at this many
	// cards per second, changing shoe after the cut card.
	Rate float64
	// Fast makes Run pull cards by itself as fast as they are acknowledged.
	Fast bool
	// AfterCut is how many cards Run deals after the cut card before it
	// changes shoe in automatic mode (default 6: the round in play ends).
	AfterCut int

	// Link, when set, is a symbolic link the device keeps to its pty's
	// path while plugged in, removed while unplugged, as the udev rule
	// (deploy/udev) keeps /dev/livetable-shoe-t1 for a USB shoe: a
	// replug usually gives the pty a new path, the link stays, and a
	// table configured with the link finds the shoe again.
	Link string

	// Faults are injected for the whole run; the Device methods inject
	// them one at a time.
	Faults Faults

	// Resume, when set, puts a shoe already in play back in the device,
	// as a physical shoe keeps its cards across a restart of the host: no
	// SHOE_IN or SHOE_ID is announced (the table knows the shoe), and the
	// next card pulled is Resume.Cards[Resume.Dealt]. Script is ignored.
	Resume *Resume
	// OnShoe, when set, is called with every shoe the device loads (its
	// number and whole order), under the device's lock: it must not call
	// the Device. The demo saves the order, to resume the shoe after a
	// restart.
	OnShoe func(number int, cards []card.Card)
}

// Faults are line and device faults injected continuously. For the line
// faults "every N" means one transmission in N on average, drawn from the
// seeded generator, so a run is reproducible; the card faults count cards.
type Faults struct {
	// NoiseEvery writes NoiseBytes random bytes before every Nth frame.
	NoiseEvery int
	NoiseBytes int
	// CorruptEvery flips a bit in every Nth frame sent.
	CorruptEvery int
	// DropEvery loses every Nth frame sent.
	DropEvery int
	// DuplicateEvery sends every Nth frame twice.
	DuplicateEvery int
	// ShortDeck secretly removes this many cards from every shoe.
	ShortDeck int
	// Unshuffled makes every new shoe repeat the previous shoe's order.
	Unshuffled bool
	// MisreadEvery, DoubleCardEvery and JamEvery report that event after
	// every Nth card pulled; ForeignEvery makes the pull after every Nth
	// deal a card from outside the shoe (any card of a 52-card deck,
	// logged as foreign; the shoe keeps its own cards). With RFID its code
	// is of deck 99, which no shoe has: the reader raises an integrity
	// alarm at once. Without, it looks like the shoe's own card of that
	// face: the table finds it when it is one more of that card than the
	// decks hold (over count) or at SHOE_OUT (more cards dealt and
	// returned than the shoe held).
	MisreadEvery, DoubleCardEvery, JamEvery, ForeignEvery int
	// SilenceEvery, when positive, makes Run fall silent for SilenceFor at
	// this interval.
	SilenceEvery, SilenceFor time.Duration
	// UnplugEvery, when positive, makes Run unplug the cable for UnplugFor
	// at this interval (a new pty path each time).
	UnplugEvery, UnplugFor time.Duration
}

// DefaultOptions returns the options of an 8-deck optical shoe.
func DefaultOptions() Options {
	return Options{
		Decks:       8,
		Seed:        1,
		Penetration: 0.75,
		Vendor:      "Livetable",
		Model:       "SIM-1",
		Serial:      "SIM0001",
		Firmware:    "1.0.0",
		Heartbeat:   time.Second,
		Retransmit:  100 * time.Millisecond,
		Window:      8,
		AfterCut:    6,
	}
}

func (o *Options) ensureDefaults() {
	def := DefaultOptions()
	if o.Decks <= 0 {
		o.Decks = def.Decks
	}
	if o.Penetration <= 0 || o.Penetration > 1 {
		o.Penetration = def.Penetration
	}
	if o.Vendor == "" {
		o.Vendor = def.Vendor
	}
	if o.Model == "" {
		o.Model = def.Model
	}
	if o.Serial == "" {
		o.Serial = def.Serial
	}
	if o.Firmware == "" {
		o.Firmware = def.Firmware
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = def.Heartbeat
	}
	if o.Retransmit <= 0 {
		o.Retransmit = def.Retransmit
	}
	if o.Window <= 0 || o.Window > 32 {
		o.Window = def.Window
	}
	if o.AfterCut <= 0 {
		o.AfterCut = def.AfterCut
	}
}

// pending is one sequenced frame waiting to be sent or acknowledged.
type pending struct {
	seq   uint32
	frame []byte
	done  chan struct{} // closed when acknowledged or dropped
	acked time.Time     // when the host's ACK was read; set before done is closed
	err   error         // set before done is closed when dropped
}

// Device is a simulated card shoe on a pseudo-terminal: the device side of
// the shoeproto protocol, with fault injection. Create it with New, start
// Run, give Path to the reader, and pull cards with Pull.
type Device struct {
	opts  Options
	log   zerolog.Logger
	start time.Time
	wake  chan struct{} // pokes Run after a replug
	// running makes a second Run fail instead of serving the pty twice.
	running atomic.Bool

	mu sync.Mutex
	// mu guards the following.
	port         *ptyPair // nil while unplugged
	portGen      int      // incremented at every plug-in
	closed       bool
	rng          *rand.Rand
	bootID       uint32
	nextSeq      uint32
	outstanding  []*pending // sent, not acknowledged, oldest first
	waiting      []*pending // not yet sent: the window is full or no session
	helloAcked   bool
	lastHello    time.Time
	lastSent     time.Time
	oldestSent   time.Time // when outstanding[0] was last (re)transmitted
	heartbeat    time.Duration
	window       int
	silent       bool
	dropNext     int
	corruptNext  int
	dupNext      int
	shoeNo       int
	cards        []card.Card // the shoe in play
	decks        []uint8     // deck number of each card, for RFID codes
	pos          int         // next card to deal
	cutAt        int
	cutOut       bool
	shoeIn       bool
	prevOrder    []card.Card
	foreign      []injected
	dealt        []card.Card
	afterCut     int
	pulled       int
	lastWrite    time.Time
	lastGoBack   uint32
	lastGoBackAt time.Time
}

// New opens a pseudo-terminal pair and prepares the first shoe. The
// device sends nothing until Run starts.
func New(opts Options, log zerolog.Logger) (*Device, error) {
	opts.ensureDefaults()
	for _, s := range []string{opts.Vendor, opts.Model, opts.Serial, opts.Firmware} {
		if len(s) > shoeproto.MaxString-8 {
			return nil, fmt.Errorf("shoe: HELLO field %q over %d bytes", s, shoeproto.MaxString-8)
		}
	}
	d := &Device{
		opts:      opts,
		log:       log.With().Str("component", "shoesim").Logger(),
		start:     time.Now(),
		wake:      make(chan struct{}, 1),
		rng:       rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5EED)),
		nextSeq:   1,
		heartbeat: opts.Heartbeat,
		window:    opts.Window,
	}
	// BOOT is random per power-up (SPEC.md), not derived from the seed:
	// a restarted simulator is a new device session, or the host would
	// take its new frames for ones it already has. The seeded draw is
	// kept so a seed still gives the same shoes.
	_ = d.rng.Uint32()
	d.bootID = rand.Uint32()
	var cards []card.Card
	if r := opts.Resume; r != nil {
		if err := r.check(opts.Decks); err != nil {
			return nil, err
		}
	} else {
		var err error
		if cards, err = d.buildShoeLocked(opts.Script); err != nil {
			return nil, err
		}
	}
	p, err := openPty()
	if err != nil {
		return nil, err
	}
	if err := d.linkLocked(p.path); err != nil {
		p.close()
		return nil, err
	}
	d.port = p
	d.portGen = 1
	if r := opts.Resume; r != nil {
		d.resumeShoeLocked(*r)
	} else {
		d.loadShoeLocked(cards)
	}
	return d, nil
}

// Path is the slave tty path the reader opens (it changes after Replug,
// as a USB adapter's /dev path can).
func (d *Device) Path() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.port == nil {
		return ""
	}
	return d.port.path
}

// Close unplugs the device for good and releases the pty. It is safe to
// call more than once and while Run is running (Run then idles until its
// context ends).
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.port != nil {
		d.port.close()
		d.port = nil
	}
	d.unlinkLocked()
	d.dropAllLocked(ErrClosed)
	return nil
}

// Run serves the protocol until ctx is done: it reads the host's frames,
// retransmits, sends heartbeats and, in automatic mode, deals. It returns
// ctx.Err() once every goroutine it started has stopped.
func (d *Device) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var readers []*ptyPair
	defer func() {
		// Wake the read loops: a past deadline fails their blocked Read.
		for _, p := range readers {
			_ = p.master.SetReadDeadline(time.Unix(1, 0))
		}
	}()

	if d.opts.Rate > 0 || d.opts.Fast {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.autoDeal(ctx)
		}()
	}

	// A quarter of the retransmission timeout is precise enough for
	// retransmits and heartbeats, and wakes the loop rarely.
	tick := time.NewTicker(max(d.opts.Retransmit/4, time.Millisecond))
	defer tick.Stop()
	served := 0
	sched := newSchedule(d.opts.Faults, time.Now())
	for {
		sched.run(d, time.Now())
		d.mu.Lock()
		if d.port != nil && d.portGen != served {
			served = d.portGen
			p := d.port
			readers = append(readers, p)
			d.sendHelloLocked(time.Now())
			// Cleared here, not in readLoop: a Run cancelled before the
			// new goroutine first ran would have its wake-up deadline
			// cleared after it was set, and wait for that Read for ever.
			_ = p.master.SetReadDeadline(time.Time{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.readLoop(p)
			}()
		}
		d.tickLocked(time.Now())
		d.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		case <-d.wake:
		}
	}
}

// readLoop decodes the host's frames from one plugged-in pty until it is
// closed.
func (d *Device) readLoop(p *ptyPair) {
	var dec shoeproto.Decoder
	var m shoeproto.Message
	buf := make([]byte, 1024)
	for {
		n, err := p.master.Read(buf)
		if err != nil {
			return
		}
		dec.Feed(buf[:n], func(f shoeproto.Frame, err error) {
			if err != nil {
				d.log.Debug().Err(err).Msg("bad host frame")
				return
			}
			if err := m.Unmarshal(f); err != nil {
				d.log.Debug().Err(err).Msg("bad host message")
				return
			}
			d.mu.Lock()
			d.handleHostLocked(&m, time.Now())
			d.mu.Unlock()
		})
	}
}

func (d *Device) handleHostLocked(m *shoeproto.Message, now time.Time) {
	switch m.Type {
	case shoeproto.TypeAck:
		first := !d.helloAcked
		d.helloAcked = true
		d.ackLocked(m.Seq, now)
		// The ACK of a HELLO opens the session: whatever is outstanding
		// was sent to a host that may never have seen it.
		if first && len(d.outstanding) > 0 {
			d.retransmitLocked(d.outstanding[0].seq, now)
		}
		d.fillWindowLocked(now)
	case shoeproto.TypeNak, shoeproto.TypeResend:
		if !d.helloAcked || m.Seq == 0 {
			return // sequence numbers start at 1; 0 would acknowledge everything
		}
		d.ackLocked(m.Seq-1, now)
		// A host sees several frames after one gap and may ask for the
		// same resend more than once; one go-back-N per timeout is enough.
		if m.Seq == d.lastGoBack && now.Sub(d.lastGoBackAt) < d.opts.Retransmit/2 {
			return
		}
		d.lastGoBack, d.lastGoBackAt = m.Seq, now
		d.retransmitLocked(m.Seq, now)
	case shoeproto.TypeConfig:
		if m.HeartbeatMS > 0 {
			d.heartbeat = time.Duration(m.HeartbeatMS) * time.Millisecond
		}
		if m.Window >= 1 && m.Window <= 32 {
			d.window = int(m.Window)
		}
		d.helloAcked = false
		d.sendHelloLocked(now)
	case shoeproto.TypeReset:
		d.dropAllLocked(ErrReset)
		d.nextSeq = 1
		d.bootID = rand.Uint32()
		d.helloAcked = false
		d.sendHelloLocked(now)
	}
}

// ackLocked releases every outstanding frame up to and including seq.
func (d *Device) ackLocked(seq uint32, now time.Time) {
	i := 0
	for i < len(d.outstanding) && d.outstanding[i].seq <= seq {
		d.outstanding[i].acked = now
		close(d.outstanding[i].done)
		i++
	}
	if i > 0 {
		d.outstanding = append(d.outstanding[:0], d.outstanding[i:]...)
		d.oldestSent = now
	}
}

func (d *Device) dropAllLocked(err error) {
	for _, q := range [][]*pending{d.outstanding, d.waiting} {
		for _, p := range q {
			p.err = err
			close(p.done)
		}
	}
	d.outstanding, d.waiting = nil, nil
}

// retransmitLocked sends outstanding frames from seq on again (go-back-N).
func (d *Device) retransmitLocked(seq uint32, now time.Time) {
	for _, p := range d.outstanding {
		if p.seq >= seq {
			d.transmitLocked(p.frame, now)
		}
	}
	d.oldestSent = now
}

func (d *Device) fillWindowLocked(now time.Time) {
	if !d.helloAcked {
		return
	}
	for len(d.waiting) > 0 && len(d.outstanding) < d.window {
		p := d.waiting[0]
		d.waiting = d.waiting[1:]
		if len(d.outstanding) == 0 {
			d.oldestSent = now
		}
		d.outstanding = append(d.outstanding, p)
		d.transmitLocked(p.frame, now)
	}
}

func (d *Device) tickLocked(now time.Time) {
	if d.closed || d.port == nil {
		return
	}
	if !d.helloAcked {
		if now.Sub(d.lastHello) >= d.opts.Retransmit {
			d.sendHelloLocked(now)
		}
		return
	}
	if len(d.outstanding) > 0 && now.Sub(d.oldestSent) >= d.opts.Retransmit {
		d.retransmitLocked(d.outstanding[0].seq, now)
	}
	if len(d.outstanding) == 0 && len(d.waiting) == 0 && now.Sub(d.lastSent) >= d.heartbeat {
		var flags uint8
		if d.shoeIn {
			flags = shoeproto.FlagShoeIn
		}
		d.enqueueLocked(shoeproto.Message{Type: shoeproto.TypeHeartbeat, Flags: flags}, now)
	}
}

func (d *Device) sendHelloLocked(now time.Time) {
	seq := d.nextSeq
	if len(d.outstanding) > 0 {
		seq = d.outstanding[0].seq
	} else if len(d.waiting) > 0 {
		seq = d.waiting[0].seq
	}
	m := shoeproto.Message{
		Type: shoeproto.TypeHello, Time: d.millis(now), BootID: d.bootID, Proto: shoeproto.ProtocolVersion,
		Vendor: []byte(d.opts.Vendor), Model: []byte(d.opts.Model),
		Serial: []byte(d.opts.Serial), Firmware: []byte(d.opts.Firmware),
	}
	frame, err := shoeproto.AppendMessage(nil, seq, &m)
	if err != nil {
		d.log.Error().Err(err).Msg("encode HELLO")
		return
	}
	d.lastHello = now
	d.transmitLocked(frame, now)
}

func (d *Device) millis(now time.Time) uint32 { return uint32(now.Sub(d.start).Milliseconds()) }

// enqueueLocked numbers m, queues it and sends it if the window allows.
func (d *Device) enqueueLocked(m shoeproto.Message, now time.Time) *pending {
	m.Time = d.millis(now)
	p := &pending{seq: d.nextSeq, done: make(chan struct{})}
	frame, err := shoeproto.AppendMessage(nil, p.seq, &m)
	if err != nil {
		// Only an over-long string can fail; options are checked in New.
		p.err = err
		close(p.done)
		return p
	}
	d.nextSeq++
	p.frame = frame
	d.waiting = append(d.waiting, p)
	d.fillWindowLocked(now)
	return p
}

// transmitLocked writes one frame through the configured line faults.
func (d *Device) transmitLocked(frame []byte, now time.Time) {
	d.lastSent = now
	if d.silent || d.port == nil {
		return
	}
	f := d.opts.Faults
	// Drawn from the seeded generator rather than counted, so a fault
	// never falls in step with the retransmission cycle and always hits
	// the same frame.
	every := func(n int) bool { return n > 0 && d.rng.IntN(n) == 0 }
	if every(f.DropEvery) || d.dropNext > 0 {
		if d.dropNext > 0 {
			d.dropNext--
		}
		return
	}
	if every(f.NoiseEvery) {
		d.noiseLocked(max(f.NoiseBytes, 1))
	}
	out := frame
	if every(f.CorruptEvery) || d.corruptNext > 0 {
		if d.corruptNext > 0 {
			d.corruptNext--
		}
		out = append([]byte(nil), frame...)
		i := shoeproto.HeaderLen + d.rng.IntN(len(out)-shoeproto.HeaderLen)
		out[i] ^= 1 << d.rng.IntN(8)
	}
	d.writeLocked(out)
	if every(f.DuplicateEvery) || d.dupNext > 0 {
		if d.dupNext > 0 {
			d.dupNext--
		}
		d.writeLocked(out)
	}
}

func (d *Device) noiseLocked(n int) {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(d.rng.UintN(256))
	}
	d.writeLocked(b)
}

func (d *Device) writeLocked(b []byte) {
	d.lastWrite = time.Now()
	if err := d.port.write(b); err != nil {
		d.log.Debug().Err(err).Msg("write")
	}
}

// send queues m and waits until the host acknowledges it.
func (d *Device) send(ctx context.Context, m shoeproto.Message) error {
	q, err := d.queue(m)
	if err != nil {
		return err
	}
	return q.Wait(ctx)
}

// queue puts m in the send queue.
func (d *Device) queue(m shoeproto.Message) (Queued, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return Queued{}, ErrClosed
	}
	return Queued{d.enqueueLocked(m, time.Now())}, nil
}

func wait(ctx context.Context, p *pending) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("shoe: waiting for ACK of seq %d: %w", p.seq, ctx.Err())
	}
}

// linkLocked points Options.Link at path, replacing what was there in one
// rename so a reader never finds the link missing or dangling half-way.
func (d *Device) linkLocked(path string) error {
	if d.opts.Link == "" {
		return nil
	}
	tmp := d.opts.Link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(path, tmp); err != nil {
		return fmt.Errorf("shoe: link: %w", err)
	}
	if err := os.Rename(tmp, d.opts.Link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("shoe: link: %w", err)
	}
	return nil
}

// unlinkLocked removes Options.Link: the cable is out, as udev removes
// the device's link.
func (d *Device) unlinkLocked() {
	if d.opts.Link == "" {
		return
	}
	if err := os.Remove(d.opts.Link); err != nil && !os.IsNotExist(err) {
		d.log.Warn().Err(err).Msg("remove link")
	}
}
