package sidebets

import (
	"testing"

	"github.com/livetable/livetable/table/card"
)

// BenchmarkReturn measures each exact analysis on the 8-deck shoe; the
// target is well under a second per bet.
func BenchmarkReturn(b *testing.B) {
	for _, k := range Kinds() {
		pt, err := DefaultPaytable(k)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(k), func(b *testing.B) {
			for b.Loop() {
				if _, err := Return(k, pt, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClassify measures the per-seat settlement path the engine runs
// every round: it must not allocate.
func BenchmarkClassify(b *testing.B) {
	h := Hand{
		Player: [2]card.Card{card.MustParse("7s"), card.MustParse("7d")},
		Dealer: []card.Card{card.MustParse("7h"), card.MustParse("5c"), card.MustParse("Tc")},
	}
	pt := Hot3Paytable()
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range Kinds() {
			r, err := Classify(k, h)
			if err != nil {
				b.Fatal(err)
			}
			_ = Settle(100, r, pt)
		}
	}
}
