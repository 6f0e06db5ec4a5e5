package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
)

// TestDemoPlaysAcrossShuffledShoes runs `make run`'s table (tabled --demo:
// the simulated shoe on a pty, the dual-shoe shuffler on simulated GPIO,
// the dealer and the players; mosquitto stands in for the embedded
// broker, on a port of its own) with shoes cut after a few cards, and
// watches its state: the table must go on dealing and settling rounds
// through two shuffler swaps. (The simulated dealer once kept counting
// the old shoe's cards and stopped for good at the first swap.)
func TestDemoPlaysAcrossShuffledShoes(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cfg := DefaultConfig()
	cfg.Studio, cfg.Table, cfg.Game = "demo", "t1", "000"
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.Broker.URL = mosq.URL()
	cfg.GPIO.Sim = true
	cfg.Console.Addr = "127.0.0.1:0"
	cfg.Demo.Enabled = true
	cfg.Demo.Pace, cfg.Demo.Think, cfg.Demo.Betting = 5*time.Millisecond, 10*time.Millisecond, 300*time.Millisecond
	cfg.Demo.Penetration = 0.02 // the cut card after 8 cards: a round or two per shoe
	cfg.Timing.Settle = 50 * time.Millisecond
	serveDone := make(chan error, 1)
	go func() {
		serveDone <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel))
	}()
	defer func() {
		cancel()
		require.NoError(t, <-serveDone)
	}()

	states := make(chan table.State, 1024)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(mosq.URL()).SetClientID("demo-watcher").
		SetConnectRetry(true).SetConnectRetryInterval(50 * time.Millisecond))
	require.True(t, c.Connect().WaitTimeout(10*time.Second))
	defer c.Disconnect(100)
	require.True(t, c.Subscribe("livetable/demo/t1/state", 1, func(_ paho.Client, m paho.Message) {
		var env struct {
			Data table.State `json:"data"`
		}
		if err := json.Unmarshal(m.Payload(), &env); err != nil {
			t.Errorf("state message: %v", err)
			return
		}
		select {
		case states <- env.Data:
		default: // the newest state is what matters; the test reads fast enough
		}
	}).WaitTimeout(10*time.Second))

	// Each shoe in play, and the rounds settled while it was: the third
	// shoe must see a round settled, which takes two swaps.
	var shoes []string
	settledOn := map[string]int{}
	lastRounds := -1
	bound := time.After(2 * time.Minute) // a hang fails here, not the CI limit
	for len(shoes) < 3 || settledOn[shoes[2]] == 0 {
		select {
		case st := <-states:
			if st.Paused {
				// A loaded host can keep the shoe's first frames
				// from the reader past the silence timeout: the
				// demo supervisor resumes once the shoe is heard
				// again (the loop then goes on to the swaps). Any
				// other pause is the demo stopping.
				silent := false
				for _, a := range st.Alarms {
					if a.Pauses {
						require.Equal(t, "shoe.silent", a.Code, "the demo table paused: %s (alarms %v)", st.PauseReason, st.Alarms)
						silent = true
					}
				}
				require.True(t, silent, "the demo table paused: %s (alarms %v)", st.PauseReason, st.Alarms)
				t.Logf("paused while the shoe was silent: %s", st.PauseReason)
			}
			if id := st.Shoe.ID; id != "" && (len(shoes) == 0 || shoes[len(shoes)-1] != id) {
				shoes = append(shoes, id)
			}
			if lastRounds >= 0 && st.Rounds > lastRounds && len(shoes) > 0 {
				settledOn[shoes[len(shoes)-1]] += st.Rounds - lastRounds
			}
			lastRounds = st.Rounds
		case err := <-serveDone:
			t.Fatalf("tabled stopped: %v", err)
		case <-bound:
			t.Fatalf("the demo stopped dealing: shoes %v, rounds settled per shoe %v", shoes, settledOn)
		}
	}
	t.Logf("shoes in play %v, rounds settled on each %v", shoes, settledOn)
}
