package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	simdealer "github.com/livetable/livetable/simulators/dealer"
	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// TestStackedShoeToSubscriber is the walking skeleton end to end: a stacked
// shoe on a real pseudo-terminal, the daemon's real serial path, engine,
// journal and MQTT link, a real mosquitto, and a subscriber that must see
// the known round's cards, totals and result, in order.
func TestStackedShoeToSubscriber(t *testing.T) {
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Seat 1: Ts 7c = 17, stands. Dealer: 6d, hole 5h = 11, draws 9s = 20.
	script, err := card.ParseList([]string{"Ts", "6d", "7c", "5h", "9s"})
	require.NoError(t, err)
	so := simshoe.DefaultOptions()
	so.Script, so.Seed = script, 42
	dev, err := simshoe.New(so, zerolog.Nop())
	require.NoError(t, err)
	devDone := make(chan error, 1)
	go func() { devDone <- dev.Run(ctx) }()

	cfg := DefaultConfig()
	cfg.Studio, cfg.Table, cfg.Game = "it", "t1", "000"
	cfg.DataDir = t.TempDir()
	cfg.Broker.URL = mosq.URL()
	cfg.Shoe.Path = dev.Path()
	cfg.GPIO.Sim = true
	cfg.Console.Addr = "127.0.0.1:0"
	root := "livetable/it/t1/"
	sub := mqttlinktest.Subscribe(t, mosq.URL(), root+"events", mqttlinktest.SubscriberOptions{CleanSession: true})

	serveDone := make(chan error, 1)
	go func() { serveDone <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)) }()

	// The dealer pulls cards as the table's state asks for them.
	states := make(chan table.Event, 64)
	stateClient := paho.NewClient(paho.NewClientOptions().AddBroker(mosq.URL()).SetClientID("it-dealer").
		SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond))
	require.True(t, stateClient.Connect().WaitTimeout(10*time.Second))
	defer stateClient.Disconnect(100)
	stateClient.Subscribe(root+"state", 1, func(_ paho.Client, m paho.Message) {
		var env struct {
			Data table.State `json:"data"`
		}
		if err := json.Unmarshal(m.Payload(), &env); err != nil {
			t.Errorf("state message: %v", err)
			return
		}
		states <- table.Event{Body: &env.Data}
	}).Wait()
	go func() {
		_ = simdealer.New(dev, simdealer.Options{}, zerolog.New(zerolog.NewTestWriter(t))).Run(ctx, states)
	}()

	// The backend: close bets when betting opens, stand when asked.
	waitEvent := func(kind string, match func(json.RawMessage) bool) mqttlinktest.Event {
		t.Helper()
		var found mqttlinktest.Event
		require.Eventually(t, func() bool {
			for _, ev := range sub.Events() {
				if ev.Kind == kind && (match == nil || match(ev.Data)) {
					found = ev
					return true
				}
			}
			return false
		}, 30*time.Second, 10*time.Millisecond, "event %s", kind)
		return found
	}
	send := func(cmd string) {
		t.Helper()
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(cmd), &m))
		require.NoError(t, sub.Publish(ctx, root+"commands/"+m["type"].(string), []byte(cmd)))
	}
	waitEvent("phase", func(d json.RawMessage) bool { return string(d) != "" && contains(d, `"betting"`) })
	send(`{"schema":1,"id":"b1","type":"bets_closed","bets":[{"seat":1,"player":"alice","main":1000}]}`)
	waitEvent("decision_requested", nil)
	send(`{"schema":1,"id":"d1","type":"decision","seat":1,"player":"alice","action":"stand"}`)
	settled := waitEvent("round_settled", nil)

	// What the backend saw, in order.
	var got []string
	for _, ev := range sub.Events() {
		var d struct {
			Seat  int       `json:"seat"`
			Card  card.Card `json:"card"`
			Total int       `json:"total"`
			Hole  bool      `json:"hole"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		switch ev.Kind {
		case "card_dealt":
			if d.Hole {
				got = append(got, "hole")
			} else {
				got = append(got, fmt.Sprintf("%s>%d=%d", d.Card, d.Seat, d.Total))
			}
		case "hole_revealed":
			got = append(got, fmt.Sprintf("reveal %s=%d", d.Card, d.Total))
		case "dealer_done":
			got = append(got, fmt.Sprintf("dealer %d", d.Total))
		case "decision_made":
			got = append(got, "decision")
		}
	}
	assert.Equal(t, []string{"Ts>1=10", "6d>0=6", "7c>1=17", "hole", "decision", "reveal 5h=11", "9s>0=20", "dealer 20"}, got)
	var s wire.RoundSettled
	require.NoError(t, json.Unmarshal(settled.Data, &s))
	require.Len(t, s.Seats, 1)
	assert.Equal(t, "lose", s.Seats[0].Hands[0].Outcome)
	assert.EqualValues(t, -1000, s.Seats[0].TotalNet)
	distinct, dups, gaps, bad := sub.Counts()
	assert.Zero(t, gaps, "event numbers have no gap")
	assert.Zero(t, bad)
	t.Logf("events %d, duplicates dropped %d", distinct, dups)

	cancel()
	require.NoError(t, <-serveDone)
	<-devDone
	require.NoError(t, dev.Close())
}

func contains(b []byte, s string) bool {
	return len(b) >= len(s) && (string(b) == s || indexOf(string(b), s) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
