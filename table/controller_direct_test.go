package table

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/round"
)

// directSteps is how many inputs Submit stepped on its caller's goroutine.
func (c *Controller) directSteps() uint64 {
	c.own.Lock()
	defer c.own.Unlock()
	return c.direct
}

// TestSubmitStepsWhenTheLoopIsIdle: a Submit that finds Run's loop idle
// steps the input itself (the card's path loses the hand-off to the loop
// and back), with the same verdicts, journal records and events as the
// loop's; one that finds the machine taken waits for the loop, which
// steps it once the machine is free.
func TestSubmitStepsWhenTheLoopIsIdle(t *testing.T) {
	j := &memJournal{}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	h.ping()
	before := h.c.directSteps()
	require.NoError(t, h.submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}))
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		require.NoError(t, h.card(c))
	}
	require.ErrorIs(t, h.submit(Decision{ID: "d0", Seat: 2, Action: "stand"}), round.ErrOutOfTurn)
	assert.Equal(t, before+6, h.c.directSteps(), "every input stepped on its caller's goroutine")
	// Its events were fanned out before Submit returned.
	var cards int
	for drained := false; !drained; {
		select {
		case ev := <-h.events:
			if ev.Kind() == "card_dealt" {
				cards++
			}
		default:
			drained = true
		}
	}
	assert.Equal(t, 4, cards)

	// The machine is taken (Run's loop, or another Submit, is stepping):
	// the input goes to the loop, which steps it once the machine is free.
	h.c.own.Lock()
	verdict := make(chan error, 1)
	go func() { verdict <- h.submit(Decision{ID: "d1", Seat: 1, Player: "p1", Action: "stand"}) }()
	select {
	case err := <-verdict:
		h.c.own.Unlock()
		t.Fatalf("stepped while the machine was taken: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	h.c.own.Unlock()
	require.NoError(t, <-verdict)
	assert.Equal(t, before+6, h.c.directSteps(), "the loop stepped it")
	assert.Equal(t, "card to dealer", h.c.Snapshot().Round.Next)
}

// TestSubmitRacesTheLoop: submitters on many goroutines, with timers
// firing on the loop between them, each input stepped once (its verdict
// matches the journal), and a replay of the journal reaches the table the
// submitters left. Run under -race.
func TestSubmitRacesTheLoop(t *testing.T) {
	j := &memJournal{}
	h := start(t, "000", j)
	h.waitPhase(PhaseBetting)
	bets := make([]Bet, 0, 7)
	for s := 1; s <= 7; s++ {
		bets = append(bets, Bet{Seat: s, Player: fmt.Sprintf("p%d", s), Main: 1000})
	}
	require.NoError(t, h.submit(BetsClosed{ID: "b1", Bets: bets}))
	for _, c := range []string{"2s", "2d", "2c", "2h", "3s", "3d", "3c", "4s", "4d", "4c", "4h", "5s", "5d", "5c", "6s", "7h"} {
		require.NoError(t, h.card(c))
	}
	require.Contains(t, h.c.Snapshot().Round.Next, "seat 1", "the first seat decides")
	// Eight goroutines race: each asks for every seat's hit, with ids of
	// its own; only the seat whose turn it is can act, so most are
	// refused, and the accepted ones must be one per turn.
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The decision timers run on the loop meanwhile.
		for ctx.Err() == nil {
			h.clk.Advance(time.Second)
			time.Sleep(time.Millisecond)
		}
	}()
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := 1; s <= 7; s++ {
				err := h.submit(Decision{ID: fmt.Sprintf("g%d-s%d", g, s), Seat: s, Player: fmt.Sprintf("p%d", s), Action: "stand"})
				if err == nil {
					mu.Lock()
					accepted++
					mu.Unlock()
					continue
				}
				var re *round.RuleError
				if !errors.As(err, &re) && !errors.Is(err, round.ErrOutOfTurn) {
					t.Errorf("unexpected verdict: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	h.ping()
	want := h.c.Snapshot()
	h.stop()

	decisions, timers := 0, 0
	for _, k := range j.kinds {
		switch k {
		case "decision":
			decisions++
		case "timer":
			timers++
		}
	}
	assert.Equal(t, accepted, decisions, "one journal record per accepted decision")
	assert.Equal(t, 7, decisions+timers, "every seat stood once, by a decision or its timer")

	m, _, err := h.c.rebuild()
	require.NoError(t, err)
	got := m.State()
	assert.Equal(t, want.Round.Next, got.Round.Next)
	assert.Equal(t, want.Seq, got.Seq)
	assert.Equal(t, want.Round, got.Round)
}
