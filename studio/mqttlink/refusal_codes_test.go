package mqttlink_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
)

// TestReplyCodesAreTheContracts: the codes the contract enumerates for a
// reply are every code the link gives (its own and the table's), and no
// more: a code not in the enum would fail every backend that validates.
func TestReplyCodesAreTheContracts(t *testing.T) {
	f, ok := reflect.TypeFor[wire.Reply]().FieldByName("Code")
	require.True(t, ok)
	enum := strings.Split(f.Tag.Get("enum"), ",")
	codes := mqttlink.ReplyCodes()
	slices.Sort(enum)
	slices.Sort(codes)
	assert.Equal(t, codes, enum)
	assert.Len(t, slices.Compact(slices.Clone(codes)), len(codes), "a code given twice")
}

// TestMosquittoCommandTopicsMatchExactly: a command is taken on
// commands, commands/{its type} or (signed) commands/supervisor, and on
// no other topic the subscription commands/# delivers: an extra level
// below a command topic, an empty level, another case, an unknown
// level (a level with a wildcard a broker refuses in a PUBLISH: see
// TestTopicLevel). Each is refused (wrong_topic) with its id, counted,
// never reaches the table, and is not remembered: the same id on its
// topic is then taken.
func TestMosquittoCommandTopicsMatchExactly(t *testing.T) {
	topics, backend, ctrl, r := startBackendLink(t)
	ctx := context.Background()

	decision := func(id string) string {
		return fmt.Sprintf(`{"schema":2,"id":%q,"type":"decision","seat":1,"action":"hit"}`, id)
	}
	bets := func(id string) string {
		return fmt.Sprintf(`{"schema":2,"id":%q,"type":"bets_closed","bets":[{"seat":1,"player":"p","main":100}]}`, id)
	}
	tests := []struct {
		name, level, payload string
	}{
		{"an extra level below decision", "commands/decision/extra", decision("x1")},
		{"an empty level below decision", "commands/decision/", decision("x2")},
		{"an empty level below commands", "commands/", decision("x3")},
		{"an empty level before the type", "commands//decision", decision("x4")},
		{"an extra level below bets_closed", "commands/bets_closed/x", bets("x5")},
		{"an extra level below decisions", "commands/decisions/x", `{"schema":2,"id":"x6","type":"decisions","round":"r","entries":[]}`},
		{"an extra level below insurance", "commands/insurance/x", `{"schema":2,"id":"x7","type":"insurance","seat":1,"take":true}`},
		{"an extra level below resend", "commands/resend/x", `{"schema":2,"id":"x8","type":"resend","from":1}`},
		{"an extra level below supervisor", "commands/supervisor/x", signed("x9", "pause", "anna", "camera", "")},
		{"an extra level below pause", "commands/pause/x", signed("x10", "pause", "anna", "camera", "")},
		{"another case", "commands/Decision", decision("x11")},
		{"an unknown level", "commands/teleport", decision("x12")},
		{"commands glued to more", "commands/decisionx", decision("x13")},
		{"broken JSON on a wrong topic", "commands/decision/extra", `{"id":"x14",`},
	}
	for i, tc := range tests {
		topic := topics.Root + tc.level
		require.NoError(t, backend.Publish(ctx, topic, []byte(tc.payload)), tc.name)
		require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) == i+1 }, waitFor, poll, tc.name)
		rep := replies(t, backend, topics.Replies)[i]
		assert.False(t, rep.Accepted, tc.name)
		assert.Equal(t, "wrong_topic", rep.Code, "%s: %+v", tc.name, rep)
		assert.Equal(t, fmt.Sprintf("x%d", i+1), rep.ID, tc.name)
		assert.Contains(t, rep.Reason, fmt.Sprintf("%q is not a command topic", topic), tc.name)
		assert.Empty(t, ctrl.Inputs(), "%s reached the table", tc.name)
	}
	assert.Equal(t, uint64(len(tests)), r.link.Stats().Rejected)
	assert.Equal(t, map[string]uint64{"wrong_topic": uint64(len(tests))}, r.link.Refusals(), "counted by code")

	// Not remembered: the first id on its own topic is taken.
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/decision", []byte(decision("x1"))))
	require.Eventually(t, func() bool { return len(ctrl.Inputs()) == 1 }, waitFor, poll)
	assert.Equal(t, []table.Input{table.Decision{Seat: 1, Action: "hit", ID: "x1"}}, ctrl.Inputs())
}

// TestMosquittoOversizedCommandReply: a command over the size the table
// takes is refused too_large with its size and the limit, under its id
// when the id comes within the payload's first KiB; not remembered, so
// the same id, sent again within the limit, is taken.
func TestMosquittoOversizedCommandReply(t *testing.T) {
	topics, backend, ctrl, r := startBackendLink(t)
	ctx := context.Background()

	pad := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name, level, payload string
		wantID, wantReason   string
		oversized            uint64 // packets inbound dropped so far
	}{
		{"id first, 3 MiB", "commands/decision",
			fmt.Sprintf(`{"schema":2,"id":"huge-1","type":"decision","seat":1,"action":"hit","pad":%q}`, pad(3<<20)),
			"huge-1", "bytes, limit 1024000 (bets_closed and decisions; 65536 for the others): dropped unread", 1},
		{"id after the first KiB", "commands/decision",
			fmt.Sprintf(`{"schema":2,"pad":%q,"id":"huge-2","type":"decision","seat":1,"action":"hit"}`, pad(2<<20)),
			"", "dropped unread", 2},
		{"not JSON", "commands/decisions", pad(2 << 20), "", "dropped unread", 3},
		{"over the batch limit, under the packet limit", "commands/decisions",
			fmt.Sprintf(`{"schema":2,"id":"big-3","type":"decisions","round":"r","entries":[],"pad":%q}`, pad(MaxBatchOver)),
			"big-3", "bytes, limit 1024000 (bets_closed and decisions; 65536 for the others)", 3},
		{"a decision over 64 KiB", "commands/decision",
			fmt.Sprintf(`{"schema":2,"id":"big-4","type":"decision","seat":1,"action":"hit","player":%q}`, pad(100<<10)),
			"big-4", "bytes, limit 65536 for decision (1024000 for bets_closed and decisions)", 3},
	}
	for i, tc := range tests {
		require.NoError(t, backend.Publish(ctx, topics.Root+tc.level, []byte(tc.payload)), tc.name)
		require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) == i+1 }, waitFor, poll, tc.name)
		rep := replies(t, backend, topics.Replies)[i]
		assert.False(t, rep.Accepted, tc.name)
		assert.Equal(t, "too_large", rep.Code, "%s: %+v", tc.name, rep)
		assert.Equal(t, tc.wantID, rep.ID, tc.name)
		assert.Contains(t, rep.Reason, fmt.Sprintf("command is %d bytes", len(tc.payload)), tc.name)
		assert.Contains(t, rep.Reason, tc.wantReason, tc.name)
		assert.Equal(t, tc.oversized, r.link.Stats().Oversized, tc.name)
	}
	assert.Empty(t, ctrl.Inputs())
	assert.Equal(t, map[string]uint64{"too_large": uint64(len(tests))}, r.link.Refusals(), "counted by code")
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/decision", []byte(`{"schema":2,"id":"huge-1","type":"decision","seat":1,"action":"stand"}`)))
	require.Eventually(t, func() bool { return len(ctrl.Inputs()) == 1 }, waitFor, poll)
	assert.Equal(t, []table.Input{table.Decision{Seat: 1, Action: "stand", ID: "huge-1"}}, ctrl.Inputs())
}

// startBackendLink runs a link to a real mosquitto, ready, and a backend
// that reads its replies.
func startBackendLink(t *testing.T) (mqttlink.Topics, *mqttlinktest.Subscriber, *mqttlinktest.Submitter, *running) {
	t.Helper()
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	topics := mqttlink.TopicsFor("s1", "t1")
	backend := mqttlinktest.Subscribe(t, mq.URL(), topics.Replies, mqttlinktest.SubscriberOptions{CleanSession: true})
	ctrl := &mqttlinktest.Submitter{}
	r := startLink(t, testOptions(t, mq.URL()), ctrl)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	return topics, backend, ctrl, r
}

// MaxBatchOver pads a batch to just over MaxBatchBytes, under the packet
// limit.
const MaxBatchOver = mqttlink.MaxBatchBytes + 10<<10
