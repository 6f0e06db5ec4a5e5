package mqttlink

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table"
)

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	l := newLimiter(10, 5)
	for i := range 5 {
		ok, _ := l.allow("player \"p1\"", now)
		require.True(t, ok, "burst %d", i)
	}
	ok, why := l.allow("player \"p1\"", now)
	require.False(t, ok)
	assert.Contains(t, why, `rate limited: player "p1" sent more than 5 commands at once or 10 a second`)
	ok, _ = l.allow("player \"p2\"", now)
	assert.True(t, ok, "another sender has its own bucket")
	ok, _ = l.allow("player \"p1\"", now.Add(100*time.Millisecond))
	assert.True(t, ok, "a token back after 1/rate")
	ok, _ = l.allow("player \"p1\"", now.Add(100*time.Millisecond))
	assert.False(t, ok)

	// A flood of made-up senders: past maxSenders they share one bucket,
	// and the map stays bounded.
	f := newLimiter(10, 5)
	refused := 0
	for i := range maxSenders + 100 {
		if ok, _ := f.allow(fmt.Sprintf("player %d", i), now); !ok {
			refused++
		}
	}
	assert.Len(t, f.senders, maxSenders)
	assert.Equal(t, 100-5, refused, "the newcomers share one burst")
	// Once the tracked ones are full again they are forgotten for new ones.
	ok, _ = f.allow("player new", now.Add(time.Second))
	assert.True(t, ok)
	assert.Len(t, f.senders, 1)
}

func TestSender(t *testing.T) {
	assert.Equal(t, `player "p1"`, sender(Command{Type: CmdDecision, Player: "p1"}))
	assert.Equal(t, `supervisor "anna"`, sender(Command{Type: CmdPause, Supervisor: true, By: "anna"}))
	assert.Equal(t, "type bets_closed", sender(Command{Type: CmdBetsClosed}))
	// A batch is one command of one sender, whatever players it names.
	assert.Equal(t, "type decisions", sender(Command{Type: CmdDecisions, Input: table.Decisions{Entries: []table.DecisionEntry{{Slot: 1, Player: "p1"}}}}))
	assert.Equal(t, "seat 3", sender(Command{Type: CmdDecision, Input: table.Decision{Seat: 3}}))
}
