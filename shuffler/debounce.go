package shuffler

import "time"

// debouncer turns a sampled level into a steady one: a new level counts
// only once it has been seen without interruption for hold. It is a plain
// value fed by the polling loop, so it needs neither a goroutine nor a
// clock of its own (periph's gpioutil.Debounce sleeps on the real clock,
// which a fake-clock test cannot drive).
type debouncer struct {
	hold   time.Duration
	init   bool
	stable bool      // the debounced level
	cand   bool      // the last raw level
	since  time.Time // when the raw level became cand
}

// sample feeds one raw level read at now and returns the debounced level
// and whether it changed with this sample. The first sample is taken as
// the steady level without a change, so a line that is already asserted
// at start-up does not look like an edge.
func (d *debouncer) sample(raw bool, now time.Time) (level, changed bool) {
	if !d.init {
		d.init, d.stable, d.cand, d.since = true, raw, raw, now
		return raw, false
	}
	if raw != d.cand {
		d.cand, d.since = raw, now
	}
	if d.cand != d.stable && now.Sub(d.since) >= d.hold {
		d.stable = d.cand
		return d.stable, true
	}
	return d.stable, false
}
