package shuffler

import (
	"testing"
	"time"
)

// BenchmarkNextTick is one poll of the swap machine while a shoe is dealt:
// the work the controller does every Options.Poll.
func BenchmarkNextTick(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := machine{state: AInPlay_BShuffling, inPlay: ShoeA, since: t0}
	in := input{trigger: tick, now: t0.Add(time.Second), lines: lines{presentA: true}}
	b.ReportAllocs()
	for b.Loop() {
		m, _ = next(m, in, testLimits)
	}
}

// BenchmarkSwap is one whole swap through the machine, request to the new
// shoe in play, with the ShoeChanged input and its report built.
func BenchmarkSwap(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		m := machine{state: AInPlay_BShuffling, inPlay: ShoeA, since: t0}
		m, _ = next(m, input{trigger: request, now: t0}, testLimits)
		m, _ = next(m, input{trigger: tick, now: t0, lines: lines{presentA: true, ready: true}}, testLimits)
		m, _ = next(m, input{trigger: tick, now: t0, lines: lines{presentB: true, done: true}}, testLimits)
		if m.state != BInPlay_AShuffling {
			b.Fatal(m.state)
		}
	}
}
