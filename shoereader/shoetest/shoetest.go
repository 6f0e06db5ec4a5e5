// Package shoetest has test helpers for the shoe path: an in-memory Port
// and frame builders, so a test can play the device by hand without a pty.
package shoetest

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/table/card"
)

// Port adapts a net.Conn to shoereader.Port: SetReadTimeout becomes a read
// deadline before every Read, and a timeout reads as (0, nil), as
// go.bug.st/serial reports it.
type Port struct {
	conn net.Conn

	mu sync.Mutex
	// mu guards the following.
	timeout time.Duration
}

// NewPort wraps conn.
func NewPort(conn net.Conn) *Port { return &Port{conn: conn} }

// Pipe returns a connected pair: the Port for the reader and the other end
// for the test, playing the device.
func Pipe() (*Port, net.Conn) {
	a, b := net.Pipe()
	return NewPort(a), b
}

// SetReadTimeout implements shoereader.Port.
func (p *Port) SetReadTimeout(t time.Duration) error {
	p.mu.Lock()
	p.timeout = t
	p.mu.Unlock()
	return nil
}

// Read implements io.Reader with the serial-port timeout convention.
func (p *Port) Read(b []byte) (int, error) {
	p.mu.Lock()
	t := p.timeout
	p.mu.Unlock()
	var deadline time.Time // zero: no timeout, block
	if t > 0 {
		deadline = time.Now().Add(t)
	}
	if err := p.conn.SetReadDeadline(deadline); err != nil {
		return 0, err
	}
	n, err := p.conn.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, nil
	}
	return n, err
}

// Write implements io.Writer.
func (p *Port) Write(b []byte) (int, error) { return p.conn.Write(b) }

// Close implements io.Closer.
func (p *Port) Close() error { return p.conn.Close() }

// Opener returns a shoereader.Opener that hands out the ports sent on ch,
// one per (re)connection; it fails with ctx's error when ctx ends first.
func Opener(ch <-chan shoereader.Port) shoereader.Opener {
	return func(ctx context.Context) (shoereader.Port, error) {
		select {
		case p := <-ch:
			return p, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Frame encodes m with sequence number seq, for tests that write the
// device side by hand. It panics on a message the encoder rejects, which
// is a bug in the test.
func Frame(seq uint32, m shoeproto.Message) []byte {
	b, err := shoeproto.AppendMessage(nil, seq, &m)
	if err != nil {
		panic(err)
	}
	return b
}

// Hello is a HELLO from serial with firmware and boot id, resuming at seq.
func Hello(seq uint32, serial, firmware string, boot uint32) []byte {
	return Frame(seq, shoeproto.Message{
		Type: shoeproto.TypeHello, BootID: boot, Proto: shoeproto.ProtocolVersion,
		Vendor: []byte("Test"), Model: []byte("T-1"), Serial: []byte(serial), Firmware: []byte(firmware),
	})
}

// Card is an optical CARD frame for the card in wire form ("As").
func Card(seq uint32, c string) []byte {
	return Frame(seq, shoeproto.Message{Type: shoeproto.TypeCard, Card: card.MustParse(c), Confidence: 99})
}

// CardCode is an RFID CARD frame carrying code.
func CardCode(seq uint32, c, code string) []byte {
	return Frame(seq, shoeproto.Message{Type: shoeproto.TypeCard, Card: card.MustParse(c), Confidence: shoeproto.ConfidenceExact, Code: []byte(code)})
}

// Simple is a frame of a type with no payload beyond the time
// (CUT_CARD, SHOE_IN, MISREAD, DOUBLE_CARD, JAM, HEARTBEAT...).
func Simple(seq uint32, t shoeproto.Type) []byte {
	return Frame(seq, shoeproto.Message{Type: t})
}

// HostFrames decodes every frame the reader wrote in b, for assertions on
// ACK, RESEND and CONFIG.
func HostFrames(b []byte) []shoeproto.Message {
	var d shoeproto.Decoder
	var out []shoeproto.Message
	d.Feed(b, func(f shoeproto.Frame, err error) {
		if err != nil {
			return
		}
		var m shoeproto.Message
		if m.Unmarshal(f) == nil {
			out = append(out, m)
		}
	})
	return out
}
