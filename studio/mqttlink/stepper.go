package mqttlink

import (
	"context"
	"errors"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/livetable/livetable/table"
)

// Stepper runs the link's logic on its caller's goroutine, one step at a
// time, over any paho.Client: the pump over the durable outbox (window,
// acknowledgements, the back-off and resend of a failed window, repeated
// and conflicting seqs), the command intake (decoding, topic check, reply
// ledger, signature and replay checks, rate limits, submission) and the
// answering of resends. It is the same code Run drives from goroutines of
// its own; the deterministic simulation (simulators/world) drives it with
// a simulated broker instead, so that no goroutine scheduling changes a
// run. What the Stepper does not run is paho itself (connecting, its
// in-flight store and its resume after a reconnect, see copyStore): the
// client given stands for it, and completes every token itself.
type Stepper struct {
	l      *Link
	client paho.Client
	sub    Submitter
	ob     *outbox
	led    *ledger
	guard  *replayGuard
	lim    *limiter
	rq     chan resendReq
	p      *pumper
}

// StepperMemory counts what the link holds in memory, each bounded.
type StepperMemory struct {
	Ledger       int   // command ids remembered (bounded by ReplyCacheSize)
	Signatures   int   // supervisor signatures in the replay window (maxReplayGuard)
	Senders      int   // rate-limit buckets (maxSenders)
	Resends      int   // resends queued (resendQueueLen)
	InFlight     int   // outbox records at the broker unacknowledged (MaxInflight)
	Recent       int   // seqs whose digest the pump remembers (recentSeqs)
	OutboxMemory int64 // payload bytes of pending records in memory (OutboxMemoryBytes)
}

// MemoryBounds are the bounds of StepperMemory's counts, for these
// options.
func (l *Link) MemoryBounds() StepperMemory {
	return StepperMemory{Ledger: l.opts.ReplyCacheSize, Signatures: maxReplayGuard, Senders: maxSenders,
		Resends: resendQueueLen, InFlight: l.opts.MaxInflight, Recent: recentSeqs, OutboxMemory: l.opts.OutboxMemoryBytes}
}

// noGate is the resend gate of a client without paho's resume: nothing is
// ever held.
type noGate struct{}

func (noGate) Held() bool                { return false }
func (noGate) Released() <-chan struct{} { return nil }

// Stepper opens the link's outbox and reply ledger (as Run does) and
// returns a Stepper that publishes through client and submits commands to
// sub. Close it when done; Run may not be used on the same Link meanwhile.
func (l *Link) Stepper(client paho.Client, sub Submitter) (*Stepper, error) {
	if !l.running.CompareAndSwap(false, true) {
		return nil, ErrAlreadyRunning
	}
	ob, err := openOutbox(l.opts.FS, l.opts.OutboxDir, l.opts.OutboxMaxBytes, l.opts.OutboxCompactBytes, l.opts.OutboxMemoryBytes, l.log)
	if err != nil {
		l.running.Store(false)
		return nil, err
	}
	l.ob.Store(ob)
	led, err := openLedger(l.opts.FS, l.opts.OutboxDir, l.opts.ReplyCacheSize, l.log)
	if err != nil {
		l.running.Store(false)
		return nil, errors.Join(err, ob.Close())
	}
	return &Stepper{l: l, client: client, sub: sub, ob: ob, led: led,
		guard: newReplayGuard(l.opts.ReplayWindow, l.opts.Now()), lim: newLimiter(l.opts.CommandRate, l.opts.CommandBurst),
		rq: make(chan resendReq, resendQueueLen), p: l.newPumper(client, noGate{}, ob)}, nil
}

// Take is the pump taking a batch of the controller's events: each into
// the outbox (and launched when the window has room); the file gets them
// once nothing is in flight (Turn) or a backlog has gathered.
// It takes none while the outbox is full (false): they wait for room.
func (s *Stepper) Take(evs []table.Event) (bool, error) {
	if !s.p.room() {
		return false, nil
	}
	for _, ev := range evs {
		if err := s.p.take(ev); err != nil {
			return true, err
		}
	}
	return true, s.p.took()
}

// Turn is the top of the pump's loop: settle what the broker acknowledged,
// send a failed window again once its back-off is over, launch what may go.
func (s *Stepper) Turn() error {
	_, err := s.p.turn()
	return err
}

// Backoff reports the back-off the pump asked for after a failed publish
// (0: none asked since the last call); the driver calls RetryDue once it
// has passed.
func (s *Stepper) Backoff() time.Duration {
	d := s.p.armRetry
	s.p.armRetry = 0
	return d
}

// RetryDue tells the pump its back-off has passed.
func (s *Stepper) RetryDue() { s.p.retrying = false }

// Sync is the outbox's background fsync, when something was written since
// the last one.
func (s *Stepper) Sync() error {
	select {
	case <-s.ob.dirty:
		return s.ob.sync()
	default:
		return nil
	}
}

// Command answers one command message and publishes its reply; msg is
// acknowledged once the reply's token has completed without error (the
// client completes it before Publish returns, or the command stays
// unacknowledged for the broker to deliver again).
func (s *Stepper) Command(ctx context.Context, msg paho.Message) error {
	sent, err := s.l.reply(ctx, s.client, msg, s.rq, s.led, s.guard, s.lim, s.sub)
	if err != nil {
		return err
	}
	select {
	case <-sent.tok.Done():
		if sent.tok.Error() == nil {
			msg.Ack()
		}
	default:
	}
	return nil
}

// Resends publishes the events of every queued resend; the client must
// complete each token before Publish returns.
func (s *Stepper) Resends(ctx context.Context) error {
	for {
		select {
		case req := <-s.rq:
			if err := s.l.serveResend(ctx, s.client, req); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// LastSeq is the highest seq the outbox holds.
func (s *Stepper) LastSeq() uint64 { return s.ob.LastSeq() }

// Depth is how many records wait for the broker's acknowledgement.
func (s *Stepper) Depth() int { return s.ob.Depth() }

// Memory counts what the link holds in memory now.
func (s *Stepper) Memory() StepperMemory {
	s.ob.mu.Lock()
	mem := s.ob.memBytes
	s.ob.mu.Unlock()
	return StepperMemory{Ledger: s.led.lru.len(), Signatures: len(s.guard.seen), Senders: len(s.lim.senders),
		Resends: len(s.rq), InFlight: len(s.p.fl), Recent: len(s.p.seen.sums), OutboxMemory: mem}
}

// Close closes the outbox and the ledger (what was written and not
// synced stays at the disk's mercy, as after a crash of Run).
func (s *Stepper) Close() error {
	defer s.l.running.Store(false)
	return errors.Join(s.ob.Close(), s.led.Close())
}
