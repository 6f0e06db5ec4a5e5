package mqttlink_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/wire/wiretest"
)

// asyncAPIPath is the contract, relative to this package.
const asyncAPIPath = "../../docs/asyncapi.yaml"

// loadSpec compiles the contract with a real JSON Schema validator.
func loadSpec(t *testing.T) *wiretest.Contract {
	t.Helper()
	c, err := wiretest.Load(asyncAPIPath)
	require.NoError(t, err)
	return c
}

// TestAsyncAPIDocument: the channels' addresses are the topics the link
// uses.
func TestAsyncAPIDocument(t *testing.T) {
	s := loadSpec(t)
	assert.Equal(t, "3.1.0", s.Doc["asyncapi"])
	topics := mqttlink.TopicsFor("{studio}", "{table}")
	channels := s.Doc["channels"].(map[string]any)
	for ch, topic := range map[string]string{"status": topics.Status, "state": topics.State, "events": topics.Events,
		"replies": topics.Replies, "commands": strings.TrimSuffix(topics.Commands, "#") + "{command}"} {
		c, ok := channels[ch].(map[string]any)
		require.True(t, ok, ch)
		assert.Equal(t, topic, c["address"], ch)
	}
}

// TestAsyncAPIMessages publishes real events and commands through a link
// and checks every message seen on the broker against docs/asyncapi.yaml.
func TestAsyncAPIMessages(t *testing.T) {
	s := loadSpec(t)
	b := startBroker(t)
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{CleanSession: true})
	r := startLink(t, testOptions(t, b.URL()), ruleSubmitter())
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)

	const n = 60
	feed(r, 1, n)
	require.Eventually(t, func() bool { return sub.MaxSeq() == n }, waitFor, poll)
	ctx := context.Background()
	for _, tc := range commandCases {
		require.NoError(t, sub.Publish(ctx, topics.Root+"commands", []byte(tc.payload)))
	}
	require.Eventually(t, func() bool { return len(sub.MessagesOn(topics.Replies)) == len(commandCases) }, waitFor, poll)
	r.stop(t)
	require.Eventually(t, func() bool {
		m := sub.MessagesOn(topics.Status)
		return len(m) >= 2 && string(m[len(m)-1].Payload) == mqttlink.StatusOffline
	}, waitFor, poll)

	counts := map[string]int{}
	for _, m := range sub.Messages() {
		channel := wiretest.Channel(topics.Root, m.Topic)
		counts[channel]++
		if channel == "commands" {
			// Commands are the backend's; every one the link accepts must
			// fit the schema.
			if _, derr := mqttlink.DecodeCommand(m.Payload); derr == nil {
				assert.NoError(t, s.Validate(channel, m.Payload), "valid command %s does not fit the schema", m.Payload)
			}
			continue
		}
		assert.NoError(t, s.Validate(channel, m.Payload), "%s: %s", m.Topic, m.Payload)
	}
	t.Logf("validated messages per channel: %v", counts)
	for _, ch := range []string{"status", "state", "events", "commands", "replies"} {
		assert.Positive(t, counts[ch], ch)
	}
}

// TestAsyncAPICommandSchema checks the command schema against the decoder:
// every command the decoder accepts fits, and the structural rejections
// (missing or unknown fields, unknown types, wrong enum values) do not.
func TestAsyncAPICommandSchema(t *testing.T) {
	s := loadSpec(t)
	structural := map[string]bool{
		"no id": true, "no schema": true, "future schema": true, "no type": true, "unknown type": true,
		"unknown field": true, "foreign field": true, "decision no seat": true, "decision seat 0": true,
		"decision no action": true, "decision bad action": true, "seat as string": true,
		"insurance no take": true, "bets missing": true, "bet no player": true, "bet no main": true,
		"bet negative": true, "bet float money": true, "pause no by": true, "correct no card": true,
		"card on pause": true,
	}
	for _, tc := range commandCases {
		t.Run(tc.name, func(t *testing.T) {
			verr := s.Validate("commands", []byte(tc.payload))
			if verr != nil && strings.Contains(verr.Error(), "not JSON") {
				return // nothing to check against a schema
			}
			switch {
			case tc.errIs == nil:
				require.NoError(t, verr)
			case structural[tc.name]:
				require.Error(t, verr)
			}
		})
	}
}
