package exact

// memo is an open-addressing hash table from the analysis's packed keys
// to values: the analysis looks a hand or a dealer distribution up a few
// hundred thousand times, and a Go map's hashing of each key cost a third
// of its time. Keys are never 0 (every key holds the up card), so 0 marks
// an empty slot. The slots hold indexes into vals, which only grows: a
// value (80 bytes for a hand) is written once and never moved.
type memo[V any] struct {
	keys []uint64
	idx  []int32
	vals []V
}

func newMemo[V any]() *memo[V] {
	return &memo[V]{keys: make([]uint64, 1<<14), idx: make([]int32, 1<<14)}
}

// slot is where key is, or the empty slot where it would go.
func (m *memo[V]) slot(key uint64) int {
	mask := uint64(len(m.keys) - 1)
	i := (key * 0x9E3779B97F4A7C15) >> 32 & mask
	for m.keys[i] != 0 && m.keys[i] != key {
		i = (i + 1) & mask
	}
	return int(i)
}

func (m *memo[V]) get(key uint64) (V, bool) {
	if i := m.slot(key); m.keys[i] == key {
		return m.vals[m.idx[i]], true
	}
	var zero V
	return zero, false
}

// put stores a value for a key not yet in the table.
func (m *memo[V]) put(key uint64, v V) {
	if 2*(len(m.vals)+1) > len(m.keys) {
		keys, idx := m.keys, m.idx
		m.keys, m.idx = make([]uint64, 2*len(keys)), make([]int32, 2*len(keys))
		for i, k := range keys {
			if k != 0 {
				j := m.slot(k)
				m.keys[j], m.idx[j] = k, idx[i]
			}
		}
	}
	i := m.slot(key)
	m.keys[i], m.idx[i] = key, int32(len(m.vals))
	m.vals = append(m.vals, v)
}
