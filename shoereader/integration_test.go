package shoereader_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table/card"
)

// testLog writes to the test's log only when it fails, at warn level.
func testLog(t *testing.T) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
}

// rig is a simulated shoe on a real pty and a reader opening its slave
// path with serialport.Open, both stopped and waited for at cleanup.
type rig struct {
	dev    *shoe.Device
	reader *shoereader.Reader
	events chan shoereader.Event
	ctx    context.Context
	stop   func() // stops and waits for both; safe to call twice
}

func newRig(t *testing.T, sopts shoe.Options, ropts shoereader.Options) *rig {
	t.Helper()
	return newRigOpen(t, sopts, ropts, func(dev *shoe.Device) shoereader.Opener {
		return func(ctx context.Context) (shoereader.Port, error) {
			// Look the path up anew each time: a replug moves it.
			return serialport.Open(dev.Path(), serialport.DefaultBaud)
		}
	})
}

// newRigOpen is newRig with the reader's opener made by opener.
func newRigOpen(t *testing.T, sopts shoe.Options, ropts shoereader.Options, opener func(*shoe.Device) shoereader.Opener) *rig {
	t.Helper()
	dev, err := shoe.New(sopts, testLog(t))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	r := shoereader.New(opener(dev), ropts, testLog(t))
	rg := &rig{dev: dev, reader: r, events: make(chan shoereader.Event, 1024), ctx: ctx}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = dev.Run(ctx) }()
	go func() { defer wg.Done(); _ = r.Run(ctx, rg.events) }()
	var once sync.Once
	rg.stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			require.NoError(t, dev.Close())
		})
	}
	t.Cleanup(rg.stop)
	return rg
}

// next returns the next event that is not a heartbeat-level detail,
// failing the test if none comes before the rig's deadline.
func (rg *rig) next(t *testing.T) shoereader.Event {
	t.Helper()
	select {
	case ev := <-rg.events:
		return ev
	case <-rg.ctx.Done():
		t.Fatal("no event before the test deadline")
		return shoereader.Event{}
	}
}

// until collects events until one of kind k arrives, and returns them all.
func (rg *rig) until(t *testing.T, k shoereader.Kind) []shoereader.Event {
	t.Helper()
	var evs []shoereader.Event
	for {
		ev := rg.next(t)
		evs = append(evs, ev)
		if ev.Kind == k {
			return evs
		}
	}
}

func cardsOf(evs []shoereader.Event) []card.Card {
	var out []card.Card
	for _, ev := range evs {
		if ev.Kind == shoereader.Card {
			out = append(out, ev.Card)
		}
	}
	return out
}

func kindsOf(evs []shoereader.Event) map[shoereader.Kind]int {
	out := map[shoereader.Kind]int{}
	for _, ev := range evs {
		out[ev.Kind]++
	}
	return out
}

// pull deals n cards in one burst (the device's window fills) and then a
// marker (a MISREAD), so the test knows every card before it has been
// delivered.
func (rg *rig) pull(t *testing.T, n int) []shoereader.Event {
	t.Helper()
	require.NoError(t, rg.dev.PullN(rg.ctx, n))
	require.NoError(t, rg.dev.Misread(rg.ctx))
	return rg.until(t, shoereader.Misread)
}

func TestPtyDealsExactSequence(t *testing.T) {
	script := []card.Card{card.MustParse("As"), card.MustParse("Kd"), card.MustParse("7c"), card.MustParse("7c"), card.MustParse("Th")}
	rg := newRig(t, shoe.Options{Seed: 7, Script: script}, shoereader.Options{})
	for range 39 {
		require.NoError(t, rg.dev.Pull(rg.ctx)) // one at a time, each ACKed
	}
	evs := rg.pull(t, 1)
	k := kindsOf(evs)
	assert.Equal(t, 1, k[shoereader.Connected])
	assert.Equal(t, 1, k[shoereader.ShoeIn])
	assert.Equal(t, 1, k[shoereader.ShoeID])
	got := cardsOf(evs)
	assert.Equal(t, rg.dev.Dealt(), got)
	assert.Equal(t, script, got[:len(script)])
	for _, ev := range evs {
		switch ev.Kind {
		case shoereader.Card:
			in, ok := ev.Input()
			require.True(t, ok)
			assert.Equal(t, "card", in.Kind())
		case shoereader.ShoeID:
			// The shoe's id is the table's to keep: the reader stamps it
			// on nothing else.
			assert.Equal(t, "SIM0001-0001", ev.ShoeID)
		}
	}
}

// TestNoGoroutineLeak runs a shoe and a reader through a pty, with a
// reconnection, stops them and checks every goroutine they started ended.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("rig", func(t *testing.T) {
		rg := newRig(t, shoe.Options{Seed: 1}, shoereader.Options{BackoffMin: time.Millisecond})
		rg.pull(t, 10)
		require.NoError(t, rg.dev.Unplug())
		rg.until(t, shoereader.Disconnected)
		require.NoError(t, rg.dev.Replug())
		rg.pull(t, 10)
		rg.stop()
	})
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left running")
}
