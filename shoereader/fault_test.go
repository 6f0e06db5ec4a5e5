package shoereader_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/rules"
)

// TestPtyLineFaults deals through a pty with each line fault switched on:
// the reader must deliver exactly the dealt sequence, once and in order.
func TestPtyLineFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults shoe.Faults
		check  func(t *testing.T, st shoereader.Stats)
	}{
		{"noise", shoe.Faults{NoiseEvery: 2, NoiseBytes: 24}, func(t *testing.T, st shoereader.Stats) {
			assert.Positive(t, st.BadFrames)
		}},
		{"crc errors", shoe.Faults{CorruptEvery: 3}, func(t *testing.T, st shoereader.Stats) {
			assert.Positive(t, st.BadFrames)
		}},
		{"dropped frames", shoe.Faults{DropEvery: 4}, func(t *testing.T, st shoereader.Stats) {
			assert.Positive(t, st.Gaps)
		}},
		{"duplicated frames", shoe.Faults{DuplicateEvery: 2}, func(t *testing.T, st shoereader.Stats) {
			assert.Positive(t, st.Duplicates)
		}},
		{"everything at once", shoe.Faults{NoiseEvery: 5, NoiseBytes: 40, CorruptEvery: 7, DropEvery: 6, DuplicateEvery: 4}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t, shoe.Options{Seed: 11, Faults: tt.faults}, shoereader.Options{})
			evs := rg.pull(t, 60)
			assert.Equal(t, rg.dev.Dealt(), cardsOf(evs))
			assert.Len(t, cardsOf(evs), 60)
			assert.Zero(t, kindsOf(evs)[shoereader.IntegrityAlarm])
			// The reader's counters are read while it blocks on the next
			// event: stop it first.
			rg.stop()
			if tt.check != nil {
				tt.check(t, rg.reader.Stats())
			}
		})
	}
}

func TestPtyDeviceEvents(t *testing.T) {
	rg := newRig(t, shoe.Options{Seed: 3}, shoereader.Options{})
	ctx := rg.ctx
	require.NoError(t, rg.dev.Pull(ctx))
	require.NoError(t, rg.dev.DoubleCard(ctx))
	require.NoError(t, rg.dev.Jam(ctx))
	require.NoError(t, rg.dev.FaceUp(ctx, card.MustParse("Qs")))
	require.NoError(t, rg.dev.UnknownCard(ctx, "ZZZ"))
	require.NoError(t, rg.dev.DeviceFault(ctx, 7, "lamp"))
	require.NoError(t, rg.dev.Pull(ctx))
	evs := rg.pull(t, 0)
	var kinds []shoereader.Kind
	for _, ev := range evs {
		if ev.Kind != shoereader.Connected && ev.Kind != shoereader.ShoeIn && ev.Kind != shoereader.ShoeID {
			kinds = append(kinds, ev.Kind)
		}
		switch ev.Kind {
		case shoereader.FaceUp:
			assert.Equal(t, "Qs", ev.Card.String())
		case shoereader.UnknownCard:
			assert.Equal(t, "ZZZ", ev.Code)
		case shoereader.DeviceFault:
			var fe *shoereader.FaultError
			require.ErrorAs(t, ev.Err, &fe)
			assert.Equal(t, uint16(7), fe.Code)
			assert.True(t, ev.Kind.Alarm())
		}
	}
	assert.Equal(t, []shoereader.Kind{shoereader.Card, shoereader.DoubleCard, shoereader.Jam, shoereader.FaceUp,
		shoereader.UnknownCard, shoereader.DeviceFault, shoereader.Card, shoereader.Misread}, kinds)
	assert.Equal(t, rg.dev.Dealt(), cardsOf(evs))
}

func TestPtySilence(t *testing.T) {
	clk := clockwork.NewFakeClock()
	rg := newRig(t, shoe.Options{Seed: 5}, shoereader.Options{Clock: clk})
	evs := rg.pull(t, 3)
	require.Len(t, cardsOf(evs), 3)
	require.NoError(t, rg.dev.WaitIdle(rg.ctx))

	rg.dev.SetSilent(true)
	clk.Advance(4 * time.Second)
	evs = rg.until(t, shoereader.Silent)
	assert.True(t, errors.Is(evs[len(evs)-1].Err, shoereader.ErrSilent))
	assert.Equal(t, "no frame from the shoe for 3s", evs[len(evs)-1].Message, "connected, mute")

	rg.dev.SetSilent(false)
	done := make(chan error, 1)
	go func() { done <- rg.dev.Pull(rg.ctx) }()
	evs = rg.until(t, shoereader.Card)
	assert.Equal(t, shoereader.Alive, evs[0].Kind)
	require.NoError(t, <-done)
	dealt := rg.dev.Dealt()
	require.Len(t, dealt, 4)
	assert.Equal(t, dealt[3], evs[len(evs)-1].Card, "the card pulled after the silence is delivered")
}

func TestPtyUnplugReplug(t *testing.T) {
	rg := newRig(t, shoe.Options{Seed: 9}, shoereader.Options{BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond})
	var all []shoereader.Event
	all = append(all, rg.pull(t, 5)...)
	oldPath := rg.dev.Path()

	require.NoError(t, rg.dev.Unplug())
	lost := rg.until(t, shoereader.Disconnected)
	require.ErrorIs(t, lost[len(lost)-1].Err, serialport.ErrHangup, "the unplug is read as a hangup")
	all = append(all, lost...)
	// A card pulled while unplugged is held by the device and delivered
	// once after the replug.
	done := make(chan error, 1)
	go func() { done <- rg.dev.Pull(rg.ctx) }()
	require.NoError(t, rg.dev.Replug())
	assert.NotEmpty(t, rg.dev.Path())
	require.NoError(t, <-done)
	all = append(all, rg.pull(t, 5)...)

	k := kindsOf(all)
	assert.Equal(t, 2, k[shoereader.Connected])
	assert.Equal(t, 1, k[shoereader.Disconnected])
	assert.Equal(t, rg.dev.Dealt(), cardsOf(all))
	assert.Len(t, cardsOf(all), 11)
	t.Logf("path before %s, after %s", oldPath, rg.dev.Path())
}

// TestPtyReplugUnderNewPath: the reader opens one fixed path, as tabled
// does with shoe.path, and the replugged shoe comes back under another pty
// (the old one is taken meanwhile, as a USB adapter's ttyUSB0 becomes
// ttyUSB1). Through the link the simulated shoe keeps (Options.Link, the
// udev rule's SYMLINK) the reader finds it again and the session goes on:
// every card once, in order, the one pulled while unplugged included.
func TestPtyReplugUnderNewPath(t *testing.T) {
	link := filepath.Join(t.TempDir(), "livetable-shoe-t1")
	rg := newRigOpen(t, shoe.Options{Seed: 9, Link: link},
		shoereader.Options{BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond},
		func(*shoe.Device) shoereader.Opener { return serialport.Opener(link, serialport.DefaultBaud) })
	target, err := os.Readlink(link)
	require.NoError(t, err)
	oldPath := rg.dev.Path()
	assert.Equal(t, oldPath, target)
	all := rg.pull(t, 5)

	require.NoError(t, rg.dev.Unplug())
	all = append(all, rg.until(t, shoereader.Disconnected)...)
	_, err = os.Lstat(link)
	require.True(t, os.IsNotExist(err), "the link goes with the cable: %v", err)
	// Take the freed pty number, so the shoe comes back elsewhere: the
	// kernel gives the lowest free one, which may be another first when
	// other processes free theirs.
	for range 64 {
		m, s, err := pty.Open()
		require.NoError(t, err)
		t.Cleanup(func() { _ = m.Close(); _ = s.Close() })
		if s.Name() == oldPath {
			break
		}
	}

	done := make(chan error, 1)
	go func() { done <- rg.dev.Pull(rg.ctx) }()
	require.NoError(t, rg.dev.Replug())
	require.NotEqual(t, oldPath, rg.dev.Path(), "the replug did not move the pty")
	target, err = os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, rg.dev.Path(), target)
	require.NoError(t, <-done)
	all = append(all, rg.pull(t, 5)...)

	k := kindsOf(all)
	assert.Equal(t, 2, k[shoereader.Connected])
	assert.Equal(t, rg.dev.Dealt(), cardsOf(all))
	assert.Len(t, cardsOf(all), 11)

	rg.stop()
	_, err = os.Lstat(link)
	assert.True(t, os.IsNotExist(err), "Close removes the link: %v", err)
}

// tableAlarms applies the reader's events to a table's state machine, as
// tabled does, and returns the alarms it raised with the given code.
func tableAlarms(t *testing.T, decks int, evs []shoereader.Event, code string) []table.Alarm {
	t.Helper()
	rs, err := rules.Game("000")
	require.NoError(t, err)
	rs.Decks = decks
	rs.Penetration = min(rs.Penetration, decks*card.DeckSize-10)
	m, err := table.NewMachine(table.MachineConfig{Table: "t1", Rules: rs})
	require.NoError(t, err)
	var alarms []table.Alarm
	for _, ev := range evs {
		in, ok := ev.Input()
		if !ok {
			continue
		}
		st, err := m.Apply(ev.Time, in)
		require.NoError(t, err, "%s", ev)
		for _, e := range st.Events {
			if a, ok := e.Body.(table.Alarm); ok && a.Code == code {
				alarms = append(alarms, a)
			}
		}
	}
	return alarms
}

// TestPtyIntegrity: through a pty, a foreign card's RFID code is the
// reader's finding (it needs no memory); a card beyond the composition and
// a short deck are the table machine's, from the cards the reader
// delivered.
func TestPtyIntegrity(t *testing.T) {
	comp := card.NewComposition(1)
	oneDeck := comp.Cards()
	t.Run("foreign card rfid", func(t *testing.T) {
		rg := newRig(t, shoe.Options{Seed: 1, RFID: true}, shoereader.Options{})
		evs := rg.pull(t, 3)
		rg.dev.InjectForeign(card.MustParse("As"))
		evs = append(evs, rg.pull(t, 2)...)
		dealt := rg.dev.Dealt()
		var alarms []*shoereader.IntegrityError
		for _, ev := range evs {
			if ev.Kind == shoereader.IntegrityAlarm {
				var ie *shoereader.IntegrityError
				require.ErrorAs(t, ev.Err, &ie)
				assert.ErrorIs(t, ev.Err, shoereader.ErrIntegrity)
				alarms = append(alarms, ie)
			}
		}
		require.Len(t, alarms, 1)
		assert.Equal(t, shoereader.UnknownCode, alarms[0].Reason, alarms[0].Error())
		// The offending card is not delivered as a card; the rest is.
		assert.Equal(t, append(dealt[:3:3], dealt[4:]...), cardsOf(evs))
	})
	t.Run("foreign card beyond its count", func(t *testing.T) {
		rg := newRig(t, shoe.Options{Decks: 1, Script: oneDeck}, shoereader.Options{Decks: 1})
		evs := rg.pull(t, 52)
		rg.dev.InjectForeign(card.MustParse("7h"))
		evs = append(evs, rg.pull(t, 1)...)
		assert.Zero(t, kindsOf(evs)[shoereader.IntegrityAlarm], "the reader keeps no count")
		alarms := tableAlarms(t, 1, evs, "shoe.integrity_alarm")
		require.Len(t, alarms, 1)
		assert.Contains(t, alarms[0].Message, "over count: card 7h")
		assert.True(t, alarms[0].Pauses)
	})
	t.Run("short deck", func(t *testing.T) {
		rg := newRig(t, shoe.Options{Seed: 2, Faults: shoe.Faults{ShortDeck: 1}}, shoereader.Options{})
		evs := rg.pull(t, 20)
		require.NoError(t, rg.dev.NewShoe(rg.ctx, nil))
		evs = append(evs, rg.until(t, shoereader.ShoeID)...)
		alarms := tableAlarms(t, 8, evs, "shoe.integrity_alarm")
		require.Len(t, alarms, 1)
		assert.Contains(t, alarms[0].Message, "count mismatch: 20 dealt + 395 returned = 415 cards, composition is 416")
	})
}

// TestPtyShuffleCheck: an unshuffled shoe, read through a pty, raises the
// table machine's shuffle alarm at the 7th card in a previous shoe's order.
func TestPtyShuffleCheck(t *testing.T) {
	tests := []struct {
		name       string
		unshuffled bool
		wantAlarm  bool
	}{
		{"shuffled shoes", false, false},
		{"unshuffled repeat", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t, shoe.Options{Seed: 21, Faults: shoe.Faults{Unshuffled: tt.unshuffled}}, shoereader.Options{})
			evs := rg.pull(t, 30)
			require.NoError(t, rg.dev.NewShoe(rg.ctx, nil))
			evs = append(evs, rg.pull(t, 30)...)
			// The first shoe's count (30 dealt + 386 returned) is right.
			assert.Empty(t, tableAlarms(t, 8, evs, "shoe.integrity_alarm"))
			alarms := tableAlarms(t, 8, evs, "shoe.shuffle_alarm")
			if !tt.wantAlarm {
				assert.Empty(t, alarms)
				return
			}
			require.Len(t, alarms, 1)
			assert.Equal(t, `shoe "SIM0001-0002" deals 7 cards in the same order as shoe "SIM0001-0001": not shuffled`, alarms[0].Message)
		})
	}
}

func TestPtyRefusedDevice(t *testing.T) {
	tests := []struct {
		name  string
		ropts shoereader.Options
	}{
		{"serial", shoereader.Options{AllowSerials: []string{"SN-OTHER"}}},
		{"firmware", shoereader.Options{AllowFirmware: []string{"2.0.0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t, shoe.Options{Seed: 4}, tt.ropts)
			ev := rg.next(t)
			require.Equal(t, shoereader.DeviceRefused, ev.Kind, ev.String())
			assert.ErrorIs(t, ev.Err, shoereader.ErrRefused)
			assert.Equal(t, "SIM0001", ev.Device.Serial)
			// Its cards are never acknowledged nor delivered.
			ctx, cancel := context.WithTimeout(rg.ctx, 300*time.Millisecond)
			defer cancel()
			assert.ErrorIs(t, rg.dev.Pull(ctx), context.DeadlineExceeded)
			select {
			case ev := <-rg.events:
				t.Fatalf("refused device produced %v", ev)
			default:
			}
		})
	}
}

// TestPtyReaderRestart: the daemon restarts while the shoe keeps its
// session; the new reader asks for HELLO with CONFIG and the cards pulled
// meanwhile are delivered once, in order.
func TestPtyReaderRestart(t *testing.T) {
	dev, err := shoe.New(shoe.Options{Seed: 12}, testLog(t))
	require.NoError(t, err)
	defer dev.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	devDone := make(chan error, 1)
	go func() { devDone <- dev.Run(ctx) }()
	open := func(ctx context.Context) (shoereader.Port, error) {
		return serialport.Open(dev.Path(), serialport.DefaultBaud)
	}
	startReader := func() (chan shoereader.Event, func()) {
		rctx, rcancel := context.WithCancel(ctx)
		events := make(chan shoereader.Event, 512)
		done := make(chan error, 1)
		r := shoereader.New(open, shoereader.Options{}, testLog(t))
		go func() { done <- r.Run(rctx, events) }()
		return events, func() { rcancel(); <-done }
	}
	collect := func(events chan shoereader.Event, n int) []card.Card {
		var got []card.Card
		for len(got) < n {
			select {
			case ev := <-events:
				if ev.Kind == shoereader.Card {
					got = append(got, ev.Card)
				}
			case <-ctx.Done():
				t.Fatalf("only %d of %d cards", len(got), n)
			}
		}
		return got
	}

	events, stop := startReader()
	require.NoError(t, dev.PullN(ctx, 5))
	first := collect(events, 5)
	stop()

	// Cards pulled while no reader runs wait in the device.
	pulled := make(chan error, 1)
	go func() { pulled <- dev.PullN(ctx, 5) }()
	events, stop = startReader()
	defer stop()
	second := collect(events, 5)
	require.NoError(t, <-pulled)
	assert.Equal(t, dev.Dealt(), append(first, second...))
	cancel()
	<-devDone
}
