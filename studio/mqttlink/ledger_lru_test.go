package mqttlink

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLedgerLRU runs the ledger's LRU against a plain model (a slice in
// use order) through seeded adds and lookups: the same lines, the same
// order, the same evictions, whatever the mix.
func TestLedgerLRU(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		capacity := 1 + rng.IntN(12)
		c := newLRU()
		var model []string // oldest first
		find := func(id string) int {
			for i, x := range model {
				if x == id {
					return i
				}
			}
			return -1
		}
		for step := range 2000 {
			id := fmt.Sprint("c", rng.IntN(3*capacity))
			what := fmt.Sprintf("seed %d step %d %s", seed, step, id)
			if rng.IntN(2) == 0 {
				line, ok := c.touch(id)
				i := find(id)
				require.Equal(t, i >= 0, ok, what)
				if ok {
					require.Equal(t, id, line.ID, what)
					model = append(append(model[:i:i], model[i+1:]...), id)
				}
				continue
			}
			if _, ok := c.touch(id); ok {
				i := find(id)
				model = append(append(model[:i:i], model[i+1:]...), id)
				continue
			}
			c.add(ledgerLine{Reply: Reply{ID: id, Accepted: true}, Body: uint64(step)}, capacity)
			model = append(model, id)
			if len(model) > capacity {
				model = model[1:]
			}
			var got []string
			require.NoError(t, c.each(func(l ledgerLine) error { got = append(got, l.ID); return nil }))
			require.Equal(t, model, got, what)
			require.Equal(t, len(model), c.len(), what)
			require.LessOrEqual(t, len(c.slots), capacity+1, "%s: slots are reused", what)
		}
	}
}
