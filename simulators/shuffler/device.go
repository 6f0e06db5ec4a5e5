package shuffler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	"github.com/livetable/livetable/shuffler/pinmap"
	simgpio "github.com/livetable/livetable/simulators/gpio"
)

// Fault is a way for the simulated device to misbehave.
type Fault uint8

// The faults.
const (
	// NoFault: the device behaves.
	NoFault Fault = iota
	// SlowShuffle: shuffles take Options.SlowShuffleTime.
	SlowShuffle
	// NeverReady: shuffles never finish.
	NeverReady
	// LostAck: swaps happen but swap_done is never asserted.
	LostAck
	// ShoePulledEarly: the shoe in play leaves the slot
	// Options.PullEarlyAfter after it was seated.
	ShoePulledEarly
	// WrongCount: reports give one card less than Options.Cards.
	WrongCount
)

var faultNames = [...]string{"NoFault", "SlowShuffle", "NeverReady", "LostAck", "ShoePulledEarly", "WrongCount"}

// String implements fmt.Stringer.
func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", uint8(f))
}

// Options configures a Device. A zero duration or count means its default.
type Options struct {
	// Poll is how often the device looks at swap_request (default 10ms).
	Poll time.Duration
	// ShuffleTime is one shuffle (default 90s).
	ShuffleTime time.Duration
	// SlowShuffleTime is one shuffle under SlowShuffle (default 4m).
	SlowShuffleTime time.Duration
	// PullTime is when the shoe in play leaves the slot after the swap
	// starts (default 2s).
	PullTime time.Duration
	// SwapTime is when the shuffled shoe is seated after the swap starts
	// (default 8s).
	SwapTime time.Duration
	// AckDelay is from the shoe seated to swap_done (default 200ms).
	AckDelay time.Duration
	// PullEarlyAfter is when ShoePulledEarly pulls the shoe in play after
	// it was seated (default 30s).
	PullEarlyAfter time.Duration
	// Cards is the card count reported for each shuffle (default 416).
	Cards int
	// Fault is the initial fault.
	Fault Fault
	// LoseAckEvery, when above 0, loses the acknowledgement (as LostAck)
	// of the first swap and of every LoseAckEvery-th after it (swaps 1,
	// N+1, 2N+1...), whatever the fault: a demo rehearses the shuffler's
	// fault and the supervisor's reset, after which the swap asked again
	// is acknowledged (for N > 1).
	LoseAckEvery int
	// OnReport, when set, receives the report of each finished shuffle,
	// from Run's goroutine; it must not block for long.
	OnReport func(shufflerproto.Report)
}

// DefaultOptions returns the defaults: an eight-deck automatic shuffler.
func DefaultOptions() Options {
	return Options{
		Poll: 10 * time.Millisecond, ShuffleTime: 90 * time.Second, SlowShuffleTime: 4 * time.Minute,
		PullTime: 2 * time.Second, SwapTime: 8 * time.Second, AckDelay: 200 * time.Millisecond,
		PullEarlyAfter: 30 * time.Second, Cards: 416,
	}
}

func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	for _, f := range []struct{ v, def *time.Duration }{
		{&o.Poll, &d.Poll}, {&o.ShuffleTime, &d.ShuffleTime}, {&o.SlowShuffleTime, &d.SlowShuffleTime},
		{&o.PullTime, &d.PullTime}, {&o.SwapTime, &d.SwapTime}, {&o.AckDelay, &d.AckDelay},
		{&o.PullEarlyAfter, &d.PullEarlyAfter},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if o.Cards <= 0 {
		o.Cards = d.Cards
	}
	o.SwapTime = max(o.SwapTime, o.PullTime)
}

// Pins are the device's ends of the lines.
type Pins struct {
	Ready, SwapDone, ShoeA, ShoeB, SwapRequest *simgpio.Pin
}

// PinsFromBank takes the device's pins from a bank.
func PinsFromBank(b *simgpio.Bank) (Pins, error) {
	var p Pins
	for _, f := range []struct {
		name string
		dst  **simgpio.Pin
	}{
		{pinmap.ShufflerReady, &p.Ready}, {pinmap.SwapDone, &p.SwapDone}, {pinmap.ShoeAPresent, &p.ShoeA},
		{pinmap.ShoeBPresent, &p.ShoeB}, {pinmap.SwapRequest, &p.SwapRequest},
	} {
		pin, err := b.Pin(f.name)
		if err != nil {
			return Pins{}, fmt.Errorf("shuffler sim: %w", err)
		}
		*f.dst = pin
	}
	return p, nil
}

// phase is what the device is doing with the swap.
type phase uint8

const (
	idle     phase = iota // no swap; a shoe in play, the other shuffling or ready
	swapping              // request seen, shoes moving
	seated                // new shoe in the slot, swap_done pending or asserted
)

// Device is the simulated shuffler. Run owns its timeline; SetFault and
// the getters may be called from any goroutine.
type Device struct {
	pins Pins
	opts Options
	clk  clockwork.Clock
	log  zerolog.Logger

	// mu guards the following.
	mu         sync.Mutex
	fault      Fault
	inPlay     string // "A" or "B"
	shuffled   int    // shuffles finished, for shoe ids
	swaps      int    // swaps completed
	phase      phase
	ready      bool
	shuffleEnd time.Time // when the shuffle in progress ends
	swapStart  time.Time
	seatedAt   time.Time // when the shoe in play was seated
	pulled     bool      // ShoePulledEarly already pulled this shoe
}

// New returns a device with shoe A in play and shoe B starting its shuffle
// when Run starts.
func New(pins Pins, opts Options, clk clockwork.Clock, log zerolog.Logger) *Device {
	opts.ensureDefaults()
	if clk == nil {
		clk = clockwork.NewRealClock()
	}
	return &Device{pins: pins, opts: opts, clk: clk, fault: opts.Fault, inPlay: "A",
		log: log.With().Str("component", "shuffler-sim").Logger()}
}

// SetFault changes the fault from now on.
func (d *Device) SetFault(f Fault) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.log.Info().Stringer("fault", f).Msg("fault set")
	d.fault = f
}

// InPlay is the shoe in the dealing slot (or last seated), "A" or "B".
func (d *Device) InPlay() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inPlay
}

// Swaps is the number of swaps completed.
func (d *Device) Swaps() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.swaps
}

func other(s string) string {
	if s == "A" {
		return "B"
	}
	return "A"
}

func (d *Device) presence(shoe string) *simgpio.Pin {
	if shoe == "B" {
		return d.pins.ShoeB
	}
	return d.pins.ShoeA
}

// startShuffleLocked starts shuffling the shoe out of play: ready drops
// and the shuffle ends after the time the current fault allows.
func (d *Device) startShuffleLocked(now time.Time) {
	switch d.fault {
	case SlowShuffle:
		d.shuffleEnd = now.Add(d.opts.SlowShuffleTime)
	default:
		d.shuffleEnd = now.Add(d.opts.ShuffleTime)
	}
	d.ready = false
	d.pins.Ready.Assert(false)
}

// Run plays the device until ctx is done; it then leaves the lines as they
// are (a shuffler does not move shoes when the daemon stops). It returns
// nil.
func (d *Device) Run(ctx context.Context) error {
	d.mu.Lock()
	now := d.clk.Now()
	d.presence(d.inPlay).Assert(true)
	d.presence(other(d.inPlay)).Assert(false)
	d.pins.SwapDone.Assert(false)
	d.seatedAt = now
	d.startShuffleLocked(now)
	d.mu.Unlock()
	for {
		timer := d.clk.NewTimer(d.opts.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case now := <-timer.Chan():
			d.tick(now)
		}
	}
}

// loseAckLocked reports whether Options.LoseAckEvery loses the
// acknowledgement of the swap just seated (the swaps-th).
func (d *Device) loseAckLocked() bool {
	n := d.opts.LoseAckEvery
	return n > 0 && (d.swaps-1)%n == 0
}

// tick advances the device's timeline to now.
func (d *Device) tick(now time.Time) {
	var rep *shufflerproto.Report
	d.mu.Lock()
	if d.fault == ShoePulledEarly && !d.pulled && d.phase == idle && now.Sub(d.seatedAt) >= d.opts.PullEarlyAfter {
		d.pulled = true
		d.presence(d.inPlay).Assert(false)
		d.log.Info().Str("shoe", d.inPlay).Msg("shoe pulled early")
	}
	if !d.ready && d.phase == idle && d.fault != NeverReady && !now.Before(d.shuffleEnd) {
		d.ready = true
		d.shuffled++
		shoe := other(d.inPlay)
		r := shufflerproto.Report{Shoe: shoe, ShoeID: fmt.Sprintf("%s-%04d", shoe, d.shuffled), Cards: d.opts.Cards}
		if d.fault == WrongCount {
			r.Cards--
		}
		rep = &r
		d.pins.Ready.Assert(true)
		d.log.Info().Str("shoe", shoe).Msg("shuffle done")
	}
	request := d.pins.SwapRequest.Asserted()
	switch d.phase {
	case idle:
		if request && d.ready {
			d.phase, d.swapStart = swapping, now
			d.log.Info().Str("out", d.inPlay).Msg("swap started")
		}
	case swapping:
		if now.Sub(d.swapStart) >= d.opts.PullTime {
			d.presence(d.inPlay).Assert(false)
		}
		if now.Sub(d.swapStart) >= d.opts.SwapTime {
			old := d.inPlay
			d.inPlay = other(old)
			d.presence(d.inPlay).Assert(true)
			d.phase, d.seatedAt, d.pulled = seated, now, false
			d.swaps++
			d.startShuffleLocked(now)
			d.log.Info().Str("in", d.inPlay).Msg("shoe seated")
		}
	case seated:
		if !request {
			d.pins.SwapDone.Assert(false)
			d.phase = idle
			break
		}
		if d.fault != LostAck && !d.loseAckLocked() && now.Sub(d.seatedAt) >= d.opts.AckDelay {
			d.pins.SwapDone.Assert(true)
		}
	}
	d.mu.Unlock()
	if rep != nil && d.opts.OnReport != nil {
		d.opts.OnReport(*rep)
	}
}
