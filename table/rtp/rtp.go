// Package rtp measures a game's return to player by playing the real
// engine (table/round) with basic strategy (table/strategy) over a real
// finite shoe: dealt to its cut card, or reshuffled every round where the
// game says so, with the burn card of a new shoe where it has one. It is
// the engine of `bjsim rtp`; the live table runs the same round code.
//
// Money stays in integer minor units; only the statistics (mean, variance,
// confidence interval) are floating point.
package rtp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/strategy"
)

// Options configure a run.
type Options struct {
	Rules  *rules.Set
	Table  *strategy.Table
	Rounds int64 // total rounds over all workers
	Seed   uint64
	// Workers is the number of goroutines (default GOMAXPROCS).
	Workers int
	// Bet is the main bet per round in minor units (default 1000: even,
	// so 3:2 pays whole cents).
	Bet int64
	// FirstHandOnly deals only the first round of each shoe (002's stated
	// figure is for the first hand of a shoe).
	FirstHandOnly bool
}

// Result is what a run measured.
type Result struct {
	Rounds  int64
	Wagered int64 // initial bets
	Net     int64 // players' net win, minor units
	// RTP is 1 + mean net per initial bet; CI95 the half-width of its 95%
	// confidence interval (normal approximation), both as fractions.
	RTP, CI95 float64
	// Rounding is the cents lost to rounding 3:2 payouts (0 with an even bet).
	Rounding int64
}

// Run plays opts.Rounds rounds on opts.Workers goroutines and pools them.
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Rules == nil || opts.Table == nil {
		return Result{}, errors.New("rtp: rules and strategy table are required")
	}
	if err := opts.Rules.Validate(); err != nil {
		return Result{}, fmt.Errorf("rtp: %w", err)
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Bet <= 0 {
		opts.Bet = 1000
	}
	if opts.Rounds <= 0 {
		return Result{}, errors.New("rtp: rounds must be positive")
	}
	parts := make([]acc, opts.Workers)
	errs := make([]error, opts.Workers)
	var wg sync.WaitGroup
	for w := 0; w < opts.Workers; w++ {
		n := opts.Rounds / int64(opts.Workers)
		if int64(w) < opts.Rounds%int64(opts.Workers) {
			n++
		}
		wg.Add(1)
		go func(w int, n int64) {
			defer wg.Done()
			p := newPlayer(opts.Rules, opts.Table, opts.Seed+uint64(w)*0x9E3779B97F4A7C15, opts.Bet, opts.FirstHandOnly)
			errs[w] = p.play(ctx, n, &parts[w])
		}(w, n)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	var total acc
	for _, p := range parts {
		total.add(p)
	}
	return total.result(opts.Bet), nil
}

// acc accumulates per-round nets (in units of the bet for the variance).
type acc struct {
	n, net, rounding int64
	sum, sumSq       float64
}

func (a *acc) add(b acc) {
	a.n += b.n
	a.net += b.net
	a.rounding += b.rounding
	a.sum += b.sum
	a.sumSq += b.sumSq
}

func (a acc) result(bet int64) Result {
	r := Result{Rounds: a.n, Wagered: a.n * bet, Net: a.net, Rounding: a.rounding}
	if a.n == 0 {
		return r
	}
	mean := a.sum / float64(a.n)
	variance := a.sumSq/float64(a.n) - mean*mean
	r.RTP = 1 + float64(a.net)/float64(a.n*bet)
	r.CI95 = 1.96 * math.Sqrt(variance/float64(a.n))
	return r
}

// Player plays rounds of one seat, one main bet, basic strategy, on its own
// shoe. It reuses every buffer: its steady state allocates nothing.
type Player struct {
	rs    *rules.Set
	strat *strategy.Table
	rng   *rand.PCG
	rnd   *round.Round
	shoe  []card.Card
	pos   int
	// ready: the cards before it are already drawn (see newShoe), so a
	// draw below it only reads the shoe.
	ready int
	bet   int64
	bets  []round.Bet
	evs   []round.Event
	memo  []uint8 // the strategy's answers (decide)
	deal  int     // cards in the initial deal of the player's one box
	// oneByOne deals the initial deal's cards one call each, as the live
	// table's inputs come (BenchmarkRound000's per-card case).
	oneByOne  bool
	firstOnly bool
	fresh     bool
	// oneRound: every shoe deals one round (the game reshuffles every
	// round, or firstOnly), read once a round.
	oneRound bool
}

// NewPlayer returns a player on a freshly shuffled shoe.
func NewPlayer(rs *rules.Set, st *strategy.Table, seed uint64, bet int64) *Player {
	return newPlayer(rs, st, seed, bet, false)
}

// newPlayer is NewPlayer, dealing only the first round of each shoe when
// firstOnly is set: newShoe must know it before the first shoe.
func newPlayer(rs *rules.Set, st *strategy.Table, seed uint64, bet int64, firstOnly bool) *Player {
	comp := card.NewComposition(rs.Decks)
	p := &Player{
		rs: rs, strat: st, rng: rand.NewPCG(seed, seed^0x5851F42D4C957F2D), firstOnly: firstOnly,
		rnd: round.New(rs), shoe: comp.Cards(), bet: bet,
		bets: []round.Bet{{Seat: 1, Main: bet}}, evs: make([]round.Event, 0, 64), memo: make([]uint8, memoSize),
	}
	p.deal = 3 + b2i(rs.HoleCard)
	p.oneRound = rs.ReshuffleEachRound || firstOnly
	// The player reads the decision requests only (the net it reads from
	// the round).
	p.rnd.KeepEvents(round.EvDecisionRequested)
	p.newShoe()
	return p
}

// newShoe starts a shoe: the draw below is an incremental Fisher-Yates
// shuffle, so resetting the position is a complete, uniform reshuffle.
//
// The cards a round is certain to take are drawn here at once, in the
// order and with the random numbers the round's draws would use: the same
// shoe, the same seeded run. A tight loop keeps the generator's
// multiplications in flight back to back, where a draw per card waits for
// each one in the middle of the round's work. A shoe dealt to its cut
// card deals every card before the cut (a round starts while the cut card
// is not out); a shoe for one round (reshuffled every round, or first
// hands only) deals at least the initial deal of the player's one box:
// two cards, the dealer's up card and his hole card where he has one.
func (p *Player) newShoe() {
	p.pos, p.ready = 0, 0
	p.fresh = true
	for i := 0; i < p.rs.BurnOnNewShoe; i++ {
		p.draw()
	}
	end := min(p.rs.Penetration, len(p.shoe))
	if p.oneRound {
		end = min(p.pos+p.deal, len(p.shoe))
	}
	shuffle(p.rng, p.shoe, p.pos, end)
	p.ready = end
}

// draw deals the next card: drawn already by newShoe, or now. It is small
// enough to be inlined in the round's loop, which calls it for every card.
func (p *Player) draw() card.Card {
	if p.pos < p.ready {
		p.pos++
		return p.shoe[p.pos-1]
	}
	return p.drawNow()
}

func (p *Player) drawNow() card.Card {
	if p.pos >= len(p.shoe) {
		// Past the end of a shoe (a very deep cut): a new shoe mid-round.
		p.pos, p.ready = 0, 0
	}
	// shuffle's step for one position, written out: through shuffle's
	// loop and call a drawn card cost half as much again (the dealer's
	// cards and the hits are drawn here). TestDrawNowIsShuffle holds the
	// two to the same cards.
	pos, shoe := p.pos, p.shoe
	un := uint64(len(shoe) - pos)
	x := p.rng.Uint64()
	var j uint64
	if un&(un-1) == 0 {
		j = x & (un - 1)
	} else {
		hi, lo := bits.Mul64(x, un)
		if lo < un {
			hi = reject(p.rng, un, hi, lo)
		}
		j = hi
	}
	k := pos + int(j)
	c := shoe[k]
	shoe[k], shoe[pos] = shoe[pos], c
	p.pos = pos + 1
	return c
}

// shuffle draws the cards at positions from..to-1 of an incremental
// Fisher-Yates shuffle: each swaps with a card at or after it, chosen as
// rand.New(src).IntN(len(shoe)-pos) would choose it. The same numbers, so a
// seeded run gives what it always gave, drawn from the concrete PCG without
// the Source interface call and the Rand wrapper. The choice is Lemire's
// multiply-and-reject reduction, as math/rand/v2 does it on 64-bit systems;
// the rare rejection is a call of its own, to keep the loop tight.
func shuffle(src *rand.PCG, shoe []card.Card, from, to int) {
	for pos := from; pos < to; pos++ {
		un := uint64(len(shoe) - pos)
		x := src.Uint64()
		var j uint64
		if un&(un-1) == 0 {
			j = x & (un - 1)
		} else {
			hi, lo := bits.Mul64(x, un)
			if lo < un {
				hi = reject(src, un, hi, lo)
			}
			j = hi
		}
		k := pos + int(j)
		shoe[pos], shoe[k] = shoe[k], shoe[pos]
	}
}

// reject finishes a choice whose first product fell in the low band that
// might be biased.
func reject(src *rand.PCG, un, hi, lo uint64) uint64 {
	thresh := -un % un
	for lo < thresh {
		hi, lo = bits.Mul64(src.Uint64(), un)
	}
	return hi
}

// Round plays one round and returns the seat's net in minor units.
func (p *Player) Round() (net, rounding int64, err error) {
	if !p.fresh && (p.oneRound || p.pos >= p.rs.Penetration) {
		// The shoe newPlayer shuffled is the first round's (fresh), with
		// the cards drawn ahead for it.
		p.newShoe()
	}
	p.fresh = false
	evs, err := p.rnd.Start("rtp", p.bets, p.evs[:0])
	if err != nil {
		return 0, 0, err
	}
	if n := p.deal; !p.oneByOne && p.pos+n <= p.ready {
		// The initial deal's cards are drawn already: the round takes
		// them in one call, not one input each.
		var took int
		evs, took, err = p.rnd.Cards(p.shoe[p.pos:p.pos+n], evs)
		p.pos += took
		if err != nil {
			return 0, 0, fmt.Errorf("rtp: %w", err)
		}
	}
	for {
		switch ph := p.rnd.Phase(); {
		case ph == round.PhaseSettled:
			if cap(evs) != cap(p.evs) {
				// Grown by the round's appends (a new array has a larger
				// capacity): kept for the next round. The same capacity
				// is the same array, and no pointer store is needed.
				p.evs = evs
			}
			// One seat: the round's net is the seat's. Net does not build
			// the settlement the player never reads.
			net, rounding := p.rnd.Net()
			return net, rounding, nil
		case ph == round.PhaseInsurance:
			evs, err = p.rnd.Apply(round.Input{Type: round.InInsurance, Seat: 1}, evs[:0])
		case p.rnd.Awaiting() > 0:
			evs, err = p.rnd.Decide(1, "", p.decide(evs), evs[:0])
		default:
			evs, err = p.rnd.Card(p.draw(), evs[:0])
		}
		if err != nil {
			return 0, 0, fmt.Errorf("rtp: %w", err)
		}
	}
}

// decide reads the last decision request and answers it with the
// strategy table, through the player's memo of its answers.
func (p *Player) decide(evs []round.Event) round.Action {
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i].Note
		if e.Type != round.EvDecisionRequested {
			continue
		}
		k, ok := memoKey(e)
		if !ok {
			return p.ask(e)
		}
		if a := p.memo[k]; a != 0 {
			return round.Action(a)
		}
		a := p.ask(e)
		p.memo[k] = uint8(a)
		return a
	}
	return round.ActStand
}

// ask asks the strategy table for its answer to request e.
func (p *Player) ask(e *round.Note) round.Action {
	s := strategy.Situation{Total: int(e.Total), Soft: e.Soft, PairValue: int(e.PairValue), Cards: int(e.Cards), Up: int(e.Up),
		CanDouble: e.Options.Has(round.ActDouble), CanSplit: e.Options.Has(round.ActSplit)}
	if s.CanDouble && p.rs.IsFreeDouble(s.Total, e.Soft) && e.Cards == 2 {
		s.FreeDouble = true
	}
	if s.CanSplit && p.rs.FreeSplit && e.PairValue != 10 {
		s.FreeSplit = true
	}
	switch p.strat.Decide(s) {
	case strategy.Hit:
		return round.ActHit
	case strategy.Double:
		return round.ActDouble
	case strategy.Split:
		return round.ActSplit
	default:
		return round.ActStand
	}
}

// The memo holds the strategy's answer (a round.Action; 0 when not asked
// yet) to every request, indexed by memoKey: the answer is a function of
// what ask reads of the request, the player's rules and strategy fixed.
// Asking the table for each decision (a situation built, a call with it
// copied onto the stack, the table's lookups) cost twice as much.
const (
	memoCards = strategy.MaxCards + 1 - 1       // card counts 2..MaxCards, and every count above
	memoPairs = 10 * 11 * 2 * 2                 // pair value, up card, double and split offered
	memoSize  = memoPairs + memoCards*32*2*11*2 // and the rest: cards, total, soft, up, double offered
)

// memoKey is request e's index in the memo, or false for a request out of
// its ranges (none in a real round), which ask answers directly. Of the
// card count, the strategy reads whether it is 2 (the free double) and
// the rows of 3..MaxCards cards: every count above MaxCards reads alike.
// A pair has two cards and its total and softness follow from its value,
// and a split is offered only on a pair.
func memoKey(e *round.Note) (int, bool) {
	total, pair, cards, up := int(e.Total), int(e.PairValue), int(e.Cards), int(e.Up)
	canDouble, canSplit := b2i(e.Options.Has(round.ActDouble)), b2i(e.Options.Has(round.ActSplit))
	if up < 0 || up > 10 {
		return 0, false
	}
	if pair != 0 {
		if pair < 1 || pair > 10 || cards != 2 || e.Soft != (pair == 1) || total != max(2*pair, 12*b2i(pair == 1)) {
			return 0, false
		}
		return (((pair-1)*11+up)*2+canDouble)*2 + canSplit, true
	}
	if total < 0 || total > 31 || cards < 2 || canSplit != 0 {
		return 0, false
	}
	k := min(cards, strategy.MaxCards+1) - 2
	k = k*32 + total
	k = k*2 + b2i(e.Soft)
	k = k*11 + up
	k = k*2 + canDouble
	return memoPairs + k, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// play sums n rounds into *out. The sums are kept in a local and stored
// once: the workers' results sit side by side in one slice, and writing
// them every round would pass their cache line from core to core.
func (p *Player) play(ctx context.Context, n int64, out *acc) error {
	var a acc
	defer func() { *out = a }()
	bet := float64(p.bet)
	for i := int64(0); i < n; i++ {
		if i&0xFFFF == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		net, rounding, err := p.Round()
		if err != nil {
			return err
		}
		x := float64(net) / bet
		a.n++
		a.net += net
		a.rounding += rounding
		a.sum += x
		a.sumSq += x * x
	}
	return nil
}
