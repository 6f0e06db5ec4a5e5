package shuffler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	"github.com/livetable/livetable/shuffler"
	"github.com/livetable/livetable/shuffler/pinmap"
	simgpio "github.com/livetable/livetable/simulators/gpio"
	simshuffler "github.com/livetable/livetable/simulators/shuffler"
	"github.com/livetable/livetable/studio/light"
	"github.com/livetable/livetable/table"
)

// poll is the sampling period of the controller and the device in these
// tests: coarser than production so minutes of table time take few steps.
const poll = 50 * time.Millisecond

// rig is a controller and a simulated shuffler on one simulated pin bank,
// with a fake clock and the controller's outputs collected.
type rig struct {
	t      *testing.T
	ctx    context.Context
	clk    *clockwork.FakeClock
	bank   *simgpio.Bank
	dev    *simshuffler.Device
	ctl    *shuffler.Controller
	inputs chan table.Input
	bodies chan table.Body
	// waiters is the number of polling loops that park on the clock.
	waiters int
	wg      sync.WaitGroup
}

func pin(t *testing.T, b *simgpio.Bank, name string) *simgpio.Pin {
	t.Helper()
	p, err := b.Pin(name)
	require.NoError(t, err)
	return p
}

func newRig(t *testing.T, dopts simshuffler.Options, copts shuffler.Options) *rig {
	t.Helper()
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC))
	bank, err := simgpio.NewBank(simgpio.DefaultConfig(), clk)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &rig{t: t, ctx: ctx, clk: clk, bank: bank, waiters: 2,
		inputs: make(chan table.Input, 1024), bodies: make(chan table.Body, 1024)}

	copts.Poll, copts.Debounce = poll, 2*poll
	lp := func(name string) *simgpio.Pin { return pin(t, bank, name) }
	r.ctl = shuffler.New(shuffler.PinsFromLines(bank.Lines()), copts, clk, zerolog.Nop())

	dpins, err := simshuffler.PinsFromBank(bank)
	require.NoError(t, err)
	dopts.Poll = poll
	dopts.OnReport = func(rep shufflerproto.Report) {
		// The device's serial line: the report goes to the controller.
		if err := r.ctl.Report(ctx, rep); err != nil && ctx.Err() == nil {
			t.Errorf("report: %v", err)
		}
	}
	r.dev = simshuffler.New(dpins, dopts, clk, zerolog.Nop())

	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		assert.NoError(t, r.ctl.Run(ctx, r.inputs, r.bodies))
	}()
	go func() {
		defer r.wg.Done()
		assert.NoError(t, r.dev.Run(ctx))
	}()
	t.Cleanup(func() {
		cancel()
		r.wg.Wait()
		assert.False(t, lp(pinmap.SwapRequest).Asserted(), "swap_request released when Run returns")
	})
	return r
}

// settle waits for every loop to be parked on the clock, so all that the
// last tick did is visible.
func (r *rig) settle() {
	r.t.Helper()
	require.NoError(r.t, r.clk.BlockUntilContext(r.ctx, r.waiters))
}

// advance runs d of table time.
func (r *rig) advance(d time.Duration) {
	r.t.Helper()
	require.NoError(r.t, simgpio.Step(r.ctx, r.clk, r.waiters, poll, d))
	r.settle()
}

// until runs table time, one poll at a time, until cond holds; it fails
// the test if that takes more than limit.
func (r *rig) until(what string, limit time.Duration, cond func() bool) {
	r.t.Helper()
	r.settle()
	for spent := time.Duration(0); !cond(); spent += poll {
		require.Less(r.t, spent, limit, "still waiting for %s", what)
		r.advance(poll)
	}
}

func (r *rig) untilState(s shuffler.State, limit time.Duration) {
	r.t.Helper()
	r.until(s.String(), limit, func() bool { return r.ctl.State() == s })
}

// drain returns what the controller emitted so far.
func (r *rig) drain() (inputs []table.Input, bodies []table.Body) {
	for {
		select {
		case in := <-r.inputs:
			inputs = append(inputs, in)
		case b := <-r.bodies:
			bodies = append(bodies, b)
		default:
			return inputs, bodies
		}
	}
}

// transitions are the To states of the StateChanged bodies.
func transitions(bodies []table.Body) []string {
	var out []string
	for _, b := range bodies {
		if sc, ok := b.(shuffler.StateChanged); ok {
			out = append(out, sc.To)
		}
	}
	return out
}

func alarms(inputs []table.Input) []table.DeviceAlarm {
	var out []table.DeviceAlarm
	for _, in := range inputs {
		if a, ok := in.(table.DeviceAlarm); ok {
			out = append(out, a)
		}
	}
	return out
}

// cutCard passes the cut card in front of the sensor, bouncing as a real
// optical sensor does at the card's edges.
func (r *rig) cutCard() {
	p := pin(r.t, r.bank, pinmap.CutCardSensor)
	for _, on := range []bool{true, false, true, false, true} {
		p.Assert(on)
		r.advance(poll)
	}
	r.advance(300 * time.Millisecond)
	p.Assert(false)
	r.advance(300 * time.Millisecond)
}

// tower is the light on the same bank; the test plays the table
// controller and sends it the phases.
type tower struct {
	events  chan table.Event
	changes chan light.Changed
}

func (r *rig) startTower() *tower {
	tw := &tower{events: make(chan table.Event), changes: make(chan light.Changed, 16)}
	lt := light.New(pin(r.t, r.bank, pinmap.LightRed).Logical(), pin(r.t, r.bank, pinmap.LightYellow).Logical(),
		pin(r.t, r.bank, pinmap.LightGreen).Logical(),
		light.Options{LastCall: -1, OnChange: func(c light.Changed) { tw.changes <- c }}, r.clk, zerolog.Nop())
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		assert.NoError(r.t, lt.Run(r.ctx, tw.events))
	}()
	require.Equal(r.t, "red", (<-tw.changes).Pattern)
	return tw
}

// phase sends a phase to the light and checks the lamps that follow, as
// the console would show them from the bank's snapshot.
func (r *rig) phase(tw *tower, p table.Phase, pattern string) {
	r.t.Helper()
	tw.events <- table.Event{Body: table.PhaseChanged{Phase: p}}
	if pattern != "" {
		c := <-tw.changes
		require.Equal(r.t, pattern, c.Pattern, "light for %s", p)
	}
	snap := r.bank.Snapshot()
	lamps := map[string]string{"red": pinmap.LightRed, "yellow": pinmap.LightYellow, "green": pinmap.LightGreen}
	want := map[table.Phase]string{table.PhaseBetting: "green", table.PhaseLastCall: "yellow"}[p]
	if want == "" {
		want = "red"
	}
	for colour, name := range lamps {
		assert.Equal(r.t, colour == want, snap[name], "%s lamp in phase %s", colour, p)
	}
}

func TestWholeShoeCycles(t *testing.T) {
	r := newRig(t, simshuffler.Options{}, shuffler.Options{ExpectCards: 416, BurnCards: 1})
	tw := r.startTower()
	req := pin(t, r.bank, pinmap.SwapRequest)

	r.untilState(shuffler.AInPlay_BShuffling, time.Second)
	assert.Equal(t, "A", r.dev.InPlay())
	tableEvents := make(chan table.Event, 8) // the table's, as tabled subscribes them
	swapDone := make(chan error, 1)
	go func() { swapDone <- r.ctl.SwapOnClose(r.ctx, tableEvents) }()
	defer func() { close(tableEvents); assert.NoError(t, <-swapDone) }()

	cycles := []struct {
		out, in   string
		wantID    string
		dealing   shuffler.State
		swappedTo shuffler.State
	}{
		{"A", "B", "B-0001", shuffler.AInPlay_BShuffling, shuffler.BInPlay_AShuffling},
		{"B", "A", "A-0002", shuffler.BInPlay_AShuffling, shuffler.AInPlay_BShuffling},
		{"A", "B", "B-0003", shuffler.AInPlay_BShuffling, shuffler.BInPlay_AShuffling},
	}
	for i, c := range cycles {
		// Rounds are dealt from the shoe in play while the other shuffles.
		for range 3 {
			r.phase(tw, table.PhaseBetting, "green")
			r.phase(tw, table.PhaseLastCall, "yellow")
			r.phase(tw, table.PhaseDealing, "red")
			r.advance(20 * time.Second)
			r.phase(tw, table.PhaseSettled, "")
		}
		r.phase(tw, table.PhaseBetting, "green")
		r.phase(tw, table.PhaseDealing, "red")
		require.Equal(t, c.dealing, r.ctl.State())

		// The cut card comes out mid-round: one input, however it bounces.
		r.cutCard()
		inputs, _ := r.drain()
		require.Equal(t, []table.Input{table.CutCardSeen{Source: "sensor"}}, inputs, "cycle %d", i)

		// The round finishes, the shoe closes, the table asks for the swap.
		r.phase(tw, table.PhaseSettled, "")
		r.phase(tw, table.PhaseClosed, "")
		tableEvents <- table.Event{Body: table.PhaseChanged{Phase: table.PhaseSettled}}
		tableEvents <- table.Event{Body: table.PhaseChanged{Phase: table.PhaseClosed}}
		require.Eventually(t, func() bool { return r.ctl.State() == shuffler.SwapRequested }, 5*time.Second, time.Millisecond,
			"SwapOnClose asks for the swap when the table closes")
		r.settle()

		r.untilState(shuffler.Swapping, 2*time.Minute)
		assert.True(t, req.Asserted(), "swap_request asserted while swapping")
		r.until("old shoe out", 5*time.Second, func() bool { return !pin(t, r.bank, "shoe_"+lower(c.out)+".present").Asserted() })
		assert.Equal(t, shuffler.Swapping, r.ctl.State(), "no shoe in the slot is part of the swap")
		r.untilState(c.swappedTo, 30*time.Second)
		assert.False(t, req.Asserted(), "swap_request released once done")
		r.until("swap_done released", time.Second, func() bool { return !pin(t, r.bank, pinmap.SwapDone).Asserted() })
		assert.Equal(t, c.in, r.dev.InPlay())

		inputs, bodies := r.drain()
		require.Equal(t, []table.Input{table.ShoeChanged{ShoeID: c.wantID}}, inputs)
		assert.Equal(t, []string{"SwapRequested", "Swapping", c.swappedTo.String()}, transitions(bodies))
		assert.Empty(t, alarms(inputs))
		assert.Contains(t, bodies, shuffler.ShoeSwapped{ShoeID: c.wantID, Shoe: c.in, Cards: 416, BurnCards: 1})

		// The table burns the first card and opens the new shoe (red until then).
		r.phase(tw, table.PhaseIdle, "")
	}
	assert.Equal(t, len(cycles), r.dev.Swaps())
}

func lower(s string) string {
	if s == "A" {
		return "a"
	}
	return "b"
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name      string
		fault     simshuffler.Fault
		requestAt time.Duration // when the table asks for the swap; 0 never
		want      shuffler.State
		within    time.Duration
		alarms    []string // in order
		pauses    int      // pausing alarms
		swapped   bool     // a ShoeChanged came
	}{
		{name: "never ready", fault: simshuffler.NeverReady, requestAt: 100 * time.Second,
			want: shuffler.Fault, within: 3 * time.Minute, alarms: []string{shuffler.AlarmNotReady}, pauses: 1},
		{name: "lost acknowledgement", fault: simshuffler.LostAck, requestAt: 100 * time.Second,
			want: shuffler.Fault, within: time.Minute, alarms: []string{shuffler.AlarmNoAck}, pauses: 1},
		{name: "shoe pulled early", fault: simshuffler.ShoePulledEarly,
			want: shuffler.Fault, within: time.Minute, alarms: []string{shuffler.AlarmShoeRemoved}, pauses: 1},
		{name: "slow shuffle", fault: simshuffler.SlowShuffle, requestAt: 150 * time.Second,
			want: shuffler.BInPlay_AShuffling, within: 3 * time.Minute, alarms: []string{shuffler.AlarmShuffleSlow}, swapped: true},
		{name: "wrong card count", fault: simshuffler.WrongCount, requestAt: 100 * time.Second,
			want: shuffler.BInPlay_AShuffling, within: time.Minute, alarms: []string{shuffler.AlarmCardCount}, pauses: 1, swapped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, simshuffler.Options{Fault: tt.fault, SlowShuffleTime: 200 * time.Second},
				shuffler.Options{ExpectCards: 416, ShuffleTimeout: 2 * time.Minute, ReadyTimeout: time.Minute})
			r.untilState(shuffler.AInPlay_BShuffling, time.Second)
			if tt.requestAt > 0 {
				r.advance(tt.requestAt)
				require.Equal(t, shuffler.AInPlay_BShuffling, r.ctl.State())
				require.NoError(t, r.ctl.RequestSwap(r.ctx))
			}
			r.untilState(tt.want, tt.within)
			r.advance(time.Second) // nothing more happens right after
			inputs, bodies := r.drain()
			var codes []string
			var pauses, changes int
			for _, a := range alarms(inputs) {
				codes = append(codes, a.Code)
				assert.Equal(t, "shuffler", a.Source)
				if a.Pauses {
					pauses++
				}
			}
			assert.Equal(t, tt.alarms, codes)
			for _, in := range inputs {
				if _, ok := in.(table.ShoeChanged); ok {
					changes++
				}
			}
			assert.NotEmpty(t, transitions(bodies))
			assert.Equal(t, tt.pauses, pauses)
			assert.Equal(t, tt.swapped, changes == 1)
			assert.False(t, pin(t, r.bank, pinmap.SwapRequest).Asserted())
			if tt.want != shuffler.Fault {
				return
			}
			// Latched until a supervisor resets it; a swap is refused meanwhile.
			r.advance(5 * time.Minute)
			assert.Equal(t, shuffler.Fault, r.ctl.State())
			assert.ErrorIs(t, r.ctl.RequestSwap(r.ctx), shuffler.ErrFault)
		})
	}
}

func TestResetAfterShoeBack(t *testing.T) {
	r := newRig(t, simshuffler.Options{Fault: simshuffler.ShoePulledEarly}, shuffler.Options{})
	r.untilState(shuffler.Fault, time.Minute)
	// The dealer puts the shoe back and the supervisor resets.
	r.dev.SetFault(simshuffler.NoFault)
	pin(t, r.bank, pinmap.ShoeAPresent).Assert(true)
	require.NoError(t, r.ctl.Reset(r.ctx))
	r.settle()
	r.untilState(shuffler.AInPlay_BShuffling, time.Second)
	_, bodies := r.drain()
	assert.Equal(t, []string{"AInPlay_BShuffling", "Fault", "Starting", "AInPlay_BShuffling"}, transitions(bodies))
	// And the next swap works.
	r.advance(90 * time.Second)
	require.NoError(t, r.ctl.RequestSwap(r.ctx))
	r.untilState(shuffler.BInPlay_AShuffling, time.Minute)
}

// TestFaultBlinksLight follows a fault to the light: the table controller
// (played here) turns the DeviceAlarm into a pausing table.Alarm event,
// the light blinks red until the supervisor resets the shuffler and
// resumes the table.
func TestFaultBlinksLight(t *testing.T) {
	r := newRig(t, simshuffler.Options{Fault: simshuffler.ShoePulledEarly}, shuffler.Options{})
	tw := r.startTower()
	r.untilState(shuffler.AInPlay_BShuffling, time.Second)
	r.phase(tw, table.PhaseBetting, "green")
	r.phase(tw, table.PhaseDealing, "red")

	r.untilState(shuffler.Fault, time.Minute)
	inputs, _ := r.drain()
	al := alarms(inputs)
	require.Len(t, al, 1)
	tw.events <- table.Event{Body: table.Alarm{Code: "shuffler." + al[0].Code, Message: al[0].Message, Pauses: al[0].Pauses}}
	require.Equal(t, light.Changed{Red: true, Pattern: "red_blink"}, <-tw.changes)

	red := pin(t, r.bank, pinmap.LightRed)
	r.waiters = 3 // the blink timer parks on the clock too
	for i, want := range []bool{false, true, false, true} {
		r.advance(500 * time.Millisecond)
		assert.Equal(t, want, red.Asserted(), "blink %d", i)
	}

	pin(t, r.bank, pinmap.ShoeAPresent).Assert(true)
	require.NoError(t, r.ctl.Reset(r.ctx))
	r.untilState(shuffler.AInPlay_BShuffling, time.Second)
	tw.events <- table.Event{Body: table.Resumed{By: "supervisor"}}
	require.Equal(t, light.Changed{Red: true, Pattern: "red"}, <-tw.changes, "back to the dealing phase")
	r.waiters = 2
	r.settle()
	assert.True(t, red.Asserted())
}

// closedTable is a TableView whose phase the test sets.
type closedTable struct {
	mu    sync.Mutex
	phase table.Phase
}

func (c *closedTable) Ping(context.Context) error { return nil }
func (c *closedTable) Snapshot() table.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return table.State{Phase: c.phase}
}

// TestResetFaultAsksTheSwapAgain: a swap whose acknowledgement never
// comes latches Fault, where a supervisor's ResetFault (refused before,
// while the swap is under way) takes the controller out, journals who did
// it, and, the table still closed for the swap that failed, asks for the
// swap again: the next swap completes. Without the new request the table
// stayed closed for good after the reset (nothing asked again).
func TestResetFaultAsksTheSwapAgain(t *testing.T) {
	r := newRig(t, simshuffler.Options{Fault: simshuffler.LostAck}, shuffler.Options{ReadyTimeout: 2 * time.Minute})
	tbl := &closedTable{phase: table.PhaseDealing}
	events := make(chan table.Event)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		assert.NoError(t, r.ctl.SwapWhenClosed(r.ctx, tbl, events))
	}()
	r.untilState(shuffler.AInPlay_BShuffling, time.Second)
	_, err := r.ctl.ResetFault(r.ctx, "anna", "")
	require.ErrorIs(t, err, shuffler.ErrNotInFault, "nothing to reset while dealing")
	r.advance(100 * time.Second) // B is shuffled

	tbl.mu.Lock()
	tbl.phase = table.PhaseClosed
	tbl.mu.Unlock()
	events <- table.Event{Body: table.PhaseChanged{Phase: table.PhaseClosed}}
	r.untilState(shuffler.Swapping, time.Minute)
	_, err = r.ctl.ResetFault(r.ctx, "anna", "")
	require.ErrorIs(t, err, shuffler.ErrNotInFault, "a reset would drop the swap under way")
	r.untilState(shuffler.Fault, time.Minute)
	assert.Equal(t, shuffler.AlarmNoAck, r.ctl.Fault())
	r.drain()

	// The technician fixes the shuffler; the supervisor resets it.
	r.dev.SetFault(simshuffler.NoFault)
	cleared, err := r.ctl.ResetFault(r.ctx, "anna", "swap_done wire reseated")
	require.NoError(t, err)
	assert.Equal(t, shuffler.AlarmNoAck, cleared)
	assert.Empty(t, r.ctl.Fault())
	_, err = r.ctl.ResetFault(r.ctx, "bob", "")
	require.ErrorIs(t, err, shuffler.ErrNotInFault, "a second reset finds nothing to reset")

	// The shoe B the failed swap seated is in play; the swap is asked
	// again and A comes in once shuffled.
	r.untilState(shuffler.Swapping, 2*time.Minute)
	r.untilState(shuffler.AInPlay_BShuffling, time.Minute)
	inputs, bodies := r.drain()
	al := alarms(inputs)
	require.NotEmpty(t, al)
	assert.Equal(t, shuffler.AlarmReset, al[0].Code)
	assert.False(t, al[0].Pauses)
	assert.Equal(t, "shuffler reset by anna after swap_not_acknowledged (swap_done wire reseated): it reads its presence sensors again", al[0].Message)
	var changed []string
	for _, in := range inputs {
		if sc, ok := in.(table.ShoeChanged); ok {
			changed = append(changed, sc.ShoeID)
		}
	}
	assert.Len(t, changed, 1, "the swap asked again completed")
	// B is found in play, and the swap asked again (from the swap loop's
	// goroutine, so before or after the sensors are read) is done.
	tr := transitions(bodies)
	require.NotEmpty(t, tr)
	assert.Equal(t, "Starting", tr[0])
	assert.Equal(t, []string{"SwapRequested", "Swapping", "AInPlay_BShuffling"}, tr[len(tr)-3:])
	assert.Subset(t, []string{"Starting", "BInPlay_AShuffling", "SwapRequested", "Swapping", "AInPlay_BShuffling"}, tr)
}
