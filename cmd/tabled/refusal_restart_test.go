package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
)

// TestRefusedCommandAcrossRestart is issue 18's demand on the whole
// daemon: a command the table refused is not journaled (no fsync on the
// card path), and still, after tabled restarts, the same id with the same
// body gets the same answer, even where the table asked afresh would take
// it now; the id with another body is refused as reused. The command goes
// over a real mosquitto, signed as a supervisor's; the restart is a
// second serve on the same data directory.
func TestRefusedCommandAcrossRestart(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	cfg := mosquittoTable(t, mosq.URL(), "it", "refusals")
	acct, key, err := supervisors.New("anna", supervisors.RoleSupervisor, "anna-password")
	require.NoError(t, err)
	accts := &supervisors.List{}
	require.NoError(t, accts.Add(acct))
	require.NoError(t, accts.Save(filepath.Join(cfg.DataDir, supervisors.FileName)))

	root := "livetable/it/refusals/"
	backend := mqttlinktest.Subscribe(t, mosq.URL(), root+"#", mqttlinktest.SubscriberOptions{ClientID: "refusals-backend", CleanSession: true})
	runs := 0
	sock := filepath.Join(cfg.DataDir, localctl.SocketName)
	run := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)) }()
		// Up when the link said online, which it does once subscribed to
		// its commands (each run once; the backend subscribed before).
		runs++
		require.Eventually(t, func() bool {
			online := 0
			for _, m := range backend.MessagesOn(root + "status") {
				if string(m.Payload) == mqttlink.StatusOnline {
					online++
				}
			}
			return online >= runs
		}, time.Minute, 10*time.Millisecond)
		require.Eventually(t, func() bool {
			_, err := localctl.Do(ctx, sock, localctl.Request{Command: "status"})
			return err == nil
		}, time.Minute, 10*time.Millisecond)
		return func() {
			cancel()
			require.NoError(t, <-done)
		}
	}
	signed := func(id, reason string) []byte {
		b, err := mqttlink.SignSupervisor(key, root, mqttlink.SupervisorCommand{ID: id, Type: mqttlink.CmdResume, By: "anna", Reason: reason, Time: time.Now()})
		require.NoError(t, err)
		return b
	}
	ask := func(payload []byte) mqttlink.Reply {
		t.Helper()
		n := len(backend.MessagesOn(root + "replies"))
		require.NoError(t, backend.Publish(context.Background(), root+"commands/supervisor", payload))
		require.Eventually(t, func() bool { return len(backend.MessagesOn(root+"replies")) > n }, time.Minute, 10*time.Millisecond)
		var rep mqttlink.Reply
		require.NoError(t, json.Unmarshal(backend.MessagesOn(root + "replies")[n].Payload, &rep))
		return rep
	}
	paused := func() bool {
		rep, err := localctl.Do(context.Background(), sock, localctl.Request{Command: "status"})
		require.NoError(t, err)
		return rep.State.Paused
	}

	stop := run()
	resume := signed("r-1", "")
	first := ask(resume)
	require.False(t, first.Accepted)
	assert.Contains(t, first.Reason, "not paused")
	stop()

	stop = run()
	defer stop()
	rep, err := localctl.Do(context.Background(), sock, localctl.Request{Command: "pause", Reason: "camera check"})
	require.NoError(t, err)
	require.True(t, rep.Accepted, rep.Error)
	require.True(t, paused())

	// The same command again (a backend's retry, the broker's
	// redelivery): the first answer, and the paused table stays paused.
	again := ask(resume)
	assert.Equal(t, first, again, "the same id and body after the restart")
	assert.True(t, paused(), "a refused command is not applied when it comes again")
	// The id with another body.
	other := ask(signed("r-1", "another body"))
	assert.False(t, other.Accepted)
	assert.Equal(t, `table: id reused with a different command: "r-1"`, other.Reason)
	assert.True(t, paused())
}
