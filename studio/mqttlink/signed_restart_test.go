package mqttlink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// TestSignedCommandAcrossRestart: a supervisor command is signed with its
// time and taken within 60 s of it, and the replay guard that refuses a
// signature seen before lived in memory only. After a restart inside
// those 60 s a captured command was taken again whenever the ledgers had
// forgotten its id: a refused one (the reply ledger kept refusals in
// memory; the controller keeps them off the card path, so a power cut
// may lose the newest) was judged afresh and applied on a table that
// would now take it, and after a restore of the data directory from an
// older backup an applied one (a void, a correct) was applied a second
// time. Now every verdict on a signed command is durable, and a signed
// command from before the link's start that no ledger answers is refused
// (not remembered: the supervisor signs again). A supervisor who clicks
// 5 s after the restart is served.
func TestSignedCommandAcrossRestart(t *testing.T) {
	b := startBroker(t)
	var clock atomic.Int64
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	set := func(d time.Duration) { clock.Store(at(d).UnixNano()) }
	set(0)
	opts := testOptions(t, b.URL())
	opts.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Replies, mqttlinktest.SubscriberOptions{CleanSession: true})
	var refuseResume atomic.Bool
	refuseResume.Store(true)
	table1 := &mqttlinktest.Submitter{Reject: func(in table.Input) error {
		if s, ok := in.(table.Supervisor); ok && s.Command == "resume" && refuseResume.Load() {
			return fmt.Errorf("%w: nothing to resume", table.ErrNotPaused)
		}
		return nil
	}}
	sign := func(id, typ string, signed time.Duration) []byte {
		p, err := mqttlink.SignSupervisor(testKey, topics.Root, mqttlink.SupervisorCommand{ID: id, Type: typ, By: "anna", Reason: "camera", Time: at(signed)})
		require.NoError(t, err)
		return p
	}
	ask := func(payload []byte) mqttlink.Reply { t.Helper(); return askSupervisor(t, sub, topics, payload) }
	run := func() *running { return startReady(t, opts, table1) }

	r := run()
	// The backup the data directory is restored from later: taken before
	// the supervisor's commands.
	backup := t.TempDir()
	require.NoError(t, os.CopyFS(backup, os.DirFS(opts.OutboxDir)))
	pause, resume := sign("p-1", "pause", 0), sign("r-1", "resume", 0)
	set(time.Second)
	firstPause := ask(pause)
	require.True(t, firstPause.Accepted, firstPause.Reason)
	firstResume := ask(resume)
	require.False(t, firstResume.Accepted)
	assert.Equal(t, "not_paused", firstResume.Code)
	require.Len(t, table1.Inputs(), 1, "the pause")
	r.stop(t)

	// A plain restart 10 s later: the captured commands played again get
	// their first answers, and reach the table neither of them, though
	// the table would take the resume now.
	set(10 * time.Second)
	refuseResume.Store(false)
	r = run()
	assert.Equal(t, firstPause, ask(pause), "the applied pause, again")
	assert.Equal(t, firstResume, ask(resume), "the refused resume, again: its first answer")
	assert.Len(t, table1.Inputs(), 1, "nothing applied again")
	r.stop(t)

	// The data directory restored from the backup (it never saw either
	// command), 20 s after they were signed: the link cannot tell them
	// from commands in flight across the restart, and refuses them,
	// however often they come.
	files, err := os.ReadDir(opts.OutboxDir)
	require.NoError(t, err)
	for _, f := range files {
		require.NoError(t, os.RemoveAll(filepath.Join(opts.OutboxDir, f.Name())))
	}
	require.NoError(t, os.CopyFS(opts.OutboxDir, os.DirFS(backup)))
	set(20 * time.Second)
	r = run()
	for range 2 {
		for _, p := range [][]byte{pause, resume} {
			rep := ask(p)
			assert.False(t, rep.Accepted)
			assert.Equal(t, "sign_again", rep.Code, "its signature verified: not unauthorised, which says the key is bad (and pages)")
			assert.Contains(t, rep.Reason, "before the table's link started")
		}
	}
	assert.Len(t, table1.Inputs(), 1, "nothing applied again after the restore")

	// The supervisor at work 5 s after the restart: a new pause, and the
	// refused one signed again under its id.
	set(25 * time.Second)
	rep := ask(sign("p-2", "pause", 25*time.Second))
	assert.True(t, rep.Accepted, rep.Reason)
	rep = ask(sign("r-1", "resume", 25*time.Second))
	assert.True(t, rep.Accepted, rep.Reason)
	assert.Len(t, table1.Inputs(), 3)
	r.stop(t)
}

// askSupervisor publishes a signed supervisor command on the table's
// commands topic and returns the reply it gets (the next on replies, which
// sub reads).
func askSupervisor(t *testing.T, sub *mqttlinktest.Subscriber, topics mqttlink.Topics, payload []byte) mqttlink.Reply {
	t.Helper()
	n := len(sub.MessagesOn(topics.Replies))
	require.NoError(t, sub.Publish(context.Background(), topics.Root+"commands/supervisor", payload))
	require.Eventually(t, func() bool { return len(sub.MessagesOn(topics.Replies)) > n }, waitFor, poll)
	var rep mqttlink.Reply
	require.NoError(t, json.Unmarshal(sub.MessagesOn(topics.Replies)[n].Payload, &rep))
	return rep
}

// startReady starts a link on opts for ctrl and waits until it is ready
// (subscribed and online).
func startReady(t *testing.T, opts mqttlink.Options, ctrl mqttlink.Submitter) *running {
	t.Helper()
	r := startLink(t, opts, ctrl)
	require.Eventually(t, func() bool { return r.link.Stats().Ready }, waitFor, poll)
	return r
}
