package mqttlink

import (
	"sync/atomic"
	"time"
)

// A broker gives a client id to one connection at a time: a second
// client connecting with the table's id (a copy of the table's
// configuration on another box, a tool started with the wrong id, an
// attacker with credentials) closes the table's connection, and each
// reconnect of one closes the other's. The table only sees its
// connection end (EOF) moments after it opened, again and again; and
// while the other holds the id, commands meant for the table reach the
// other (with a clean session it also discards the table's queued ones).
// takeoverWatch tells that pattern from an outage: connections the broker
// closes within takeoverWindow of opening them, takeoverAfter times in a
// row. An ACL that makes mosquitto close the connection after a refused
// publish looks the same, and the log line names both.
type takeoverWatch struct {
	openedAt atomic.Int64  // monotonic nanoseconds since start of the connection now open
	inRow    atomic.Uint64 // connections cut short in a row
	short    atomic.Uint64 // connections cut short, in all (Stats.ShortConnections)
	raised   atomic.Uint64 // times the pattern was reported (Stats.TakeoverSuspected)
}

const (
	// takeoverWindow is how soon after opening a connection its end
	// counts as cut short.
	takeoverWindow = 5 * time.Second
	// takeoverAfter is how many connections cut short in a row are
	// reported.
	takeoverAfter = 3
)

// monoBase is the time base of openedAt (monotonic).
var monoBase = time.Now()

// opened notes a connection opened now.
func (w *takeoverWatch) opened() { w.openedAt.Store(int64(time.Since(monoBase))) }

// lost notes the connection's end; report is true the time the run of
// connections cut short reaches takeoverAfter (once per run).
func (w *takeoverWatch) lost() (report bool, inRow uint64) {
	if time.Duration(int64(time.Since(monoBase))-w.openedAt.Load()) >= takeoverWindow {
		w.inRow.Store(0)
		return false, 0
	}
	w.short.Add(1)
	n := w.inRow.Add(1)
	if n == takeoverAfter {
		w.raised.Add(1)
		return true, n
	}
	return false, n
}

// fighting reports whether a run of connections cut short is going on
// now: takeoverAfter or more in a row, and the connection (if one is
// open) not yet past takeoverWindow. A connection that lasts ends it
// (inRow itself is reset only at the next loss).
func (w *takeoverWatch) fighting(connected bool) bool {
	if w.inRow.Load() < takeoverAfter {
		return false
	}
	return !connected || time.Duration(int64(time.Since(monoBase))-w.openedAt.Load()) < takeoverWindow
}
