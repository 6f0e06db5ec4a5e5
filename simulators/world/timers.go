package world

import (
	"fmt"
	"time"

	"github.com/livetable/livetable/table"
)

// seenTimer is the table's timer as the world last saw it in a state
// snapshot, with where it fires on the monotonic clock.
type seenTimer struct {
	ptr     *table.TimerView // the snapshot's timer: a new pointer is a new snapshot
	name    string
	running bool
	mono    time.Time     // running: its deadline on the monotonic clock
	left    time.Duration // stopped: the time the pause kept
	off     time.Duration // the wall clock's offset when this timer was first seen
}

// playerTimer reports a player's timer: its time left is kept by a pause
// and given back by the resume.
func playerTimer(name string) bool {
	return name == string(table.TimerDecision) || name == string(table.TimerInsurance)
}

// observe follows the table's timer through the snapshots the world
// reads, each at the monotonic time the table published it: the world
// reads the snapshot before it moves the clock or steps the wall clock
// (tick, fire, advance), and a snapshot it has not seen was published
// since it last moved it. A snapshot's deadline is the wall clock's at
// publication (the offset in force then), whatever frame the journal's
// times are in. The checks:
//
//   - a running timer's deadline and time left agree: the deadline, less
//     the wall clock's offset, is the monotonic time now plus left_ms;
//   - no deadline is further than its timer's length;
//   - a running timer keeps its deadline on the monotonic clock: the
//     same timer shown again (after an input that did not restart it,
//     or a step of the wall clock) fires when it did, and a timer of the
//     same name with another deadline is a new one, of its whole length;
//   - a pause keeps a player's time left on the monotonic clock: what
//     the stopped timer shows is its deadline less the monotonic time of
//     the pause (bounded by its length);
//   - a resume gives back what the pause kept, at least ResumeGrace (or
//     the round goes on to a new timer of its whole length).
//
// A wall-clock step while a player's timer runs is where the
// controller's anchoring (table.Controller.now) shows: without it, a
// pause kept the wall clock's idea of the time left, and a snapshot
// after the step showed the deadline in the time before the step.
func (w *world) observe(st table.State) {
	t := st.Timer
	if t == nil {
		w.seen = seenTimer{}
		return
	}
	if t == w.seen.ptr {
		return
	}
	prev := w.seen
	w.seen = seenTimer{ptr: t, name: t.Name, off: w.clk.offset()}
	if w.j != nil && w.j.Err() != nil {
		// The table stopped on a failing journal: its snapshot is the
		// journal's rebuilt machine's, and the daemon restarts.
		prev = seenTimer{}
	}
	now, length := w.clk.Mono(), w.lengths.TimerLength(table.TimerName(t.Name))
	left := time.Duration(t.LeftMS) * time.Millisecond
	if t.Stopped || t.Deadline.IsZero() {
		w.seen.left = left
		if prev.running && prev.name == t.Name && playerTimer(t.Name) {
			if prev.off != w.clk.offset() {
				w.res.PausedAcrossSteps++
			}
			want := min(max(prev.mono.Sub(now), 0), length)
			if !near(left, want) {
				w.violate("a pause keeps a player's time on the monotonic clock",
					fmt.Sprintf("timer %s stopped with %v left; %v were left on the monotonic clock", t.Name, left, want))
			}
		}
		return
	}
	w.seen.running, w.seen.mono = true, t.Deadline.Add(-w.clk.offset())
	in := w.seen.mono.Sub(now)
	if d := in - left; d < 0 || d >= time.Millisecond {
		w.violate("a state's deadline and time left agree",
			fmt.Sprintf("timer %s: its deadline %v is %v away on the wall clock, the state shows %v left", t.Name, t.Deadline, in, left))
	}
	if in > w.longest() {
		w.violate("a deadline is never further than its timer",
			fmt.Sprintf("timer %s fires in %v, the longest timer is %v", t.Name, in, w.longest()))
	}
	if prev.running && prev.name == t.Name && prev.mono.Equal(w.seen.mono) {
		// The same timer: its frame is the one it was first seen in.
		w.seen.off = prev.off
		if prev.off != w.clk.offset() {
			w.res.ShownAcrossSteps++
		}
	}
	switch {
	case prev.name != t.Name || prev.ptr == nil:
	case prev.running && !prev.mono.Equal(w.seen.mono) && in != length:
		w.violate("a running timer keeps its deadline on the monotonic clock",
			fmt.Sprintf("timer %s was to fire in %v and now fires in %v, not a new timer of %v", t.Name, prev.mono.Sub(now), in, length))
	case !prev.running && playerTimer(t.Name):
		// Or a new timer of its whole length: a correction that gave
		// the round the card it paused for starts the next decision.
		if want := min(length, max(prev.left, w.grace)); !near(in, want) && in != length {
			w.violate("a resume gives back the time a pause kept",
				fmt.Sprintf("timer %s kept %v and fires in %v, not %v (nor a new timer of %v)", t.Name, prev.left, in, want, length))
		}
	}
}

// near reports two times left equal to the millisecond a state shows.
func near(a, b time.Duration) bool { return (a - b).Abs() < time.Millisecond }
