package players

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink/embedbroker"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
)

// TestCommandsCarrySeen: every command the simulated backend sends says
// the newest event seq it had acted on (seen, contract 2.4.0), so that
// after a restore of the table the commands it made before are refused
// stale instead of applied to another round. The newest it acted on, not
// the newest it received: an older event resent does not lower it, and
// a prompt answered after a newer event was taken carries the newer seq.
func TestCommandsCarrySeen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := embedbroker.Start(ctx, "127.0.0.1:0", zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	root := "livetable/s1/t1/"
	sub := mqttlinktest.Subscribe(t, b.URL(), root+"#", mqttlinktest.SubscriberOptions{ClientID: "table", CleanSession: true})

	be, err := New(Options{BrokerURL: b.URL(), Studio: "s1", Table: "t1", Game: "000", Seats: 1}, zerolog.Nop())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- be.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	event := func(seq uint64, kind string, data map[string]any) {
		t.Helper()
		p, err := json.Marshal(map[string]any{"schema": 2, "seq": seq, "round": "r1", "kind": kind, "data": data})
		require.NoError(t, err)
		require.NoError(t, sub.Publish(ctx, root+"events", p))
	}
	type command struct {
		ID   string  `json:"id"`
		Type string  `json:"type"`
		Seen *uint64 `json:"seen"`
	}
	commands := func(typ string) []command {
		var out []command
		for _, m := range sub.MessagesOn(root + "commands/" + typ) {
			var c command
			require.NoError(t, json.Unmarshal(m.Payload, &c))
			out = append(out, c)
		}
		return out
	}
	// next waits for the n-th command of typ and returns its seen.
	next := func(typ string, n int) uint64 {
		t.Helper()
		require.Eventually(t, func() bool { return len(commands(typ)) >= n }, 10*time.Second, 5*time.Millisecond, "%s #%d", typ, n)
		c := commands(typ)[n-1]
		require.NotNil(t, c.Seen, "%s %s carries seen", typ, c.ID)
		return *c.Seen
	}

	// Betting opens (sent again until the backend is subscribed: each
	// time it bets, each bet made on seq 5).
	require.Eventually(t, func() bool {
		event(5, "phase", map[string]any{"phase": "betting"})
		return len(commands("bets_closed")) > 0
	}, 10*time.Second, 50*time.Millisecond, "the backend bets")
	assert.EqualValues(t, 5, next("bets_closed", 1))

	prompt := func(seq uint64) {
		event(seq, "decision_requested", map[string]any{"seat": 1, "player": "p1", "hand": 1, "total": 12,
			"options": []string{"hit", "stand"}, "cards": 2, "up": 10})
	}
	decisions := len(commands("decision"))
	event(6, "round_started", map[string]any{})
	prompt(9)
	assert.EqualValues(t, 9, next("decision", decisions+1), "made on the prompt")

	event(2, "card_dealt", map[string]any{"seat": 1, "card": "Ts"}) // resent: older
	prompt(14)
	assert.EqualValues(t, 14, next("decision", decisions+2), "an older event resent does not lower it")
	prompt(11) // a prompt delivered late, after a newer one was taken
	assert.EqualValues(t, 14, next("decision", decisions+3), "the newest it had")

	event(20, "insurance_offered", map[string]any{})
	assert.EqualValues(t, 20, next("insurance", 1))

	// Every command it sent says it.
	for _, typ := range []string{"bets_closed", "decision", "insurance"} {
		for _, c := range commands(typ) {
			assert.NotNil(t, c.Seen, fmt.Sprintf("%s %s", typ, c.ID))
		}
	}
}
