package mqttlink_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/embedbroker"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// waitFor is how long a poll may take before a test gives up; generous,
// since the machine is shared. Nothing asserts on how fast it was.
const waitFor = 30 * time.Second

const poll = 10 * time.Millisecond

var epoch = time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)

// makeEvent returns event number seq of a scripted stream: cards, with a
// phase change now and then.
func makeEvent(seq uint64) table.Event {
	ev := table.Event{Seq: seq, Time: epoch.Add(time.Duration(seq) * time.Second), Table: "t1", Round: fmt.Sprintf("r%d", seq/20)}
	switch {
	case seq%7 == 0:
		ev.Body = table.PhaseChanged{Phase: table.PhaseBetting, Deadline: ev.Time.Add(15 * time.Second)}
	default:
		c := card.FromIndex(int(seq % 52))
		ev.Body = round.Event{Note: round.Note{Type: round.EvCardDealt, Card: c, Seat: int8(seq%7) + 1, Hand: 1, Total: int8(c.Value())}}
	}
	return ev
}

// makeState returns the snapshot taken after event seq.
func makeState(seq uint64) table.Event {
	return table.Event{Time: epoch.Add(time.Duration(seq) * time.Second), Table: "t1", Body: &table.State{
		Seq: seq, Table: "t1", Game: "000", Phase: table.PhaseDealing, Shoe: table.ShoeState{Decks: 8}}}
}

// feed sends events from..to (inclusive) to the link, with a state
// snapshot after every tenth, as the controller does after changes.
func feed(r *running, from, to uint64) {
	for seq := from; seq <= to; seq++ {
		r.events <- makeEvent(seq)
		if seq%10 == 0 {
			r.events <- makeState(seq)
		}
	}
}

func testLogger(t *testing.T) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel).With().Timestamp().Logger()
}

// testOptions are options with short intervals for tests.
func testOptions(t *testing.T, url string) mqttlink.Options {
	o := mqttlink.DefaultOptions()
	o.Studio, o.Table = "s1", "t1"
	o.BrokerURL = url
	o.OutboxDir = t.TempDir()
	o.ConnectRetryInterval = 100 * time.Millisecond
	o.MaxReconnectInterval = 200 * time.Millisecond
	o.KeepAlive = 2 * time.Second
	o.Supervisors = testRing{"anna": testKey.Public().(ed25519.PublicKey)}
	o.Now = func() time.Time { return testNow }
	return o
}

// running is a Link under Run in its own goroutine.
type running struct {
	link   *mqttlink.Link
	events chan table.Event
	cancel context.CancelFunc
	done   chan error
}

func startLink(t *testing.T, opts mqttlink.Options, sub mqttlink.Submitter) *running {
	t.Helper()
	return startLinkLogged(t, opts, sub, testLogger(t))
}

// startLinkLogged is startLink with the link logging to log.
func startLinkLogged(t *testing.T, opts mqttlink.Options, sub mqttlink.Submitter, log zerolog.Logger) *running {
	t.Helper()
	l, err := mqttlink.New(opts, log)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{link: l, events: make(chan table.Event, 1024), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- l.Run(ctx, r.events, sub) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run and waits for it; safe to call twice.
func (r *running) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		require.NoError(t, err)
	case <-time.After(waitFor):
		t.Fatal("Run did not return after cancel")
	}
}

func startBroker(t *testing.T) *embedbroker.Broker {
	t.Helper()
	// The broker's connection goroutines can log after Close returns (a
	// client's connection ending as the broker goes); the log stops with
	// the test instead of writing to a finished one (a data race).
	w := &untilDone{w: zerolog.NewTestWriter(t)}
	t.Cleanup(w.stop) // registered first, so it runs after Close
	log := zerolog.New(w).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	b, err := embedbroker.Start(context.Background(), "127.0.0.1:0", log)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return b
}

func TestLinkPublishesInOrderWithEmbeddedBroker(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})
	r := startLink(t, opts, &mqttlinktest.Submitter{})

	const n = 500
	feed(r, 1, n)
	require.Eventually(t, func() bool { return sub.MaxSeq() == n }, waitFor, poll)
	distinct, dups, gaps, bad := sub.Counts()
	assert.Equal(t, n, distinct)
	assert.Zero(t, dups+gaps+bad)
	for i, ev := range sub.Events() {
		require.Equal(t, uint64(i+1), ev.Seq)
		want, err := wire.Encode(makeEvent(ev.Seq))
		require.NoError(t, err)
		var got mqttlinktest.Message
		for _, m := range sub.Messages() {
			var e mqttlinktest.Event
			if json.Unmarshal(m.Payload, &e) == nil && e.Seq == ev.Seq {
				got = m
				break
			}
		}
		assert.JSONEq(t, string(want), string(got.Payload), "seq %d", ev.Seq)
		assert.Equal(t, topics.Events, got.Topic)
	}
	states := sub.States()
	require.Len(t, states, n/10)
	for i, st := range states {
		var body table.State
		require.NoError(t, json.Unmarshal(st.Data, &body))
		assert.Equal(t, uint64(10*(i+1)), body.Seq, "snapshots in order")
		assert.Zero(t, st.Seq, "a snapshot takes no number")
	}

	online := sub.MessagesOn(topics.Status)
	require.NotEmpty(t, online)
	assert.Equal(t, mqttlink.StatusOnline, string(online[0].Payload))

	require.Eventually(t, func() bool { return r.link.OutboxDepth() == 0 }, waitFor, poll)
	st := r.link.Stats()
	assert.Equal(t, uint64(n+n/10), st.Published, "events and snapshots")
	// The fsyncs run on their own goroutine, so the last may follow the
	// acknowledgements.
	require.Eventually(t, func() bool { return r.link.Stats().OutboxSyncs > 0 }, waitFor, poll, "the outbox is synced")
	assert.LessOrEqual(t, r.link.Stats().OutboxSyncs, st.Published, "at most one fsync per event")
	lat := r.link.PublishLatency()
	assert.Equal(t, uint64(n+n/10), lat.Count)
	assert.LessOrEqual(t, lat.P50, lat.P99)
	t.Logf("published %d events, publish latency p50 %v p99 %v max %v", n, lat.P50, lat.P99, lat.Max)

	// A late subscriber gets the retained state and status.
	late := mqttlinktest.Subscribe(t, b.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "late", CleanSession: true})
	require.Eventually(t, func() bool { return len(late.MessagesOn(topics.State)) > 0 && len(late.MessagesOn(topics.Status)) > 0 }, waitFor, poll)
	st0 := late.MessagesOn(topics.State)[0]
	assert.True(t, st0.Retained)
	var e mqttlinktest.Event
	require.NoError(t, json.Unmarshal(st0.Payload, &e))
	var body table.State
	require.NoError(t, json.Unmarshal(e.Data, &body))
	assert.Equal(t, uint64(n), body.Seq, "the retained state is the last snapshot")

	// A clean stop says offline.
	r.stop(t)
	require.Eventually(t, func() bool {
		m := late.MessagesOn(topics.Status)
		return string(m[len(m)-1].Payload) == mqttlink.StatusOffline
	}, waitFor, poll)
}

func TestLinkRestartResendsUnacknowledged(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})

	r := startLink(t, opts, &mqttlinktest.Submitter{})
	feed(r, 1, 100)
	require.Eventually(t, func() bool { return sub.MaxSeq() == 100 }, waitFor, poll)
	require.ErrorIs(t, r.link.Run(context.Background(), nil, nil), mqttlink.ErrAlreadyRunning)
	r.stop(t)

	// Events arriving while the link is down wait in the controller; the
	// restarted link gets a replay that overlaps what it already sent.
	r2 := startLink(t, opts, &mqttlinktest.Submitter{})
	feed(r2, 90, 200)
	require.Eventually(t, func() bool { return sub.MaxSeq() == 200 }, waitFor, poll)
	distinct, _, gaps, bad := sub.Counts()
	assert.Equal(t, 200, distinct)
	assert.Zero(t, gaps+bad)
	assert.Equal(t, uint64(11), r2.link.Stats().Duplicates, "seq 90..100 replayed by the controller are not published again")
}

func TestNewRejectsBadOptions(t *testing.T) {
	base := func() mqttlink.Options {
		o := mqttlink.DefaultOptions()
		o.Studio, o.Table, o.BrokerURL, o.OutboxDir = "s", "t", "tcp://127.0.0.1:1", "/tmp/x"
		return o
	}
	tests := []struct {
		name   string
		modify func(*mqttlink.Options)
	}{
		{"no studio", func(o *mqttlink.Options) { o.Studio = "" }},
		{"wildcard table", func(o *mqttlink.Options) { o.Table = "t+" }},
		{"slash studio", func(o *mqttlink.Options) { o.Studio = "a/b" }},
		{"no broker", func(o *mqttlink.Options) { o.BrokerURL = "" }},
		{"qos 3", func(o *mqttlink.Options) { o.QoS = 3 }},
		{"no outbox", func(o *mqttlink.Options) { o.OutboxDir = "" }},
		{"cert without key", func(o *mqttlink.Options) { o.TLS.CertFile = "c.pem" }},
		{"missing CA file", func(o *mqttlink.Options) { o.BrokerURL = "ssl://127.0.0.1:1"; o.TLS.CAFile = "/nonexistent/ca.pem" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			tc.modify(&o)
			_, err := mqttlink.New(o, zerolog.Nop())
			require.Error(t, err)
		})
	}
	_, err := mqttlink.New(base(), zerolog.Nop())
	require.NoError(t, err)
}

// TestRunLeavesNoGoroutines checks that Run's goroutines, and paho's, end
// when Run returns.
func TestRunLeavesNoGoroutines(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	base := runtime.NumGoroutine()
	for i := range 3 {
		r := startLink(t, opts, &mqttlinktest.Submitter{})
		require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
		feed(r, uint64(20*i+1), uint64(20*i+20))
		require.Eventually(t, func() bool { return r.link.OutboxDepth() == 0 }, waitFor, poll)
		r.stop(t)
	}
	// Polled by hand: require.Eventually runs its condition on goroutines
	// of its own, which would be counted.
	deadline := time.Now().Add(waitFor)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(poll)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after:\n%s", base, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestLinkNeverPublishesASeqTwiceWithOtherContent: events whose seq the
// outbox already has are not published again; the same content counts as
// a duplicate, other content as a conflict (logged as an error), in the
// same run and after a restart (where the first content is still in the
// outbox, unacknowledged, or acknowledged and gone).
func TestLinkNeverPublishesASeqTwiceWithOtherContent(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Events, mqttlinktest.SubscriberOptions{CleanSession: true})
	other := func(seq uint64) table.Event {
		ev := makeEvent(seq)
		ev.Body = table.Alarm{Code: "other", Message: "not what was published"}
		return ev
	}

	r := startLink(t, opts, &mqttlinktest.Submitter{})
	feed(r, 1, 20)
	require.Eventually(t, func() bool { return sub.MaxSeq() == 20 }, waitFor, poll)
	for seq := uint64(11); seq <= 15; seq++ {
		r.events <- other(seq) // a conflict: the same seq, other content
	}
	for seq := uint64(16); seq <= 18; seq++ {
		r.events <- makeEvent(seq) // a repeat
	}
	r.events <- makeEvent(21)
	require.Eventually(t, func() bool { return sub.MaxSeq() == 21 }, waitFor, poll)
	st := r.link.Stats()
	assert.Equal(t, uint64(5), st.Conflicts)
	assert.Equal(t, uint64(3), st.Duplicates)
	r.stop(t)

	// After a restart the digests are gone; what the broker acknowledged
	// cannot be compared and is counted as a duplicate, never published.
	r2 := startLink(t, opts, &mqttlinktest.Submitter{})
	r2.events <- other(19)
	r2.events <- makeEvent(22)
	require.Eventually(t, func() bool { return sub.MaxSeq() == 22 }, waitFor, poll)
	assert.Equal(t, uint64(1), r2.link.Stats().Duplicates)

	seen := map[uint64]string{}
	for _, e := range sub.Events() {
		if prev, ok := seen[e.Seq]; ok {
			require.Equal(t, prev, string(e.Data), "seq %d published twice with other content", e.Seq)
		}
		seen[e.Seq] = string(e.Data)
		require.NotEqual(t, "alarm", e.Kind, "seq %d: the conflicting content was published", e.Seq)
	}
	assert.Len(t, seen, 22)
}

// TestObservePublish: every acknowledged publish is handed to the
// integrator's histogram.
func TestObservePublish(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	var n atomic.Int64
	opts.ObservePublish = func(d time.Duration) {
		if d > 0 {
			n.Add(1)
		}
	}
	r := startLink(t, opts, &mqttlinktest.Submitter{})
	feed(r, 1, 20)
	require.Eventually(t, func() bool { return r.link.Stats().Published >= 22 }, waitFor, poll)
	assert.GreaterOrEqual(t, n.Load(), int64(22), "20 events and 2 states")
}

// untilDone passes writes on until stop is called, then drops them.
type untilDone struct {
	mu      sync.Mutex // guards stopped and w's use
	stopped bool
	w       io.Writer
}

func (u *untilDone) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped {
		return len(p), nil
	}
	return u.w.Write(p)
}

func (u *untilDone) stop() {
	u.mu.Lock()
	u.stopped = true
	u.mu.Unlock()
}
