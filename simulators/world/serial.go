package world

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// This file is the serial line: the shoe's frames reach the table through
// the real shoe reader (shoereader.Reader: decoding, CRC, sequence
// numbers, ACK on commit, RESEND and NAK, reconnection) and its Bridge to
// the controller, over a simulated line the world steps. The reader runs
// on a goroutine of its own (it owns its port), in lockstep with the
// world: its port's Read tells the world it waits and blocks until the
// world hands it bytes, and the bridge's Submit hands each input to the
// world, which submits it; so the reader never runs while the world does,
// and a seed is one run. The shoe's side (its window of frames waiting for
// an ACK, HELLO, go-back-N) is modelled here after SPEC.md; the line's
// faults (noise, corrupted and duplicated frames, frames lost, an unplug
// and replug) are drawn from a random stream of the seed's own.

// errUnplugged is what the port's Read returns when the cable comes out.
var errUnplugged = errors.New("world: shoe unplugged")

const (
	shoeSerial  = "SIM-SHOE-1"
	shoeBoot    = 7
	shoeSession = shoeSerial + "/7"
	// readerBackoff is the reader's reconnection delay, on the reader's
	// own clock, which the world moves only to reconnect (so the silence
	// watchdog never fires by the world's time).
	readerBackoff = 100 * time.Millisecond
)

// lineFaults are the serial faults a seed draws (each a 1-in-N chance per
// frame sent; 0 never).
type lineFaults struct {
	noise, corrupt, dup, drop, unplug, foreign int
}

func (f lineFaults) String() string {
	one := func(n int) string {
		if n == 0 {
			return "never"
		}
		return fmt.Sprintf("1/%d", n)
	}
	return fmt.Sprintf("noise %s, corrupted %s, duplicated %s, lost %s, unplug %s, foreign card %s",
		one(f.noise), one(f.corrupt), one(f.dup), one(f.drop), one(f.unplug), one(f.foreign))
}

// readMsg is what the world hands a blocked Read.
type readMsg struct {
	data []byte
	err  error
}

type submitReq struct {
	in    table.Input
	reply chan error
}

// serial is the line, the shoe at its far end and the reader at its near
// end (one reader per daemon start).
type serial struct {
	w      *world
	rng    *rand.Rand
	faults lineFaults
	clk    *clockwork.FakeClock // the reader's clock

	// The lockstep channels (unbuffered).
	rd      chan readMsg
	idle    chan struct{}
	req     chan submitReq
	opening chan chan shoereader.Port

	// The reader of this daemon start.
	cancel  context.CancelFunc
	stopped chan struct{}
	stop    chan struct{}
	waiting bool // the reader is blocked in Read

	// Written by the reader's goroutine (Write) only while the world
	// waits for it; read by the world only while the reader is blocked.
	mu     sync.Mutex
	toShoe []byte

	// The shoe.
	next       uint32 // its next frame number
	out        []shoeFrame
	helloAcked bool
	dec        shoeproto.Decoder
	toHost     []byte
	verdicts   map[uint32]error // the table's verdict on each frame, by frame number
	byWorkload map[uint64]uint32
	foreign    int // foreign cards sent
	unplugs    int
}

type shoeFrame struct {
	seq   uint32
	bytes []byte
}

func newSerial(w *world) *serial {
	s := &serial{w: w, rng: rand.New(rand.NewPCG(w.opts.Seed, 0x5e41a1)), clk: clockwork.NewFakeClockAt(epoch),
		rd: make(chan readMsg), idle: make(chan struct{}), req: make(chan submitReq), opening: make(chan chan shoereader.Port),
		next: 1, verdicts: map[uint32]error{}, byWorkload: map[uint64]uint32{}}
	pick := func(n int) int {
		if s.rng.IntN(2) == 0 {
			return 0
		}
		return n + s.rng.IntN(n)
	}
	s.faults = lineFaults{noise: pick(4), corrupt: pick(6), dup: pick(6), drop: pick(8), unplug: pick(40), foreign: pick(60)}
	return s
}

func (s *serial) chance(n int) bool { return n > 0 && s.rng.IntN(n) == 0 }

// port is the reader's end of the line.
type port struct {
	s    *serial
	stop chan struct{}
}

// Read tells the world the reader waits, then blocks until the world
// hands it bytes (none: the line is idle), an error (unplugged) or the
// daemon stops.
func (p *port) Read(b []byte) (int, error) {
	select {
	case p.s.idle <- struct{}{}:
	case <-p.stop:
		return 0, errUnplugged
	}
	select {
	case m := <-p.s.rd:
		if m.err != nil {
			return 0, m.err
		}
		return copy(b, m.data), nil
	case <-p.stop:
		return 0, errUnplugged
	}
}

func (p *port) Write(b []byte) (int, error) {
	p.s.mu.Lock()
	p.s.toShoe = append(p.s.toShoe, b...)
	p.s.mu.Unlock()
	return len(b), nil
}

func (p *port) Close() error                       { return nil }
func (p *port) SetReadTimeout(time.Duration) error { return nil }

// startReader runs a reader and its bridge for a daemon start and waits
// until it reads (after CONFIG).
func (s *serial) startReader() {
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.stopped, s.stop, s.waiting = cancel, make(chan struct{}), make(chan struct{}), false
	stop := s.stop
	opts := shoereader.DefaultOptions()
	opts.Decks, opts.AckOnCommit, opts.Clock = s.w.rs.Decks, true, s.clk
	opts.BackoffMin, opts.BackoffMax = readerBackoff, readerBackoff
	open := func(ctx context.Context) (shoereader.Port, error) {
		ch := make(chan shoereader.Port)
		select {
		case s.opening <- ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return <-ch, nil
	}
	r := shoereader.New(open, opts, zerolog.Nop())
	bridge := &shoereader.Bridge{Reader: r, Log: zerolog.Nop(), Submit: func(ctx context.Context, in table.Input) error {
		reply := make(chan error, 1)
		select {
		case s.req <- submitReq{in: in, reply: reply}:
		case <-ctx.Done():
			return ctx.Err()
		}
		return <-reply
	}}
	go func() {
		defer close(s.stopped)
		_ = r.RunFunc(ctx, func(ev shoereader.Event) { bridge.Deliver(ctx, ev) })
	}()
	s.settle(stop)
}

// stopReader ends the reader of a daemon that stops.
func (s *serial) stopReader() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	close(s.stop)
	<-s.stopped
	s.cancel, s.waiting = nil, false
	s.mu.Lock()
	s.toShoe = nil
	s.mu.Unlock()
	// The shoe's session goes on: it keeps its frames, and sends HELLO
	// to the next reader's CONFIG.
	s.helloAcked = false
}

// settle serves the reader until it blocks in Read: its inputs go to
// the table, its port opens on the line.
func (s *serial) settle(stop chan struct{}) {
	for !s.waiting {
		select {
		case r := <-s.req:
			r.reply <- s.w.fromShoe(r.in)
		case ch := <-s.opening:
			ch <- &port{s: s, stop: stop}
		case <-s.idle:
			s.waiting = true
		}
	}
}

// feed hands the reader one Read's worth and serves it until it reads
// again.
func (s *serial) feed(m readMsg) {
	s.waiting = false
	s.rd <- m
	s.settle(s.stop)
}

// unplug pulls the cable and puts it back: the reader's Read fails, it
// waits its backoff (on its clock, moved by the world) and opens the port
// again; the shoe answers its CONFIG with HELLO.
func (s *serial) unplug() {
	s.unplugs++
	s.w.trace("serial: shoe unplugged and plugged in again")
	s.waiting = false
	s.rd <- readMsg{err: errUnplugged}
	s.helloAcked = false
	s.w.trace("serial: reader reconnects")
	if err := s.clk.BlockUntilContext(context.Background(), 1); err != nil {
		return
	}
	s.clk.Advance(readerBackoff)
	s.settle(s.stop)
}

// send queues one workload frame in the shoe (once: a frame sent before
// a restart stays in the shoe) and works the line until the table has
// answered it. errRestarted: the daemon restarted first.
func (s *serial) send(wseq uint64, in table.Input, foreign bool) error {
	seq, ok := s.byWorkload[wseq]
	if !ok {
		if foreign {
			c := card.MustParse("As")
			s.foreign++
			s.queue(shoeproto.Message{Type: shoeproto.TypeCard, Card: c, Confidence: shoeproto.ConfidenceExact,
				Code: shoeproto.AppendCode(nil, 99, c)})
			s.w.trace("serial: a card of another shoe (%s, deck 99) comes out", c)
		}
		seq = s.queue(shoeMessage(in))
		s.byWorkload[wseq] = seq
	}
	restarts := s.w.res.Restarts
	for tries := 0; tries < 200; tries++ {
		if s.w.res.Restarts != restarts || s.w.c == nil {
			return errRestarted
		}
		if !s.holds(seq) {
			return s.verdicts[seq]
		}
		s.pump()
		if s.w.restartDue {
			s.w.restartIfDue()
			return errRestarted
		}
	}
	s.w.violate("the shoe's frames get through", fmt.Sprintf("frame %d still unacknowledged after 200 exchanges", seq))
	return errRestarted
}

func (s *serial) holds(seq uint32) bool {
	for _, f := range s.out {
		if f.seq == seq {
			return true
		}
	}
	return false
}

// queue numbers a message and keeps it until it is acknowledged.
func (s *serial) queue(m shoeproto.Message) uint32 {
	seq := s.next
	s.next++
	b, err := shoeproto.AppendMessage(nil, seq, &m)
	if err != nil {
		s.w.violate("setup", err.Error())
	}
	s.out = append(s.out, shoeFrame{seq: seq, bytes: b})
	if s.helloAcked && len(s.out) <= 8 {
		s.transmit(b)
	}
	return seq
}

// transmit puts a frame on the line, through its faults.
func (s *serial) transmit(b []byte) {
	if s.chance(s.faults.noise) {
		n := 1 + s.rng.IntN(12)
		for range n {
			s.toHost = append(s.toHost, byte(s.rng.IntN(256)))
		}
	}
	switch {
	case s.chance(s.faults.drop):
		return
	case s.chance(s.faults.corrupt):
		c := append([]byte(nil), b...)
		c[s.rng.IntN(len(c))] ^= byte(1 + s.rng.IntN(255))
		s.toHost = append(s.toHost, c...)
		return
	}
	s.toHost = append(s.toHost, b...)
	if s.chance(s.faults.dup) {
		s.toHost = append(s.toHost, b...)
	}
}

// pump is one exchange: the shoe reads what the reader wrote, then the
// reader gets what the shoe sent (or, the line quiet, an idle read that
// flushes a frame cut short, and the shoe's retransmission timeout).
func (s *serial) pump() {
	if s.cancel == nil {
		return
	}
	if !s.waiting {
		s.settle(s.stop)
	}
	if s.chance(s.faults.unplug) {
		s.unplug()
		return
	}
	s.fromHost()
	if len(s.toHost) > 0 {
		b := s.toHost
		s.toHost = nil
		s.feed(readMsg{data: b})
		return
	}
	s.feed(readMsg{}) // idle: a partial frame is flushed
	s.fromHost()
	switch {
	case len(s.toHost) > 0:
	case s.helloAcked:
		// The retransmission timeout: go-back-N from the oldest.
		s.retransmit(0)
	default:
		// No ACK to the HELLO (lost, or cut short): again.
		s.hello()
	}
}

func (s *serial) retransmit(from uint32) {
	for i, f := range s.out {
		if i < 8 && f.seq >= from {
			s.transmit(f.bytes)
		}
	}
}

// fromHost is the shoe reading the host's frames: ACK, NAK, RESEND,
// CONFIG.
func (s *serial) fromHost() {
	s.mu.Lock()
	b := s.toShoe
	s.toShoe = nil
	s.mu.Unlock()
	var m shoeproto.Message
	s.dec.Feed(b, func(f shoeproto.Frame, err error) {
		if err != nil || m.Unmarshal(f) != nil {
			return
		}
		switch m.Type {
		case shoeproto.TypeAck:
			first := !s.helloAcked
			s.helloAcked = true
			i := 0
			for i < len(s.out) && s.out[i].seq <= m.Seq {
				i++
			}
			s.out = s.out[i:]
			if first || i > 0 {
				// The window moves on (and after HELLO, whatever was
				// outstanding goes again).
				s.retransmit(0)
			}
		case shoeproto.TypeNak, shoeproto.TypeResend:
			if s.helloAcked && m.Seq > 0 {
				s.retransmit(m.Seq)
			}
		case shoeproto.TypeConfig:
			s.helloAcked = false
			s.hello()
		}
	})
}

// hello says HELLO, its SEQ the oldest frame the shoe holds (or the
// next it will number).
func (s *serial) hello() {
	seq := s.next
	if len(s.out) > 0 {
		seq = s.out[0].seq
	}
	h := shoeproto.Message{Type: shoeproto.TypeHello, BootID: shoeBoot, Proto: shoeproto.ProtocolVersion,
		Vendor: []byte("sim"), Model: []byte("world"), Serial: []byte(shoeSerial), Firmware: []byte("1.0")}
	hb, _ := shoeproto.AppendMessage(nil, seq, &h)
	s.transmit(hb)
}

// shoeMessage is the shoe's frame for a workload input.
func shoeMessage(in table.Input) shoeproto.Message {
	switch v := in.(type) {
	case table.CardDrawn:
		return shoeproto.Message{Type: shoeproto.TypeCard, Card: v.Card, Confidence: shoeproto.ConfidenceExact, Code: []byte(v.Code)}
	case table.DeviceAlarm:
		return shoeproto.Message{Type: shoeproto.TypeMisread}
	case table.CutCardSeen:
		return shoeproto.Message{Type: shoeproto.TypeCutCard}
	case table.ShoeChanged:
		return shoeproto.Message{Type: shoeproto.TypeShoeID, ShoeID: []byte(v.ShoeID)}
	case table.ShoeIn:
		return shoeproto.Message{Type: shoeproto.TypeShoeIn}
	case table.ShoeOut:
		return shoeproto.Message{Type: shoeproto.TypeShoeOut, Returned: uint16(v.Returned)}
	}
	return shoeproto.Message{Type: shoeproto.TypeHeartbeat}
}

// fromShoe submits an input the bridge hands over, and keeps the
// table's verdict for the frame. A journal failure answers ErrJournal (the
// frame is not acknowledged: the shoe keeps it) and restarts the daemon
// once the reader waits again.
func (w *world) fromShoe(in table.Input) error {
	err := w.apply(in)
	if errors.Is(err, errRestarted) {
		w.restartDue = true
		return table.ErrJournal
	}
	_, seq, _ := table.DeviceFrame(in)
	w.serial.verdicts[uint32(seq)] = err
	return err
}
