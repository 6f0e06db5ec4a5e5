package shoereader

import (
	"math"

	"github.com/livetable/livetable/table/card"
)

// pastShoe is a finished shoe's dealing order, indexed for run matching.
type pastShoe struct {
	id    string
	order []card.Card
	pos   [card.DeckSize][]int32 // positions of each card in order
	runs  []run                  // alignments ending at the previous new card
	next  []run                  // scratch for the current card
}

type run struct{ at, length int32 }

// shuffleCheck compares the shoe in play with the last few finished shoes.
// A run is a stretch of consecutive cards of the new shoe that were also
// consecutive, in the same order, in an old shoe.
type shuffleCheck struct {
	threshold int
	history   int
	past      []*pastShoe
	alarmed   bool
}

// add matches the next dealt card against every past shoe and reports the
// first past shoe where a run reached the threshold.
func (s *shuffleCheck) add(c card.Card) (longest int, with *pastShoe) {
	ci := c.Index()
	for _, p := range s.past {
		p.next = p.next[:0]
		for _, j := range p.pos[ci] {
			l := int32(1)
			for _, r := range p.runs {
				if r.at == j-1 {
					l = r.length + 1
					break
				}
			}
			p.next = append(p.next, run{at: j, length: l})
			if int(l) > longest {
				longest, with = int(l), p
			}
		}
		p.runs, p.next = p.next, p.runs
	}
	return longest, with
}

// endShoe files the finished shoe's order and resets for a new shoe.
func (s *shuffleCheck) endShoe(id string, order []card.Card) {
	s.alarmed = false
	for _, p := range s.past {
		p.runs = p.runs[:0]
	}
	if len(order) < s.threshold {
		return
	}
	p := &pastShoe{id: id, order: append([]card.Card(nil), order...)}
	for i, c := range p.order {
		p.pos[c.Index()] = append(p.pos[c.Index()], int32(i))
	}
	s.past = append(s.past, p)
	if len(s.past) > s.history {
		s.past = s.past[1:]
	}
}

// ShuffleFalseAlarmRate is the expected number of false ShuffleAlarms per
// shoe when every shoe is properly shuffled: decks decks, an alarm at a run
// of run cards, compared with history previous shoes. See the package doc
// for the derivation.
func ShuffleFalseAlarmRate(decks, run, history int) float64 {
	n := float64(decks * card.DeckSize)
	q := float64(decks) / (n - 1)
	return float64(history) * n * float64(decks) * math.Pow(q, float64(run-1))
}
