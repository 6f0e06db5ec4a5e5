package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestDemoBackendSeenAfterRestore: the demo's simulated backend
// (simulators/players) says with every command the newest event seq it
// had acted on (seen, contract 2.4.0), as a real backend should. A data
// directory restored whole from an older backup forgot the ids of the
// commands applied after the backup (journal and reply ledger both), and
// one of them delivered again after the restore (the broker's session,
// or the backend's retry with the same id) was applied to the restored
// table's next round. Now it is refused stale: its seen is among the
// lost seqs. The demo's backend plays on after the restore, its new
// commands taken.
func TestDemoBackendSeenAfterRestore(t *testing.T) {
	tablectl := buildTablectl(t)
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	dt := newDemoTable(t, mosq.URL(), "seen", "")
	d, sub, data, root := dt.d, dt.sub, dt.data, dt.root
	// What the demo's backend sends and the replies it gets.
	wire := mqttlinktest.Subscribe(t, mosq.URL(), root+"#", mqttlinktest.SubscriberOptions{ClientID: "seen-wire", CleanSession: true})

	type sent struct {
		topic   string
		payload []byte
		ID      string  `json:"id"`
		Type    string  `json:"type"`
		Seen    *uint64 `json:"seen"`
	}
	commands := func() []sent {
		var out []sent
		for _, m := range wire.Messages() {
			if !strings.HasPrefix(m.Topic, root+"commands/") {
				continue
			}
			c := sent{topic: m.Topic, payload: m.Payload}
			require.NoError(t, json.Unmarshal(m.Payload, &c))
			out = append(out, c)
		}
		return out
	}
	replies := func(id string) []mqttlink.Reply {
		var out []mqttlink.Reply
		for _, m := range wire.MessagesOn(root + "replies") {
			var r mqttlink.Reply
			if json.Unmarshal(m.Payload, &r) == nil && r.ID == id {
				out = append(out, r)
			}
		}
		return out
	}

	old := dt.play(20)
	dt.backUp()
	before := len(commands())
	high := dt.play(old + 30)

	// The commands of the lost stretch, each saying what its sender had
	// seen; the last one the table took is the one delivered again.
	lost := commands()[before:]
	require.NotEmpty(t, lost)
	var again *sent
	for i := range lost {
		c := &lost[i]
		require.NotNil(t, c.Seen, "%s %s carries seen", c.Type, c.ID)
		assert.True(t, *c.Seen > 0 && *c.Seen <= high, "%s %s: seen %d of %d", c.Type, c.ID, *c.Seen, high)
		if rs := replies(c.ID); len(rs) > 0 && rs[0].Accepted && c.Type != "resend" {
			again = c
		}
	}
	require.NotNil(t, again, "a command of the lost stretch the table took")

	dt.restore()
	code, text := tablectl("journal", "accept-loss", "--data-dir", data, "--by", "ops", "--reason", "restored the older backup", "--published-seq", fmt.Sprint(high))
	require.Equal(t, 0, code, text)

	d.start()
	defer d.stop()
	afterRestore := len(commands())
	waitUntil(t, d, func() bool { return sub.MaxSeq() > high+30 }, "the demo plays on after the restore (its supervisor resumed)")

	n := len(replies(again.ID))
	require.NoError(t, wire.Publish(context.Background(), again.topic, again.payload))
	waitUntil(t, d, func() bool { return len(replies(again.ID)) > n }, "the reply to the command delivered again")
	rep := replies(again.ID)[n]
	assert.False(t, rep.Accepted, "%s %s (seen %d) taken again after the restore: %s", again.Type, again.ID, *again.Seen, rep.Reason)
	assert.Equal(t, "stale", rep.Code, rep.Reason)

	// The backend's commands after the restore made on the events above
	// the lost seqs are taken. The demo's backend starts afresh with the
	// daemon, with no memory of the events it had: one it makes on an
	// event the restored table publishes again (the outbox of the backup
	// ends before its journal) says a seen among the lost seqs and is
	// refused stale as the fence says (a backend that kept what it had
	// drops those events by seq); which of the two comes first is the
	// scheduler's, so both are allowed.
	taken := 0
	for _, c := range commands()[afterRestore:] {
		if c.ID == again.ID {
			continue // the test's own, delivered again
		}
		require.NotNil(t, c.Seen, "%s %s carries seen", c.Type, c.ID)
		rs := replies(c.ID)
		if len(rs) == 0 {
			continue
		}
		if *c.Seen <= high {
			assert.Equal(t, "stale", rs[0].Code, "%s %s (seen %d, lost up to %d): %s", c.Type, c.ID, *c.Seen, high, rs[0].Reason)
			continue
		}
		if rs[0].Accepted {
			taken++
		}
	}
	assert.Positive(t, taken, "the demo's commands after the restore are taken")
}
