package shoereader_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/shoetest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
)

// TestBridge: the bridge turns the reader's events into table inputs and
// acknowledges a frame only once the table has it (journaled, a duplicate
// or refused by its rules), never after a journal failure; a connection
// is told to the table.
func TestBridge(t *testing.T) {
	var mu sync.Mutex
	var got []table.Input
	verdict := map[string]error{
		"Qh": fmt.Errorf("%w: disk full", table.ErrJournal),
		"2c": table.ErrDuplicateFrame,
		"3c": table.ErrPaused,
	}
	pr := startPipeRig(t, shoereader.Options{AckOnCommit: true}, func(ctx context.Context, r *shoereader.Reader, events chan shoereader.Event) error {
		b := &shoereader.Bridge{Reader: r, Log: zerolog.Nop(),
			Observe: func(ev shoereader.Event) { events <- ev },
			Submit: func(_ context.Context, in table.Input) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, in)
				if c, ok := in.(table.CardDrawn); ok {
					return verdict[c.Card.String()]
				}
				return nil
			}}
		return r.RunFunc(ctx, func(ev shoereader.Event) { b.Deliver(ctx, ev) })
	})
	pr.write(t, shoetest.Hello(1, "SN1", "1.0", 7))
	require.Equal(t, shoereader.Connected, pr.event(t).Kind)
	assert.Equal(t, []string{"CONFIG", "ACK 0"}, pr.hostUntil(t, 0))

	steps := []struct {
		frame []byte
		ack   string
	}{
		{shoetest.Simple(1, shoeproto.TypeShoeIn), "ACK 1"},
		{shoetest.CardCode(2, "Td", "D03Td"), "ACK 2"},
		{shoetest.Card(3, "2c"), "ACK 3"}, // a duplicate frame: durable already
		{shoetest.Card(4, "3c"), "ACK 4"}, // refused by the table: decided
		{shoetest.Simple(5, shoeproto.TypeMisread), "ACK 5"},
		{shoetest.Card(6, "Qh"), "ACK 5"}, // the journal failed: the shoe keeps it
	}
	for _, s := range steps {
		pr.write(t, s.frame)
		pr.event(t)
		assert.Equal(t, []string{s.ack}, collect(pr, 1))
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 7)
	// The connection too, which pauses nothing: the table needs it after
	// a silence (it refuses resume while the shoe is down).
	up, ok := got[0].(table.DeviceAlarm)
	require.True(t, ok)
	assert.Equal(t, "shoe", up.Source)
	assert.Equal(t, "connected", up.Code)
	assert.False(t, up.Pauses)
	got = got[1:]
	assert.Equal(t, table.ShoeIn{Device: "SN1/7", DeviceSeq: 1}, got[0])
	assert.Equal(t, "D03Td", got[1].(table.CardDrawn).Code)
	alarm, ok := got[4].(table.DeviceAlarm)
	require.True(t, ok)
	assert.Equal(t, "misread", alarm.Code)
	assert.True(t, alarm.Pauses)
}

// TestBridgeShoeBack: the table is told the shoe is back by Connected
// after a disconnection or at start (Alive then is the HELLO heard
// before the device is accepted, or refused), and by Alive after a mute
// shoe on an accepted connection speaks again.
func TestBridgeShoeBack(t *testing.T) {
	r := shoereader.New(func(context.Context) (shoereader.Port, error) { return nil, fmt.Errorf("never opened") },
		shoereader.Options{AckOnCommit: true}, zerolog.Nop())
	var got []string
	b := &shoereader.Bridge{Reader: r, Log: zerolog.Nop(), Submit: func(_ context.Context, in table.Input) error {
		a := in.(table.DeviceAlarm)
		got = append(got, fmt.Sprintf("%s pauses=%v", a.Code, a.Pauses))
		return nil
	}}
	for _, k := range []shoereader.Kind{shoereader.Silent, shoereader.Alive, shoereader.Disconnected, shoereader.Alive, shoereader.DeviceRefused,
		shoereader.Disconnected, shoereader.Alive, shoereader.Connected, shoereader.Silent, shoereader.Alive} {
		b.Deliver(context.Background(), shoereader.Event{Kind: k})
	}
	assert.Equal(t, []string{"silent pauses=true", "device_refused pauses=true", "connected pauses=false",
		"silent pauses=true", "alive pauses=false"}, got)
}

// TestBridgeCoalescesFlood: a device refused at every HELLO of a firmware
// loop, 100 a second: the table (its real machine, on the events' times)
// coalesces the repeats while it is paused by the first; the bridge
// counts them and the alarm the table takes a window later says how many.
func TestBridgeCoalescesFlood(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	m, err := table.NewMachine(table.MachineConfig{Table: "t1", Rules: rs})
	require.NoError(t, err)
	r := shoereader.New(func(context.Context) (shoereader.Port, error) { return nil, fmt.Errorf("never opened") },
		shoereader.Options{}, zerolog.Nop())
	var taken []string
	var now time.Time
	b := &shoereader.Bridge{Reader: r, Log: zerolog.Nop(), Submit: func(_ context.Context, in table.Input) error {
		st, err := m.Apply(now, in)
		if err == nil {
			for _, ev := range st.Events {
				if a, ok := ev.Body.(table.Alarm); ok {
					taken = append(taken, a.Message)
				}
			}
		}
		return err
	}}
	t0 := time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)
	const n = 100 * 70 // 70 s at 100 a second
	for i := range n {
		now = t0.Add(time.Duration(i) * 10 * time.Millisecond)
		b.Deliver(context.Background(), shoereader.Event{Kind: shoereader.DeviceRefused, Time: now,
			Message: fmt.Sprintf("device \"X%d\" refused", i)})
	}
	require.Len(t, taken, 2, "the first, and one a minute later")
	assert.Equal(t, `device_refused: device "X0" refused`, taken[0])
	assert.Equal(t, `device_refused: device "X6000" refused (and 5999 more like it since the last, coalesced)`, taken[1])
}

// TestRefusedHelloFloodThroughReader: the flood from the wire: a firmware
// loop sends HELLO after HELLO, each with another (garbled) serial, so the
// reader refuses and reports every one; through the bridge, the table's
// real machine journals the first refusal only, and one a minute later
// (the reader's fake clock gives the times) that says how many it
// coalesced.
func TestRefusedHelloFloodThroughReader(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	m, err := table.NewMachine(table.MachineConfig{Table: "t1", Rules: rs})
	require.NoError(t, err)
	clk := clockwork.NewFakeClock()
	var mu sync.Mutex
	var journaled []string
	pr := startPipeRig(t, shoereader.Options{AllowSerials: []string{"GOOD"}, Clock: clk, SilenceTimeout: time.Hour},
		func(ctx context.Context, r *shoereader.Reader, events chan shoereader.Event) error {
			var now time.Time
			b := &shoereader.Bridge{Reader: r, Log: zerolog.Nop(),
				Observe: func(ev shoereader.Event) { now = ev.Time },
				Submit: func(_ context.Context, in table.Input) error {
					st, err := m.Apply(now, in)
					if err == nil {
						mu.Lock()
						for _, ev := range st.Events {
							if a, ok := ev.Body.(table.Alarm); ok {
								journaled = append(journaled, a.Message)
							}
						}
						mu.Unlock()
					}
					return err
				}}
			return r.RunFunc(ctx, func(ev shoereader.Event) {
				b.Deliver(ctx, ev)
				events <- ev
			})
		})
	const n = 300
	for i := range n + 1 {
		if i == n {
			clk.Advance(time.Minute)
		}
		pr.write(t, shoetest.Hello(1, fmt.Sprintf("G%04d", i), "1.0", 7))
		ev := pr.event(t)
		require.Equal(t, shoereader.DeviceRefused, ev.Kind)
		clk.Advance(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, journaled, 2)
	assert.Contains(t, journaled[0], `device "G0000"`)
	assert.Contains(t, journaled[1], fmt.Sprintf(`device "G%04d"`, n))
	assert.Contains(t, journaled[1], fmt.Sprintf("(and %d more like it since the last, coalesced)", n-1))
}
