package shoereader

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/table/card"
)

// Reader owns the shoe's port: it reads, decodes, acknowledges, drops
// duplicates, asks for what it missed, reconnects and watches for silence.
// It is a transport and codec with no game state: the shoe's integrity
// (composition, RFID codes seen, the count, the shuffle check) is the
// table's (table.Machine), rebuilt from the journal after a restart.
// Create it with New and start Run.
type Reader struct {
	open Opener
	opts Options
	log  zerolog.Logger
	// badLog logs damaged and malformed frames sampled (20 a second, then
	// one in a hundred): a noisy line sends them at line rate, and each
	// NAK brings the damaged copy again; Stats counts every one.
	badLog  zerolog.Logger
	running atomic.Bool

	// codec is the vendor's protocol (Options.Protocol): its decoding
	// half is owned by Run's goroutine, AppendHost is called under wmu.
	codec Codec

	// Everything below is owned by the goroutine running Run; no lock.
	frameFn  func(*DeviceMessage, error)
	rbuf     []byte
	wbuf     []byte
	port     Port
	ctx      context.Context
	out      chan<- Event // Run's consumer; nil with RunFunc
	deliver  func(Event)  // RunFunc's consumer; nil with Run
	fail     error        // set by a handler to end the connection
	emitted  bool         // an event was sent since the flag was cleared
	emittedN int          // sequenced events sent for the frame being dispatched

	hostSeq    uint32
	session    bool   // a HELLO was accepted at least once
	serial     string // session identity
	bootID     uint32
	next       uint32 // next device sequence number expected
	helloOnCon bool   // the device said HELLO on this connection
	refused    bool
	refusedFor string
	noSession  int    // frames received without a session, to pace CONFIG
	resendFor  uint32 // the next value a RESEND or NAK was last sent for
	// malformedN counts the malformed copies of frame next received: the
	// device sends the same bytes again, so a payload that cannot be read
	// never will be (MaxMalformed).
	malformedN int
	// recent is what was delivered under the last MaxWindow numbers of
	// the session (by seq % MaxWindow): a frame numbered below next is
	// dropped as a duplicate only if it repeats the frame delivered under
	// its number. A device that restarted and numbers from 1 again, whose
	// HELLO was lost (or that streams before its HELLO is answered),
	// sends new cards under old numbers: acknowledging them as
	// duplicates told it to forget cards never delivered.
	recent [MaxWindow]frameSig
	// gapN counts frames above next since the last delivery: a device
	// that restarted at a higher number answers no RESEND for next.
	gapN int
	// devTime is the device clock of the last frame delivered in the
	// session (or its HELLO): a HELLO of the same boot with an earlier
	// clock is a device that restarted.
	devTime uint32
	// restarted is set when frames stopped being the session's stream
	// (restartSuspected): the next HELLO must prove the session.
	restarted bool
	// reusedBoot is serial/boot of a device refused for restarting its
	// numbering under the same boot id; its HELLOs stay refused.
	reusedBoot string
	lastHeard  time.Time
	silent     bool
	// lost is why the port is down (closed, failed, cannot be opened),
	// nil while a connection is served: the Silent alarm of a shoe
	// that is unplugged says so, where it read as a mute shoe.
	lost error

	stats counters

	// wmu guards every write to the port (Commit writes ACKs from the
	// consumer's goroutine), the port while it is swapped, hostSeq, wbuf,
	// and the commit state below.
	wmu       sync.Mutex
	pending   []pendingAck // Options.AckOnCommit: delivered, not yet durable
	sessionID string       // serial and boot of the device session, stamped on events
}

// pendingAck is a delivered frame whose events the consumer has not all
// committed yet.
type pendingAck struct {
	seq    uint32
	events int
}

// Stats are the reader's counters, for metrics.
type Stats struct {
	Delivered  uint64 // frames delivered in order
	Duplicates uint64 // frames dropped as already delivered
	Gaps       uint64 // RESENDs and NAKs sent
	BadFrames  uint64 // CRC, truncated, garbage runs, malformed payloads
	Reconnects uint64
}

// counters are atomics so Stats may be read from a metrics goroutine
// while Run works.
type counters struct {
	delivered, duplicates, gaps, badFrames, reconnects atomic.Uint64
}

// New returns a Reader that opens its port with open.
func New(open Opener, opts Options, log zerolog.Logger) *Reader {
	opts.ensureDefaults()
	r := &Reader{
		open:  open,
		opts:  opts,
		log:   log.With().Str("component", "shoereader").Logger(),
		rbuf:  make([]byte, 4096),
		wbuf:  make([]byte, 0, shoeproto.MaxFrameLen),
		codec: opts.Protocol.NewCodec(),
	}
	r.badLog = r.log.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second, NextSampler: &zerolog.BasicSampler{N: 100}})
	r.frameFn = r.onFrame
	return r
}

// Stats returns a snapshot of the counters; it is safe to call while Run
// is running.
func (r *Reader) Stats() Stats {
	return Stats{
		Delivered:  r.stats.delivered.Load(),
		Duplicates: r.stats.duplicates.Load(),
		Gaps:       r.stats.gaps.Load(),
		BadFrames:  r.stats.badFrames.Load(),
		Reconnects: r.stats.reconnects.Load(),
	}
}

// Run owns the port until ctx is done, sending events on out. It
// reconnects with backoff whenever the port fails and returns ctx.Err()
// when ctx ends. Run is the only sender on out and closes it when it
// returns (house-style rule 9), so a consumer may range over it. A Reader
// runs once: a second call returns ErrRunTwice.
func (r *Reader) Run(ctx context.Context, out chan<- Event) error {
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	defer close(out)
	r.out = out
	return r.run(ctx)
}

// RunFunc is Run with the consumer called on the reader's own goroutine:
// deliver gets each event in order and the next frame is read once it
// returns. It is for a consumer that would only hand the event on and
// wait for its verdict (tabled: the controller journals a card and the
// reader acknowledges it), which through Run's channel costs a goroutine
// hand-off and wake-up on every card's path. deliver may call Commit.
// While deliver works the port is not read: the device keeps what it
// sends in the line's buffer and its own window, as it does for any
// unacknowledged frame. A Reader runs once, by Run or RunFunc.
func (r *Reader) RunFunc(ctx context.Context, deliver func(Event)) error {
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	r.deliver = deliver
	return r.run(ctx)
}

func (r *Reader) run(ctx context.Context) error {
	r.ctx = ctx
	clk := r.opts.Clock
	backoff := r.opts.BackoffMin
	r.lastHeard = clk.Now()
	for {
		port, err := r.open(ctx)
		if err == nil {
			r.wmu.Lock()
			r.port = port
			r.wmu.Unlock()
			err = r.serve()
			if cerr := port.Close(); cerr != nil {
				r.log.Debug().Err(cerr).Msg("close port")
			}
			r.wmu.Lock()
			r.port = nil
			r.wmu.Unlock()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.stats.reconnects.Add(1)
			if r.helloOnCon {
				backoff = r.opts.BackoffMin
			}
			r.log.Warn().Err(err).Msg("shoe port lost, reconnecting")
			r.lost = errors.New(errString(err))
			r.emit(Event{Kind: Disconnected, Err: err, Message: "shoe disconnected: " + errString(err)})
		} else {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if r.lost == nil {
				r.lost = err
			}
			r.log.Debug().Err(err).Dur("backoff", backoff).Msg("open shoe port")
		}
		// A shoe that stays unplugged is as silent as a hung one.
		r.watchdog()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(backoff):
		}
		backoff = min(2*backoff, r.opts.BackoffMax)
	}
}

func errString(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// serve runs one connection until the port fails or ctx ends.
func (r *Reader) serve() error {
	r.lost = nil
	r.codec.Reset()
	r.helloOnCon = false
	r.refused = false
	r.fail = nil
	r.noSession = 0
	if err := r.port.SetReadTimeout(r.opts.ReadTimeout); err != nil {
		return fmt.Errorf("shoereader: set read timeout: %w", err)
	}
	r.sendConfig()
	for r.fail == nil {
		if r.ctx.Err() != nil {
			return nil
		}
		n, err := r.port.Read(r.rbuf)
		if err != nil {
			return fmt.Errorf("shoereader: read: %w", err)
		}
		if n == 0 {
			// The line is idle: a partial frame will not complete.
			if r.codec.Pending() > 0 {
				r.codec.Flush(r.frameFn)
			}
		} else {
			r.codec.Feed(r.rbuf[:n], r.frameFn)
		}
		r.watchdog()
	}
	return r.fail
}

// watchdog raises Silent once when the shoe has not been heard for the
// silence timeout, and asks it to say HELLO again.
func (r *Reader) watchdog() {
	if r.silent || r.opts.Clock.Since(r.lastHeard) < r.opts.SilenceTimeout {
		return
	}
	r.silent = true
	msg := fmt.Sprintf("no frame from the shoe for %v", r.opts.SilenceTimeout)
	if r.lost != nil {
		// Not a mute shoe: its port is gone (the cable, the USB
		// adapter, the device node), which is what the people at the
		// table must check.
		msg = fmt.Sprintf("shoe disconnected for over %v (%v)", r.opts.SilenceTimeout, r.lost)
	}
	r.log.Warn().Dur("timeout", r.opts.SilenceTimeout).Bool("disconnected", r.lost != nil).Msg("shoe silent")
	r.emit(Event{Kind: Silent, Err: ErrSilent, Message: msg})
	r.sendConfig()
}

func (r *Reader) onFrame(m *DeviceMessage, err error) {
	if r.fail != nil {
		return
	}
	if err != nil {
		r.badFrame(err)
		return
	}
	now := r.heard()
	if m.Kind == MsgHello {
		r.hello(m.Seq, m, now)
		return
	}
	if r.refused {
		return // nothing from a refused device is acknowledged or delivered
	}
	if !r.helloOnCon {
		// Mid-stream after our restart: ask for a HELLO, now and then.
		if r.noSession%16 == 0 {
			r.sendConfig()
		}
		r.noSession++
		return
	}
	switch {
	case m.Seq < r.next:
		if !r.repeats(m) {
			r.restartSuspected(m, "repeats no frame delivered under its number")
			return
		}
		r.stats.duplicates.Add(1)
		r.ackDurable()
		return
	case m.Seq > r.next:
		// The device holds at most MaxWindow frames past what it was
		// acknowledged, and we acknowledged at most next-1: a frame
		// further on, or a gap that no RESEND closes, is another stream.
		r.gapN++
		if uint64(m.Seq) >= uint64(r.next)+MaxWindow || r.gapN > gapLimit {
			r.restartSuspected(m, "is beyond the frames the device can hold unacknowledged")
			return
		}
		r.requestFrom(HostResend, r.next)
		return
	}
	r.inOrder(m.Seq, m, nil, now)
}

// MaxWindow is the largest send window the protocol allows (CONFIG's
// WINDOW, 1..32): the device never holds more frames unacknowledged.
const MaxWindow = 32

// gapLimit is how many frames above the one awaited the reader takes
// without the awaited one before it stops believing in the session: one
// lost frame makes at most a window arrive early per retransmission, and
// the device's timeout sends the awaited one again within a round.
const gapLimit = 4 * MaxWindow

// frameSig is what a retransmission repeats of a delivered frame.
type frameSig struct {
	seq   uint32
	kind  MessageKind // 0: a frame given up unreadable, matched by number only
	time  uint32
	card  card.Card
	bytes uint32 // FNV-1a of the frame's strings and numbers
	valid bool
}

func sigOf(m *DeviceMessage) frameSig {
	h := uint32(2166136261)
	mix := func(b []byte) {
		for _, c := range b {
			h ^= uint32(c)
			h *= 16777619
		}
		h ^= 0xff
		h *= 16777619
	}
	mix(m.Code)
	mix(m.ShoeID)
	mix(m.Text)
	h ^= uint32(m.Returned)*31 + uint32(m.FaultCode)*7 + uint32(m.Confidence)
	return frameSig{seq: m.Seq, kind: m.Kind, time: m.Time, card: m.Card, bytes: h, valid: true}
}

// repeats reports whether m, numbered below next, is a copy of the frame
// delivered under its number in this session.
func (r *Reader) repeats(m *DeviceMessage) bool {
	if uint64(m.Seq)+MaxWindow < uint64(r.next) {
		return false // older than any frame the device can still hold
	}
	got := r.recent[m.Seq%MaxWindow]
	switch {
	case !got.valid || got.seq != m.Seq:
		return false
	case got.kind == 0:
		return true
	}
	return got == sigOf(m)
}

// restartSuspected handles a frame that is not of the session's stream:
// the device restarted (a power glitch) and its HELLO never reached us,
// or another device took the line. Nothing is delivered and nothing
// acknowledged (an ACK of next-1 would tell a restarted device to forget
// frames we never had); the device is asked for a HELLO (CONFIG), which
// starts its new session or proves the old one.
func (r *Reader) restartSuspected(m *DeviceMessage, why string) {
	if !r.restarted {
		r.log.Error().Uint32("seq", m.Seq).Uint32("expected", r.next).Str("why", why).
			Msg("frame is not of the shoe's session (a device restart whose HELLO was lost?): asking for HELLO")
	}
	r.restarted = true
	r.helloOnCon = false
	r.noSession = 1
	r.gapN = 0
	r.sendConfig()
}

// inOrder takes frame seq, the one awaited, as delivered: its events go
// out (m's, or the reader's own ev for a frame given up), then the frame
// is acknowledged (with AckOnCommit, once its events are committed).
func (r *Reader) inOrder(seq uint32, m *DeviceMessage, ev *Event, now time.Time) {
	r.next++
	r.malformedN = 0
	r.gapN = 0
	if m != nil {
		r.recent[seq%MaxWindow] = sigOf(m)
		r.devTime = m.Time
	} else {
		r.recent[seq%MaxWindow] = frameSig{seq: seq, valid: true}
	}
	r.stats.delivered.Add(1)
	r.emitted = false
	r.emittedN = 0
	if r.opts.AckOnCommit {
		// Register before the events go out: the consumer may commit
		// them before dispatch returns.
		r.wmu.Lock()
		r.pending = append(r.pending, pendingAck{seq: seq, events: -1})
		r.wmu.Unlock()
	}
	if m != nil {
		r.dispatch(m, now)
	} else {
		r.emit(*ev)
	}
	if r.emitted && r.out != nil {
		r.yieldToConsumer()
	}
	if r.opts.AckOnCommit {
		r.wmu.Lock()
		for i := range r.pending {
			if r.pending[i].seq == seq {
				// Events committed while dispatching made the count negative.
				r.pending[i].events += r.emittedN + 1
			}
		}
		r.trimLocked()
		err := r.sendLocked(HostMessage{Kind: HostAck, Seq: r.durableLocked()})
		r.wmu.Unlock()
		if err != nil && r.fail == nil {
			r.fail = err
		}
		return
	}
	r.sendSeq(HostAck, seq)
}

// badFrame handles a codec's error: bytes skipped between frames are
// logged; a damaged frame, or an intact one with a malformed payload that
// is the frame awaited, is answered with NAK so the device sends it again.
func (r *Reader) badFrame(err error) {
	r.stats.badFrames.Add(1)
	if errors.Is(err, ErrNoise) {
		r.log.Debug().Err(err).Msg("skipped bytes")
		return
	}
	var me *MalformedError
	if errors.As(err, &me) {
		now := r.heard() // the device spoke: its frame was intact
		r.badLog.Warn().Err(err).Msg("malformed frame")
		if !r.helloOnCon || r.refused || me.Seq != r.next {
			return
		}
		if me.Hello {
			// Given up, it would take the number of the frame it
			// announces, which would then be dropped as a duplicate.
			r.requestFrom(HostNak, r.next)
			return
		}
		if r.malformedN++; r.malformedN < MaxMalformed {
			r.requestFrom(HostNak, r.next)
			return
		}
		r.unreadable(me, now)
		return
	}
	r.badLog.Warn().Err(err).Msg("bad frame")
	if r.helloOnCon && !r.refused {
		r.requestFrom(HostNak, r.next)
	}
}

// MaxMalformed is how many malformed copies of the awaited frame the
// reader takes before it gives the frame up. The device answers a NAK and
// its own timeout with the same bytes, so without a limit one unreadable
// payload (a firmware fault, a tampered shoe) held every later card back
// with the shoe heard and no alarm: the table waited for ever.
const MaxMalformed = 3

// unreadable gives up frame me.Seq, malformed MaxMalformed times: it is
// acknowledged so the stream goes on, and reported as an alarm that
// pauses the table, Misread for a card's frame (the card is out of the
// shoe and unknown: a supervisor enters it), DeviceFault for another.
func (r *Reader) unreadable(me *MalformedError, now time.Time) {
	ev := Event{Seq: me.Seq, Time: now, Err: me, Kind: DeviceFault,
		Message: fmt.Sprintf("frame #%d unreadable %d times, skipped: %v", me.Seq, r.malformedN, me.Err)}
	if me.Card {
		ev.Kind = Misread
		ev.Message = fmt.Sprintf("card misread: frame #%d unreadable %d times: %v", me.Seq, r.malformedN, me.Err)
	}
	r.log.Error().Err(me).Int("copies", r.malformedN).Msg("frame given up")
	r.inOrder(me.Seq, nil, &ev, now)
}

// heard notes that an intact frame came: the silence watchdog starts
// again, and a silent shoe is alive.
func (r *Reader) heard() time.Time {
	now := r.opts.Clock.Now()
	r.lastHeard = now
	if r.silent {
		r.silent = false
		r.emit(Event{Kind: Alive, Time: now, Message: "shoe heard again"})
	}
	return now
}

// ackDurable acknowledges everything delivered and, with AckOnCommit,
// committed: the answer to a duplicate and to HELLO.
func (r *Reader) ackDurable() {
	r.wmu.Lock()
	err := r.sendLocked(HostMessage{Kind: HostAck, Seq: r.durableLocked()})
	r.wmu.Unlock()
	if err != nil && r.fail == nil {
		r.fail = err
	}
}

// durableLocked is the highest sequence number the device may forget: every
// frame up to it was delivered and, with AckOnCommit, committed.
func (r *Reader) durableLocked() uint32 {
	if r.opts.AckOnCommit && len(r.pending) > 0 {
		return r.pending[0].seq - 1
	}
	return r.next - 1
}

// trimLocked drops the frames whose events are all committed, oldest first.
func (r *Reader) trimLocked() {
	i := 0
	for i < len(r.pending) && r.pending[i].events == 0 {
		i++
	}
	if i > 0 {
		r.pending = append(r.pending[:0], r.pending[i:]...)
	}
}

// Commit tells the reader that the consumer has made one event of frame seq
// durable (journaled). With Options.AckOnCommit the device is acknowledged
// only then, so a card is never lost between the serial line and the
// journal: if the host dies first, the device sends the frame again. Safe
// from any goroutine; events with Seq 0 (the reader's own) need no commit.
func (r *Reader) Commit(seq uint32) {
	if !r.opts.AckOnCommit || seq == 0 {
		return
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	for i := range r.pending {
		if r.pending[i].seq == seq {
			r.pending[i].events--
			break
		}
	}
	before := r.durableLocked()
	r.trimLocked()
	if after := r.durableLocked(); after != before {
		// A write error here is met again by Run's next read or write.
		_ = r.sendLocked(HostMessage{Kind: HostAck, Seq: after})
	}
}

// yieldToConsumer lets the consumer woken by an event run before our ACK
// write and the next read: it waits in this P's run-next slot. Yield
// twice: one time in 61 the scheduler serves the global queue first,
// which would pick this goroutine again. BenchmarkPtyLatency shows the
// effect: when the read was a blocking syscall (go.bug.st/serial's), whose
// P only sysmon took back tens of microseconds later, p99 3x the bare
// loop's without the yields, 1.2x with them; with the port in the runtime
// poller (serialport on Linux) the reader's p50 is 18-21 µs without them,
// 12-13 µs with them (load 2.6).
func (r *Reader) yieldToConsumer() {
	runtime.Gosched()
	runtime.Gosched()
}

// requestFrom sends RESEND or NAK for seq once per value of r.next: the
// device retransmits on its own timeout if this request is lost, and one
// gap makes the whole window arrive out of order.
func (r *Reader) requestFrom(k HostKind, seq uint32) {
	if r.resendFor == seq {
		return
	}
	r.resendFor = seq
	r.stats.gaps.Add(1)
	r.sendSeq(k, seq)
}

func (r *Reader) hello(seq uint32, m *DeviceMessage, now time.Time) {
	info := m.Info
	same := r.session && r.serial == info.Serial && r.bootID == info.BootID
	var cause error
	why := r.refuse(m)
	if why == "" && same && r.reusedBoot == "" && r.restartedUnderSameBoot(seq, m) {
		r.reusedBoot = info.Serial + "/" + strconv.FormatUint(uint64(info.BootID), 10)
		r.log.Error().Str("serial", info.Serial).Uint32("boot", info.BootID).Uint32("hello_seq", seq).
			Uint32("expected", r.next).Uint32("device_ms", m.Time).Uint32("last_device_ms", r.devTime).
			Msg("shoe restarted under the boot id of its last power-up (firmware fault)")
	}
	if why == "" && r.reusedBoot != "" && r.reusedBoot == info.Serial+"/"+strconv.FormatUint(uint64(info.BootID), 10) {
		cause = ErrStreamRestarted
		why = fmt.Sprintf("it restarted its frame numbering (HELLO at #%d, the session was at #%d) under the boot id %d of its last power-up, "+
			"so its new cards cannot be told from the ones already dealt: a firmware fault; replace the shoe", seq, r.next, info.BootID)
	}
	if why != "" {
		r.helloOnCon = false
		r.refused = true
		key := info.Serial + "\x00" + info.Firmware
		if r.refusedFor != key {
			r.refusedFor = key
			err := &RefusedError{Serial: info.Serial, Firmware: info.Firmware, Proto: info.Proto, Why: why, Err: cause}
			r.log.Error().Err(err).Msg("device refused")
			r.emit(Event{Kind: DeviceRefused, Time: now, Device: info, Err: err, Message: err.Error()})
		}
		return
	}
	r.refused = false
	r.refusedFor = ""
	r.restarted = false
	if !same {
		if r.session {
			r.log.Warn().Str("serial", info.Serial).Uint32("boot", info.BootID).Msg("new device session (other device or reboot)")
		}
		if r.session && r.serial != info.Serial {
			// Another shoe on the line: its cards are of no shoe the
			// table knows until a supervisor says which shoe deals.
			msg := fmt.Sprintf("another shoe connected: serial %s, where %s had the session; check which shoe is at the table before dealing on", info.Serial, r.serial)
			r.log.Error().Str("serial", info.Serial).Str("was", r.serial).Msg("another shoe connected")
			r.emit(Event{Kind: DeviceChanged, Time: now, DeviceTime: m.Time, Device: info, Err: ErrDeviceChanged, Message: msg})
		}
		r.session = true
		r.serial, r.bootID = info.Serial, info.BootID
		r.wmu.Lock()
		r.pending = nil // the old session's frames will not come again
		r.wmu.Unlock()
		r.next = max(seq, 1) // numbering starts at 1; ACK next-1 must not wrap
		r.resendFor = 0
		r.malformedN = 0
		r.recent = [MaxWindow]frameSig{}
	}
	r.gapN = 0
	r.devTime = m.Time
	first := !r.helloOnCon
	r.helloOnCon = true
	r.sessionID = info.Serial + "/" + strconv.FormatUint(uint64(info.BootID), 10)
	r.ackDurable()
	if first {
		r.log.Info().Str("serial", info.Serial).Str("firmware", info.Firmware).Str("model", info.Model).Msg("shoe connected")
		r.emit(Event{Kind: Connected, Time: now, DeviceTime: m.Time, Device: info,
			Message: fmt.Sprintf("%s %s serial %s firmware %s", info.Vendor, info.Model, info.Serial, info.Firmware)})
	}
}

// restartedUnderSameBoot reports whether a HELLO with the boot id of the
// session cannot be the session's: it names a frame older than any the
// device can still hold unacknowledged, or one past those we had (the
// device forgets a frame only when we acknowledge it), or its clock is
// behind the last frame's (int32 arithmetic: the clock wraps after 49.7
// days).
func (r *Reader) restartedUnderSameBoot(seq uint32, m *DeviceMessage) bool {
	return uint64(seq)+MaxWindow < uint64(r.next) || seq > r.next || int32(m.Time-r.devTime) < 0
}

// refuse returns why a device is not allowed, or "".
func (r *Reader) refuse(m *DeviceMessage) string {
	info := m.Info
	switch {
	case m.Refuse != "":
		return m.Refuse
	case len(r.opts.AllowSerials) > 0 && !slices.Contains(r.opts.AllowSerials, info.Serial):
		return "serial number not on the allow-list"
	case len(r.opts.AllowFirmware) > 0 && !slices.Contains(r.opts.AllowFirmware, info.Firmware):
		return "firmware version not on the allow-list"
	}
	return ""
}

// dispatch turns one in-order device message into events.
func (r *Reader) dispatch(m *DeviceMessage, now time.Time) {
	ev := Event{Seq: m.Seq, Time: now, DeviceTime: m.Time}
	switch m.Kind {
	case MsgHeartbeat:
		return
	case MsgCard:
		r.card(ev, m)
		return
	case MsgCutCard:
		ev.Kind, ev.Message = CutCard, "cut card out"
	case MsgShoeIn:
		ev.Kind, ev.Message = ShoeIn, "shoe in"
	case MsgShoeID:
		ev.Kind, ev.ShoeID, ev.Message = ShoeID, string(m.ShoeID), "shoe "+string(m.ShoeID)
	case MsgShoeOut:
		ev.Kind, ev.Returned = ShoeOut, m.Returned
		ev.Message = fmt.Sprintf("shoe out, %d returned", m.Returned)
	case MsgMisread:
		ev.Kind, ev.Message = Misread, "card misread"
	case MsgDoubleCard:
		ev.Kind, ev.Message = DoubleCard, "two cards pulled at once"
	case MsgJam:
		ev.Kind, ev.Message = Jam, "card path jammed"
	case MsgFaceUp:
		ev.Kind, ev.Card, ev.Message = FaceUp, m.Card, "card face up"
	case MsgUnknownCard:
		ev.Kind, ev.Code, ev.Message = UnknownCard, string(m.Code), "unknown card "+string(m.Code)
	case MsgFault:
		err := &FaultError{Code: m.FaultCode, Text: string(m.Text)}
		ev.Kind, ev.Err, ev.Message = DeviceFault, err, err.Error()
	default:
		return
	}
	r.emit(ev)
}

// card decodes a card. A code that is no card of the shoe's decks, or
// names another card than the one read, is the codec's finding (it needs
// no memory): IntegrityAlarm instead of Card. What needs memory (a code
// seen before, a card beyond the composition, the shuffle check) is the
// table's.
func (r *Reader) card(ev Event, m *DeviceMessage) {
	ev.Card, ev.Confidence = m.Card, m.Confidence
	if len(m.Code) > 0 {
		ev.Code = string(m.Code)
		named, ok := r.opts.CodeBook(m.Code)
		reason := Reason(0)
		switch {
		case !ok:
			reason = UnknownCode
		case named != m.Card:
			reason = CodeMismatch
		}
		if reason != 0 {
			ierr := &IntegrityError{Reason: reason, Card: m.Card, Code: ev.Code}
			ev.Kind, ev.Err, ev.Message = IntegrityAlarm, ierr, ierr.Error()
			r.log.Error().Err(ierr).Uint32("seq", ev.Seq).Msg("integrity alarm")
			r.emit(ev)
			return
		}
	}
	ev.Kind = Card
	r.emit(ev)
}

// emit delivers ev, giving up when ctx ends.
func (r *Reader) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = r.opts.Clock.Now()
	}
	ev.Session = r.sessionID
	if r.deliver != nil {
		if ev.Seq != 0 {
			r.emittedN++
		}
		r.emitted = true
		r.deliver(ev)
		return
	}
	select {
	case r.out <- ev:
		r.emitted = true
		if ev.Seq != 0 {
			r.emittedN++
		}
	case <-r.ctx.Done():
	}
}

func (r *Reader) sendConfig() {
	r.send(HostMessage{Kind: HostConfig, Heartbeat: r.opts.Heartbeat, Window: r.opts.Window})
}

func (r *Reader) sendSeq(k HostKind, seq uint32) {
	r.send(HostMessage{Kind: k, Seq: seq})
}

func (r *Reader) send(m HostMessage) {
	r.wmu.Lock()
	err := r.sendLocked(m)
	r.wmu.Unlock()
	if err != nil && r.fail == nil {
		r.fail = err
	}
}

// sendLocked writes one host frame. A write error ends the connection: the
// Run goroutine sets r.fail from it (send); from Commit's goroutine it is
// dropped, and the next read or write of the Run goroutine meets it.
func (r *Reader) sendLocked(m HostMessage) error {
	if r.port == nil {
		return nil
	}
	r.hostSeq++
	b, err := r.codec.AppendHost(r.wbuf[:0], r.hostSeq, m)
	if err != nil {
		r.log.Error().Err(err).Msg("encode host frame")
		return nil
	}
	r.wbuf = b
	if _, err := r.port.Write(b); err != nil {
		return fmt.Errorf("shoereader: write host message %d: %w", m.Kind, err)
	}
	return nil
}
