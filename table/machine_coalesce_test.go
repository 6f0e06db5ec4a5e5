package table

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func refusedHello(n int) DeviceAlarm {
	return DeviceAlarm{Source: "shoe", Code: "device_refused", Pauses: true,
		Message: fmt.Sprintf(`device_refused: shoereader: device "X%d" firmware "1.0.0" (protocol 1) refused: serial number not on the allow-list`, n)}
}

// TestAlarmCoalesced: a device alarm repeated while the table is paused
// by it is coalesced for AlarmRepeatWindow (by the inputs' times): it is
// refused (ErrAlarmRepeated: not journaled, no event, nothing changed);
// the first always goes, the next a window later, any after a resume;
// alarms about cards never coalesce.
func TestAlarmCoalesced(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(x *mt)
		wait    time.Duration // before the input, beyond the second per input
		in      Input
		wantErr error
	}{
		{"the first goes", func(x *mt) {}, 0, refusedHello(1), nil},
		{"a repeat within the window is coalesced", func(x *mt) { x.must(refusedHello(1)) }, 0, refusedHello(2), ErrAlarmRepeated},
		{"also just before the window ends", func(x *mt) { x.must(refusedHello(1)) }, AlarmRepeatWindow - 2*time.Second, refusedHello(2), ErrAlarmRepeated},
		{"one a window later goes", func(x *mt) { x.must(refusedHello(1)) }, AlarmRepeatWindow - time.Second, refusedHello(2), nil},
		{"another code goes", func(x *mt) { x.must(refusedHello(1)) }, 0,
			DeviceAlarm{Source: "shoe", Code: "device_fault", Message: "fault 7", Pauses: true}, nil},
		{"after a resume it goes, and pauses again", func(x *mt) {
			x.must(refusedHello(1), Supervisor{Command: "resume", By: "sup"})
		}, 0, refusedHello(2), nil},
		{"a misread is never coalesced", func(x *mt) {
			x.must(DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #4", Pauses: true})
		}, 0, DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #5", Pauses: true}, nil},
		{"nor two cards at once", func(x *mt) {
			x.must(DeviceAlarm{Source: "shoe", Code: "double_card", Message: "double #4", Pauses: true})
		}, 0, DeviceAlarm{Source: "shoe", Code: "double_card", Message: "double #5", Pauses: true}, nil},
		{"nor the journal's", func(x *mt) {
			x.must(DeviceAlarm{Source: "journal", Code: "torn_tail", Message: "torn", Pauses: true})
		}, 0, DeviceAlarm{Source: "journal", Code: "torn_tail", Message: "torn", Pauses: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := dealing(t)
			tt.setup(x)
			x.at = x.at.Add(tt.wait)
			before := x.fingerprint()
			st, err := x.apply(tt.in)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, before, x.fingerprint(), "a coalesced alarm changes nothing")
				return
			}
			require.NoError(t, err)
			alarmCoded(t, st, tt.in.(DeviceAlarm).Source+"."+tt.in.(DeviceAlarm).Code)
			assert.True(t, x.m.State().Paused)
		})
	}
}

// TestAlarmFloodBounded: a device refused at every HELLO, 300 a second
// for ten minutes while the table stays paused: at most one alarm a
// minute is journaled (applied) and published, and a replay of what was
// journaled, at its times, rebuilds the same machine.
func TestAlarmFloodBounded(t *testing.T) {
	type rec struct {
		at time.Time
		in Input
	}
	x := dealing(t)
	var journal []rec
	events := 0
	const perSecond, minutes = 300, 10
	for i := range perSecond * 60 * minutes {
		at := x.at.Add(time.Duration(i) * time.Second / perSecond)
		in := refusedHello(i)
		st, err := x.m.Apply(at, in)
		if err != nil {
			require.ErrorIs(t, err, ErrAlarmRepeated)
			continue
		}
		journal = append(journal, rec{at, in})
		events += len(st.Events)
	}
	assert.Len(t, journal, minutes, "one a minute")
	// The first: the alarm, the pause, the phase and the state; each
	// later one: the alarm and the state (the table is paused already:
	// no pause event again, and the state still gives the first cause).
	assert.Equal(t, 4+2*(minutes-1), events)
	assert.Contains(t, x.m.State().PauseReason, `device "X0"`)
	assert.Len(t, x.m.State().Alarms, minutes, "the state lists each journaled one")

	// A replay: the inputs of dealing(), then the journaled alarms.
	y := dealing(t)
	for _, r := range journal {
		_, err := y.m.Apply(r.at, r.in)
		require.NoError(t, err)
	}
	assert.Equal(t, x.fingerprint(), y.fingerprint())
	assert.Equal(t, x.m.repeatAt, y.m.repeatAt)
}

// TestAlarmCoalescedAcrossClockStepBack: a paused table's window for a
// device's repeated alarm is judged by the inputs' wall times; with the
// wall clock stepped back an hour (NTP correcting a clock that was
// ahead) while paused, epoch 5 refused every repeat for that hour and the
// window: a device fault the supervisor needs never reached them. From
// epochClockBack an alarm earlier than the last one raised goes, the
// window starting from it; repeats after it coalesce again.
func TestAlarmCoalescedAcrossClockStepBack(t *testing.T) {
	fault := func(n int) DeviceAlarm {
		return DeviceAlarm{Source: "shuffler", Code: "timeout", Message: fmt.Sprintf("timeout %d", n), Pauses: true}
	}
	tests := []struct {
		name  string
		epoch int
		// after the first alarm at x.at: each repeat's offset from it and
		// whether it is taken.
		repeats []time.Duration
		taken   []bool
	}{
		{"epoch 5: refused until the clock catches up", epochUpgradeMisread,
			[]time.Duration{-time.Hour + 10*time.Second, -30 * time.Minute, -time.Second, 30 * time.Second, AlarmRepeatWindow},
			[]bool{false, false, false, false, true}},
		{"a step back lets the next repeat go, and the window starts from it", CurrentRulesEpoch,
			[]time.Duration{-time.Hour + 10*time.Second, -time.Hour + 20*time.Second, -time.Hour + 10*time.Second + AlarmRepeatWindow, -30 * time.Minute},
			[]bool{true, false, true, true}},
		{"a step back of a second is a step back", CurrentRulesEpoch,
			[]time.Duration{-time.Second, 0, 30 * time.Second, -time.Second + AlarmRepeatWindow},
			[]bool{true, false, false, true}},
		{"the same time is inside the window", CurrentRulesEpoch,
			[]time.Duration{0}, []bool{false}},
		{"forward only: as before", CurrentRulesEpoch,
			[]time.Duration{10 * time.Second, AlarmRepeatWindow - time.Second, AlarmRepeatWindow, AlarmRepeatWindow + time.Second},
			[]bool{false, false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := dealing(t)
			x.m.epoch = tt.epoch
			x.must(fault(0))
			t0 := x.at
			require.True(t, x.m.State().Paused)
			for i, d := range tt.repeats {
				before := x.fingerprint()
				st, err := x.m.Apply(t0.Add(d), fault(i+1))
				if !tt.taken[i] {
					require.ErrorIs(t, err, ErrAlarmRepeated, "repeat %d at %v", i+1, d)
					assert.Equal(t, before, x.fingerprint(), "a coalesced alarm changes nothing")
					continue
				}
				require.NoError(t, err, "repeat %d at %v", i+1, d)
				alarmCoded(t, st, "shuffler.timeout")
				assert.Equal(t, t0.Add(d), x.m.repeatAt["shuffler.timeout"], "the window starts from it")
			}
		})
	}
}
