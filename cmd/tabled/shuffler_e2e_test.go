//go:build !production

package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/shuffler"
	"github.com/livetable/livetable/studio/console"
	"github.com/livetable/livetable/studio/localctl"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/journal"
)

// TestShufflerFaultResetOverMQTT runs the demo's whole table (simulated
// shoe on a pty, the dual-shoe shuffler on simulated GPIO, dealer and
// players, a real mosquitto) with the simulated shuffler losing the
// acknowledgement of its first swap (demo.shuffler_fault_every): the
// shuffler's real alarm pauses the table as its shoe is finished, the
// backend sees it, the health reports the shuffler's fault; a signed
// shuffler_reset over MQTT (refused before the fault, shuffler_not_in_
// fault) takes it out, once for a command sent twice, the table publishes
// and journals who reset it; a resume, and the swap asked again brings
// the next shoe in, on which rounds are dealt and settled.
func TestShufflerFaultResetOverMQTT(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	cfg := DefaultConfig()
	cfg.Studio, cfg.Table, cfg.Game = "demo", "sh1", "000"
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Broker.URL = mosq.URL()
	cfg.GPIO.Sim = true
	cfg.Console.Addr = "off"
	cfg.Demo.Enabled = true
	cfg.Demo.Pace, cfg.Demo.Think, cfg.Demo.Betting = 5*time.Millisecond, 10*time.Millisecond, 300*time.Millisecond
	cfg.Demo.Penetration = 0.02 // the cut card after 8 cards
	cfg.Demo.ShufflerFaultEvery = 2
	cfg.Timing.Settle = 50 * time.Millisecond
	acct, key, err := supervisors.New("anna", supervisors.RoleSupervisor, "anna-password")
	require.NoError(t, err)
	accounts := &supervisors.List{}
	require.NoError(t, accounts.Add(acct))
	require.NoError(t, accounts.Save(filepath.Join(cfg.DataDir, supervisors.FileName)))

	topics := mqttlink.TopicsFor(cfg.Studio, cfg.Table)
	backend := mqttlinktest.Subscribe(t, mosq.URL(), topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "sh-backend", CleanSession: true})
	ctx, cancel := context.WithCancel(context.Background())
	serveDone := make(chan error, 1)
	go func() {
		serveDone <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
	}()
	defer func() {
		cancel()
		require.NoError(t, <-serveDone)
	}()

	send := func(id, typ string, priv ed25519.PrivateKey) mqttlink.Reply {
		t.Helper()
		b, err := mqttlink.SignSupervisor(priv, topics.Root, mqttlink.SupervisorCommand{ID: id, Type: typ, By: "anna",
			Reason: "swap_done cable reseated", Time: time.Now()})
		require.NoError(t, err)
		n := len(backend.MessagesOn(topics.Replies))
		require.NoError(t, backend.Publish(ctx, topics.Root+"commands/supervisor", b))
		var rep mqttlink.Reply
		require.Eventually(t, func() bool {
			for _, m := range backend.MessagesOn(topics.Replies)[n:] {
				if json.Unmarshal(m.Payload, &rep) == nil && rep.ID == id {
					return true
				}
			}
			return false
		}, 20*time.Second, 10*time.Millisecond, "reply to %s", id)
		return rep
	}
	alarms := func(code string) []string {
		var out []string
		for _, ev := range backend.Events() {
			var a table.Alarm
			if ev.Kind == "alarm" && json.Unmarshal(ev.Data, &a) == nil && a.Code == code {
				out = append(out, a.Message)
			}
		}
		return out
	}
	state := func() table.State {
		var st table.State
		if s := backend.States(); len(s) > 0 {
			require.NoError(t, json.Unmarshal(s[len(s)-1].Data, &st))
		}
		return st
	}
	health := func() localctl.Check {
		rep, err := localctl.Do(ctx, filepath.Join(cfg.DataDir, localctl.SocketName), localctl.Request{Command: "status"})
		require.NoError(t, err)
		for _, c := range rep.Health {
			if c.Name == console.CheckShuffler {
				return c
			}
		}
		return localctl.Check{}
	}

	// Dealing: nothing to reset.
	require.Eventually(t, func() bool { return state().Rounds > 0 }, time.Minute, 20*time.Millisecond, "a round settled")
	rep := send("early", mqttlink.CmdShufflerReset, key)
	assert.False(t, rep.Accepted)
	assert.Equal(t, "shuffler_not_in_fault", rep.Code, rep.Reason)
	assert.True(t, health().OK)

	// The first swap is never acknowledged: the alarm pauses the table.
	require.Eventually(t, func() bool { return len(alarms("shuffler."+shuffler.AlarmNoAck)) > 0 }, time.Minute, 20*time.Millisecond,
		"the shuffler's alarm (state %+v)", state())
	require.Eventually(t, func() bool { return state().Paused }, 10*time.Second, 20*time.Millisecond)
	st := state()
	assert.Equal(t, table.PhasePaused, st.Phase, "paused with its shoe finished, waiting for the swap")
	shoe := st.Shoe.ID
	c := health()
	assert.False(t, c.OK, "the health reports the shuffler's fault")
	assert.Equal(t, shuffler.AlarmNoAck, c.Detail)
	rounds := st.Rounds

	// The supervisor resets it over MQTT; the same command again is
	// answered from the ledger, the shuffler reset once.
	rep = send("reset-1", mqttlink.CmdShufflerReset, key)
	require.True(t, rep.Accepted, "%+v", rep)
	again := send("reset-1", mqttlink.CmdShufflerReset, key)
	assert.Equal(t, rep.Accepted, again.Accepted)
	require.Eventually(t, func() bool { return len(alarms("shuffler."+shuffler.AlarmReset)) > 0 }, 10*time.Second, 20*time.Millisecond)
	resets := alarms("shuffler." + shuffler.AlarmReset)
	assert.Len(t, resets, 1, "one reset for one command id")
	assert.Contains(t, resets[0], "shuffler reset by anna after swap_not_acknowledged (swap_done cable reseated)")
	assert.True(t, state().Paused, "the reset does not resume the table")
	require.Eventually(t, func() bool { return health().OK }, 10*time.Second, 20*time.Millisecond)

	rep = send("resume-1", mqttlink.CmdResume, key)
	require.True(t, rep.Accepted, "%+v", rep)

	// The resume closes the table again, which asks the swap (a resume
	// before the reset: the reset asks it, TestResetFaultAsksTheSwapAgain);
	// it brings the next shoe in, and the table deals.
	require.Eventually(t, func() bool {
		st := state()
		return st.Shoe.ID != "" && st.Shoe.ID != shoe && st.Rounds > rounds && !st.Paused
	}, time.Minute, 20*time.Millisecond, "rounds on a new shoe (state %+v)", state())
	assert.Len(t, alarms("shuffler."+shuffler.AlarmNoAck), 1, "the swap asked again was acknowledged")

	// The journal holds who reset the shuffler.
	cancel()
	require.NoError(t, <-serveDone)
	serveDone <- nil
	jr, _, err := journal.Open(journalOptions(cfg), zerolog.Nop())
	require.NoError(t, err)
	defer jr.Close()
	found := 0
	require.NoError(t, jr.Replay(0, func(r journal.Record) error {
		in, err := table.DecodeInput(r.Data)
		if a, ok := in.(table.DeviceAlarm); err == nil && ok && a.Source == "shuffler" && a.Code == shuffler.AlarmReset {
			found++
			assert.Contains(t, a.Message, "shuffler reset by anna")
		}
		return nil
	}))
	assert.Equal(t, 1, found, "the reset is journaled, once")
}
