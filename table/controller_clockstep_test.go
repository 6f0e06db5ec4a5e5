package table

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/rules"
)

// steppedClock is a fake clock whose wall clock can be stepped (NTP
// correcting the box) while its monotonic clock and its timers run on as
// they were: what time.Now's wall and monotonic readings do on a real box.
type steppedClock struct {
	*clockwork.FakeClock
	start time.Time

	mu   sync.Mutex
	step time.Duration
}

func newSteppedClock(at time.Time) *steppedClock {
	return &steppedClock{FakeClock: clockwork.NewFakeClockAt(at), start: at}
}

// Now is the wall clock: the fake clock's time plus the steps so far.
func (s *steppedClock) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.FakeClock.Now().Add(s.step)
}

// Monotonic is the time since the clock was made, which no step changes.
func (s *steppedClock) Monotonic() time.Duration { return s.FakeClock.Since(s.start) }

func (s *steppedClock) stepWall(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step += d
}

// TestWallClockStepMidDecision: the wall clock stepped by NTP while a
// player's decision runs changes neither the time the player has left nor
// when the decision times out. The controller's timer runs on the
// monotonic clock; the time a pause keeps for the resume, and the
// countdown the state shows, were taken from the wall clock: stepped
// forward past the deadline, a shoe unplugged (or a supervisor's pause)
// left the player only ResumeGrace, and the state showed 0 s left; stepped
// back, the state showed hours.
func TestWallClockStepMidDecision(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	const elapsed = 2 * time.Second
	left := rs.DecisionTime - elapsed
	for _, tc := range []struct {
		name string
		step time.Duration
	}{
		{"forward 3 hours", 3 * time.Hour},
		{"back 3 hours", -3 * time.Hour},
		{"forward past the deadline by a second", rs.DecisionTime + time.Second},
		{"no step", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newSteppedClock(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC))
			opts := DefaultOptions(rs)
			opts.Clock = clk
			require.Greater(t, left, opts.ResumeGrace, "the test needs more time left than the resume's grace")
			c, err := New(opts, zerolog.Nop())
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			evs, _ := c.Subscribe("test", 4096)
			go func() { done <- c.Run(ctx, nil) }()
			defer func() { cancel(); <-done }()
			for ev := range evs {
				if pc, ok := ev.Body.(PhaseChanged); ok && pc.Phase == PhaseBetting {
					break
				}
			}
			submit := func(in Input) { require.NoError(t, c.Submit(context.Background(), in)) }

			submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
			for _, s := range []string{"Ts", "6d", "7c", "5h"} {
				submit(CardDrawn{Card: card.MustParse(s)})
			}
			require.NotNil(t, c.Snapshot().Timer)
			require.Equal(t, string(TimerDecision), c.Snapshot().Timer.Name, "seat 1's decision runs")
			clk.Advance(elapsed)
			clk.stepWall(tc.step)
			submit(Supervisor{ID: "p", Command: "pause", By: "anna", Reason: "shoe check"})
			st := c.Snapshot()
			require.NotNil(t, st.Timer)
			assert.True(t, st.Timer.Stopped)
			assert.Equal(t, left.Milliseconds(), st.Timer.LeftMS, "the time left kept by the pause")

			submit(Supervisor{ID: "r", Command: "resume", By: "anna"})
			st = c.Snapshot()
			require.NotNil(t, st.Timer)
			assert.Equal(t, string(TimerDecision), st.Timer.Name)
			assert.Equal(t, left.Milliseconds(), st.Timer.LeftMS, "the time given back on resume")
			assert.Equal(t, PhaseDealing, st.Phase, "nothing decided for the player")
			assert.Equal(t, "play", st.Round.Phase, "seat 1 still to decide")
		})
	}
}

// TestWallClockBackAcrossRestartMidDecision: a table restarted in the
// middle of a decision is paused at the last journaled input's time; with
// the wall clock stepped back while it was down, that time is after the
// restart's, and the time left the state showed was the step (hours). It
// is bounded by the decision's time, which the resume gives back anyway.
func TestWallClockBackAcrossRestartMidDecision(t *testing.T) {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("Ts", "6d", "7c", "8h")
	require.Equal(t, TimerDecision, x.m.Timer().Name)
	last := x.at
	x.at = x.at.Add(-3 * time.Hour)
	x.must(Supervisor{Command: "pause", By: "system", Since: last, Cause: PauseRestart, Reason: "restarted"})
	st := x.m.State()
	require.NotNil(t, st.Timer)
	assert.LessOrEqual(t, st.Timer.LeftMS, x.m.cfg.Rules.DecisionTime.Milliseconds(), "time left after the restart")
	x.must(Supervisor{Command: "resume", By: "anna"})
	require.NotNil(t, x.m.State().Timer)
	assert.Equal(t, x.m.cfg.Rules.DecisionTime.Milliseconds(), x.m.State().Timer.LeftMS, "the resume gives the decision's time")
}
