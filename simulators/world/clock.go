package world

import (
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// jumpClock is the host's clock with its two readings apart: the wall
// clock (Now, what the table journals and shows), which NTP or an
// operator may step forward or back, and the monotonic clock that Go's
// timers run on (After, AfterFunc, NewTimer), which never jumps. The
// fake clock underneath is the monotonic one; Now adds the wall clock's
// steps so far. It is a table.MonotonicClock, as tabled's real clock is
// taken to be: the controller anchors a player's time on Monotonic, so
// the simulation runs that anchoring (6f2220f), not the fallback of a
// clock without one.
type jumpClock struct {
	*clockwork.FakeClock
	start time.Time
	off   atomic.Int64 // the wall clock's lead on the monotonic one, ns
}

func newJumpClock(at time.Time) *jumpClock {
	return &jumpClock{FakeClock: clockwork.NewFakeClockAt(at), start: at}
}

// Now is the wall clock.
func (c *jumpClock) Now() time.Time { return c.FakeClock.Now().Add(c.offset()) }

// Since and Until are on the wall clock, as time.Since is for a time
// without a monotonic reading (the journal's).
func (c *jumpClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is t minus the wall clock.
func (c *jumpClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Mono is the monotonic clock: where timers fire.
func (c *jumpClock) Mono() time.Time { return c.FakeClock.Now() }

// Monotonic is the monotonic clock as table.MonotonicClock reads it: the
// time since the clock was made, which no step of the wall clock moves.
func (c *jumpClock) Monotonic() time.Duration { return c.FakeClock.Now().Sub(c.start) }

// Jump steps the wall clock by d (negative: back).
func (c *jumpClock) Jump(d time.Duration) { c.off.Add(int64(d)) }

func (c *jumpClock) offset() time.Duration { return time.Duration(c.off.Load()) }
