package shoereader_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/shoetest"
	"github.com/livetable/livetable/table/card"
)

// scriptPort replays fixed reads, then ends the run: the last Read cancels
// the context and fails.
type scriptPort struct {
	reads  [][]byte
	cancel context.CancelFunc
}

func (p *scriptPort) Read(b []byte) (int, error) {
	if len(p.reads) == 0 {
		p.cancel()
		return 0, io.EOF
	}
	n := copy(b, p.reads[0])
	p.reads[0] = p.reads[0][n:]
	if len(p.reads[0]) == 0 {
		p.reads = p.reads[1:]
	}
	return n, nil
}

func (p *scriptPort) Write(b []byte) (int, error)        { return len(b), nil }
func (p *scriptPort) Close() error                       { return nil }
func (p *scriptPort) SetReadTimeout(time.Duration) error { return nil }

// FuzzReader feeds arbitrary bytes, in two reads, to a whole Reader: it
// must never panic nor hang, whatever the device sends.
func FuzzReader(f *testing.F) {
	var session []byte
	for _, fr := range [][]byte{
		shoetest.Hello(1, "SN1", "1.0", 1),
		shoetest.Simple(1, shoeproto.TypeShoeIn),
		shoetest.Card(2, "As"),
		shoetest.CardCode(3, "Td", "D01Td"),
		shoetest.CardCode(4, "Td", "D01Td"),
		shoetest.Card(6, "Kd"),
		shoetest.Card(5, "Qd"),
		shoetest.Simple(7, shoeproto.TypeCutCard),
		shoetest.Frame(8, shoeproto.Message{Type: shoeproto.TypeShoeOut, Returned: 3}),
		shoetest.Frame(9, shoeproto.Message{Type: shoeproto.TypeDeviceFault, FaultCode: 1, Text: []byte("x")}),
	} {
		session = append(session, fr...)
		f.Add(append([]byte(nil), session...))
	}
	f.Add([]byte{0xA5, 0xFF, 0x00, 1, 2, 3})
	// A power glitch: the same numbers again from a restarted device,
	// its HELLO lost, then heard with a new boot id and with the old one.
	glitch := append(append([]byte(nil), session...),
		shoetest.Frame(2, shoeproto.Message{Type: shoeproto.TypeCard, Time: 40, Card: card.MustParse("7c"), Confidence: 99})...)
	f.Add(append(append([]byte(nil), glitch...), shoetest.Hello(2, "SN1", "1.0", 2)...))
	f.Add(append(append([]byte(nil), glitch...), shoetest.Hello(1, "SN1", "1.0", 1)...))
	f.Add(append(append([]byte(nil), session...), shoetest.Hello(1, "SN2", "1.0", 1)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		half := len(data) / 2
		port := &scriptPort{reads: [][]byte{data[:half], data[half:]}, cancel: cancel}
		used := false
		open := func(ctx context.Context) (shoereader.Port, error) {
			if used {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			used = true
			return port, nil
		}
		events := make(chan shoereader.Event, 64)
		go func() {
			for range events {
			}
		}()
		r := shoereader.New(open, shoereader.Options{Decks: 1}, zerolog.Nop())
		if err := r.Run(ctx, events); err == nil {
			t.Fatal("Run returned nil")
		}
	})
}
