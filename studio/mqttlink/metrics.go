package mqttlink

import (
	"slices"
	"sync"
	"time"
)

// latencySamples is how many recent publish latencies are kept for the
// percentiles: enough for a stable p99, small enough to sort on demand.
const latencySamples = 4096

// latencyRing keeps the most recent publish latencies.
type latencyRing struct {
	mu    sync.Mutex // guards the following
	buf   [latencySamples]time.Duration
	n     int    // valid samples, up to latencySamples
	next  int    // where the next sample goes
	total uint64 // samples ever added
}

func (r *latencyRing) add(d time.Duration) {
	r.mu.Lock()
	r.buf[r.next] = d
	r.next = (r.next + 1) % latencySamples
	r.n = min(r.n+1, latencySamples)
	r.total++
	r.mu.Unlock()
}

// LatencyStats summarises recent publish latencies: from handing a message
// to paho to the broker's acknowledgement.
type LatencyStats struct {
	// Count is the number of publishes measured since the Link was made.
	Count uint64
	// Window is how many recent samples the percentiles are taken over.
	Window int
	// P50, P99 and Max are taken over the window.
	P50 time.Duration
	P99 time.Duration
	Max time.Duration
}

func (r *latencyRing) stats() LatencyStats {
	r.mu.Lock()
	s := slices.Clone(r.buf[:r.n])
	total := r.total
	r.mu.Unlock()
	st := LatencyStats{Count: total, Window: len(s)}
	if len(s) == 0 {
		return st
	}
	slices.Sort(s)
	st.P50 = s[(len(s)-1)*50/100]
	st.P99 = s[(len(s)-1)*99/100]
	st.Max = s[len(s)-1]
	return st
}

// Stats are the link's counters, for metrics and the console.
type Stats struct {
	// Connected reports an open connection to the broker.
	Connected bool
	// Ready reports that, on this connection, the link is subscribed to
	// its commands and has published its online status.
	Ready bool
	// OutboxDepth is the number of events journaled but not yet
	// acknowledged by the broker.
	OutboxDepth int
	// Published counts events acknowledged by the broker.
	Published uint64
	// InFlight is how many outbox records are at the broker
	// unacknowledged (at most Options.MaxInflight).
	InFlight int
	// Republished counts records published again because paho gave up on
	// one before it (the subscriber drops the duplicates by seq).
	Republished uint64
	// Duplicates counts events not published because the outbox already
	// had their Seq (a controller replay after a restart), with the same
	// content or content no longer held to compare.
	Duplicates uint64
	// Conflicts counts events not published because their Seq was
	// already published with other content (each logged as an error):
	// never expected, since tabled refuses to start on a journal behind
	// its outbox.
	Conflicts uint64
	// Gaps counts jumps in the event Seq seen at intake.
	Gaps uint64
	// OutboxSyncs counts the outbox's fsyncs: each makes everything
	// written since the last one durable, so events/OutboxSyncs is the
	// group-commit factor.
	OutboxSyncs uint64
	// GatheredWrites counts socket writes that carried a batch of
	// packets together (a card's event and state: gatherConn).
	GatheredWrites uint64
	// Oversized counts commands the broker delivered above the largest
	// the table takes (MaxBatchBytes and headers), refused unread.
	Oversized uint64
	// Accepted and Rejected count answered commands; Repeats counts
	// repeated ids answered from the ledger.
	Accepted uint64
	Rejected uint64
	Repeats  uint64
	// Limited counts commands refused by the per-sender rate limit (also
	// in Rejected); Dropped counts commands dropped unanswered because
	// maxQueued were already waiting (a flood at QoS 0).
	Limited uint64
	Dropped uint64
	// ResendRequests counts resend commands carried out; Resent counts
	// the events they published again.
	ResendRequests uint64
	Resent         uint64
	// ConnectFailures counts failed connection attempts (broker away,
	// refused credentials, TLS errors).
	ConnectFailures uint64
	// SubscribeRefused counts command subscriptions the broker refused
	// (an ACL that does not give this table its own commands).
	SubscribeRefused uint64
	// StaleOffline counts offline statuses the broker published while
	// the table was online (an earlier connection's Last Will, late),
	// each answered by saying online again.
	StaleOffline uint64
	// ShortConnections counts connections the broker closed within 5 s
	// of opening them; TakeoverSuspected counts the runs of three in a
	// row, each logged as an error: another client with the table's
	// client id (takeoverWatch).
	ShortConnections  uint64
	TakeoverSuspected uint64
	// TakeoverNow is true while such a run goes on (the connection open
	// now, if any, younger than 5 s): the table's health says so.
	TakeoverNow bool
}

func (l *Link) outboxSyncs() uint64 {
	if ob := l.ob.Load(); ob != nil {
		return ob.Syncs()
	}
	return 0
}

// OutboxDepth is the number of events waiting for the broker's
// acknowledgement (0 when Run is not running).
func (l *Link) OutboxDepth() int {
	if ob := l.ob.Load(); ob != nil && l.running.Load() {
		return ob.Depth()
	}
	return 0
}

// Refusals counts the commands refused (Stats.Rejected) by the reply's
// code (too_large, wrong_topic, misread_at...; RefusalOther for a
// refusal without one), those refused at least once only.
func (l *Link) Refusals() map[string]uint64 { return l.refusals.snapshot() }

// PublishLatency summarises recent publish latencies.
func (l *Link) PublishLatency() LatencyStats { return l.lat.stats() }

// Stats returns a snapshot of the link's counters.
func (l *Link) Stats() Stats {
	return Stats{
		Connected:   l.connected.Load(),
		Ready:       l.ready.Load(),
		OutboxDepth: l.OutboxDepth(),
		Published:   l.published.Load(),
		InFlight:    int(l.inFlight.Load()),
		Republished: l.republished.Load(),
		Duplicates:  l.duplicates.Load(),
		Conflicts:   l.conflicts.Load(),
		Gaps:        l.gaps.Load(),
		OutboxSyncs: l.outboxSyncs(),

		GatheredWrites: l.gathered.Load(),
		Oversized:      l.oversizedN.Load(),
		Accepted:       l.accepted.Load(),
		Rejected:       l.rejected.Load(),
		Repeats:        l.repeats.Load(),
		Limited:        l.limited.Load(),
		Dropped:        l.cmdDropped.Load(),

		ResendRequests: l.resendRequests.Load(),
		Resent:         l.resent.Load(),

		ConnectFailures:  l.connectFailures.Load(),
		SubscribeRefused: l.subscribeRefused.Load(),
		StaleOffline:     l.staleOffline.Load(),

		ShortConnections:  l.takeover.short.Load(),
		TakeoverSuspected: l.takeover.raised.Load(),
		TakeoverNow:       l.takeover.fighting(l.connected.Load()),
	}
}
