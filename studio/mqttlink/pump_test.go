package mqttlink

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

// The pump's window, tested against a fake paho client: the test decides
// when each publish is acknowledged, fails or is completed by a resume.

type fakeToken struct {
	once sync.Once
	done chan struct{}
	err  error
}

func newFakeToken() *fakeToken { return &fakeToken{done: make(chan struct{})} }

func (t *fakeToken) finish(err error) {
	t.once.Do(func() { t.err = err; close(t.done) })
}

func (t *fakeToken) Wait() bool { <-t.done; return true }
func (t *fakeToken) WaitTimeout(d time.Duration) bool {
	select {
	case <-t.done:
		return true
	case <-time.After(d):
		return false
	}
}
func (t *fakeToken) Done() <-chan struct{} { return t.done }
func (t *fakeToken) Error() error          { <-t.done; return t.err }

type fakePub struct {
	topic string
	seq   uint64 // the envelope's seq; 0 for a state
	tok   *fakeToken
}

// fakeClient records publishes; the embedded nil Client makes any other
// call panic, so the test notices if the pump starts using more of paho.
type fakeClient struct {
	paho.Client
	pubs chan fakePub
	down atomic.Bool // the connection is not open
}

func (c *fakeClient) IsConnectionOpen() bool { return !c.down.Load() }

func (c *fakeClient) Publish(topic string, _ byte, _ bool, payload any) paho.Token {
	var env struct {
		Seq uint64 `json:"seq"`
	}
	if b, ok := payload.([]byte); !ok || json.Unmarshal(b, &env) != nil {
		panic("fakeClient: payload is not an event")
	}
	p := fakePub{topic: topic, seq: env.Seq, tok: newFakeToken()}
	c.pubs <- p
	return p.tok
}

type fakeGate struct {
	mu      sync.Mutex
	held    bool
	release chan struct{}
}

func (g *fakeGate) Held() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.held }

func (g *fakeGate) Released() <-chan struct{} { return g.release }

func (g *fakeGate) set(held bool) {
	g.mu.Lock()
	g.held = held
	g.mu.Unlock()
	if !held {
		g.release <- struct{}{}
	}
}

type pumpRig struct {
	t      *testing.T
	link   *Link
	client *fakeClient
	gate   *fakeGate
	ob     *outbox
	events chan table.Event
	seq    uint64
}

func startPump(t *testing.T, window int) *pumpRig {
	t.Helper()
	l, err := New(Options{Studio: "s1", Table: "t1", BrokerURL: "tcp://127.0.0.1:1", OutboxDir: t.TempDir(), MaxInflight: window}, zerolog.Nop())
	require.NoError(t, err)
	ob, err := openOutbox(l.opts.FS, l.opts.OutboxDir, l.opts.OutboxMaxBytes, l.opts.OutboxCompactBytes, l.opts.OutboxMemoryBytes, zerolog.Nop())
	require.NoError(t, err)
	r := &pumpRig{
		t:      t,
		link:   l,
		client: &fakeClient{pubs: make(chan fakePub, 1024)},
		gate:   &fakeGate{release: make(chan struct{}, 1)},
		ob:     ob,
		events: make(chan table.Event, 1024),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.pump(ctx, r.events, r.client, r.gate, ob) }()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.NoError(t, ob.Close())
	})
	return r
}

// send queues n events, each followed by a state snapshot when withState.
func (r *pumpRig) send(n int, withState bool) {
	for range n {
		r.seq++
		r.events <- table.Event{Seq: r.seq, Table: "t1", Body: table.CutCard{Source: "test"}}
		if withState {
			r.events <- table.Event{Table: "t1", Body: &table.State{Seq: r.seq, Table: "t1"}}
		}
	}
}

// next returns the next publish; the wait only bounds a broken pump.
func (r *pumpRig) next() fakePub {
	r.t.Helper()
	select {
	case p := <-r.client.pubs:
		return p
	case <-time.After(10 * time.Second):
		r.t.Fatal("no publish")
		return fakePub{}
	}
}

// take returns the next n publishes.
func (r *pumpRig) take(n int) []fakePub {
	r.t.Helper()
	out := make([]fakePub, n)
	for i := range out {
		out[i] = r.next()
	}
	return out
}

// quiet asserts that nothing is published while the pump has had every
// chance to: it waits for the pump to take a probe event (Depth grows),
// which it does on the same goroutine that publishes.
func (r *pumpRig) quiet(depth int) {
	r.t.Helper()
	require.Eventually(r.t, func() bool { return r.ob.Depth() == depth }, 10*time.Second, time.Millisecond)
	select {
	case p := <-r.client.pubs:
		r.t.Fatalf("unexpected publish of seq %d on %s", p.seq, p.topic)
	default:
	}
}

func seqs(ps []fakePub) []uint64 {
	out := make([]uint64, len(ps))
	for i, p := range ps {
		out[i] = p.seq
	}
	return out
}

func TestPumpWindowKeepsOrder(t *testing.T) {
	for _, window := range []int{1, 2, 5, 32} {
		t.Run("", func(t *testing.T) {
			r := startPump(t, window)
			const n = 12
			r.send(n, false)
			var got []uint64
			inFlight := r.take(min(window, n))
			for len(got) < n {
				// The window is full: nothing more goes out until the head
				// is acknowledged.
				select {
				case p := <-r.client.pubs:
					t.Fatalf("seq %d published with %d in flight (window %d)", p.seq, len(inFlight), window)
				default:
				}
				head := inFlight[0]
				inFlight = inFlight[1:]
				got = append(got, head.seq)
				head.tok.finish(nil)
				if sent := len(got) + len(inFlight); sent < n {
					inFlight = append(inFlight, r.next())
				}
			}
			for i, s := range got {
				assert.Equal(t, uint64(i+1), s)
			}
			require.Eventually(t, func() bool { return r.ob.Depth() == 0 }, 10*time.Second, time.Millisecond)
		})
	}
}

func TestPumpStateFollowsItsEventsInOneWindow(t *testing.T) {
	r := startPump(t, 32)
	r.send(3, true)
	ps := r.take(6)
	for i, p := range ps {
		if i%2 == 0 {
			assert.Equal(t, "livetable/s1/t1/events", p.topic)
			assert.Equal(t, uint64(i/2+1), p.seq)
		} else {
			assert.Equal(t, "livetable/s1/t1/state", p.topic, "the state right after its event")
		}
	}
}

// While paho resends after a reconnect the pump neither sends nor marks:
// the completions resume reports are not the broker's acknowledgements.
func TestPumpWaitsForResendToBeAcknowledged(t *testing.T) {
	r := startPump(t, 8)
	r.send(3, false)
	first := r.take(3)
	require.Eventually(t, func() bool { return r.link.Stats().InFlight == 3 }, 10*time.Second, time.Millisecond)

	r.gate.set(true)
	for _, p := range first {
		p.tok.finish(nil) // paho's resume completing the old tokens
	}
	r.send(2, false)
	r.quiet(5) // nothing marked (depth 5), nothing new sent

	r.gate.set(false) // the broker acknowledged what paho resent
	rest := r.take(2)
	assert.Equal(t, []uint64{4, 5}, seqs(rest))
	require.Eventually(t, func() bool { return r.ob.Depth() == 2 }, 10*time.Second, time.Millisecond)
	for _, p := range rest {
		p.tok.finish(nil)
	}
	require.Eventually(t, func() bool { return r.ob.Depth() == 0 }, 10*time.Second, time.Millisecond)
}

// A publish paho gave up on stops the window; after the back-off the whole
// window goes out again, in order, before anything new.
func TestPumpFailedPublishSendsWindowAgain(t *testing.T) {
	r := startPump(t, 4)
	r.send(3, false)
	first := r.take(3)
	first[0].tok.finish(errors.New("publish was broken by timeout"))
	r.send(1, false) // arrives while stalled
	again := r.take(4)
	assert.Equal(t, []uint64{1, 2, 3, 4}, seqs(again), "the window again, then the new event")
	for _, p := range first[1:] {
		p.tok.finish(nil) // the old tokens no longer count
	}
	for _, p := range again {
		p.tok.finish(nil)
	}
	require.Eventually(t, func() bool { return r.ob.Depth() == 0 }, 10*time.Second, time.Millisecond)
	r.quiet(0)
	require.Eventually(t, func() bool {
		st := r.link.Stats()
		return st.Published == 4 && st.InFlight == 0
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, uint64(3), r.link.Stats().Republished, "the window of three, once")
}

// A failure seen while paho is resending waits for the resend, then the
// back-off, before the window goes out again.
func TestPumpFailureDuringResendWaitsForIt(t *testing.T) {
	r := startPump(t, 4)
	r.send(2, false)
	first := r.take(2)
	r.gate.set(true)
	first[0].tok.finish(errors.New("connection lost"))
	r.send(1, false)
	r.quiet(3)
	r.gate.set(false)
	again := r.take(3)
	assert.Equal(t, []uint64{1, 2, 3}, seqs(again))
}

// Nothing is handed to paho while the connection is not open (paho would
// store it and send it on resume, racing with what is published after);
// the pump sends once a connection opens and the gate wakes it.
func TestPumpPublishesOnlyOnAnOpenConnection(t *testing.T) {
	r := startPump(t, 8)
	r.client.down.Store(true)
	r.send(3, false)
	r.quiet(3)
	r.client.down.Store(false)
	r.gate.release <- struct{}{} // the link's OnConnect kicks the gate
	assert.Equal(t, []uint64{1, 2, 3}, seqs(r.take(3)))
}

// The outbox's ack file is written once the window empties: not between
// a card's event and its state, and not once per record.
func TestPumpSavesAckWhenWindowEmpties(t *testing.T) {
	r := startPump(t, 32)
	r.send(1, true)
	ps := r.take(2)
	ps[0].tok.finish(nil)
	require.Eventually(t, func() bool { return r.ob.Depth() == 1 }, 10*time.Second, time.Millisecond)
	pos, _ := r.ob.readAck()
	assert.Zero(t, pos, "the event's ack is kept in memory while its state is in flight")
	ps[1].tok.finish(nil)
	require.Eventually(t, func() bool {
		pos, seq := r.ob.readAck()
		return pos == 2 && seq == 1
	}, 10*time.Second, time.Millisecond, "the ack file covers both once the window is empty")
}

// The outbox file gets a card's event and state once the broker has
// acknowledged both, in one write: not between their launches and
// paho's socket writes.
func TestPumpWritesOutboxWhenWindowEmpties(t *testing.T) {
	r := startPump(t, 32)
	written := func() int64 {
		r.ob.mu.Lock()
		defer r.ob.mu.Unlock()
		return r.ob.written
	}
	r.send(1, true)
	ps := r.take(2)
	assert.Zero(t, written(), "nothing written while both are in flight")
	ps[0].tok.finish(nil)
	require.Eventually(t, func() bool { return r.ob.Depth() == 1 }, 10*time.Second, time.Millisecond)
	assert.Zero(t, written(), "nothing written while the state is in flight")
	ps[1].tok.finish(nil)
	require.Eventually(t, func() bool { return written() > 0 }, 10*time.Second, time.Millisecond)
	r.ob.mu.Lock()
	defer r.ob.mu.Unlock()
	assert.Equal(t, r.ob.fileBytes, r.ob.written, "both records in one write")
}

// The pump leaves the outbox's bookkeeping for an emptied window (the
// records' write and the ack mark) to its driver, which writes it
// idleWrite later, while the broker delivers the card to the players;
// records in flight again by then put it off to the next emptying.
// Stepped by hand: no goroutine, no timer.
func TestPumpBookkeepingWaitsForIdle(t *testing.T) {
	l, err := New(Options{Studio: "s1", Table: "t1", BrokerURL: "tcp://127.0.0.1:1", OutboxDir: t.TempDir(), MaxInflight: 8}, zerolog.Nop())
	require.NoError(t, err)
	ob, err := openOutbox(l.opts.FS, l.opts.OutboxDir, l.opts.OutboxMaxBytes, l.opts.OutboxCompactBytes, l.opts.OutboxMemoryBytes, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ob.Close()) })
	client := &fakeClient{pubs: make(chan fakePub, 16)}
	p := l.newPumper(client, noGate{}, ob)
	p.lazy = true
	written := func() int64 {
		ob.mu.Lock()
		defer ob.mu.Unlock()
		return ob.written
	}
	ackPos := func() uint64 { pos, _ := ob.readAck(); return pos }
	card := func(seq uint64) {
		require.NoError(t, p.take(table.Event{Seq: seq, Table: "t1", Body: table.CutCard{Source: "test"}}))
		require.NoError(t, p.take(table.Event{Table: "t1", Body: &table.State{Seq: seq, Table: "t1"}}))
		require.NoError(t, p.took())
	}
	acked := func() {
		for range 2 {
			(<-client.pubs).tok.finish(nil)
		}
		_, err := p.turn()
		require.NoError(t, err)
	}

	card(1)
	acked()
	assert.True(t, p.owed, "the emptied window owes its bookkeeping")
	assert.Zero(t, written(), "no write the moment the broker acknowledged the state")
	assert.Zero(t, ackPos(), "no ack mark either")

	card(2) // the next card came before the driver's write
	require.NoError(t, p.writeOwed())
	assert.True(t, p.owed, "with records in flight the write waits for the next emptying")
	assert.Zero(t, written())

	acked()
	require.NoError(t, p.writeOwed())
	assert.False(t, p.owed)
	assert.Positive(t, written(), "both cards written at once")
	assert.Equal(t, uint64(4), ackPos(), "the ack mark covers both cards")
	require.NoError(t, p.writeOwed())
	assert.False(t, p.owed, "nothing owed twice")

	// A driver that never writes loses nothing at a clean stop: Close
	// writes what waits (a crash loses it as a power cut does the tail
	// not yet fsync'd: the journal derives it again).
	card(3)
	acked()
	require.True(t, p.owed)
	require.NoError(t, ob.Close())
	last, err := OutboxLastSeq(nil, l.opts.OutboxDir, zerolog.Nop())
	require.NoError(t, err)
	assert.Equal(t, uint64(3), last)
}
