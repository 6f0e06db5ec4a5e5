package shoereader_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/shoetest"
	"github.com/livetable/livetable/table/card"
)

// pipeRig runs a Reader on an in-memory port; the test plays the device
// by writing frames and reads the host's replies from host.
type pipeRig struct {
	dev    net.Conn
	events chan shoereader.Event
	host   chan shoeproto.Message
	reader *shoereader.Reader
	ctx    context.Context
	stop   func()
}

func newPipeRig(t *testing.T, opts shoereader.Options) *pipeRig {
	t.Helper()
	return startPipeRig(t, opts, func(ctx context.Context, r *shoereader.Reader, events chan shoereader.Event) error {
		return r.Run(ctx, events)
	})
}

// startPipeRig is newPipeRig with the reader started by run, which sends
// the reader's events on events.
func startPipeRig(t *testing.T, opts shoereader.Options, run func(context.Context, *shoereader.Reader, chan shoereader.Event) error) *pipeRig {
	t.Helper()
	port, dev := shoetest.Pipe()
	ports := make(chan shoereader.Port, 1)
	ports <- port
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	r := shoereader.New(shoetest.Opener(ports), opts, testLog(t))
	pr := &pipeRig{dev: dev, events: make(chan shoereader.Event, 256), host: make(chan shoeproto.Message, 256), reader: r, ctx: ctx}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = run(ctx, r, pr.events) }()
	go func() {
		defer wg.Done()
		var d shoeproto.Decoder
		buf := make([]byte, 512)
		for {
			n, err := dev.Read(buf)
			if err != nil {
				return
			}
			d.Feed(buf[:n], func(f shoeproto.Frame, err error) {
				var m shoeproto.Message
				if err == nil && m.Unmarshal(f) == nil {
					pr.host <- m
				}
			})
		}
	}()
	var once sync.Once
	pr.stop = func() {
		once.Do(func() {
			cancel()
			_ = dev.Close()
			wg.Wait()
		})
	}
	t.Cleanup(pr.stop)
	return pr
}

func (pr *pipeRig) write(t *testing.T, frames ...[]byte) {
	t.Helper()
	for _, f := range frames {
		_, err := pr.dev.Write(f)
		require.NoError(t, err)
	}
}

func (pr *pipeRig) event(t *testing.T) shoereader.Event {
	t.Helper()
	select {
	case ev := <-pr.events:
		return ev
	case <-pr.ctx.Done():
		t.Fatal("no event")
		return shoereader.Event{}
	}
}

// hostUntil collects the host's replies up to and including the ACK of seq.
func (pr *pipeRig) hostUntil(t *testing.T, seq uint32) []string {
	t.Helper()
	var out []string
	for {
		select {
		case m := <-pr.host:
			s := m.Type.String()
			if m.Type != shoeproto.TypeConfig {
				s += fmt.Sprint(" ", m.Seq)
			}
			out = append(out, s)
			if m.Type == shoeproto.TypeAck && m.Seq == seq {
				return out
			}
		case <-pr.ctx.Done():
			t.Fatalf("no ACK %d; host sent %v", seq, out)
			return nil
		}
	}
}

func corrupt(f []byte) []byte {
	f = append([]byte(nil), f...)
	f[len(f)-3] ^= 0x01
	return f
}

func TestSequencing(t *testing.T) {
	// A CARD with a good CRC but rank 14.
	badRank, err := shoeproto.AppendFrame(nil, 2, shoeproto.TypeCard, []byte{0, 0, 0, 0, 14, 1, 90, 0})
	require.NoError(t, err)

	tests := []struct {
		name      string
		frames    [][]byte
		last      uint32 // seq of the final frame, a MISREAD marker
		wantCards []string
		wantHost  []string
	}{
		{"in order",
			[][]byte{shoetest.Card(1, "As"), shoetest.Card(2, "Kd"), shoetest.Simple(3, shoeproto.TypeMisread)}, 3,
			[]string{"As", "Kd"}, []string{"ACK 1", "ACK 2", "ACK 3"}},
		{"duplicate dropped and re-acknowledged",
			[][]byte{shoetest.Card(1, "As"), shoetest.Card(1, "As"), shoetest.Card(2, "Kd"), shoetest.Simple(3, shoeproto.TypeMisread)}, 3,
			[]string{"As", "Kd"}, []string{"ACK 1", "ACK 1", "ACK 2", "ACK 3"}},
		{"gap asks for a resend once",
			[][]byte{shoetest.Card(1, "As"), shoetest.Card(3, "7c"), shoetest.Card(4, "8c"), shoetest.Card(2, "Kd"),
				shoetest.Card(3, "7c"), shoetest.Card(4, "8c"), shoetest.Simple(5, shoeproto.TypeMisread)}, 5,
			[]string{"As", "Kd", "7c", "8c"}, []string{"ACK 1", "RESEND 2", "ACK 2", "ACK 3", "ACK 4", "ACK 5"}},
		{"bad crc is NAKed",
			[][]byte{shoetest.Card(1, "As"), corrupt(shoetest.Card(2, "Kd")), shoetest.Card(2, "Kd"), shoetest.Simple(3, shoeproto.TypeMisread)}, 3,
			[]string{"As", "Kd"}, []string{"ACK 1", "NAK 2", "ACK 2", "ACK 3"}},
		{"malformed payload is NAKed",
			[][]byte{shoetest.Card(1, "As"), badRank, shoetest.Card(2, "Kd"), shoetest.Simple(3, shoeproto.TypeMisread)}, 3,
			[]string{"As", "Kd"}, []string{"ACK 1", "NAK 2", "ACK 2", "ACK 3"}},
		{"garbage and a truncated frame are skipped",
			[][]byte{[]byte("\x00\xff garbage"), shoetest.Card(1, "As")[:7], shoetest.Card(1, "As"), []byte{0xA5, 0x10}, shoetest.Card(2, "Kd"), shoetest.Simple(3, shoeproto.TypeMisread)}, 3,
			[]string{"As", "Kd"}, []string{"NAK 1", "ACK 1", "ACK 2", "ACK 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPipeRig(t, shoereader.Options{})
			pr.write(t, shoetest.Hello(1, "SN1", "1.0", 77))
			require.Equal(t, shoereader.Connected, pr.event(t).Kind)
			assert.Equal(t, []string{"CONFIG", "ACK 0"}, pr.hostUntil(t, 0))
			pr.write(t, tt.frames...)
			var cards []string
			for {
				ev := pr.event(t)
				if ev.Kind == shoereader.Card {
					cards = append(cards, ev.Card.String())
				}
				if ev.Kind == shoereader.Misread {
					assert.Equal(t, tt.last, ev.Seq)
					break
				}
			}
			assert.Equal(t, tt.wantCards, cards)
			assert.Equal(t, tt.wantHost, pr.hostUntil(t, tt.last))
		})
	}
}

func TestNoSessionAsksForHello(t *testing.T) {
	pr := newPipeRig(t, shoereader.Options{})
	pr.write(t, shoetest.Card(5, "As"), shoetest.Hello(5, "SN1", "1.0", 1), shoetest.Card(5, "As"))
	ev := pr.event(t)
	require.Equal(t, shoereader.Connected, ev.Kind)
	assert.Equal(t, "SN1", ev.Device.Serial)
	ev = pr.event(t)
	assert.Equal(t, shoereader.Card, ev.Kind)
	assert.Equal(t, uint32(5), ev.Seq)
	// CONFIG at connect, CONFIG again for the card before HELLO, then ACKs.
	assert.Equal(t, []string{"CONFIG", "CONFIG", "ACK 4", "ACK 5"}, pr.hostUntil(t, 5))
}

func TestRebootStartsNewSession(t *testing.T) {
	pr := newPipeRig(t, shoereader.Options{})
	pr.write(t, shoetest.Hello(1, "SN1", "1.0", 1), shoetest.Card(1, "As"), shoetest.Card(2, "Kd"))
	// Same device and boot id after a replug: the session resumes, so a
	// retransmitted card 2 is a duplicate.
	pr.write(t, shoetest.Hello(2, "SN1", "1.0", 1), shoetest.Card(2, "Kd"))
	// A reboot (new boot id) restarts the numbering at 1.
	pr.write(t, shoetest.Hello(1, "SN1", "1.0", 2), shoetest.Card(1, "7c"), shoetest.Simple(2, shoeproto.TypeMisread))
	var cards []string
	for {
		ev := pr.event(t)
		if ev.Kind == shoereader.Card {
			cards = append(cards, ev.Card.String())
		}
		if ev.Kind == shoereader.Misread {
			break
		}
	}
	assert.Equal(t, []string{"As", "Kd", "7c"}, cards)
}

func TestRFIDIntegrity(t *testing.T) {
	tests := []struct {
		name   string
		frame  []byte
		reason shoereader.Reason
	}{
		{"code names another card", shoetest.CardCode(2, "Th", "D03Td"), shoereader.CodeMismatch},
		{"deck beyond the shoe", shoetest.CardCode(2, "Td", "D09Td"), shoereader.UnknownCode},
		{"not a code", shoetest.CardCode(2, "Td", "hello"), shoereader.UnknownCode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := newPipeRig(t, shoereader.Options{})
			pr.write(t, shoetest.Hello(1, "SN1", "1.0", 1), shoetest.CardCode(1, "Td", "D03Td"), tt.frame)
			require.Equal(t, shoereader.Connected, pr.event(t).Kind)
			ev := pr.event(t)
			require.Equal(t, shoereader.Card, ev.Kind)
			assert.Equal(t, "D03Td", ev.Code)
			ev = pr.event(t)
			require.Equal(t, shoereader.IntegrityAlarm, ev.Kind)
			var ie *shoereader.IntegrityError
			require.ErrorAs(t, ev.Err, &ie)
			assert.Equal(t, tt.reason, ie.Reason)
			assert.True(t, strings.HasPrefix(ie.Error(), "shoereader: "))
		})
	}
}

func TestRefusedProtocol(t *testing.T) {
	pr := newPipeRig(t, shoereader.Options{})
	pr.write(t, shoetest.Frame(1, shoeproto.Message{Type: shoeproto.TypeHello, Proto: 9, Serial: []byte("SN1")}), shoetest.Card(1, "As"))
	ev := pr.event(t)
	require.Equal(t, shoereader.DeviceRefused, ev.Kind)
	var re *shoereader.RefusedError
	require.ErrorAs(t, ev.Err, &re)
	assert.Contains(t, re.Why, "protocol version 9")
	// An allowed HELLO afterwards is accepted.
	pr.write(t, shoetest.Hello(1, "SN1", "1.0", 1), shoetest.Card(1, "As"))
	assert.Equal(t, shoereader.Connected, pr.event(t).Kind)
	assert.Equal(t, shoereader.Card, pr.event(t).Kind)
}

func TestReconnectAfterOpenFailures(t *testing.T) {
	port, dev := shoetest.Pipe()
	defer dev.Close()
	calls := 0
	open := func(ctx context.Context) (shoereader.Port, error) {
		calls++
		if calls < 3 {
			return nil, errors.New("no such device")
		}
		if calls == 3 {
			return port, nil
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events := make(chan shoereader.Event, 16)
	r := shoereader.New(open, shoereader.Options{BackoffMin: time.Millisecond}, testLog(t))
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, events) }()
	go func() {
		buf := make([]byte, 256)
		for {
			if _, err := dev.Read(buf); err != nil {
				return
			}
		}
	}()
	_, err := dev.Write(shoetest.Hello(1, "SN1", "1.0", 1))
	require.NoError(t, err)
	ev := <-events
	assert.Equal(t, shoereader.Connected, ev.Kind)
	require.NoError(t, dev.Close())
	ev = <-events
	assert.Equal(t, shoereader.Disconnected, ev.Kind)
	assert.Error(t, ev.Err)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	// Three opens to connect, and maybe one more that was waiting when
	// the context ended.
	assert.Contains(t, []int{3, 4}, calls)
}

func TestKindsAndEvents(t *testing.T) {
	for k := shoereader.Card; k <= shoereader.DeviceRefused; k++ {
		assert.NotContains(t, k.String(), "Kind(", "kind %d has no name", k)
	}
	assert.Equal(t, "Kind(99)", shoereader.Kind(99).String())
	assert.True(t, shoereader.IntegrityAlarm.Alarm())
	assert.False(t, shoereader.Card.Alarm())
	assert.Equal(t, "code mismatch", shoereader.CodeMismatch.String())

	ev := shoereader.Event{Kind: shoereader.Card, Seq: 4, Card: card.MustParse("As"), ShoeID: "S1", DeviceTime: 9}
	assert.Equal(t, "card #4 As", ev.String())
	in, ok := ev.Input()
	require.True(t, ok)
	assert.Equal(t, "card", in.Kind())
	in, ok = shoereader.Event{Kind: shoereader.CutCard}.Input()
	require.True(t, ok)
	assert.Equal(t, "cut_card", in.Kind())
	in, ok = shoereader.Event{Kind: shoereader.ShoeID, ShoeID: "S2"}.Input()
	require.True(t, ok)
	assert.Equal(t, "shoe_changed", in.Kind())
	_, ok = shoereader.Event{Kind: shoereader.Jam}.Input()
	assert.False(t, ok)
}

// TestDeps enforces architecture.md: production code does not import the
// simulators, and only serialport opens real serial ports.
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		assert.False(t, strings.Contains(dep, "/simulators/"), "shoereader imports %s", dep)
		assert.False(t, strings.HasPrefix(dep, "go.bug.st/serial"), "shoereader imports %s (only serialport may)", dep)
	}
}

// TestSilentWhileUnplugged: a port that cannot be opened for longer than
// the silence timeout raises Silent, on the fake clock, saying the shoe
// is disconnected.
func TestSilentWhileUnplugged(t *testing.T) {
	clk := clockwork.NewFakeClock()
	open := func(ctx context.Context) (shoereader.Port, error) { return nil, errors.New("unplugged") }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events := make(chan shoereader.Event, 4)
	r := shoereader.New(open, shoereader.Options{Clock: clk}, testLog(t))
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, events) }()
	require.NoError(t, clk.BlockUntilContext(ctx, 1)) // Run waits out its backoff
	clk.Advance(4 * time.Second)
	ev := <-events
	assert.Equal(t, shoereader.Silent, ev.Kind)
	assert.ErrorIs(t, ev.Err, shoereader.ErrSilent)
	// Not "no frame from the shoe": the people at the table check the
	// cable, not the shoe's firmware.
	assert.Equal(t, "shoe disconnected for over 3s (unplugged)", ev.Message)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

func TestRunOnceClosesOut(t *testing.T) {
	open := func(ctx context.Context) (shoereader.Port, error) { return nil, errors.New("no port") }
	r := shoereader.New(open, shoereader.Options{BackoffMin: time.Millisecond}, testLog(t))
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan shoereader.Event, 4)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, events) }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	_, open2 := <-events
	assert.False(t, open2, "Run closes its output channel")
	assert.ErrorIs(t, r.Run(context.Background(), make(chan shoereader.Event)), shoereader.ErrRunTwice)
}

// TestMalformedFrameGivenUp: the device answers a NAK with the same
// bytes, so a payload that cannot be read never will be. Before
// MaxMalformed the reader NAKed the first copy and ignored the rest: every
// later frame waited behind it, the shoe heard and no alarm raised. Now
// the frame is acknowledged and reported, a card's as a Misread (the card
// is out and unknown), another's as a DeviceFault, and the next card
// comes through.
func TestMalformedFrameGivenUp(t *testing.T) {
	badRank, err := shoeproto.AppendFrame(nil, 2, shoeproto.TypeCard, []byte{0, 0, 0, 0, 14, 1, 90, 0})
	require.NoError(t, err)
	badShoeID, err := shoeproto.AppendFrame(nil, 2, shoeproto.TypeShoeID, []byte{0, 0, 0, 0, 9, 'x'})
	require.NoError(t, err)
	tests := []struct {
		name  string
		frame []byte
		want  shoereader.Kind
	}{
		{"card", badRank, shoereader.Misread},
		{"shoe id", badShoeID, shoereader.DeviceFault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No silence in the test: the frames come at once.
			pr := newPipeRig(t, shoereader.Options{SilenceTimeout: time.Hour})
			pr.write(t, shoetest.Hello(1, "SN1", "1.0", 77))
			require.Equal(t, shoereader.Connected, pr.event(t).Kind)
			pr.write(t, shoetest.Card(1, "As"))
			// The first copy and the retransmissions of the device's
			// timeout, each with the window's next frame behind it.
			for range 3 { // shoereader.MaxMalformed
				pr.write(t, tt.frame, shoetest.Card(3, "Kd"))
			}
			ev := pr.event(t)
			require.Equal(t, shoereader.Card, ev.Kind)
			assert.Equal(t, "As", ev.Card.String())

			ev = pr.event(t)
			require.Equal(t, tt.want, ev.Kind, ev.String())
			assert.True(t, ev.Kind.Alarm(), "the table pauses")
			assert.Equal(t, uint32(2), ev.Seq, "committed and journaled as frame 2")
			var me *shoereader.MalformedError
			require.ErrorAs(t, ev.Err, &me)
			assert.Equal(t, uint32(2), me.Seq)
			assert.Contains(t, ev.Message, "frame #2 unreadable 3 times")

			// The device goes on from frame 3, now that 2 is acknowledged.
			pr.write(t, shoetest.Card(3, "Kd"))
			ev = pr.event(t)
			require.Equal(t, shoereader.Card, ev.Kind)
			assert.Equal(t, uint32(3), ev.Seq)
			assert.Equal(t, []string{"CONFIG", "ACK 0", "ACK 1", "NAK 2", "ACK 2", "ACK 3"}, pr.hostUntil(t, 3))
		})
	}

	// A HELLO carries the number of the frame it announces: given up, it
	// would take that number and the frame would be dropped as a
	// duplicate. However often it comes malformed, the card behind it
	// is delivered.
	t.Run("hello", func(t *testing.T) {
		badHello, err := shoeproto.AppendFrame(nil, 2, shoeproto.TypeHello, []byte{0, 0, 0, 0, 0, 0, 0, 77, 1, 60})
		require.NoError(t, err)
		pr := newPipeRig(t, shoereader.Options{SilenceTimeout: time.Hour})
		pr.write(t, shoetest.Hello(1, "SN1", "1.0", 77))
		require.Equal(t, shoereader.Connected, pr.event(t).Kind)
		pr.write(t, shoetest.Card(1, "As"))
		for range 5 {
			pr.write(t, badHello)
		}
		pr.write(t, shoetest.Card(2, "Kd"))
		for _, want := range []string{"As", "Kd"} {
			ev := pr.event(t)
			require.Equal(t, shoereader.Card, ev.Kind, ev.String())
			assert.Equal(t, want, ev.Card.String())
		}
	})
}
