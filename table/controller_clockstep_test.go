package table

import (
	"context"
	"encoding/json"
	"strings"
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

// TestWallClockStepStateOnTheWallClock: after the wall clock steps while
// a player's timer runs, the state snapshot published live shows its
// deadline (and its time) on the wall clock of now, as the wire contract
// says ("when it fires"), while the journal's times, and the numbered
// events derived from them, stay in the frame before the step until the
// players' timers end. The snapshot showed the next seat's decision
// deadline hours off: a backend counting down from it showed 0 s or
// hours (found by the simulation once its clock had a monotonic reading).
// The numbered events re-derived from the journal have the bytes the
// table published.
func TestWallClockStepStateOnTheWallClock(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	const elapsed = 2 * time.Second
	for _, tc := range []struct {
		name string
		step time.Duration
	}{
		{"forward 3 hours", 3 * time.Hour},
		{"back 3 hours", -3 * time.Hour},
		{"no step", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
			clk := newSteppedClock(start)
			j := &memJournal{}
			opts := DefaultOptions(rs)
			opts.Clock, opts.Journal = clk, j
			c, err := New(opts, zerolog.Nop())
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			evs, _ := c.Subscribe("test", 4096)
			go func() { done <- c.Run(ctx, nil) }()
			defer func() { cancel(); <-done }()
			var live []Event
			take := func() {
				require.NoError(t, c.Ping(context.Background()))
				for {
					select {
					case ev := <-evs:
						live = append(live, ev)
					default:
						return
					}
				}
			}
			submit := func(in Input) {
				require.NoError(t, c.Submit(context.Background(), in))
				take()
			}

			submit(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}, {Seat: 2, Player: "p2", Main: 1000}}})
			// The dealer shows a 6: no insurance; the seats hold 17 and 18.
			cards := []string{"Ts", "9h", "6d", "7c", "9d", "5h"}
			for len(cards) > 0 && !strings.HasPrefix(c.Snapshot().Round.Next, "wait: seat") {
				submit(CardDrawn{Card: card.MustParse(cards[0])})
				cards = cards[1:]
			}
			require.Equal(t, "wait: seat 1 to decide", c.Snapshot().Round.Next)
			clk.Advance(elapsed)
			clk.stepWall(tc.step)
			before := len(live)
			submit(Decision{ID: "d1", Seat: 1, Player: "p1", Action: "stand"})

			st := c.Snapshot()
			require.Equal(t, "wait: seat 2 to decide", st.Round.Next)
			require.NotNil(t, st.Timer)
			assert.Equal(t, string(TimerDecision), st.Timer.Name)
			assert.Equal(t, rs.DecisionTime.Milliseconds(), st.Timer.LeftMS, "seat 2's whole decision time")
			assert.Equal(t, clk.Now().Add(rs.DecisionTime), st.Timer.Deadline, "seat 2's deadline on the wall clock of now")
			var published *State
			for _, ev := range live[before:] {
				if s, ok := ev.Body.(*State); ok {
					published = s
					assert.Equal(t, clk.Now(), ev.Time, "the snapshot's time is the wall clock's")
					continue
				}
				// The journal's frame: the wall time before the step plus
				// the monotonic time since.
				assert.Equal(t, start.Add(elapsed), ev.Time, "%s: the journal's time", ev.Body.Kind())
			}
			require.NotNil(t, published, "the decision's snapshot went out")
			assert.Equal(t, st.Timer.Deadline, published.Timer.Deadline)
			assert.Equal(t, start.Add(elapsed), j.at[len(j.at)-1], "the decision is journaled at the journal's time")

			// Every numbered event the journal derives has what was published.
			derived := map[uint64]Event{}
			require.NoError(t, ReplayEventsSince(opts, 0, func(ev Event) {
				if ev.Seq != 0 {
					derived[ev.Seq] = ev
				}
			}))
			n := 0
			for _, ev := range live {
				if ev.Seq == 0 {
					continue
				}
				n++
				d, ok := derived[ev.Seq]
				require.True(t, ok, "seq %d derived", ev.Seq)
				assert.Equal(t, ev.Time, d.Time, "seq %d", ev.Seq)
				want, err := json.Marshal(ev.Body)
				require.NoError(t, err)
				got, err := json.Marshal(d.Body)
				require.NoError(t, err)
				assert.JSONEq(t, string(want), string(got), "seq %d", ev.Seq)
			}
			assert.Positive(t, n)
		})
	}
}

// TestWallClockStepTimerArmedBefore: a timer armed before a step of the
// wall clock (betting's, here) shows, in every state published after the
// step, its deadline on the wall clock of then and the time it has left
// on the monotonic clock: the deadline the machine keeps is in the frame
// of the input that set it, and the state showed it off by the step with
// 0 s (forward) or hours (back) left.
func TestWallClockStepTimerArmedBefore(t *testing.T) {
	rs, err := rules.Game("000")
	require.NoError(t, err)
	const elapsed = time.Second
	for _, step := range []time.Duration{3 * time.Hour, -3 * time.Hour, 0} {
		t.Run(step.String(), func(t *testing.T) {
			start := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
			clk := newSteppedClock(start)
			opts := DefaultOptions(rs)
			opts.Clock = clk
			c, err := New(opts, zerolog.Nop())
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx, nil) }()
			defer func() { cancel(); <-done }()
			require.NoError(t, c.Ping(context.Background()))
			st := c.Snapshot()
			require.Equal(t, PhaseBetting, st.Phase)
			require.NotNil(t, st.Timer)
			require.Equal(t, string(TimerLastCall), st.Timer.Name)
			lastCall, betsEnd := st.Timer.Deadline, st.Deadline

			clk.Advance(elapsed)
			clk.stepWall(step)
			// An alarm that does not pause: the betting timer runs on.
			require.NoError(t, c.Submit(context.Background(), DeviceAlarm{Source: "shoe", Code: "battery_low", Message: "battery low"}))
			st = c.Snapshot()
			require.NotNil(t, st.Timer)
			assert.Equal(t, string(TimerLastCall), st.Timer.Name)
			assert.Equal(t, lastCall.Add(step), st.Timer.Deadline, "the last call on the wall clock of now")
			assert.Equal(t, (rs.BettingTime - rs.LastCallTime - elapsed).Milliseconds(), st.Timer.LeftMS, "the time left on the monotonic clock")
			assert.Equal(t, betsEnd.Add(step), st.Deadline, "betting's end on the wall clock of now")
		})
	}
}

// TestRestartAfterClockStepBackShowsTheTimer: a timer restored after a
// restart across a step back of the wall clock fires no later than its
// length (TestRestartAfterClockStepBack), and the states published from
// the first input on show that: they showed the journal's deadline, an
// hour away.
func TestRestartAfterClockStepBackShowsTheTimer(t *testing.T) {
	j := &memJournal{}
	clk := clockwork.NewFakeClockAt(ckEpoch)
	h := startWith(t, "000", j, clk, nil)
	h.waitPhase(PhaseBetting)
	h.stop()

	back := clockwork.NewFakeClockAt(clk.Now().Add(-time.Hour))
	h2 := startWith(t, "000", j, back, nil)
	h2.ping()
	rs := h2.c.opts.Rules
	require.NoError(t, h2.submit(DeviceAlarm{Source: "shoe", Code: "battery_low", Message: "battery low"}))
	st := h2.c.Snapshot()
	require.NotNil(t, st.Timer)
	assert.Equal(t, string(TimerLastCall), st.Timer.Name)
	assert.Equal(t, back.Now().Add(rs.BettingTime-rs.LastCallTime), st.Timer.Deadline, "when the restored timer fires")
	assert.Equal(t, (rs.BettingTime - rs.LastCallTime).Milliseconds(), st.Timer.LeftMS)
}
