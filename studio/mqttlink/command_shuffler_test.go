package mqttlink_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// fakeShuffler is Options.ShufflerReset over a shuffler the test puts in
// or out of fault.
type fakeShuffler struct {
	mu    sync.Mutex
	fault bool
	by    []string // who reset it, in order
}

func (f *fakeShuffler) reset(_ context.Context, by, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.fault {
		return fmt.Errorf("%w: the shuffler is dealing (AInPlay_BShuffling)", mqttlink.ErrShufflerNotInFault)
	}
	f.fault = false
	f.by = append(f.by, by)
	return nil
}

func (f *fakeShuffler) resets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.by...)
}

// TestMosquittoShufflerReset: a signed shuffler_reset, on its own topic
// or commands/supervisor, resets the shuffler once for its supervisor and
// never reaches the table controller; the same id again is answered from
// the ledger without a second reset; a reset while not in fault is
// refused shuffler_not_in_fault, unsigned or by an unknown account
// unauthorised, with a card malformed; a table without a shuffler answers
// no_shuffler.
func TestMosquittoShufflerReset(t *testing.T) {
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	topics := mqttlink.TopicsFor("s1", "t1")
	backend := mqttlinktest.Subscribe(t, mq.URL(), topics.Replies, mqttlinktest.SubscriberOptions{CleanSession: true})
	ctrl := &mqttlinktest.Submitter{}
	sh := &fakeShuffler{fault: true}
	opts := testOptions(t, mq.URL())
	opts.ShufflerReset = sh.reset
	r := startLink(t, opts, ctrl)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	ctx := context.Background()

	tests := []struct {
		name, level, payload string
		accepted             bool
		code                 string
		resets               []string
	}{
		{"reset in fault", "commands/shuffler_reset", signed("sr1", "shuffler_reset", "anna", "shoe A reseated", ""), true, "", []string{"anna"}},
		{"the same id again", "commands/shuffler_reset", signed("sr1", "shuffler_reset", "anna", "shoe A reseated", ""), true, "", []string{"anna"}},
		{"not in fault", "commands/supervisor", signed("sr2", "shuffler_reset", "anna", "", ""), false, "shuffler_not_in_fault", []string{"anna"}},
		{"unsigned", "commands/supervisor", `{"schema":2,"id":"sr3","type":"shuffler_reset","by":"anna"}`, false, "unauthorised", []string{"anna"}},
		{"unknown account", "commands/supervisor", signedBy(t, "sr4", "mallory"), false, "unauthorised", []string{"anna"}},
		{"with a card", "commands/supervisor", `{"schema":2,"id":"sr5","type":"shuffler_reset","by":"anna","card":"Qh","ts":1,"sig":"x"}`, false, "malformed", []string{"anna"}},
		{"on a player's topic", "commands/decision", signed("sr6", "shuffler_reset", "anna", "", ""), false, "wrong_topic", []string{"anna"}},
	}
	for i, tc := range tests {
		require.NoError(t, backend.Publish(ctx, topics.Root+tc.level, []byte(tc.payload)), tc.name)
		require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) == i+1 }, waitFor, poll, tc.name)
		rep := replies(t, backend, topics.Replies)[i]
		assert.Equal(t, tc.accepted, rep.Accepted, "%s: %+v", tc.name, rep)
		assert.Equal(t, tc.code, rep.Code, "%s: %+v", tc.name, rep)
		assert.Equal(t, tc.resets, sh.resets(), tc.name)
	}
	assert.Empty(t, ctrl.Inputs(), "a shuffler reset is no table input")
	assert.Contains(t, replies(t, backend, topics.Replies)[2].Reason, "not in fault")

	// A table that runs no shuffler.
	r.stop(t)
	opts = testOptions(t, mq.URL())
	r = startLink(t, opts, ctrl)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	n := len(backend.MessagesOn(topics.Replies))
	require.NoError(t, backend.Publish(ctx, topics.Root+"commands/supervisor", []byte(signed("sr7", "shuffler_reset", "anna", "", ""))))
	require.Eventually(t, func() bool { return len(backend.MessagesOn(topics.Replies)) == n+1 }, waitFor, poll)
	rep := replies(t, backend, topics.Replies)[n]
	assert.False(t, rep.Accepted)
	assert.Equal(t, "no_shuffler", rep.Code, "%+v", rep)
}

// signedBy is a shuffler_reset signed with the test key for an account
// the table does not know.
func signedBy(t *testing.T, id, by string) string {
	t.Helper()
	b, err := mqttlink.SignSupervisor(testKey, "livetable/s1/t1/", mqttlink.SupervisorCommand{
		ID: id, Type: mqttlink.CmdShufflerReset, By: by, Time: testNow})
	require.NoError(t, err)
	return string(b)
}

// TestShufflerResetErrorCodes: the hook's errors give the contract's
// codes.
func TestShufflerResetErrorCodes(t *testing.T) {
	assert.Equal(t, "shuffler_not_in_fault", mqttlink.ReplyCode(fmt.Errorf("x: %w", mqttlink.ErrShufflerNotInFault)))
	assert.Equal(t, "no_shuffler", mqttlink.ReplyCode(fmt.Errorf("x: %w", mqttlink.ErrNoShuffler)))
	assert.Equal(t, "", mqttlink.ReplyCode(errors.New("shuffler: controller stopped")))
}
