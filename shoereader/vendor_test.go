package shoereader_test

import (
	"bufio"
	"context"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/shoereader/serialport"
	"github.com/livetable/livetable/shoereader/shoetest/lineproto"
	"github.com/livetable/livetable/table/card"
)

// vendorRig is a hand-played vendor-B device on the master side of a real
// pty, and a reader speaking lineproto on its slave path through
// serialport.Opener, as tabled opens a shoe.
type vendorRig struct {
	master *os.File
	events chan shoereader.Event
	host   chan lineproto.Host
	reader *shoereader.Reader
	ctx    context.Context
}

func newVendorRig(t *testing.T) *vendorRig {
	t.Helper()
	m, s, err := pty.Open()
	require.NoError(t, err)
	// A pollable master, so that closing it ends the line reader below.
	fd, err := unix.Dup(int(m.Fd()))
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fd, true))
	require.NoError(t, m.Close())
	master := os.NewFile(uintptr(fd), "ptmx")
	path := s.Name()

	ropts := shoereader.DefaultOptions()
	ropts.Protocol = lineproto.Protocol{}
	ropts.SilenceTimeout = time.Hour // no watchdog CONFIG in the middle of the script
	r := shoereader.New(serialport.Opener(path, serialport.DefaultBaud), ropts, testLog(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	rg := &vendorRig{master: master, events: make(chan shoereader.Event, 64), host: make(chan lineproto.Host, 64), reader: r, ctx: ctx}
	ran := make(chan struct{})
	go func() { defer close(ran); _ = r.Run(ctx, rg.events) }()
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(master)
		for sc.Scan() {
			h, err := lineproto.ParseHost(sc.Bytes())
			if err != nil {
				t.Errorf("the reader wrote a line the device cannot read: %v", err)
				continue
			}
			rg.host <- h
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-ran
		_ = master.Close()
		_ = s.Close()
		<-read
	})
	return rg
}

func (rg *vendorRig) send(t *testing.T, b ...[]byte) {
	t.Helper()
	for _, p := range b {
		_, err := rg.master.Write(p)
		require.NoError(t, err)
	}
}

// expectHost waits for the reader's next line to the device.
func (rg *vendorRig) expectHost(t *testing.T, typ string, args ...uint64) {
	t.Helper()
	select {
	case h := <-rg.host:
		assert.Equal(t, typ, h.Type, "host line %+v", h)
		assert.Equal(t, args, h.Args, "host line %+v", h)
	case <-rg.ctx.Done():
		t.Fatalf("no %s from the reader", typ)
	}
}

func (rg *vendorRig) expectEvent(t *testing.T, k shoereader.Kind) shoereader.Event {
	t.Helper()
	select {
	case ev := <-rg.events:
		require.Equal(t, k, ev.Kind, "event %+v", ev)
		return ev
	case <-rg.ctx.Done():
		t.Fatalf("no %v event from the reader", k)
		return shoereader.Event{}
	}
}

// TestSecondVendorThroughPty: the reader speaks a second vendor's
// protocol (lineproto, lines of text) through the same seam and a real
// pty, with the delivery guarantees of the first: the device's session,
// ACKs, resync after garbage, NAK for a damaged or malformed frame,
// duplicates dropped and re-ACKed, RESEND for a gap, and events in order.
func TestSecondVendorThroughPty(t *testing.T) {
	rg := newVendorRig(t)
	rg.expectHost(t, "CONFIG", 1000, 8) // asks an unknown device to say HELLO

	rg.send(t, lineproto.Line(1, 5, "HELLO", "42", "1", "VendorB", "LB-2", "SNB1", "2.0"))
	ev := rg.expectEvent(t, shoereader.Connected)
	assert.Equal(t, shoereader.DeviceInfo{Vendor: "VendorB", Model: "LB-2", Serial: "SNB1", Firmware: "2.0", Proto: 1, BootID: 42}, ev.Device)
	rg.expectHost(t, "ACK", 0)

	code := func(c string) string { return string(shoeproto.AppendCode(nil, 1, card.MustParse(c))) }
	card1 := lineproto.Line(1, 10, "CARD", "Ah", "100", code("Ah"))
	rg.send(t, []byte("\x00\xff line noise\n"), card1)
	ev = rg.expectEvent(t, shoereader.Card)
	assert.Equal(t, card.MustParse("Ah"), ev.Card)
	assert.Equal(t, code("Ah"), ev.Code)
	assert.Equal(t, uint32(1), ev.Seq)
	assert.Equal(t, uint32(10), ev.DeviceTime)
	assert.Equal(t, "SNB1/42", ev.Session)
	rg.expectHost(t, "ACK", 1)

	// A damaged line: NAK, then the device sends it again.
	card2 := lineproto.Line(2, 20, "CARD", "Td", "100", code("Td"))
	damaged := append([]byte(nil), card2...)
	damaged[len(damaged)-5] ^= 0x01 // a bit flipped in the code: the checksum fails
	rg.send(t, damaged)
	rg.expectHost(t, "NAK", 2)
	rg.send(t, card2)
	assert.Equal(t, card.MustParse("Td"), rg.expectEvent(t, shoereader.Card).Card)
	rg.expectHost(t, "ACK", 2)

	// The device missed the ACK and sends 2 again: dropped, ACKed again.
	rg.send(t, card2)
	rg.expectHost(t, "ACK", 2)

	// A gap: 4 before 3 is answered with RESEND 3; then 3 and 4 in order.
	card3 := lineproto.Line(3, 30, "CARD", "5c", "100", code("5c"))
	card4 := lineproto.Line(4, 40, "CARD", "Kh", "100", code("Kh"))
	rg.send(t, card4)
	rg.expectHost(t, "RESEND", 3)
	rg.send(t, card3, card4)
	assert.Equal(t, card.MustParse("5c"), rg.expectEvent(t, shoereader.Card).Card)
	assert.Equal(t, card.MustParse("Kh"), rg.expectEvent(t, shoereader.Card).Card)
	rg.expectHost(t, "ACK", 3)
	rg.expectHost(t, "ACK", 4)

	// An intact line that is no message: NAK, and the device sends the
	// frame again as it should have been.
	rg.send(t, lineproto.Line(5, 50, "SHOEID"))
	rg.expectHost(t, "NAK", 5)
	rg.send(t, lineproto.Line(5, 50, "SHOEID", "B-0007"), lineproto.Line(6, 60, "CUT"), lineproto.Line(7, 70, "SHOEOUT", "180"))
	assert.Equal(t, "B-0007", rg.expectEvent(t, shoereader.ShoeID).ShoeID)
	rg.expectEvent(t, shoereader.CutCard)
	assert.Equal(t, 180, rg.expectEvent(t, shoereader.ShoeOut).Returned)
	rg.expectHost(t, "ACK", 5)
	rg.expectHost(t, "ACK", 6)
	rg.expectHost(t, "ACK", 7)

	st := rg.reader.Stats()
	assert.Equal(t, uint64(7), st.Delivered)
	assert.Equal(t, uint64(1), st.Duplicates)
	assert.Equal(t, uint64(3), st.Gaps, "NAK 2, RESEND 3, NAK 5")
	assert.Equal(t, uint64(3), st.BadFrames, "the noise, the damaged line and the malformed one")
	select {
	case ev := <-rg.events:
		t.Fatalf("an event too many: %+v", ev)
	default:
	}
}

// TestSecondVendorRefusedVersion: a HELLO in a version the codec does not
// speak is refused with the codec's reason, and nothing that device sends
// is acknowledged or delivered.
func TestSecondVendorRefusedVersion(t *testing.T) {
	rg := newVendorRig(t)
	rg.expectHost(t, "CONFIG", 1000, 8)
	rg.send(t, lineproto.Line(1, 5, "HELLO", "42", "9", "VendorB", "LB-9", "SNB9", "9.0"))
	ev := rg.expectEvent(t, shoereader.DeviceRefused)
	assert.Contains(t, ev.Message, "lineproto version 9, want 1")
	rg.send(t, lineproto.Line(1, 10, "CARD", "Ah", "100"), lineproto.Line(1, 5, "HELLO", "43", "1", "VendorB", "LB-2", "SNB1", "2.0"))
	// The refused device's card got nothing; the next HELLO is answered.
	rg.expectEvent(t, shoereader.Connected)
	rg.expectHost(t, "ACK", 0)
}
