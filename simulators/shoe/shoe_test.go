package shoe_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.bug.st/serial"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/table/card"
)

// host is a hand-driven host on the device's pty, to check the device's
// side of the protocol frame by frame.
type host struct {
	t    *testing.T
	port serial.Port
	dec  shoeproto.Decoder
	got  []shoeproto.Message
	seqs []uint32
	buf  []byte
}

func openHost(t *testing.T, path string) *host {
	t.Helper()
	p, err := serial.Open(path, &serial.Mode{BaudRate: 115200})
	require.NoError(t, err)
	require.NoError(t, p.SetReadTimeout(10*time.Millisecond))
	t.Cleanup(func() { _ = p.Close() })
	return &host{t: t, port: p, buf: make([]byte, 1024)}
}

// next reads until a frame of type ty arrives, returning its seq.
func (h *host) next(ty shoeproto.Type) (uint32, shoeproto.Message) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for i, m := range h.got {
			if m.Type == ty {
				seq := h.seqs[i]
				h.got, h.seqs = h.got[i+1:], h.seqs[i+1:]
				return seq, m
			}
		}
		n, err := h.port.Read(h.buf)
		require.NoError(h.t, err)
		h.dec.Feed(h.buf[:n], func(f shoeproto.Frame, err error) {
			var m shoeproto.Message
			if err == nil && m.Unmarshal(f) == nil {
				m.Vendor, m.Serial, m.ShoeID = clone(m.Vendor), clone(m.Serial), clone(m.ShoeID)
				m.Model, m.Firmware, m.Code = nil, nil, clone(m.Code)
				h.got = append(h.got, m)
				h.seqs = append(h.seqs, f.Seq)
			}
		})
	}
	h.t.Fatalf("no %v frame", ty)
	return 0, shoeproto.Message{}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

func (h *host) send(m shoeproto.Message) {
	h.t.Helper()
	b, err := shoeproto.AppendMessage(nil, 1, &m)
	require.NoError(h.t, err)
	_, err = h.port.Write(b)
	require.NoError(h.t, err)
}

func startDevice(t *testing.T, opts shoe.Options) (*shoe.Device, context.Context) {
	t.Helper()
	dev, err := shoe.New(opts, zerolog.Nop())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = dev.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		require.NoError(t, dev.Close())
	})
	return dev, ctx
}

func TestHelloThenShoeAndRetransmitUntilAcked(t *testing.T) {
	dev, ctx := startDevice(t, shoe.Options{Seed: 1, Serial: "SN42", Script: []card.Card{card.MustParse("Ah")}})
	h := openHost(t, dev.Path())
	seq, hello := h.next(shoeproto.TypeHello)
	assert.Equal(t, uint32(1), seq)
	assert.Equal(t, "SN42", string(hello.Serial))
	// Nothing sequenced goes out before the HELLO is acknowledged; after
	// the ACK, SHOE_IN and SHOE_ID follow.
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 0})
	seq, _ = h.next(shoeproto.TypeShoeIn)
	assert.Equal(t, uint32(1), seq)
	seq, id := h.next(shoeproto.TypeShoeID)
	assert.Equal(t, uint32(2), seq)
	assert.Equal(t, "SN42-0001", string(id.ShoeID))
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 2})

	pulled := make(chan error, 1)
	go func() { pulled <- dev.Pull(ctx) }()
	seq, c := h.next(shoeproto.TypeCard)
	assert.Equal(t, uint32(3), seq)
	assert.Equal(t, "Ah", c.Card.String())
	// Not acknowledged: the same frame comes again.
	seq2, c2 := h.next(shoeproto.TypeCard)
	assert.Equal(t, seq, seq2)
	assert.Equal(t, c.Card, c2.Card)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 3})
	require.NoError(t, <-pulled)
	assert.Equal(t, []card.Card{card.MustParse("Ah")}, dev.Dealt())
}

func TestResetRestartsSequence(t *testing.T) {
	dev, _ := startDevice(t, shoe.Options{Seed: 1})
	h := openHost(t, dev.Path())
	_, hello := h.next(shoeproto.TypeHello)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 0})
	h.next(shoeproto.TypeShoeID)
	h.send(shoeproto.Message{Type: shoeproto.TypeReset})
	seq, hello2 := h.next(shoeproto.TypeHello)
	assert.Equal(t, uint32(1), seq)
	assert.NotEqual(t, hello.BootID, hello2.BootID, "a reset is a new boot")
	// CONFIG is answered with HELLO too.
	h.send(shoeproto.Message{Type: shoeproto.TypeConfig, HeartbeatMS: 50, Window: 4})
	h.next(shoeproto.TypeHello)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 0})
	// With a 50 ms heartbeat and nothing to send, heartbeats come.
	h.next(shoeproto.TypeHeartbeat)
}

func TestCloseRemovesPty(t *testing.T) {
	dev, err := shoe.New(shoe.Options{}, zerolog.Nop())
	require.NoError(t, err)
	path := dev.Path()
	_, err = os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, dev.Close())
	require.NoError(t, dev.Close(), "Close is idempotent")
	assert.Empty(t, dev.Path())
	_, err = os.Stat(path)
	assert.True(t, os.IsNotExist(err), "pty %s still exists", path)
	assert.ErrorIs(t, dev.Pull(context.Background()), shoe.ErrClosed)
}

func TestUnplugReplugErrors(t *testing.T) {
	dev, err := shoe.New(shoe.Options{}, zerolog.Nop())
	require.NoError(t, err)
	defer dev.Close()
	assert.ErrorIs(t, dev.Replug(), shoe.ErrUnplugged)
	require.NoError(t, dev.Unplug())
	assert.Empty(t, dev.Path())
	assert.ErrorIs(t, dev.Unplug(), shoe.ErrUnplugged)
	require.NoError(t, dev.Replug())
	assert.NotEmpty(t, dev.Path())
}

func TestOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		opts shoe.Options
	}{
		{"script beyond the composition", shoe.Options{Decks: 1, Script: []card.Card{card.MustParse("As"), card.MustParse("As")}}},
		{"serial too long", shoe.Options{Serial: string(make([]byte, 100))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev, err := shoe.New(tt.opts, zerolog.Nop())
			require.Error(t, err)
			assert.Nil(t, dev)
		})
	}
}

func TestShoeEmpty(t *testing.T) {
	dev, ctx := startDevice(t, shoe.Options{Decks: 1, Seed: 3})
	h := openHost(t, dev.Path())
	h.next(shoeproto.TypeHello)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 0})
	// Acknowledge everything as it comes, like a reader.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err := h.port.Read(h.buf)
			if err != nil {
				return
			}
			h.dec.Feed(h.buf[:n], func(f shoeproto.Frame, err error) {
				if err == nil {
					h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: f.Seq})
				}
			})
		}
	}()
	require.NoError(t, dev.PullN(ctx, 52))
	assert.Zero(t, dev.Remaining())
	assert.ErrorIs(t, dev.Pull(ctx), shoe.ErrShoeEmpty)
	assert.Len(t, dev.Dealt(), 52)
	comp := card.NewComposition(1)
	for _, c := range dev.Dealt() {
		require.NoError(t, comp.Take(c))
	}
	close(stop)
	<-done
}

func TestRunTwice(t *testing.T) {
	dev, ctx := startDevice(t, shoe.Options{})
	openHost(t, dev.Path()).next(shoeproto.TypeHello) // the first Run is serving
	assert.ErrorIs(t, dev.Run(ctx), shoe.ErrRunTwice)
}

// TestPullMisreadTakesTheCard: a misread the dealer pulls takes the card
// out of the shoe: MISREAD goes instead of its frame, the card is the
// one returned (what the supervisor corrects with), the next pull deals
// the card after it, and SHOE_OUT counts one card fewer left.
func TestPullMisreadTakesTheCard(t *testing.T) {
	dev, ctx := startDevice(t, shoe.Options{Decks: 1, Seed: 1, Script: []card.Card{card.MustParse("Qh"), card.MustParse("7c")}})
	h := openHost(t, dev.Path())
	h.next(shoeproto.TypeHello)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 0})
	seq, _ := h.next(shoeproto.TypeShoeID)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: seq})
	left := dev.Remaining()

	type pulledCard struct {
		c   card.Card
		err error
	}
	got := make(chan pulledCard, 1)
	go func() { c, err := dev.PullMisread(ctx); got <- pulledCard{c, err} }()
	seq, _ = h.next(shoeproto.TypeMisread)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: seq})
	p := <-got
	require.NoError(t, p.err)
	assert.Equal(t, "Qh", p.c.String())
	assert.Equal(t, left-1, dev.Remaining())

	pulled := make(chan error, 1)
	go func() { pulled <- dev.Pull(ctx) }()
	seq, c := h.next(shoeproto.TypeCard)
	assert.Equal(t, "7c", c.Card.String(), "the card after the misread one")
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: seq})
	require.NoError(t, <-pulled)

	out := make(chan error, 1)
	go func() { out <- dev.ShoeOut(ctx) }()
	seq, m := h.next(shoeproto.TypeShoeOut)
	assert.EqualValues(t, left-2, m.Returned, "the misread card and 7c are out")
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: seq})
	require.NoError(t, <-out)
}

// A queued card tells when the host's ACK was read: not before it was
// read, and not before the card was queued.
func TestQueuedAckedAt(t *testing.T) {
	dev, ctx := startDevice(t, shoe.Options{Seed: 1, Script: []card.Card{card.MustParse("Kd")}})
	h := openHost(t, dev.Path())
	h.next(shoeproto.TypeHello)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: 0})
	seq, _ := h.next(shoeproto.TypeShoeID)
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: seq})

	assert.True(t, shoe.Queued{}.AckedAt().IsZero(), "nothing queued, nothing acknowledged")
	queued := time.Now()
	q, err := dev.QueuePullN(1)
	require.NoError(t, err)
	seq, _ = h.next(shoeproto.TypeCard)
	assert.True(t, q.AckedAt().IsZero(), "not acknowledged yet")
	h.send(shoeproto.Message{Type: shoeproto.TypeAck, Seq: seq})
	require.NoError(t, q.Wait(ctx))
	at := q.AckedAt()
	assert.False(t, at.Before(queued), "read after it was queued: %v < %v", at, queued)
	assert.False(t, at.After(time.Now()))
}
