package mqttlink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// eventsPerRound is how many events a scripted round has in these tests
// (phases, cards, a snapshot); 100 rounds make 1,500 events.
const (
	eventsPerRound = 15
	rounds         = 100
	totalEvents    = rounds * eventsPerRound
)

// checkExactlyOnce asserts that the subscriber saw events 1..n, each once
// after dropping duplicates by seq, in order, and logs the counts.
func checkExactlyOnce(t *testing.T, sub *mqttlinktest.Subscriber, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return sub.MaxSeq() == uint64(n) }, waitFor, poll)
	distinct, dups, gaps, bad := sub.Counts()
	t.Logf("subscriber: %d distinct events, %d duplicates dropped, %d gaps, %d undecodable", distinct, dups, gaps, bad)
	assert.Equal(t, n, distinct)
	assert.Zero(t, gaps)
	assert.Zero(t, bad)
	for i, ev := range sub.Events() {
		if !assert.Equal(t, uint64(i+1), ev.Seq) {
			break
		}
	}
}

// checkExactlyOnceAcrossRestart is checkExactlyOnce for a broker restarted
// with the subscriber's session in it. The broker then redelivers what it
// held for the subscriber beside what it routes after the restart, and
// under load one held message has arrived behind a newer one (about one
// run in 20 on a loaded 2-core machine, with this link and yesterday's;
// the link sends each topic strictly in order, one message in flight). The
// backend holds the events after a gap until it is filled
// (docs/deploy.md), so what it hands on is still 1..n in order: every
// event arrives, none twice after dropping duplicates.
func checkExactlyOnceAcrossRestart(t *testing.T, sub *mqttlinktest.Subscriber, n int) {
	t.Helper()
	checkExactlyOnceWithin(t, sub, n, waitFor)
}

// checkExactlyOnceWithin is checkExactlyOnceAcrossRestart for a broker
// that may take up to within to deliver the last of them.
func checkExactlyOnceWithin(t *testing.T, sub *mqttlinktest.Subscriber, n int, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return sub.MaxSeq() == uint64(n) && len(sub.Missing()) == 0 }, within, poll,
		"max seq %d of %d, missing %v", sub.MaxSeq(), n, sub.Missing())
	distinct, dups, gaps, bad := sub.Counts()
	t.Logf("subscriber: %d distinct events, %d duplicates dropped, %d gaps, %d late (filling them), %d undecodable",
		distinct, dups, gaps, sub.Late(), bad)
	// Seqs up to n, none missing below the highest, n distinct: exactly
	// 1..n, whatever order they came in.
	assert.Equal(t, n, distinct)
	assert.Zero(t, bad)
}

func TestMosquittoEventsInOrder(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})
	r := startLink(t, testOptions(t, mq.URL()), &mqttlinktest.Submitter{})
	feed(r, 1, totalEvents)
	checkExactlyOnce(t, sub, totalEvents)
	_, dups, _, _ := sub.Counts()
	assert.Zero(t, dups, "nothing is resent on a healthy connection")
	lat := r.link.PublishLatency()
	t.Logf("%d rounds, %d events; publish latency p50 %v p99 %v", rounds, totalEvents, lat.P50, lat.P99)
}

func TestMosquittoBrokerStoppedMidStream(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	topics := mqttlink.TopicsFor("s1", "t1")
	// The backend keeps a persistent session, so the broker queues for it
	// while it reconnects.
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "backend"})
	r := startLink(t, testOptions(t, mq.URL()), &mqttlinktest.Submitter{})

	third := uint64(totalEvents / 3)
	feed(r, 1, third)
	// Stop the broker while the stream is still being published.
	require.Eventually(t, func() bool { return sub.MaxSeq() >= third/2 }, waitFor, poll)
	mq.Stop()
	// Mid-round during the outage: the events wait in the outbox.
	feed(r, third+1, 2*third)
	require.Eventually(t, func() bool { return !r.link.Stats().Connected && r.link.OutboxDepth() > 0 }, waitFor, poll)
	t.Logf("broker down with %d events in the outbox", r.link.OutboxDepth())
	mq.Restart()
	feed(r, 2*third+1, totalEvents)
	checkExactlyOnceAcrossRestart(t, sub, totalEvents)
	require.Eventually(t, func() bool { return r.link.OutboxDepth() == 0 }, waitFor, poll)
}

func TestMosquittoBrokerKilledMidRound(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "backend"})
	subscribed := time.Now() // Subscribe returns once the broker acknowledged the subscription
	r := startLink(t, testOptions(t, mq.URL()), &mqttlinktest.Submitter{})

	half := uint64(totalEvents / 2)
	feed(r, 1, half)
	// Every event at the backend and acknowledged to the link: an event
	// the broker had passed on but not yet acknowledged when it was killed
	// stays in the outbox, and the depth counted below would never be
	// the outage's events alone (the test's flake under load).
	require.Eventually(t, func() bool { return sub.MaxSeq() == half && r.link.OutboxDepth() == 0 }, waitFor, poll)
	// The broker saves its sessions every second; a kill loses what changed
	// since. Wait for a save after the backend's subscription: one from
	// before it (the first save, when the machine is slow to subscribe)
	// would restart the broker without the session, and the events the
	// link publishes before the backend subscribes again would be lost to
	// it (the test's flake under load).
	require.Eventually(t, func() bool {
		fi, err := os.Stat(filepath.Join(mq.Dir(), "mosquitto.db"))
		return err == nil && fi.ModTime().After(subscribed)
	}, waitFor, poll)
	mq.Kill()
	feed(r, half+1, half+eventsPerRound/2) // the rest of the round happens while the broker is dead
	require.Eventually(t, func() bool { return r.link.OutboxDepth() == eventsPerRound/2 }, waitFor, poll)
	mq.Restart()
	feed(r, half+eventsPerRound/2+1, totalEvents)
	checkExactlyOnceAcrossRestart(t, sub, totalEvents)
}

func TestMosquittoLinkRestartedMidStream(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})
	opts := testOptions(t, mq.URL())

	r := startLink(t, opts, &mqttlinktest.Submitter{})
	half := uint64(totalEvents / 2)
	feed(r, 1, half)
	// Stop while events are still being published: some journaled, not
	// yet acknowledged.
	require.Eventually(t, func() bool { return sub.MaxSeq() >= half/2 }, waitFor, poll)
	r.stop(t)
	left := len(r.events)
	t.Logf("link stopped at subscriber seq %d, %d events not yet taken from the channel", sub.MaxSeq(), left)

	// The controller replays from its journal on restart: everything from
	// what the link had taken in, overlapping with what was published.
	taken := half - uint64(left)
	r2 := startLink(t, opts, &mqttlinktest.Submitter{})
	feed(r2, taken/2, totalEvents)
	checkExactlyOnce(t, sub, totalEvents)
}

// TestMosquittoEventsBeforeFirstConnect starts the link while the broker
// is down: paho alone would lose what is published before its first
// connection; the outbox keeps it.
func TestMosquittoEventsBeforeFirstConnect(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "backend"})
	mq.Stop()

	r := startLink(t, testOptions(t, mq.URL()), &mqttlinktest.Submitter{})
	feed(r, 1, 100)
	require.Eventually(t, func() bool {
		st := r.link.Stats()
		return st.OutboxDepth == 110 && st.ConnectFailures > 0 && !st.Connected // 100 events, 10 snapshots
	}, waitFor, poll)
	t.Logf("%d failed connection attempts with 100 events and 10 snapshots waiting", r.link.Stats().ConnectFailures)
	mq.Restart()
	feed(r, 101, 200)
	checkExactlyOnceAcrossRestart(t, sub, 200)
	// What waited was launched in windows at the connection, each
	// written to the socket at once (brokerConn), and arrived whole.
	assert.NotZero(t, r.link.Stats().GatheredWrites, "batches written together")
}

// TestMosquittoOutboxFullHoldsEvents: with the broker away long enough to
// fill the outbox, the link stops taking events (the controller's queue
// holds them, nothing is dropped) and, once the broker is back, publishes
// everything exactly once, in order.
func TestMosquittoOutboxFullHoldsEvents(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "backend"})
	mq.Stop()

	opts := testOptions(t, mq.URL())
	opts.OutboxMaxBytes = 4 << 10 // a few dozen events
	opts.OutboxBatch = 8          // a batch may go past the bound
	// The pump logs once when it finds the outbox full, and takes no
	// event after; wait for that. (Waiting for the depth to hold still
	// for 50 ms failed under load: on a loaded 2-core host the pump
	// paused longer than that at depth 10, then went on to 24.)
	full := mqttlinktest.NewLogWatch(zerolog.NewTestWriter(t), zerolog.WarnLevel, `"outbox full: events wait`)
	r := startLinkLogged(t, opts, &mqttlinktest.Submitter{}, zerolog.New(full).Level(zerolog.WarnLevel).With().Timestamp().Logger())
	feed(r, 1, 200)
	select {
	case <-full.Seen():
	case <-time.After(waitFor):
		t.Fatalf("the outbox never filled: depth %d, %d events waiting", r.link.OutboxDepth(), len(r.events))
	}
	var logged struct {
		Depth int `json:"depth"`
	}
	require.NoError(t, json.Unmarshal(full.Line(), &logged))
	// Held, not taken: the outbox stays at its bound while the broker is away.
	depth, queued := r.link.OutboxDepth(), len(r.events)
	assert.Equal(t, logged.Depth, depth, "nothing taken once found full")
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, depth, r.link.OutboxDepth(), "nothing more taken while full")
	assert.Equal(t, queued, len(r.events))
	assert.NotZero(t, queued, "events wait in the controller's queue")
	assert.Less(t, depth, 40, "the outbox keeps to its bound (one batch past it at most)")
	t.Logf("broker away: %d events in the outbox, %d waiting in the controller's queue", depth, queued)

	mq.Restart()
	checkExactlyOnceAcrossRestart(t, sub, 200)
}

// TestMosquittoLongOutageReadsBack: an hour of a table at one card a
// second (3,600 events, a state after every tenth; small payloads) while
// the broker is away, with the outbox allowed a tenth of the memory they
// take: the records past the
// bound wait in the outbox file, are read back when the broker returns,
// and the backend gets every event exactly once, in order.
func TestMosquittoLongOutageReadsBack(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, mq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "backend"})
	mq.Stop()

	const hour = 3600
	opts := testOptions(t, mq.URL())
	opts.OutboxMemoryBytes = 16 << 10 // a tenth of what the hour takes
	r := startLink(t, opts, &mqttlinktest.Submitter{})
	feed(r, 1, hour)
	require.Eventually(t, func() bool { return r.link.OutboxDepth() == hour+hour/10 }, waitFor, poll)
	mq.Restart()
	checkExactlyOnceAcrossRestart(t, sub, hour)
	require.Eventually(t, func() bool { return r.link.OutboxDepth() == 0 }, waitFor, poll)
}

// TestMosquittoOversizedCommand: on a broker without a packet limit (the
// test's mosquitto has none), a command of 3 MiB, far above the largest
// the table takes, is refused without being read into memory: the link
// counts it and answers the next command. After a restart the session
// goes on; should the broker deliver the huge command again (QoS 1 is at
// least once: a stop can come before its acknowledgement reached the
// broker, as one loaded CI run showed), it is refused again and never
// reaches the table.
func TestMosquittoOversizedCommand(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{Persistence: true})
	topics := mqttlink.TopicsFor("s1", "t1")
	backend := mqttlinktest.Subscribe(t, mq.URL(), topics.Replies, mqttlinktest.SubscriberOptions{CleanSession: true})
	opts := testOptions(t, mq.URL())
	ctrl := &mqttlinktest.Submitter{}
	r := startLink(t, opts, ctrl)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)

	ctx := context.Background()
	huge := fmt.Appendf(nil, `{"schema":2,"id":"huge","type":"decision","seat":1,"action":"hit","pad":%q}`, strings.Repeat("x", 3<<20))
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/decision", huge))
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/decision", []byte(`{"schema":2,"id":"ok-1","type":"decision","seat":1,"action":"stand"}`)))
	require.Eventually(t, func() bool { return len(ctrl.Inputs()) == 1 }, waitFor, poll)
	assert.Equal(t, []table.Input{table.Decision{Seat: 1, Action: "stand", ID: "ok-1"}}, ctrl.Inputs())
	assert.Equal(t, uint64(1), r.link.Stats().Oversized)

	// A restart: the session is resumed, the oversized command is gone.
	r.stop(t)
	ctrl2 := &mqttlinktest.Submitter{}
	r2 := startLink(t, opts, ctrl2)
	require.Eventually(t, func() bool { return r2.link.Stats().Ready }, waitFor, poll)
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/decision", []byte(`{"schema":2,"id":"ok-2","type":"decision","seat":1,"action":"stand"}`)))
	require.Eventually(t, func() bool { return len(ctrl2.Inputs()) == 1 }, waitFor, poll)
	assert.Equal(t, []table.Input{table.Decision{Seat: 1, Action: "stand", ID: "ok-2"}}, ctrl2.Inputs())
	assert.LessOrEqual(t, r2.link.Stats().Oversized, uint64(1), "at most delivered again, and refused again")
}

// TestMosquittoRetainedCommandRefused: a command published with the
// retain flag stays at the broker and comes to the table at every
// subscription; once its id had left the ledgers it would be applied
// again (a stale bets_closed in a later round). Delivered from the
// broker's retained store it is refused, not remembered, and answered
// with how to clear it; plain commands go on as before.
func TestMosquittoRetainedCommandRefused(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	topics := mqttlink.TopicsFor("s1", "t1")
	backend := mqttlinktest.Subscribe(t, mq.URL(), topics.Replies, mqttlinktest.SubscriberOptions{CleanSession: true})
	topic := topics.Root + "commands/decision"
	tok := backend.Client().Publish(topic, 1, true, []byte(`{"schema":2,"id":"stale-1","type":"decision","seat":1,"action":"hit"}`))
	require.True(t, tok.WaitTimeout(waitFor))
	require.NoError(t, tok.Error())

	ctrl := &mqttlinktest.Submitter{}
	r := startLink(t, testOptions(t, mq.URL()), ctrl)
	require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) == 1 }, waitFor, poll)
	rep := replies(t, backend, topics.Replies)[0]
	assert.Equal(t, "stale-1", rep.ID)
	assert.False(t, rep.Accepted)
	assert.Contains(t, rep.Reason, "retained command refused")
	assert.Empty(t, ctrl.Inputs(), "the retained command reached the table")

	require.NoError(t, backend.Publish(context.Background(), topic, []byte(`{"schema":2,"id":"ok-1","type":"decision","seat":1,"action":"stand"}`)))
	require.Eventually(t, func() bool { return len(ctrl.Inputs()) == 1 }, waitFor, poll)
	assert.Equal(t, []table.Input{table.Decision{Seat: 1, Action: "stand", ID: "ok-1"}}, ctrl.Inputs())
	assert.Zero(t, r.link.Stats().Oversized)
}
