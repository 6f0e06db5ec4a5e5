package mqttlink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// keptEvents is an event history holding events first..last as the link
// was fed them (states included, as a journal replay gives them), from an
// older point than asked, as a replay from a checkpoint does.
type keptEvents struct{ first, last uint64 }

func (k keptEvents) Events(ctx context.Context, from, to uint64, fn func(table.Event) error) error {
	start := k.first
	if from > k.first+5 {
		start = from - 5 // a replay starts at a checkpoint before from
	}
	for seq := start; seq <= k.last; seq++ {
		if err := fn(makeEvent(seq)); err != nil {
			return err
		}
		if seq%10 == 0 {
			if err := fn(makeState(seq)); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// TestResend: a backend that lost events asks for them again and gets
// exactly the range it asked (clipped to what exists and what is kept),
// identical to the first publication; bad ranges are refused with a reason.
func TestResend(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	opts.History = keptEvents{first: 11, last: 60}
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})
	r := startLink(t, opts, &mqttlinktest.Submitter{})
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	feed(r, 1, 60)
	require.Eventually(t, func() bool { return sub.MaxSeq() == 60 && r.link.OutboxDepth() == 0 }, waitFor, poll)
	first := map[uint64]string{}
	for _, m := range sub.MessagesOn(topics.Events) {
		var e mqttlinktest.Event
		require.NoError(t, json.Unmarshal(m.Payload, &e))
		first[e.Seq] = string(m.Payload)
	}
	require.Len(t, first, 60)

	tests := []struct {
		name    string
		cmd     string
		reply   mqttlink.Reply
		resent  []uint64 // seqs published again
		missing bool     // part of the range is older than the history
	}{
		{"a range", `{"schema":1,"id":"r1","type":"resend","from":20,"to":24}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r1", Accepted: true, Note: "resending events 20 to 24"}, []uint64{20, 21, 22, 23, 24}, false},
		{"to the newest", `{"schema":1,"id":"r2","type":"resend","from":58}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r2", Accepted: true, Note: "resending events 58 to 60"}, []uint64{58, 59, 60}, false},
		{"past the newest is clipped", `{"schema":1,"id":"r3","type":"resend","from":59,"to":90}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r3", Accepted: true, Note: "resending events 59 to 60"}, []uint64{59, 60}, false},
		{"older than the history: what is kept", `{"schema":1,"id":"r4","type":"resend","from":8,"to":12}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r4", Accepted: true, Note: "resending events 8 to 12"}, []uint64{11, 12}, true},
		{"nothing published yet", `{"schema":1,"id":"r5","type":"resend","from":61}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r5", Reason: "nothing to resend from 61: the newest event is 60"}, nil, false},
		{"backwards", `{"schema":1,"id":"r6","type":"resend","from":30,"to":20}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r6", Reason: "to 20 is before from 30", Code: "malformed"}, nil, false},
		// A resend is a read: served every time, whatever its id (a
		// backend that lost the resent events asks again), and an id
		// never makes a resend "reused" (the simulation's seed 7382).
		{"the same resend again is served again", `{"schema":1,"id":"r1","type":"resend","from":20,"to":24}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r1", Accepted: true, Note: "resending events 20 to 24"}, []uint64{20, 21, 22, 23, 24}, false},
		{"an id used before, another range", `{"schema":1,"id":"r1","type":"resend","from":30,"to":31}`,
			mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r1", Accepted: true, Note: "resending events 30 to 31"}, []uint64{30, 31}, false},
	}
	ctx := context.Background()
	for i, tc := range tests {
		before := len(sub.MessagesOn(topics.Events))
		resent0 := r.link.Stats().Resent
		require.NoError(t, sub.Publish(ctx, topics.Root+"commands/resend", []byte(tc.cmd)), tc.name)
		require.Eventually(t, func() bool { return len(sub.MessagesOn(topics.Replies)) == i+1 }, waitFor, poll, tc.name)
		var got mqttlink.Reply
		require.NoError(t, json.Unmarshal(sub.MessagesOn(topics.Replies)[i].Payload, &got))
		assert.Equal(t, tc.reply, got, tc.name)
		require.Eventually(t, func() bool { return r.link.Stats().Resent == resent0+uint64(len(tc.resent)) }, waitFor, poll, tc.name)
		// Resent counts the events the link published (the broker's
		// acknowledgement), not the subscriber's deliveries: under load
		// the last of them were still on their way to it (the test once
		// read 74 of 77). Wait for them, then hold that none came beyond.
		require.Eventually(t, func() bool { return len(sub.MessagesOn(topics.Events)) >= before+len(tc.resent) }, waitFor, poll, tc.name)
		msgs := sub.MessagesOn(topics.Events)
		require.Len(t, msgs, before+len(tc.resent), tc.name)
		for j, m := range msgs[before:] {
			var e mqttlinktest.Event
			require.NoError(t, json.Unmarshal(m.Payload, &e))
			assert.Equal(t, tc.resent[j], e.Seq, "%s: in order", tc.name)
			assert.Equal(t, first[e.Seq], string(m.Payload), "%s: seq %d as first published", tc.name, e.Seq)
		}
	}
	st := r.link.Stats()
	assert.EqualValues(t, 6, st.ResendRequests)
	distinct, dups, gaps, _ := sub.Counts()
	assert.Equal(t, 60, distinct)
	assert.Equal(t, 19, dups, "every resent event is a duplicate here")
	assert.Zero(t, gaps)
}

// TestResendWithoutHistory: a link with no history says so.
func TestResendWithoutHistory(t *testing.T) {
	b := startBroker(t)
	opts := testOptions(t, b.URL())
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Replies, mqttlinktest.SubscriberOptions{CleanSession: true})
	r := startLink(t, opts, &mqttlinktest.Submitter{})
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	require.NoError(t, sub.Publish(context.Background(), topics.Root+"commands/resend", []byte(`{"schema":1,"id":"r1","type":"resend","from":1}`)))
	require.Eventually(t, func() bool { return len(sub.MessagesOn(topics.Replies)) == 1 }, waitFor, poll)
	var got mqttlink.Reply
	require.NoError(t, json.Unmarshal(sub.MessagesOn(topics.Replies)[0].Payload, &got))
	assert.Equal(t, mqttlink.Reply{Schema: mqttlink.CommandSchema, ID: "r1", Reason: "this table keeps no event history to resend from"}, got)
}

// TestResendRecoversBrokerLoss is the loss no outbox can see: events the
// broker acknowledged, queued for a backend that was away, and lost when
// the broker died (here a mosquitto without persistence, SIGKILLed). The
// backend sees the gap when the next events come, asks for it, and the
// stream is whole again.
func TestResendRecoversBrokerLoss(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	opts := testOptions(t, mosq.URL())
	opts.History = keptEvents{first: 1, last: 25}
	topics := mqttlink.TopicsFor("s1", "t1")
	r := startLink(t, opts, &mqttlinktest.Submitter{})
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	backend := mqttlinktest.Subscribe(t, mosq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "backend"})

	feed(r, 1, 5)
	require.Eventually(t, func() bool { return backend.MaxSeq() == 5 }, waitFor, poll)
	backend.Client().Disconnect(100) // the backend is away...
	feed(r, 6, 20)
	require.Eventually(t, func() bool { return r.link.Stats().Published == 20+2 && r.link.OutboxDepth() == 0 }, waitFor, poll,
		"the broker acknowledged everything")
	mosq.Kill() // ...and the broker dies with events 6-20 queued for it
	mosq.Restart()
	require.True(t, backend.Client().Connect().WaitTimeout(waitFor))
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)

	feed(r, 21, 25)
	require.Eventually(t, func() bool { return backend.MaxSeq() == 25 }, waitFor, poll)
	missing := backend.Missing()
	require.Len(t, missing, 15, "events 6-20 went with the broker")
	assert.EqualValues(t, 6, missing[0])
	cmd := fmt.Sprintf(`{"schema":1,"id":"gap-%d","type":"resend","from":%d,"to":%d}`, missing[0], missing[0], missing[len(missing)-1])
	require.NoError(t, backend.Publish(context.Background(), topics.Root+"commands/resend", []byte(cmd)))
	require.Eventually(t, func() bool { return len(backend.Missing()) == 0 }, waitFor, poll)
	distinct, _, gaps, bad := backend.Counts()
	assert.Equal(t, 25, distinct)
	assert.Equal(t, 1, gaps, "one gap opened")
	assert.Equal(t, 15, backend.Late(), "and the resend filled it")
	assert.Zero(t, bad)
	t.Logf("broker lost %d acknowledged events; one resend brought them back (link: %d resends, %d events resent)",
		len(missing), r.link.Stats().ResendRequests, r.link.Stats().Resent)
}
