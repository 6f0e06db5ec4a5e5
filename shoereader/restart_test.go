package shoereader_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/shoetest"
	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/rules"
)

// timedCard is a CARD frame stamped with the device's clock, as a real
// shoe stamps every frame (shoetest.Card stamps 0).
func timedCard(seq, ms uint32, c string) []byte {
	return shoetest.Frame(seq, shoeproto.Message{Type: shoeproto.TypeCard, Time: ms, Card: card.MustParse(c), Confidence: 99})
}

func timedHello(seq, ms uint32, serial string, boot uint32) []byte {
	return shoetest.Frame(seq, shoeproto.Message{Type: shoeproto.TypeHello, Time: ms, BootID: boot,
		Proto: shoeproto.ProtocolVersion, Vendor: []byte("Test"), Model: []byte("T-1"), Serial: []byte(serial), Firmware: []byte("1.0")})
}

// dealt writes n cards numbered from 1, one a second on the device's
// clock from 1 s, and returns their faces.
func dealt(t *testing.T, pr *pipeRig, n int) []string {
	t.Helper()
	faces := []string{"As", "Kd", "Qh", "Jc", "Ts", "9h", "8d", "7c", "6s", "5h"}
	var want []string
	for i := 1; i <= n; i++ {
		f := faces[i%len(faces)]
		want = append(want, f)
		pr.write(t, timedCard(uint32(i), uint32(1000*i), f))
	}
	return want
}

// cardsUntilMisread collects the cards delivered up to a MISREAD marker.
func cardsUntilMisread(t *testing.T, pr *pipeRig) (cards []string, kinds []shoereader.Kind) {
	t.Helper()
	for {
		ev := pr.event(t)
		kinds = append(kinds, ev.Kind)
		if ev.Kind == shoereader.Card {
			cards = append(cards, ev.Card.String())
		}
		if ev.Kind == shoereader.Misread {
			return cards, kinds
		}
	}
}

// TestPowerGlitchHelloLost is a shoe whose power glitched mid-shoe: it
// comes back with a new boot id and numbers from 1 (or any number)
// again, but its HELLO is lost on the line (a bit flipped as the power
// came back) and it streams on. Its new frames arrive under numbers the
// old session already used. The reader took them for duplicates and
// acknowledged next-1, which told the new device to forget cards never
// delivered: 7c and 6s were lost. Now a frame that repeats no delivered
// frame is neither delivered nor acknowledged; the reader asks for HELLO
// (CONFIG), the device's answer starts the new session, and every card
// comes once.
func TestPowerGlitchHelloLost(t *testing.T) {
	tests := []struct {
		name    string
		before  int    // cards delivered before the glitch
		restart uint32 // the number the device restarts at
		rounds  int    // retransmissions of the new frames before the reader asks
	}{
		{"restart at 1 within the window", 5, 1, 1},
		{"restart at 1 beyond the window", 40, 1, 1},
		{"restart at a higher number", 5, 1000, 1},
		// Within a window of the awaited number: a gap, answered with
		// RESEND, which the new device cannot answer; it retransmits on
		// its timeout and the reader gives the session up.
		{"restart at a number just above", 5, 8, 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No silence alarm: the device talks all along, so only the
			// reader's own judgement may ask for HELLO.
			pr := newPipeRig(t, shoereader.Options{SilenceTimeout: time.Hour})
			pr.write(t, timedHello(1, 500, "SN1", 1))
			require.Equal(t, shoereader.Connected, pr.event(t).Kind)
			want := dealt(t, pr, tt.before)
			pr.write(t, shoetest.Simple(uint32(tt.before+1), shoeproto.TypeMisread))
			got, _ := cardsUntilMisread(t, pr)
			require.Equal(t, want, got)
			last := uint32(tt.before + 1)
			require.Contains(t, pr.hostUntil(t, last), "ACK "+itoa(last))

			// The glitch: HELLO lost, then new cards from tt.restart on,
			// stamped by a clock that started again.
			s := tt.restart
			for range tt.rounds {
				pr.write(t, timedCard(s, 40, "7c"), timedCard(s+1, 90, "6s"))
			}
			host := hostUntilConfig(t, pr)
			for _, h := range host {
				assert.NotContains(t, h, "ACK", "a frame of the new stream was acknowledged in the old session: %v", host)
			}
			// The device answers CONFIG with HELLO naming its oldest
			// unacknowledged frame, and sends them again.
			pr.write(t, timedHello(s, 120, "SN1", 2), timedCard(s, 40, "7c"), timedCard(s+1, 90, "6s"), shoetest.Simple(s+2, shoeproto.TypeMisread))
			got, _ = cardsUntilMisread(t, pr)
			assert.Equal(t, []string{"7c", "6s"}, got)
			assert.Contains(t, pr.hostUntil(t, s+2), "ACK "+itoa(s+1))
		})
	}
}

// hostUntilConfig collects the host's replies up to a CONFIG.
func hostUntilConfig(t *testing.T, pr *pipeRig) []string {
	t.Helper()
	var out []string
	for {
		select {
		case m := <-pr.host:
			if m.Type == shoeproto.TypeConfig {
				return out
			}
			out = append(out, m.Type.String()+" "+itoa(m.Seq))
		case <-pr.ctx.Done():
			t.Fatalf("no CONFIG; host sent %v", out)
			return nil
		}
	}
}

// TestRestartUnderSameBootRefused is a shoe whose firmware draws the same
// boot id at every power-up (SPEC.md wants it random): after a glitch its
// HELLO claims the old session while it numbers from 1 again. Resuming
// acknowledged next-1, so the device forgot its new cards 1..5 and the
// reader dropped what it sent as duplicates. Its new frames cannot be
// told from the old ones (and the table dedups by serial/boot and
// number), so the reader refuses it: a DeviceRefused alarm that pauses
// the table with the reason, nothing acknowledged, the cards kept in the
// shoe.
func TestRestartUnderSameBootRefused(t *testing.T) {
	tests := []struct {
		name      string
		helloLost bool
		helloSeq  uint32
	}{
		{"HELLO heard, clock behind", false, 1},
		{"HELLO lost, then heard", true, 1},
		{"HELLO names a frame past the session's", false, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPipeRig(t, shoereader.Options{})
			pr.write(t, timedHello(1, 500, "SN1", 7))
			require.Equal(t, shoereader.Connected, pr.event(t).Kind)
			dealt(t, pr, 5)
			pr.write(t, shoetest.Frame(6, shoeproto.Message{Type: shoeproto.TypeMisread, Time: 5500}))
			cardsUntilMisread(t, pr)
			require.Contains(t, pr.hostUntil(t, 6), "ACK 6")

			if tt.helloLost {
				pr.write(t, timedCard(1, 40, "7c"))
				hostUntilConfig(t, pr)
			}
			pr.write(t, timedHello(tt.helloSeq, 60, "SN1", 7), timedCard(tt.helloSeq, 40, "7c"))
			ev := pr.event(t)
			require.Equal(t, shoereader.DeviceRefused, ev.Kind, ev.String())
			assert.ErrorIs(t, ev.Err, shoereader.ErrRefused)
			assert.ErrorIs(t, ev.Err, shoereader.ErrStreamRestarted)
			assert.Contains(t, ev.Message, "replace the shoe")
			assert.True(t, ev.Kind.Alarm())
			// Nothing more delivered, nothing acknowledged.
			pr.write(t, timedHello(tt.helloSeq, 70, "SN1", 7), timedCard(tt.helloSeq, 40, "7c"), shoetest.Simple(tt.helloSeq+1, shoeproto.TypeMisread))
			select {
			case ev := <-pr.events:
				t.Fatalf("event from a refused device: %v", ev)
			case m := <-pr.host:
				assert.NotEqual(t, shoeproto.TypeAck, m.Type, "ACK %d to a refused device", m.Seq)
			case <-time.After(300 * time.Millisecond):
			}
			// A proper power-up (a new boot id) is taken again.
			pr.write(t, timedHello(1, 80, "SN1", 8), timedCard(1, 40, "7c"), shoetest.Simple(2, shoeproto.TypeMisread))
			got, kinds := cardsUntilMisread(t, pr)
			assert.Equal(t, []string{"7c"}, got)
			assert.Contains(t, kinds, shoereader.Connected)
		})
	}
}

// TestAnotherShoeConnected is a different shoe (another serial number)
// put on the line mid-session: the reader says so with a DeviceChanged
// alarm (the table pauses) before it delivers the new shoe's cards.
func TestAnotherShoeConnected(t *testing.T) {
	pr := newPipeRig(t, shoereader.Options{})
	pr.write(t, timedHello(1, 500, "SN1", 1))
	require.Equal(t, shoereader.Connected, pr.event(t).Kind)
	dealt(t, pr, 2)
	pr.write(t, shoetest.Simple(3, shoeproto.TypeMisread))
	cardsUntilMisread(t, pr)
	// The same shoe rebooting is no alarm.
	pr.write(t, timedHello(1, 20, "SN1", 2), timedCard(1, 30, "9h"), shoetest.Simple(2, shoeproto.TypeMisread))
	got, kinds := cardsUntilMisread(t, pr)
	assert.Equal(t, []string{"9h"}, got)
	assert.NotContains(t, kinds, shoereader.DeviceChanged)

	pr.write(t, timedHello(1, 20, "SN2", 9))
	ev := pr.event(t)
	require.Equal(t, shoereader.DeviceChanged, ev.Kind, ev.String())
	assert.True(t, errors.Is(ev.Err, shoereader.ErrDeviceChanged))
	assert.Equal(t, "SN2", ev.Device.Serial)
	assert.Contains(t, ev.Message, "SN1")
	assert.True(t, ev.Kind.Alarm())
	assert.Equal(t, "device_changed", ev.Kind.String())
}

// TestPtyPowerGlitch glitches the simulated shoe's power mid-shoe, through
// a real pseudo-terminal, at the reader's defaults (AckOnCommit off).
// A correct firmware (a new boot id) restarts its numbering at 1 or at
// any number, with its HELLO heard or lost: every card dealt after the
// glitch comes once, after those before it, none twice. A firmware that
// keeps its boot id is refused with the reason, and nothing it sends
// after is delivered.
func TestPtyPowerGlitch(t *testing.T) {
	tests := []struct {
		name      string
		seq       uint32
		helloLost bool
		keepBoot  bool
	}{
		{"new boot, from 1", 1, false, false},
		{"new boot, from 1, HELLO lost", 1, true, false},
		{"new boot, from 5000", 5000, false, false},
		{"same boot, from 1", 1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t, shoe.Options{Seed: 3}, shoereader.Options{})
			before := cardsOf(rg.pull(t, 12))
			require.Len(t, before, 12)
			require.NoError(t, rg.dev.WaitIdle(rg.ctx))
			if tt.helloLost {
				rg.dev.DropNext(1)
			}
			rg.dev.PowerGlitch(tt.seq, tt.keepBoot)
			if tt.keepBoot {
				ev := rg.until(t, shoereader.DeviceRefused)
				assert.ErrorIs(t, ev[len(ev)-1].Err, shoereader.ErrStreamRestarted)
				assert.Empty(t, cardsOf(ev))
				_, err := rg.dev.QueuePullN(1)
				require.NoError(t, err)
				select {
				case ev := <-rg.events:
					assert.NotEqual(t, shoereader.Card, ev.Kind, "a card from a refused shoe: %v", ev)
				case <-time.After(500 * time.Millisecond):
				}
				return
			}
			after := cardsOf(rg.pull(t, 10))
			assert.Equal(t, rg.dev.Dealt(), append(before, after...), "every card once, in order")
			assert.Equal(t, uint64(0), rg.reader.Stats().Duplicates, "nothing of the new stream taken for a duplicate")
		})
	}
}

// TestAnotherShoePausesTheTable runs TestAnotherShoeConnected's swap of
// shoes through the Bridge into the table's state machine, as tabled
// wires them (RunFunc, AckOnCommit): the table pauses with
// shoe.device_changed and the reason, and the card the new shoe sends is
// set aside for the supervisor (the table needs no card between rounds;
// mid-round it is held until the supervisor's resume or void), not dealt.
func TestAnotherShoePausesTheTable(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	m, err := table.NewMachine(table.MachineConfig{Table: "t1", Rules: rs})
	require.NoError(t, err)
	var mu sync.Mutex
	var alarms []table.Alarm
	at := time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC)
	pr := startPipeRig(t, shoereader.Options{AckOnCommit: true}, func(ctx context.Context, r *shoereader.Reader, events chan shoereader.Event) error {
		b := &shoereader.Bridge{Reader: r, Log: zerolog.Nop(),
			Observe: func(ev shoereader.Event) { events <- ev },
			Submit: func(_ context.Context, in table.Input) error {
				mu.Lock()
				defer mu.Unlock()
				at = at.Add(time.Second)
				st, err := m.Apply(at, in)
				for _, e := range st.Events {
					if a, ok := e.Body.(table.Alarm); ok {
						alarms = append(alarms, a)
					}
				}
				return err
			}}
		return r.RunFunc(ctx, func(ev shoereader.Event) { b.Deliver(ctx, ev) })
	})
	pr.write(t, timedHello(1, 500, "SN1", 1),
		shoetest.Frame(1, shoeproto.Message{Type: shoeproto.TypeShoeIn, Time: 600}),
		shoetest.Frame(2, shoeproto.Message{Type: shoeproto.TypeShoeID, Time: 700, ShoeID: []byte("S-1")}))
	for _, k := range []shoereader.Kind{shoereader.Connected, shoereader.ShoeIn, shoereader.ShoeID} {
		require.Equal(t, k, pr.event(t).Kind)
	}
	pr.write(t, timedHello(1, 20, "SN2", 9), timedCard(1, 30, "As"))
	for _, k := range []shoereader.Kind{shoereader.DeviceChanged, shoereader.Card} {
		require.Equal(t, k, pr.event(t).Kind)
	}
	require.Contains(t, pr.hostUntil(t, 1), "ACK 1", "the card is the table's now: held, durable")
	mu.Lock()
	defer mu.Unlock()
	st := m.State()
	assert.True(t, st.Paused)
	assert.Contains(t, st.PauseReason, "another shoe connected")
	var codes []string
	for _, a := range alarms {
		codes = append(codes, a.Code)
	}
	assert.Equal(t, []string{"shoe.device_changed"}, codes)
	assert.Equal(t, []string{"As"}, st.SetAside)
}

// TestPtyImpossibleCards deals, through a pty, cards with a good CRC that
// cannot be in the shoe: a 7th A♠ from a 6-deck shoe (the 6th is
// legal), and from a one-deck RFID shoe a card whose code was already
// dealt (a tag read twice, a cloned card). Each is the table machine's
// finding: one pausing shoe.integrity_alarm that names it, the card not
// booked. (A card code out of range never gets this far: its frame is
// malformed, NAKed and given up as a misread, TestMalformedFrameGivenUp.)
func TestPtyImpossibleCards(t *testing.T) {
	as := card.MustParse("As")
	t.Run("7th ace of spades in 6 decks", func(t *testing.T) {
		rg := newRig(t, shoe.Options{Decks: 6, Script: []card.Card{as, as, as, as, as, as}}, shoereader.Options{Decks: 6})
		evs := rg.pull(t, 6)
		assert.Empty(t, tableAlarms(t, 6, evs, "shoe.integrity_alarm"), "six of a card in six decks")
		rg.dev.InjectForeign(as)
		evs = append(evs, rg.pull(t, 1)...)
		alarms := tableAlarms(t, 6, evs, "shoe.integrity_alarm")
		require.Len(t, alarms, 1)
		assert.Contains(t, alarms[0].Message, "over count: card As")
		assert.True(t, alarms[0].Pauses)
	})
	t.Run("code dealt twice from one deck", func(t *testing.T) {
		rg := newRig(t, shoe.Options{Decks: 1, Seed: 5, RFID: true}, shoereader.Options{Decks: 1})
		evs := rg.pull(t, 5)
		first := rg.dev.Dealt()[0]
		rg.dev.InjectCard(first, 1)
		evs = append(evs, rg.pull(t, 1)...)
		alarms := tableAlarms(t, 1, evs, "shoe.integrity_alarm")
		require.Len(t, alarms, 1)
		assert.Contains(t, alarms[0].Message, "duplicate code: card "+first.String())
		assert.True(t, alarms[0].Pauses)
	})
}
