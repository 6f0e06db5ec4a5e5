package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/supervisors"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/studio/wire/wiretest"
)

// TestContractDemoAllGames runs the demo table of each of the five games
// at once (simulated shoe on a pty, shuffler swaps on simulated GPIO,
// dealer and players, a misread now and then; 002's players a crowd of
// 20 that decides by batches; a real mosquitto), plays
// supervisor over MQTT (a correction of a misread, a correction refused
// when nothing is misread, a pause, a void, resuming every pause), captures every message under the studio
// and checks each against docs/asyncapi.yaml with a JSON Schema
// validator. It fails on any message that does not fit, on any event
// kind the contract has no schema for, and when the run has not shown
// every kind of the contract, a split, an insurance answer and a shoe
// swap.
func TestContractDemoAllGames(t *testing.T) {
	if testing.Short() {
		t.Skip("plays five demo tables")
	}
	contract, err := wiretest.Load("../../docs/asyncapi.yaml")
	require.NoError(t, err)
	mosq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	games := []string{"000", "001", "002", "003", "004"}
	// The supervisor's account, in every table's accounts file: commands
	// over MQTT are signed with its key.
	acct, supKey, err := supervisors.New("contract", supervisors.RoleSupervisor, "contract-password")
	require.NoError(t, err)
	accounts := &supervisors.List{}
	require.NoError(t, accounts.Add(acct))
	var (
		mu       sync.Mutex
		failures []string
		perKind  = map[string]int{}
		perChan  = map[string]int{}
		splits   int
		swaps    = map[string]int{} // table -> shoes in play seen
	)
	drivers := map[string]chan mqttlinktest.Event{}
	for _, g := range games {
		drivers["g"+g] = make(chan mqttlinktest.Event, 4096)
	}

	watcher := paho.NewClient(paho.NewClientOptions().AddBroker(mosq.URL()).SetClientID("contract-watcher").
		SetConnectRetry(true).SetConnectRetryInterval(50 * time.Millisecond).SetOrderMatters(true))
	require.True(t, watcher.Connect().WaitTimeout(10*time.Second))
	defer watcher.Disconnect(100)
	require.True(t, watcher.Subscribe("livetable/contract/#", 1, func(_ paho.Client, m paho.Message) {
		parts := strings.SplitN(m.Topic(), "/", 4)
		if len(parts) < 4 {
			return
		}
		tbl, root := parts[2], strings.Join(parts[:3], "/")+"/"
		channel := wiretest.Channel(root, m.Topic())
		payload := slices.Clone(m.Payload())
		verr := contract.Validate(channel, payload)
		var ev mqttlinktest.Event
		_ = json.Unmarshal(payload, &ev)
		mu.Lock()
		defer mu.Unlock()
		perChan[channel]++
		if verr != nil {
			if errors.Is(verr, wiretest.ErrNoSchema) || len(failures) < 20 {
				failures = append(failures, fmt.Sprintf("%s: %v\n  %s", m.Topic(), verr, payload))
			}
			return
		}
		if channel != "events" {
			return
		}
		perKind[ev.Kind]++
		switch ev.Kind {
		case "decision_made":
			var d wire.DecisionMade
			if json.Unmarshal(ev.Data, &d) == nil && d.Action == "split" {
				splits++
			}
		case "shoe_in_play":
			swaps[tbl]++
		}
		select {
		case drivers[tbl] <- ev:
		default:
		}
	}).WaitTimeout(10*time.Second))

	metricsAddr := freeAddr(t)
	serveDone := make(chan error, len(games))
	for i, g := range games {
		cfg := DefaultConfig()
		cfg.Studio, cfg.Table, cfg.Game = "contract", "g"+g, g
		cfg.DataDir = filepath.Join(t.TempDir(), "data")
		cfg.Broker.URL = mosq.URL()
		require.NoError(t, accounts.Save(filepath.Join(cfg.DataDir, supervisors.FileName)))
		cfg.GPIO.Sim = true
		cfg.Console.Addr = "off"
		if g == "000" {
			cfg.Console.Addr = metricsAddr // its /metrics is read at the end
		}
		cfg.Demo.Enabled = true
		cfg.Demo.Seed = uint64(11 + i)
		cfg.Demo.Pace, cfg.Demo.Think, cfg.Demo.Betting = 5*time.Millisecond, 10*time.Millisecond, 300*time.Millisecond
		cfg.Demo.Penetration = 0.05
		cfg.Demo.MisreadEvery = 40
		if g == "002" {
			// A crowd (more than 16 players on the seat): its batches,
			// prompts and settlement chunks go through the contract too.
			cfg.Demo.Seats = 20
		}
		cfg.Timing.Settle = 50 * time.Millisecond
		go func() {
			serveDone <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel))
		}()
		go superviseOverMQTT(ctx, t, mosq.URL(), "livetable/contract/"+cfg.Table+"/", supKey, drivers[cfg.Table])
	}

	// Everything the contract has, and the situations the issue names.
	missing := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, k := range wire.Kinds {
			if perKind[k.Kind] == 0 {
				out = append(out, k.Kind)
			}
		}
		if splits == 0 {
			out = append(out, "a split")
		}
		for _, g := range games {
			if swaps["g"+g] < 2 {
				out = append(out, "a shoe swap at g"+g)
			}
		}
		for _, ch := range []string{"status", "state", "commands", "replies"} {
			if perChan[ch] == 0 {
				out = append(out, "a message on "+ch)
			}
		}
		return out
	}
	bound := time.After(4 * time.Minute) // a hang fails here, not at the CI limit
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for len(missing()) > 0 {
		select {
		case <-tick.C:
			mu.Lock()
			bad := len(failures)
			mu.Unlock()
			if bad > 0 {
				cancel() // ends the loop below
			}
		case err := <-serveDone:
			t.Fatalf("a table stopped: %v", err)
		case <-bound:
			t.Errorf("the run did not show: %v", missing())
			cancel()
		}
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() == nil {
		// The daemon's own metrics of the run: the publish latency
		// histogram filled, every table series labelled.
		text := httpGet(t, "http://"+metricsAddr+"/metrics")
		m := regexp.MustCompile(`(?m)^livetable_publish_latency_seconds_count\{studio="contract",table="g000"\} (\d+)$`).FindStringSubmatch(text)
		if assert.NotNil(t, m, "no labelled publish latency histogram in:\n%s", text) {
			n, _ := strconv.Atoi(m[1])
			assert.Positive(t, n, "publishes measured")
		}
		assert.Contains(t, text, `livetable_broker_connected{studio="contract",table="g000"} 1`)
		assert.Contains(t, text, `livetable_shoe_connected{studio="contract",table="g000"} 1`, "the daemon reports its shoe's link")
		assert.Contains(t, text, `livetable_broker_takeover_suspected_total{studio="contract",table="g000"} 0`, "the daemon reports its link's takeover watch")
	}
	cancel()
	for range games {
		assert.NoError(t, <-serveDone)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, failures, "messages outside the contract:\n%s", strings.Join(failures, "\n"))
	t.Logf("validated: per channel %v; events per kind %v; splits %d; shoes per table %v", perChan, perKind, splits, swaps)
}

// superviseOverMQTT plays a supervisor on one table: it corrects every
// misread the shoe reports (a card the round was missing; refused when
// the round missed none), after two rounds it tries a correction with no
// misread (refused: nothing to correct), pauses a round, voids another,
// and resumes every pause.
func superviseOverMQTT(ctx context.Context, t *testing.T, url, root string, key ed25519.PrivateKey, events <-chan mqttlinktest.Event) {
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("contract-sup-" + root).
		SetConnectRetry(true).SetConnectRetryInterval(50 * time.Millisecond))
	if !c.Connect().WaitTimeout(10 * time.Second) {
		t.Error("supervisor: no connection")
		return
	}
	defer c.Disconnect(50)
	n := 0
	send := func(typ string, extra map[string]any) {
		n++
		sc := mqttlink.SupervisorCommand{ID: fmt.Sprintf("sup-%d", n), Type: typ, By: "contract", Time: time.Now()}
		sc.Reason, _ = extra["reason"].(string)
		sc.Card, _ = extra["card"].(string)
		b, err := mqttlink.SignSupervisor(key, root, sc)
		if err != nil {
			t.Error(err)
			return
		}
		c.Publish(root+"commands/supervisor", 1, false, b)
	}
	settled, step := 0, 0
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-events:
			switch ev.Kind {
			case "alarm":
				if strings.Contains(string(ev.Data), `"shoe.misread"`) {
					send("correct", map[string]any{"card": "9h", "reason": "shoe misread"})
				}
			case "paused":
				send("resume", nil)
			case "round_settled", "round_void":
				settled++
			case "phase":
				if step == 0 && settled >= 2 && strings.Contains(string(ev.Data), `"betting"`) {
					step++
					send("correct", map[string]any{"card": "Kd", "reason": "nothing misread: refused"})
				}
			case "round_started":
				switch step {
				case 1:
					send("correct", map[string]any{"card": "9h", "reason": "nothing misread: refused"})
				case 2:
					send("pause", map[string]any{"reason": "camera check"})
				case 3:
					send("void", map[string]any{"reason": "misdeal"})
				}
				if step > 0 && step < 4 {
					step++
				}
			}
		}
	}
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// httpGet returns the body of a GET that must answer 200.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	return string(b)
}
