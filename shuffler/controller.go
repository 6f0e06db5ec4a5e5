package shuffler

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"periph.io/x/conn/v3/gpio"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	"github.com/livetable/livetable/shuffler/pinmap"
	"github.com/livetable/livetable/table"
)

// Pins are the controller's lines, in logical levels (High = asserted;
// wrap active-low lines with shuffler/pinmap.Logical). CutCard is optional:
// leave it nil when the shoe reader reports the cut card itself.
type Pins struct {
	Ready       gpio.PinIn  // shuffler.ready: a shuffled shoe is waiting in the shuffler
	SwapDone    gpio.PinIn  // shuffler.swap_done: the requested swap is complete
	ShoeA       gpio.PinIn  // shoe_a.present: shoe A sits in the dealing slot
	ShoeB       gpio.PinIn  // shoe_b.present: shoe B sits in the dealing slot
	CutCard     gpio.PinIn  // cutcard.sensor: the cut card is passing the sensor
	SwapRequest gpio.PinOut // shuffler.swap_request: asserted while Swapping
}

// PinsFromLines picks the controller's lines out of the table's lines; a
// line that is not configured stays nil (Run then reports ErrNoPin, except
// for the optional CutCard).
func PinsFromLines(l pinmap.Lines) Pins {
	return Pins{
		Ready:       l.In(pinmap.ShufflerReady),
		SwapDone:    l.In(pinmap.SwapDone),
		ShoeA:       l.In(pinmap.ShoeAPresent),
		ShoeB:       l.In(pinmap.ShoeBPresent),
		CutCard:     l.In(pinmap.CutCardSensor),
		SwapRequest: l.Out(pinmap.SwapRequest),
	}
}

// Options configures a Controller. The zero value of a duration means its
// default.
type Options struct {
	// Poll is how often the lines are sampled and the waits checked
	// (default 10ms).
	Poll time.Duration
	// Debounce is how long a line must hold a new level to count
	// (default 30ms).
	Debounce time.Duration
	// StartTimeout bounds the wait for exactly one shoe in the slot at
	// start-up and after a reset (default 10s).
	StartTimeout time.Duration
	// ShuffleTimeout raises a non-pausing shuffle_slow alarm when the
	// other shoe is not shuffled this long after the last swap
	// (default 3m: a shuffle takes about 90s).
	ShuffleTimeout time.Duration
	// ReadyTimeout bounds the wait for a shuffled shoe after a swap is
	// requested (default 2m).
	ReadyTimeout time.Duration
	// SwapTimeout bounds the wait for swap_done once swap_request is
	// asserted (default 30s).
	SwapTimeout time.Duration
	// RemovedGrace is how long the shoe in play may leave its slot (the
	// dealer straightening it) before it counts as removed (default 2s).
	RemovedGrace time.Duration
	// ExpectCards is the card count of a full shoe (416 for eight decks).
	// When it and the shuffler's report both give a count, a difference
	// raises a pausing shoe_card_count alarm. 0 disables the check.
	ExpectCards int
	// BurnCards is how many cards of each new shoe the game burns (1 for
	// Speed Blackjack, 003); reported in ShoeSwapped, see there.
	BurnCards int
	// IDPrefix starts the shoe ids the controller makes up when the
	// shuffler gives none (for example the table id and a dash).
	IDPrefix string
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{
		Poll:           10 * time.Millisecond,
		Debounce:       30 * time.Millisecond,
		StartTimeout:   10 * time.Second,
		ShuffleTimeout: 3 * time.Minute,
		ReadyTimeout:   2 * time.Minute,
		SwapTimeout:    30 * time.Second,
		RemovedGrace:   2 * time.Second,
	}
}

func (o *Options) ensureDefaults() {
	d := DefaultOptions()
	for _, f := range []struct{ v, def *time.Duration }{
		{&o.Poll, &d.Poll}, {&o.Debounce, &d.Debounce}, {&o.StartTimeout, &d.StartTimeout},
		{&o.ShuffleTimeout, &d.ShuffleTimeout}, {&o.ReadyTimeout, &d.ReadyTimeout},
		{&o.SwapTimeout, &d.SwapTimeout}, {&o.RemovedGrace, &d.RemovedGrace},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	o.ExpectCards = max(o.ExpectCards, 0)
	o.BurnCards = max(o.BurnCards, 0)
}

// command is a call into the Run loop.
type command struct {
	trigger trigger
	report  shufflerproto.Report
	by      string
	reason  string
	reply   chan result
}

// result is the Run loop's answer to a command.
type result struct {
	err     error
	cleared string // the fault a resetFault cleared
}

// Controller is the dual-shoe swap controller: the acting half around the
// pure transition function next. Run owns the machine; the other methods
// talk to it through a channel, or read an atomic copy of the state.
type Controller struct {
	pins  Pins
	opts  Options
	lim   limits
	clk   clockwork.Clock
	log   zerolog.Logger
	cmds  chan command
	done  chan struct{} // closed when Run returns
	state atomic.Uint32 // the machine's State, for State()
	fault atomic.Value  // the machine's fault code (a string), for Fault()
	ran   atomic.Bool   // Run was called
	// resets tells the swap loop (SwapOnClose) that a reset dropped
	// whatever swap was asked: a table closed waits for one.
	resets chan struct{}
}

// New returns a controller. It touches no line until Run.
func New(pins Pins, opts Options, clk clockwork.Clock, log zerolog.Logger) *Controller {
	opts.ensureDefaults()
	if clk == nil {
		clk = clockwork.NewRealClock()
	}
	return &Controller{
		pins: pins,
		opts: opts,
		lim: limits{start: opts.StartTimeout, ready: opts.ReadyTimeout, shuffle: opts.ShuffleTimeout,
			swap: opts.SwapTimeout, removed: opts.RemovedGrace, expectCards: opts.ExpectCards,
			burnCards: opts.BurnCards, idPrefix: opts.IDPrefix},
		clk:    clk,
		log:    log.With().Str("component", "shuffler").Logger(),
		cmds:   make(chan command),
		done:   make(chan struct{}),
		resets: make(chan struct{}, 1),
	}
}

// State is the controller's current state.
func (c *Controller) State() State { return State(c.state.Load()) }

// Fault is the alarm code that latched Fault ("swap_not_acknowledged"),
// "" in any other state.
func (c *Controller) Fault() string {
	s, _ := c.fault.Load().(string)
	return s
}

// RequestSwap asks for the shoe in play to be swapped for the shuffled
// one. The table calls it once the round in play after the cut card is
// settled and the shoe closed. It returns once the request is accepted
// (the swap itself completes later, reported by table.ShoeChanged), with
// ErrFault when the state does not allow a swap, or with ctx's error.
// Asked while Starting, the swap is done once the shoe in play is known.
func (c *Controller) RequestSwap(ctx context.Context) error {
	_, err := c.call(ctx, command{trigger: request})
	return err
}

// SwapOnClose requests a swap (RequestSwap) each time the table's events
// say it closed: the cut card came out and the round after it is settled,
// so the shoe is finished. It returns when events closes or ctx is done;
// tabled gives it a subscription to the table controller. A refused
// request is logged: the shuffler's own alarms say why. After a reset
// (which drops any swap asked) of a table whose last phase was closed,
// the swap is asked again.
func (c *Controller) SwapOnClose(ctx context.Context, events <-chan table.Event) error {
	return c.swapLoop(ctx, nil, false, events)
}

// TableView is what SwapWhenClosed reads of the table controller
// (*table.Controller has both).
type TableView interface {
	// Ping returns once the table's loop runs: its journal is replayed.
	Ping(ctx context.Context) error
	// Snapshot is the table's state.
	Snapshot() table.State
}

// SwapWhenClosed is SwapOnClose for a table that may be closed already:
// once tbl's journal is replayed, a table found closed gets its swap
// asked at once. A table whose shoe finished before a restart (a crash,
// a power cut, an upgrade) publishes no closed phase again, so
// SwapOnClose alone never asked and the table stayed closed for good
// (found by a kill -9 of the demo while it waited for the swap). The same
// holds after a supervisor's reset of a Fault: the swap that failed is
// dropped, and tbl found closed has it asked again.
func (c *Controller) SwapWhenClosed(ctx context.Context, tbl TableView, events <-chan table.Event) error {
	closed := false
	if tbl.Ping(ctx) == nil && tbl.Snapshot().Phase == table.PhaseClosed {
		closed = true
		c.log.Info().Msg("the table restarted closed (its shoe finished): the swap is asked for")
		c.askSwap(ctx)
	}
	return c.swapLoop(ctx, tbl, closed, events)
}

// swapLoop is SwapOnClose's and SwapWhenClosed's loop. closed is whether
// the table's last phase seen was closed; tbl, when not nil, is read
// instead after a reset (an event may have been dropped).
func (c *Controller) swapLoop(ctx context.Context, tbl TableView, closed bool, events <-chan table.Event) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.resets:
			if tbl != nil {
				closed = tbl.Snapshot().Phase == table.PhaseClosed
			}
			if closed {
				c.log.Info().Msg("shuffler reset while the table is closed: the swap is asked again")
				c.askSwap(ctx)
			}
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			if pc, isPhase := ev.Body.(table.PhaseChanged); isPhase {
				closed = pc.Phase == table.PhaseClosed
				if closed {
					c.askSwap(ctx)
				}
			}
		}
	}
}

// askSwap is RequestSwap with a refusal logged.
func (c *Controller) askSwap(ctx context.Context) {
	if err := c.RequestSwap(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn().Err(err).Msg("shuffler: swap request")
	}
}

// Reset leaves Fault (or any state): the swap line is released and the
// presence sensors are read again to find the shoe in play. It drops a
// swap under way; a supervisor's reset is ResetFault.
func (c *Controller) Reset(ctx context.Context) error {
	_, err := c.call(ctx, command{trigger: reset})
	return err
}

// ResetFault is a supervisor's reset, after fixing what the alarm was
// about: it leaves Fault as Reset does, and is refused with ErrNotInFault
// in any other state (so that no swap under way is dropped, whoever asks
// twice). by names the supervisor and reason, which may be empty, what
// was fixed: the table journals a non-pausing DeviceAlarm (AlarmReset)
// naming them and the fault cleared, which it returns. A table closed
// meanwhile gets its swap asked again (see SwapWhenClosed).
func (c *Controller) ResetFault(ctx context.Context, by, reason string) (cleared string, err error) {
	return c.call(ctx, command{trigger: resetFault, by: by, reason: reason})
}

// Report passes the shuffler's report of a shuffled shoe (read from its
// serial line by the caller); it is checked when that shoe is swapped in.
func (c *Controller) Report(ctx context.Context, r shufflerproto.Report) error {
	_, err := c.call(ctx, command{trigger: report, report: r})
	return err
}

func (c *Controller) call(ctx context.Context, cmd command) (string, error) {
	cmd.reply = make(chan result, 1)
	select {
	case c.cmds <- cmd:
	case <-c.done:
		return "", ErrStopped
	case <-ctx.Done():
		return "", fmt.Errorf("shuffler: %w", ctx.Err())
	}
	select {
	case res := <-cmd.reply:
		return res.cleared, res.err
	case <-ctx.Done():
		return "", fmt.Errorf("shuffler: %w", ctx.Err())
	}
}

// Halt releases swap_request, leaving the shuffler idle.
func (c *Controller) Halt() error {
	if c.pins.SwapRequest == nil {
		return nil
	}
	if err := c.pins.SwapRequest.Out(gpio.Low); err != nil {
		return fmt.Errorf("shuffler: release swap_request: %w", err)
	}
	return nil
}

// Run samples the lines every Options.Poll and drives the swap until ctx
// is done. Inputs for the table go to out: CutCardSeen{Source: "sensor"}
// from the cut-card line, ShoeChanged after a swap, and
// DeviceAlarm{Source: "shuffler"} for every alarm (the table controller
// journals it, raises table.Alarm with the code "shuffler.<code>" and
// pauses when Pauses is set). Reports for the journal and the console
// (StateChanged, ShoeSwapped) go to bodies, which may be nil to drop them. Sends block, so the caller must keep reading both channels
// until Run returns; Run never closes them since it does not own them.
//
// Run may be called once. It returns nil when ctx is done, with
// swap_request released, or an error when a line cannot be set up.
func (c *Controller) Run(ctx context.Context, out chan<- table.Input, bodies chan<- table.Body) error {
	if !c.ran.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	defer close(c.done)
	p := c.pins
	for _, l := range []struct {
		name string
		pin  gpio.PinIn
	}{{"shuffler.ready", p.Ready}, {"shuffler.swap_done", p.SwapDone}, {"shoe_a.present", p.ShoeA}, {"shoe_b.present", p.ShoeB}} {
		if l.pin == nil {
			return fmt.Errorf("%w: %s", ErrNoPin, l.name)
		}
		if err := l.pin.In(gpio.PullNoChange, gpio.NoEdge); err != nil {
			return fmt.Errorf("shuffler: %s as input: %w", l.name, err)
		}
	}
	if p.SwapRequest == nil {
		return fmt.Errorf("%w: shuffler.swap_request", ErrNoPin)
	}
	if p.CutCard != nil {
		if err := p.CutCard.In(gpio.PullNoChange, gpio.NoEdge); err != nil {
			return fmt.Errorf("shuffler: cutcard.sensor as input: %w", err)
		}
	}
	if err := c.Halt(); err != nil {
		return err
	}
	defer func() {
		if err := c.Halt(); err != nil {
			c.log.Error().Err(err).Msg("halt failed")
		}
	}()

	r := runner{c: c, ctx: ctx, out: out, bodies: bodies}
	r.m = machine{state: Starting, since: c.clk.Now()}
	for _, d := range []*debouncer{&r.ready, &r.done, &r.a, &r.b, &r.cut} {
		d.hold = c.opts.Debounce
	}
	c.fault.Store("")
	r.step(input{trigger: tick, now: c.clk.Now(), lines: r.sample(c.clk.Now())})
	for {
		timer := c.clk.NewTimer(c.opts.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case cmd := <-c.cmds:
			timer.Stop()
			now := c.clk.Now()
			cmd.reply <- r.step(input{trigger: cmd.trigger, now: now, report: cmd.report, by: cmd.by, reason: cmd.reason})
		case now := <-timer.Chan():
			l := r.sample(now)
			r.step(input{trigger: tick, now: now, lines: l})
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// runner is Run's state: the machine, the debouncers, the output level.
type runner struct {
	c                 *Controller
	ctx               context.Context
	out               chan<- table.Input
	bodies            chan<- table.Body
	m                 machine
	ready, done, a, b debouncer
	cut               debouncer
	// cutWarned is set once AlarmCutNoShoe was raised in state
	// cutWarnedIn, until the sensor counts again.
	cutWarned            bool
	cutWarnedIn          State
	requestOn, requestOK bool // the level last driven on swap_request, and whether it was
}

// sample reads every line through its debouncer, and emits the cut card.
func (r *runner) sample(now time.Time) lines {
	p := r.c.pins
	var l lines
	l.ready, _ = r.ready.sample(bool(p.Ready.Read()), now)
	l.done, _ = r.done.sample(bool(p.SwapDone.Read()), now)
	l.presentA, _ = r.a.sample(bool(p.ShoeA.Read()), now)
	l.presentB, _ = r.b.sample(bool(p.ShoeB.Read()), now)
	if p.CutCard != nil {
		if on, changed := r.cut.sample(bool(p.CutCard.Read()), now); on && changed {
			r.cutCard(l)
		}
	}
	return l
}

// cutCard handles a debounced assertion of the cut-card sensor: the
// table's cut card while a shoe is in play in its slot; otherwise (no
// shoe, mid-swap, the shoe lifted out) a hand or a shoe body in front of
// the sensor, which ended the shoe in play (the table closes it and asks
// for the swap): a non-pausing alarm instead, once per state, so a
// sensor that flickers does not flood the journal.
func (r *runner) cutCard(l lines) {
	if r.m.cutCardCounts(l) {
		r.cutWarned = false
		r.c.log.Info().Str("state", r.m.state.String()).Msg("cut card seen")
		r.emitInput(table.CutCardSeen{Source: "sensor"})
		return
	}
	msg := fmt.Sprintf("cut-card sensor asserted with no shoe in play in the slot (shuffler %s, A=%t B=%t): not taken as the cut card; check the sensor",
		r.m.state, l.presentA, l.presentB)
	if r.cutWarned && r.cutWarnedIn == r.m.state {
		r.c.log.Debug().Msg(msg)
		return
	}
	r.cutWarned, r.cutWarnedIn = true, r.m.state
	r.c.log.Warn().Str("code", AlarmCutNoShoe).Msg(msg)
	r.emitInput(alarm(AlarmCutNoShoe, msg, false))
}

// step runs the transition function and carries out its actions.
func (r *runner) step(in input) result {
	before, fault := r.m.state, r.m.fault
	m, act := next(r.m, in, r.c.lim)
	r.m = m
	if m.fault != fault {
		// Before the state: a reader that sees Fault sees its code.
		r.c.fault.Store(m.fault)
	}
	r.c.state.Store(uint32(m.state))
	if m.state != before {
		r.c.log.Info().Str("from", before.String()).Str("to", m.state.String()).
			Str("in_play", m.inPlay.String()).Msg("shuffler state")
	}
	r.drive(m.state == Swapping)
	for _, in := range act.inputs {
		if a, ok := in.(table.DeviceAlarm); ok {
			r.c.log.Warn().Str("code", a.Code).Bool("pauses", a.Pauses).Msg(a.Message)
		}
	}
	for _, b := range act.bodies {
		if r.bodies != nil {
			select {
			case r.bodies <- b:
			case <-r.ctx.Done():
				return result{err: act.err, cleared: act.cleared}
			}
		}
	}
	for _, in := range act.inputs {
		r.emitInput(in)
	}
	if (in.trigger == reset || in.trigger == resetFault) && act.err == nil {
		select {
		case r.c.resets <- struct{}{}:

		default: // one waiting is enough: the loop reads the table then
		}
	}
	return result{err: act.err, cleared: act.cleared}
}

func (r *runner) emitInput(in table.Input) {
	select {
	case r.out <- in:
	case <-r.ctx.Done():
	}
}

// drive sets swap_request when its level changes (or the last write
// failed, so a transient error is retried on the next tick).
func (r *runner) drive(on bool) {
	if r.requestOK && r.requestOn == on {
		return
	}
	err := r.c.pins.SwapRequest.Out(gpio.Level(on))
	r.requestOn, r.requestOK = on, err == nil
	if err != nil {
		r.c.log.Error().Err(err).Bool("on", on).Msg("swap_request output failed")
	}
}
