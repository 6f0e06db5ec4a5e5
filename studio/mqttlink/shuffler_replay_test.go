package mqttlink_test

import (
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
)

// TestShufflerResetReplayedAfterItsIDIsForgotten: a shuffler_reset's id
// is remembered by the link's reply ledger only (the table's machine
// does not judge it), so once the ledger has forgotten it (a bounded
// ledger that evicted it, a data directory restored from an older
// backup) the same signed command played again (captured off the broker,
// or kept by it for the table) would reset a shuffler latched in a new
// fault nobody looked at. It cannot: within the link's run the replay
// guard refuses the signature it accepted (and the window every
// signature a minute old), and across a restart the command is signed
// before the link's start (sign_again). A reset signed anew is a
// supervisor's new command and resets, as it should.
func TestShufflerResetReplayedAfterItsIDIsForgotten(t *testing.T) {
	b := startBroker(t)
	var clock atomic.Int64
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	set := func(d time.Duration) { clock.Store(at(d).UnixNano()) }
	set(0)
	opts := testOptions(t, b.URL())
	opts.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	opts.ReplyCacheSize = 2 // evicted after two other commands
	sh := &fakeShuffler{fault: true}
	opts.ShufflerReset = sh.reset
	topics := mqttlink.TopicsFor("s1", "t1")
	sub := mqttlinktest.Subscribe(t, b.URL(), topics.Replies, mqttlinktest.SubscriberOptions{CleanSession: true})
	ctrl := &mqttlinktest.Submitter{}
	sign := func(id, typ string, signed time.Duration) []byte {
		p, err := mqttlink.SignSupervisor(testKey, topics.Root, mqttlink.SupervisorCommand{ID: id, Type: typ, By: "anna", Reason: "shoe A reseated", Time: at(signed)})
		require.NoError(t, err)
		return p
	}
	ask := func(payload []byte) mqttlink.Reply { t.Helper(); return askSupervisor(t, sub, topics, payload) }
	run := func() *running { return startReady(t, opts, ctrl) }

	r := run()
	backup := t.TempDir()
	require.NoError(t, os.CopyFS(backup, os.DirFS(opts.OutboxDir)))
	reset := sign("sr-1", mqttlink.CmdShufflerReset, 0)
	set(time.Second)
	rep := ask(reset)
	require.True(t, rep.Accepted, rep.Reason)
	require.Equal(t, []string{"anna"}, sh.resets())

	// The shuffler latches a new fault; the ledger forgets sr-1 (two
	// other supervisor commands evict it).
	sh.mu.Lock()
	sh.fault = true
	sh.mu.Unlock()
	for i := range 2 {
		rep := ask(sign(fmt.Sprintf("p-%d", i), mqttlink.CmdPause, time.Second))
		require.True(t, rep.Accepted, rep.Reason)
	}
	set(5 * time.Second)
	rep = ask(reset)
	assert.False(t, rep.Accepted, "played again within its window: %+v", rep)
	assert.Equal(t, "unauthorised", rep.Code)
	assert.Contains(t, rep.Reason, "already accepted once")
	set(2 * time.Minute)
	rep = ask(reset)
	assert.False(t, rep.Accepted, "played again outside its window: %+v", rep)
	assert.Equal(t, "unauthorised", rep.Code)
	assert.Equal(t, []string{"anna"}, sh.resets(), "the new fault is not reset by the old command")
	r.stop(t)

	// The data directory restored from the backup (its ledger never saw
	// sr-1), the table back 10 s after sr-1 was signed: sign_again.
	files, err := os.ReadDir(opts.OutboxDir)
	require.NoError(t, err)
	for _, f := range files {
		require.NoError(t, os.RemoveAll(filepath.Join(opts.OutboxDir, f.Name())))
	}
	require.NoError(t, os.CopyFS(opts.OutboxDir, os.DirFS(backup)))
	set(10 * time.Second)
	r = run()
	rep = ask(reset)
	assert.False(t, rep.Accepted)
	assert.Equal(t, "sign_again", rep.Code)
	assert.Equal(t, []string{"anna"}, sh.resets(), "nor after the restore")

	// The supervisor looks at the new fault and resets it: signed anew.
	set(15 * time.Second)
	rep = ask(sign("sr-2", mqttlink.CmdShufflerReset, 15*time.Second))
	assert.True(t, rep.Accepted, rep.Reason)
	assert.Equal(t, []string{"anna", "anna"}, sh.resets())
	assert.Len(t, ctrl.Inputs(), 2, "the pauses: a shuffler reset is no table input")
	r.stop(t)
}
