package shuffler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	"github.com/livetable/livetable/table"
)

func TestDebouncer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type sample struct {
		at          int
		raw         bool
		level, edge bool
	}
	tests := []struct {
		name    string
		samples []sample
	}{
		{"first sample is the steady level", []sample{{0, true, true, false}, {10, true, true, false}}},
		{"clean press", []sample{{0, false, false, false}, {10, true, false, false}, {30, true, true, true}, {40, true, true, false}}},
		{"bounce restarts the hold", []sample{{0, false, false, false}, {10, true, false, false}, {20, false, false, false},
			{25, true, false, false}, {40, true, false, false}, {45, true, true, true}}},
		{"glitch ignored", []sample{{0, false, false, false}, {10, true, false, false}, {15, false, false, false}, {100, false, false, false}}},
		{"release", []sample{{0, true, true, false}, {10, false, true, false}, {30, false, false, true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := debouncer{hold: 20 * time.Millisecond}
			for _, s := range tt.samples {
				level, edge := d.sample(s.raw, ms(s.at))
				assert.Equal(t, s.level, level, "level at %dms", s.at)
				assert.Equal(t, s.edge, edge, "edge at %dms", s.at)
			}
		})
	}
}

func TestStateString(t *testing.T) {
	assert.Equal(t, "AInPlay_BShuffling", AInPlay_BShuffling.String())
	assert.Equal(t, "Fault", Fault.String())
	assert.Equal(t, "State(42)", State(42).String())
	assert.Equal(t, "", NoShoe.String())
	assert.Equal(t, "B", ShoeA.other().String())
}

var testLimits = limits{
	start: 10 * time.Second, ready: 2 * time.Minute, shuffle: 3 * time.Minute,
	swap: 30 * time.Second, removed: 2 * time.Second, expectCards: 416, burnCards: 1, idPrefix: "t1-",
}

func TestNext(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	aIn := lines{presentA: true}
	aInReady := lines{presentA: true, ready: true}
	bInDone := lines{presentB: true, done: true}
	inPlayA := machine{state: AInPlay_BShuffling, inPlay: ShoeA, since: t0}
	requested := machine{state: SwapRequested, inPlay: ShoeA, since: t0}
	swapping := machine{state: Swapping, inPlay: ShoeA, since: t0}
	withReport := func(m machine, r shufflerproto.Report) machine { m.report = &r; return m }
	tick := func(d time.Duration, l lines) input { return input{trigger: tick, now: at(d), lines: l} }

	tests := []struct {
		name       string
		m          machine
		in         input
		want       State
		wantShoe   Shoe
		alarms     []string // codes of the alarms raised, in order
		inputs     []string // kinds of the table inputs, in order
		shoeID     string   // ShoeChanged id, when one is emitted
		err        error
		noSnapshot bool   // the machine must be unchanged (a refused command)
		cleared    string // the fault a supervisor's reset cleared
	}{
		{name: "start finds A", m: machine{since: t0}, in: tick(0, aIn), want: AInPlay_BShuffling, wantShoe: ShoeA},
		{name: "start finds B", m: machine{since: t0}, in: tick(0, lines{presentB: true}), want: BInPlay_AShuffling, wantShoe: ShoeB},
		{name: "start waits for a shoe", m: machine{since: t0}, in: tick(9*time.Second, lines{}), want: Starting},
		{name: "start times out without shoe", m: machine{since: t0}, in: tick(10*time.Second, lines{}),
			want: Fault, alarms: []string{AlarmNoShoe}, inputs: []string{"device_alarm"}},
		{name: "start times out with both", m: machine{since: t0}, in: tick(10*time.Second, lines{presentA: true, presentB: true}),
			want: Fault, alarms: []string{AlarmBothShoes}, inputs: []string{"device_alarm"}},
		{name: "dealing, shuffler busy", m: inPlayA, in: tick(time.Minute, aIn), want: AInPlay_BShuffling, wantShoe: ShoeA},
		{name: "shuffle slow warns without pausing", m: inPlayA, in: tick(3*time.Minute, aIn),
			want: AInPlay_BShuffling, wantShoe: ShoeA, alarms: []string{AlarmShuffleSlow}, inputs: []string{"device_alarm"}},
		{name: "shuffle slow warns once", m: machine{state: AInPlay_BShuffling, inPlay: ShoeA, since: t0, slowWarned: true},
			in: tick(4*time.Minute, aIn), want: AInPlay_BShuffling, wantShoe: ShoeA},
		{name: "shoe lifted briefly", m: inPlayA, in: tick(time.Minute, lines{}), want: AInPlay_BShuffling, wantShoe: ShoeA},
		{name: "shoe removed while dealing", m: machine{state: AInPlay_BShuffling, inPlay: ShoeA, since: t0, absentSince: at(time.Minute)},
			in: tick(time.Minute+2*time.Second, lines{}), want: Fault, wantShoe: ShoeA,
			alarms: []string{AlarmShoeRemoved}, inputs: []string{"device_alarm"}},
		{name: "request while dealing", m: inPlayA, in: input{trigger: request, now: at(time.Minute)}, want: SwapRequested, wantShoe: ShoeA},
		{name: "request twice is harmless", m: requested, in: input{trigger: request, now: at(time.Minute)}, want: SwapRequested, wantShoe: ShoeA},
		{name: "request while starting is kept", m: machine{since: t0}, in: input{trigger: request, now: t0}, want: Starting},
		{name: "kept request done once the shoe is known", m: machine{since: t0, swapAsked: true}, in: tick(time.Second, aIn),
			want: SwapRequested, wantShoe: ShoeA},
		{name: "kept request dropped by a fault", m: machine{since: t0, swapAsked: true}, in: tick(10*time.Second, lines{}),
			want: Fault, alarms: []string{AlarmNoShoe}, inputs: []string{"device_alarm"}},
		{name: "request in fault", m: machine{state: Fault, fault: AlarmNoAck}, in: input{trigger: request, now: t0}, want: Fault,
			err: ErrFault, noSnapshot: true},
		{name: "requested, shuffler ready", m: requested, in: tick(time.Second, aInReady), want: Swapping, wantShoe: ShoeA},
		{name: "requested, done still high from last swap", m: requested, in: tick(time.Second, lines{presentA: true, ready: true, done: true}),
			want: SwapRequested, wantShoe: ShoeA},
		{name: "requested, never ready", m: requested, in: tick(2*time.Minute, aIn), want: Fault, wantShoe: ShoeA,
			alarms: []string{AlarmNotReady}, inputs: []string{"device_alarm"}},
		{name: "swapping, shoes moving", m: swapping, in: tick(5*time.Second, lines{ready: true}), want: Swapping, wantShoe: ShoeA},
		{name: "swapping, no ack", m: swapping, in: tick(30*time.Second, lines{presentB: true}), want: Fault, wantShoe: ShoeA,
			alarms: []string{AlarmNoAck}, inputs: []string{"device_alarm"}},
		{name: "swap done", m: swapping, in: tick(9*time.Second, bInDone), want: BInPlay_AShuffling, wantShoe: ShoeB,
			inputs: []string{"shoe_changed"}, shoeID: "t1-B-20260101T120009.000"},
		{name: "swap done with report", m: withReport(swapping, shufflerproto.Report{Shoe: "B", ShoeID: "B-0007", Cards: 416}),
			in: tick(9*time.Second, bInDone), want: BInPlay_AShuffling, wantShoe: ShoeB,
			inputs: []string{"shoe_changed"}, shoeID: "B-0007"},
		{name: "swap done, card count wrong", m: withReport(swapping, shufflerproto.Report{Shoe: "B", ShoeID: "B-0007", Cards: 415}),
			in: tick(9*time.Second, bInDone), want: BInPlay_AShuffling, wantShoe: ShoeB,
			alarms: []string{AlarmCardCount}, inputs: []string{"device_alarm", "shoe_changed"}, shoeID: "B-0007"},
		{name: "swap done, report for the wrong shoe", m: withReport(swapping, shufflerproto.Report{Shoe: "A", ShoeID: "A-0001"}),
			in: tick(9*time.Second, bInDone), want: BInPlay_AShuffling, wantShoe: ShoeB,
			alarms: []string{AlarmWrongShoe}, inputs: []string{"device_alarm", "shoe_changed"}, shoeID: "t1-B-20260101T120009.000"},
		{name: "swap acknowledged, old shoe still seated", m: swapping, in: tick(9*time.Second, lines{presentA: true, presentB: true, done: true}),
			want: Fault, wantShoe: ShoeA, alarms: []string{AlarmSwapPresence}, inputs: []string{"device_alarm"}},
		{name: "fault is latched", m: machine{state: Fault, inPlay: ShoeA, fault: AlarmNoAck}, in: tick(time.Hour, aInReady), want: Fault, wantShoe: ShoeA},
		{name: "reset", m: machine{state: Fault, inPlay: ShoeA, fault: AlarmNoAck}, in: input{trigger: reset, now: t0}, want: Starting, wantShoe: ShoeA},
		{name: "supervisor's reset", m: machine{state: Fault, inPlay: ShoeA, fault: AlarmNoAck, swapAsked: true},
			in: input{trigger: resetFault, now: t0, by: "anna"}, want: Starting, wantShoe: ShoeA,
			alarms: []string{AlarmReset}, inputs: []string{"device_alarm"}, cleared: AlarmNoAck},
		{name: "supervisor's reset while dealing", m: inPlayA, in: input{trigger: resetFault, now: t0, by: "anna"},
			want: AInPlay_BShuffling, err: ErrNotInFault, noSnapshot: true},
		{name: "supervisor's reset during a swap", m: swapping, in: input{trigger: resetFault, now: t0, by: "anna"},
			want: Swapping, err: ErrNotInFault, noSnapshot: true},
		{name: "supervisor's reset while starting keeps the request", m: machine{since: t0, swapAsked: true},
			in: input{trigger: resetFault, now: t0, by: "anna"}, want: Starting, err: ErrNotInFault, noSnapshot: true},
		{name: "report stored", m: inPlayA, in: input{trigger: report, now: t0, report: shufflerproto.Report{Shoe: "B"}},
			want: AInPlay_BShuffling, wantShoe: ShoeA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, act := next(tt.m, tt.in, testLimits)
			assert.Equal(t, tt.want, got.state)
			if tt.wantShoe != NoShoe {
				assert.Equal(t, tt.wantShoe, got.inPlay)
			}
			if tt.err != nil {
				assert.ErrorIs(t, act.err, tt.err)
			} else {
				assert.NoError(t, act.err)
			}
			if tt.noSnapshot {
				assert.Equal(t, tt.m, got, "a refused command changes nothing")
			}
			var alarms []string
			var changes int
			for _, b := range act.bodies {
				switch b := b.(type) {
				case StateChanged:
					changes++
					assert.Equal(t, tt.want.String(), b.To)
				case ShoeSwapped:
					assert.Equal(t, testLimits.burnCards, b.BurnCards)
					assert.Equal(t, tt.shoeID, b.ShoeID)
				}
			}
			assert.Equal(t, tt.cleared, act.cleared)
			if tt.in.trigger == resetFault && act.err == nil {
				assert.Empty(t, got.fault)
				assert.False(t, got.swapAsked)
			}
			if got.state != tt.m.state || (tt.in.trigger == reset || tt.in.trigger == resetFault) && act.err == nil {
				assert.Equal(t, 1, changes, "one StateChanged per transition")
			} else {
				assert.Zero(t, changes)
			}
			var kinds []string
			for _, in := range act.inputs {
				kinds = append(kinds, in.Kind())
				switch in := in.(type) {
				case table.ShoeChanged:
					assert.Equal(t, tt.shoeID, in.ShoeID)
				case table.DeviceAlarm:
					alarms = append(alarms, in.Code)
					assert.Equal(t, "shuffler", in.Source)
					assert.Equal(t, in.Code != AlarmShuffleSlow && in.Code != AlarmReset, in.Pauses, in.Code)
					assert.NotEmpty(t, in.Message)
					if in.Code == AlarmReset {
						assert.Equal(t, "shuffler reset by anna after swap_not_acknowledged: it reads its presence sensors again", in.Message)
					}
				}
			}
			assert.Equal(t, tt.inputs, kinds)
			assert.Equal(t, tt.alarms, alarms)
			if tt.in.trigger == report {
				require.NotNil(t, got.report)
				assert.Equal(t, tt.in.report, *got.report)
			}
		})
	}
}
