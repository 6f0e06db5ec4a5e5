package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// TestDemoShoeSurvivesRestart stops the demo in the middle of a round and
// starts it again on the same data directory: the simulated shoe goes on
// where it stopped (the same shoe, its count going on from where the
// journal left it, no shuffle or integrity alarm), as a physical shoe
// keeps its cards, and the round is finished with them.
func TestDemoShoeSurvivesRestart(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	cfg := DefaultConfig()
	cfg.Studio, cfg.Table, cfg.Game = "demo", "resume", "000"
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Broker.URL = mosq.URL()
	cfg.GPIO.Sim = true
	cfg.Console.Addr = "off"
	cfg.Demo.Enabled = true
	cfg.Demo.Pace, cfg.Demo.Think, cfg.Demo.Betting = 20*time.Millisecond, 20*time.Millisecond, 300*time.Millisecond
	cfg.Demo.Penetration = 0.5
	cfg.Timing.Settle = 50 * time.Millisecond

	states := make(chan table.State, 4096)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(mosq.URL()).SetClientID("resume-watcher").
		SetConnectRetry(true).SetConnectRetryInterval(50 * time.Millisecond))
	require.True(t, c.Connect().WaitTimeout(10*time.Second))
	defer c.Disconnect(100)
	require.True(t, c.Subscribe("livetable/demo/resume/state", 1, func(_ paho.Client, m paho.Message) {
		var env struct {
			Data table.State `json:"data"`
		}
		if json.Unmarshal(m.Payload(), &env) == nil {
			select {
			case states <- env.Data:
			default:
			}
		}
	}).WaitTimeout(10*time.Second))

	run := func(until func(table.State) bool) table.State {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)) }()
		defer func() {
			cancel()
			require.NoError(t, <-done)
		}()
		bound := time.After(time.Minute)
		for {
			select {
			case st := <-states:
				for _, a := range st.Alarms {
					require.NotContains(t, []string{"shuffle_alarm", "integrity_alarm", "shoe.shuffle_alarm", "shoe.integrity_alarm"}, a.Code,
						"alarm %s: %s", a.Code, a.Message)
				}
				if until(st) {
					return st
				}
			case err := <-done:
				t.Fatalf("tabled stopped: %v", err)
			case <-bound:
				t.Fatal("the demo did not get there")
			}
		}
	}
	// A round in the middle of its cards, after a round or two.
	before := run(func(st table.State) bool {
		return st.Rounds >= 1 && st.Phase == table.PhaseDealing && st.Shoe.Dealt >= 10 && len(st.Round.Dealer.Cards) > 0
	})
	t.Logf("stopped in round %s with %d cards out of shoe %s", before.Round.ID, before.Shoe.Dealt, before.Shoe.ID)
	for len(states) > 0 {
		<-states
	}
	after := run(func(st table.State) bool { return st.Rounds > before.Rounds })
	assert.Equal(t, before.Shoe.ID, after.Shoe.ID, "the same shoe")
	assert.Greater(t, after.Shoe.Dealt, before.Shoe.Dealt, "its count goes on")
}
