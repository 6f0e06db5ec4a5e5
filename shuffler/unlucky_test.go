package shuffler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shuffler"
	"github.com/livetable/livetable/shuffler/pinmap"
	simshuffler "github.com/livetable/livetable/simulators/shuffler"
	"github.com/livetable/livetable/table"
)

// TestCutCardSensorWithNoShoeInPlay fires the cut-card sensor (bouncing,
// as cutCard does) where no cut card can come out: the shoe in play
// lifted out of its slot (within the 2 s the controller allows), and
// mid-swap (the acknowledgement lost, so the swap waits). Each was
// reported to the table as the cut card, which ends the shoe in play
// (the table closes it between rounds and asks for the swap). Now it is
// a non-pausing shuffler.cutcard_no_shoe alarm, once per state however
// often the sensor flickers, and the sensor counts again once the shoe
// is back.
func TestCutCardSensorWithNoShoeInPlay(t *testing.T) {
	cutNoShoe := func(t *testing.T, inputs []table.Input, n int) {
		t.Helper()
		var got int
		for _, in := range inputs {
			_, isCut := in.(table.CutCardSeen)
			assert.False(t, isCut, "a cut card reported with no shoe in play: %v", inputs)
			if a, ok := in.(table.DeviceAlarm); ok && a.Code == shuffler.AlarmCutNoShoe {
				got++
				assert.False(t, a.Pauses)
				assert.Equal(t, "shuffler", a.Source)
				assert.Contains(t, a.Message, "no shoe in play")
			}
		}
		assert.Equal(t, n, got, "alarms: %v", inputs)
	}

	t.Run("shoe lifted", func(t *testing.T) {
		r := newRig(t, simshuffler.Options{}, shuffler.Options{})
		r.untilState(shuffler.AInPlay_BShuffling, time.Second)
		r.drain()
		a := pin(t, r.bank, pinmap.ShoeAPresent)
		a.Assert(false)
		r.advance(3 * poll)
		cut := pin(t, r.bank, pinmap.CutCardSensor)
		for range 2 { // flickers twice: one alarm
			cut.Assert(true)
			r.advance(3 * poll)
			cut.Assert(false)
			r.advance(3 * poll)
		}
		a.Assert(true)
		r.advance(3 * poll)
		inputs, _ := r.drain()
		cutNoShoe(t, inputs, 1)
		require.Equal(t, shuffler.AInPlay_BShuffling, r.ctl.State(), "back within the time allowed: no fault")

		r.cutCard()
		inputs, _ = r.drain()
		assert.Equal(t, []table.Input{table.CutCardSeen{Source: "sensor"}}, inputs, "the shoe back in its slot: the cut card counts")
	})

	t.Run("mid-swap", func(t *testing.T) {
		r := newRig(t, simshuffler.Options{Fault: simshuffler.LostAck}, shuffler.Options{ReadyTimeout: time.Minute})
		r.untilState(shuffler.AInPlay_BShuffling, time.Second)
		r.advance(100 * time.Second) // B shuffled
		require.NoError(t, r.ctl.RequestSwap(r.ctx))
		r.untilState(shuffler.Swapping, time.Minute)
		r.advance(5 * time.Second) // the shoes are moving
		r.drain()
		r.cutCard()
		inputs, _ := r.drain()
		cutNoShoe(t, inputs, 1)
		assert.Equal(t, shuffler.Swapping, r.ctl.State())
	})
}

// TestSwapDoneStuckAfterASwap is the shuffler acknowledging a swap twice:
// swap_done comes up again after the handshake ended and stays. The next
// swap cannot start (the daemon asks only with swap_done released); the
// ready timeout faulted with shuffler_not_ready, "shoe A not ready",
// sending the supervisor to a shuffle that was done. Now the fault says
// what is wrong: swap_done_stuck.
func TestSwapDoneStuckAfterASwap(t *testing.T) {
	r := newRig(t, simshuffler.Options{}, shuffler.Options{ReadyTimeout: time.Minute})
	r.untilState(shuffler.AInPlay_BShuffling, time.Second)
	r.advance(100 * time.Second)
	require.NoError(t, r.ctl.RequestSwap(r.ctx))
	r.untilState(shuffler.BInPlay_AShuffling, time.Minute)
	done := pin(t, r.bank, pinmap.SwapDone)
	r.until("swap_done released", time.Second, func() bool { return !done.Asserted() })

	done.Assert(true) // the second acknowledgement, stuck
	r.until("A shuffled", 3*time.Minute, func() bool { return pin(t, r.bank, pinmap.ShufflerReady).Asserted() })
	r.drain()
	require.NoError(t, r.ctl.RequestSwap(r.ctx))
	r.untilState(shuffler.Fault, 2*time.Minute)
	assert.Equal(t, shuffler.AlarmAckStuck, r.ctl.Fault())
	inputs, _ := r.drain()
	codes := []string{}
	for _, a := range alarms(inputs) {
		codes = append(codes, a.Code)
		assert.True(t, a.Pauses)
		assert.Contains(t, a.Message, "swap_done still asserted")
	}
	assert.Equal(t, []string{shuffler.AlarmAckStuck}, codes)
	assert.False(t, pin(t, r.bank, pinmap.SwapRequest).Asserted(), "swap_request never asserted with swap_done up")
}
