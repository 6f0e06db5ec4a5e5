package world

import (
	"errors"
	"fmt"
	"time"

	"github.com/livetable/livetable/table"
)

// step offers the input a dealer, the players or a supervisor would give
// the table in its present state, drawn from the seed.
func (w *world) step(n int) {
	if w.c == nil {
		return
	}
	w.advance(time.Duration(50+w.rng.IntN(500)) * time.Millisecond)
	if w.c == nil {
		return
	}
	st := w.c.Snapshot()
	switch {
	case st.Paused:
		if w.rng.IntN(4) == 0 && st.Round.ID != "" {
			_ = w.submit(table.Supervisor{Command: "void", By: "sim", Reason: "sim", ID: fmt.Sprintf("v%d", n)})
		} else {
			_ = w.submit(table.Supervisor{Command: "resume", By: "sim", ID: fmt.Sprintf("r%d", n)})
		}
	case st.Phase == table.PhaseClosed:
		w.newShoe()
	case st.Phase == table.PhaseBetting || st.Phase == table.PhaseLastCall:
		var bets []table.Bet
		for seat := 1; seat <= 1+w.rng.IntN(3); seat++ {
			bets = append(bets, table.Bet{Seat: seat, Player: fmt.Sprintf("p%d", seat), Main: int64(100 * (1 + w.rng.IntN(50)))})
		}
		_ = w.submit(table.BetsClosed{ID: fmt.Sprintf("b%d", n), Bets: bets})
	case st.Phase == table.PhaseDealing:
		w.deal(n, st)
	default:
		w.fireTimer(st)
	}
}

// deal plays the round: a decision for a hand waiting on one (a refused
// one changes nothing), else the next card out of the shoe.
func (w *world) deal(n int, st table.State) {
	for _, s := range st.Round.Seats {
		for _, h := range s.Hands {
			if h.Done || len(h.Cards) < 2 {
				continue
			}
			action := "stand"
			if h.Total < 12 || (h.Total < 17 && w.rng.IntN(2) == 0) {
				action = "hit"
			}
			err := w.submit(table.Decision{ID: fmt.Sprintf("d%d-%d", n, s.Seat), Seat: s.Seat, Player: s.Player, Action: action})
			if err == nil || errors.Is(err, errRestarted) {
				return
			}
		}
	}
	if st.Round.Phase == "insurance" {
		w.fireTimer(st)
		return
	}
	if len(w.shoe) == 0 {
		_ = w.submit(table.CutCardSeen{Source: "shoe"})
		return
	}
	c := w.shoe[0]
	w.shoe = w.shoe[1:]
	_ = w.submit(table.CardDrawn{Card: c, ShoeID: fmt.Sprintf("shoe-%d", w.shoeN)})
	if len(w.shoe) == w.rs.Decks*52/4 {
		_ = w.submit(table.CutCardSeen{Source: "shoe"})
	}
}

// fireTimer moves the clock to the table's deadline, so the controller's
// timer fires as it would.
func (w *world) fireTimer(st table.State) {
	if st.Timer == nil || st.Timer.Stopped || st.Timer.Deadline.IsZero() {
		return
	}
	w.advance(max(st.Timer.Deadline.Sub(w.clk.Now()), 0))
}

// advance moves the clock by d and, when that passes the table's
// deadline, waits until the controller's loop has taken the timer's input
// (so the next input comes after it, every run alike).
func (w *world) advance(d time.Duration) {
	st := w.c.Snapshot()
	due := st.Timer != nil && !st.Timer.Stopped && !st.Timer.Deadline.IsZero() && !w.clk.Now().Add(d).Before(st.Timer.Deadline)
	w.clk.Advance(d)
	if !due {
		return
	}
	// The timer's callback hands its input to the loop from a goroutine
	// of its own: wait for the input's effect (every timer the machine
	// arms changes the state when it fires), however long the scheduler
	// takes, so that no later input overtakes it.
	for bound := time.Now().Add(5 * time.Second); time.Now().Before(bound); time.Sleep(10 * time.Microsecond) {
		if w.j.Err() != nil || w.c.Ping(w.live) != nil {
			break
		}
		now := w.c.Snapshot()
		if now.Seq != st.Seq || now.Timer == nil || !now.Timer.Deadline.Equal(st.Timer.Deadline) {
			break
		}
	}
	w.drain()
	if failed := w.j.Err(); failed != nil {
		// The timer's input met the failing journal: the daemon restarts.
		w.restart(failed.Error())
	}
}
