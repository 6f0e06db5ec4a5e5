package exact

import (
	"fmt"
	"math"

	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/strategy"
	"github.com/livetable/livetable/table/strategy/internal/deal"
)

// Report is a game's exact main-game return with a strategy table, on the
// first hand of a freshly shuffled shoe, per unit of initial bet.
type Report struct {
	Game  string
	Table string // the strategy table's name
	// RTP is 1 + the mean net result per initial bet.
	RTP float64
	// Variance and SD are of the net result of a round per initial bet.
	Variance, SD float64
	// VarianceNote says what of the variance is not exact.
	VarianceNote string
	// ByUp is the return given each dealer up card (1 = Ace .. 10).
	ByUp [11]Class
	// ByHand is the return by the player's first two cards, in the
	// classes of HandClasses.
	ByHand []Class
}

// Class is a set of deals: its chance, and the mean net result per
// initial bet of a deal in it (its share of the return is Prob*Mean).
type Class struct {
	Name       string
	Prob, Mean float64
}

// HandClasses are the starting-hand classes of Report.ByHand, in order.
var HandClasses = []string{
	"blackjack", "hard 5-8", "hard 9", "hard 10", "hard 11", "hard 12", "hard 13-16", "hard 17-20",
	"soft 13-17", "soft 18", "soft 19-20",
	"pair A", "pair 2", "pair 3", "pair 4", "pair 5", "pair 6", "pair 7", "pair 8", "pair 9", "pair T",
}

// handClass is the index in HandClasses of the first two cards v1, v2.
func handClass(v1, v2 int) int {
	if v1 == v2 {
		return 11 + v1 - 1
	}
	h := hand{}.add(v1).add(v2)
	t, soft := h.total()
	switch {
	case t == 21:
		return 0
	case soft && t <= 17:
		return 8
	case soft && t == 18:
		return 9
	case soft:
		return 10
	case t <= 8:
		return 1
	case t <= 12:
		return t - 7 // 9 -> 2 .. 12 -> 5
	case t <= 16:
		return 6
	}
	return 7
}

// Analyze computes the exact return of game rs played by table t (see the
// package comment for the method).
func Analyze(rs *rules.Set, t *strategy.Table) (*Report, error) {
	g, err := newGame(rs)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("exact: no strategy table")
	}
	c, err := newCalc(g, t)
	if err != nil {
		return nil, err
	}
	r := &Report{Game: rs.Code, Table: t.Name(),
		VarianceNote: "exact but for the covariance of the two hands of a split, taken as independent given the dealer's outcome"}
	byHand := make([]Class, len(HandClasses))
	for i := range byHand {
		byHand[i].Name = HandClasses[i]
	}
	var m1, m2 float64
	for up := 1; up <= 10; up++ {
		pUp := float64(c.shoe[up]) / float64(c.size)
		cnt, left := c.compose(up, 0, 0)
		var upM1 float64
		for v1 := 1; v1 <= 10; v1++ {
			for v2 := v1; v2 <= 10; v2++ {
				pr := float64(cnt[v1]) / float64(left)
				if v2 == v1 {
					pr *= float64(cnt[v2]-1) / float64(left-1)
				} else {
					pr *= 2 * float64(cnt[v2]) / float64(left-1)
				}
				x := c.deal(up, v1, v2)
				w := pUp * pr
				m1 += w * x.m1
				m2 += w * x.m2
				upM1 += pr * x.m1
				k := handClass(v1, v2)
				byHand[k].Prob += w
				byHand[k].Mean += w * x.m1
			}
		}
		r.ByUp[up] = Class{Name: upName(up), Prob: pUp, Mean: upM1}
	}
	for i := range byHand {
		if byHand[i].Prob > 0 {
			byHand[i].Mean /= byHand[i].Prob
		}
	}
	r.ByHand = byHand
	r.RTP = 1 + m1
	r.Variance = m2 - m1*m1
	r.SD = math.Sqrt(r.Variance)
	return r, nil
}

func upName(up int) string {
	if up == 1 {
		return "A"
	}
	if up == 10 {
		return "T"
	}
	return fmt.Sprint(up)
}

// deal is the moments of the deal of v1, v2 against up card up, dealer
// naturals included.
func (c *calc) deal(up, v1, v2 int) mom {
	rem := deal.Removed(0).Add(v1).Add(v2)
	cnt, left := c.compose(up, 0, rem)
	pBJ := 0.0
	if up == 1 || up == 10 {
		pBJ = float64(cnt[11-up]) / float64(left)
	}
	if v1+v2 == 11 && (v1 == 1 || v2 == 1) {
		// A natural is paid unless the dealer has one too (a push).
		b := c.g.bjPays
		return mom{m1: b * (1 - pBJ), m2: b * b * (1 - pBJ)}
	}
	if !c.g.peek[up] {
		return c.decided(up, 0, v1, v2)
	}
	// The peek: a dealer natural takes the initial bet before any
	// decision; else the hole card is any other card, and the player
	// draws from the shoe without it.
	m := mom{m1: -pBJ, m2: pBJ}
	for hole := 1; hole <= 10; hole++ {
		if hole == 11-up || cnt[hole] <= 0 {
			continue
		}
		m.addScaled(float64(cnt[hole])/float64(left), c.decided(up, hole, v1, v2), false)
	}
	return m
}
