package round

import (
	"slices"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/sidebets"
)

func (r *Round) resetSettlement() {
	s := &r.settle
	seats := s.Seats[:0]
	*s = Settlement{Seats: seats}
	r.handBuf = r.handBuf[:0]
	r.sideBuf = r.sideBuf[:0]
	r.wagerBuf = r.wagerBuf[:0]
}

// The settlement's slices are cut from buffers the round keeps, so a
// steady-state round settles without allocating. Buffers grow by
// appending; a slice handed out earlier in the round keeps pointing at the
// old array when they do, which is fine: it is never written again.
//
// handResults returns n results to be written whole by setHand, so they are
// not cleared first.
func (r *Round) handResults(n int) []HandResult {
	start := len(r.handBuf)
	if cap(r.handBuf)-start < n {
		r.handBuf = slices.Grow(r.handBuf, n)
	}
	r.handBuf = r.handBuf[:start+n]
	return r.handBuf[start : start+n : start+n]
}

func (r *Round) fillDealer() {
	// Small enough to be inlined in settleSolo (dealerBJ written out).
	d, sd := &r.dealer, &r.settle.Dealer
	bj := d.n == 2 && d.best == 21
	sd.Cards, sd.Total, sd.Blackjack, sd.Bust, sd.Peeked = d.list(), int(d.best), bj, d.best > 21, r.peeked && bj
}

// finish settles every wager and ends the round. A caller that does not
// keep EvSettled (KeepEvents) gets the totals only, when settleQuick can
// give them: the settlement (a result per seat and hand, their cards) is
// then built when Settlement asks for it, the same, and a simulator that
// reads Net never has it built. dealerDone: the dealer's turn ended, his
// hand complete, and EvDealerDone reports it first (dealerDone); a round
// ended by the dealer's peeked blackjack has no dealer's turn.
func (r *Round) finish(dealerDone bool) {
	if dealerDone && r.keeps(EvDealerDone) {
		e := r.note(EvDealerDone)
		t, soft := r.dealer.total()
		e.Total, e.Soft = int8(t), soft
	}
	r.phase = PhaseSettled
	if r.drop&(1<<EvSettled) != 0 && r.settleQuick() {
		return
	}
	if p := r.solo; p != nil {
		r.unbuilt = false
		r.settleSolo(p) // settleAll's first step, without its call
	} else {
		r.settleAll()
	}
	if r.keeps(EvSettled) {
		r.note(EvSettled) // its settlement is the round's (Event)
	}
}

// settleQuick totals the net and the rounding of a round whose wagers are
// main bets only (no bet behind, insurance or side bet), with settleHand
// as settleAll does, and marks the settlement unbuilt. It returns false,
// having changed nothing, for any other round.
func (r *Round) settleQuick() bool {
	if p := r.solo; p != nil {
		if p.insurance == 1 || len(p.side) > 0 {
			return false
		}
		dt, _ := r.dealer.total()
		dbj := r.dealerBJ()
		h := &p.hands[0]
		r.quickRounding = r.settleHand(h, 0, dt, dbj)
		r.quickNet = h.net
		if p.n == 2 {
			h = &p.hands[1]
			r.quickRounding += r.settleHand(h, 1, dt, dbj)
			r.quickNet += h.net
		}
		r.unbuilt = true
		return true
	}
	for i := range r.boxes {
		players := r.boxes[i].players
		for j := range players {
			if p := &players[j]; p.behind || p.insurance == 1 || len(p.side) > 0 {
				return false
			}
		}
	}
	dt, _ := r.dealer.total()
	dbj := r.dealerBJ()
	var net, rounding int64
	for i := range r.boxes {
		players := r.boxes[i].players
		for j := range players {
			p := &players[j]
			for k := range p.hands[:p.n] {
				h := &p.hands[k]
				rounding += r.settleHand(h, k, dt, dbj)
				net += h.net
			}
		}
	}
	r.quickNet, r.quickRounding = net, rounding
	r.unbuilt = true
	return true
}

// settleAll builds the settlement of every wager.
func (r *Round) settleAll() {
	r.unbuilt = false
	if p := r.solo; p != nil {
		r.settleSolo(p)
		return
	}
	r.resetSettlement()
	r.fillDealer()
	s := &r.settle
	for i := range r.boxes {
		bx := &r.boxes[i]
		var owner *player
		for j := range bx.players {
			p := &bx.players[j]
			if !p.behind && owner == nil {
				owner = p
			}
			// Results are filled in place, never built and copied: a
			// simulator settles millions of rounds a second.
			s.Seats = append(s.Seats, SeatResult{})
			sr := &s.Seats[len(s.Seats)-1]
			if p.behind {
				r.settleBehind(bx, owner, p, sr)
			} else {
				r.settlePlayer(bx, p, sr)
			}
			s.Net += sr.Net
		}
	}
}

// settleSolo is settleAll for a round of one box and one player of its
// own (every simulated round, and the daemon's with one player): no owner
// to find for bets behind, no loops. The settlement's one seat result
// (and its hands) is written field by field over the last round's, in
// place: resetSettlement and an append would zero it whole first, and
// its pointer fields take a write-barrier check each time they are
// written. Every field of the settlement is written here.
func (r *Round) settleSolo(p *player) {
	s := &r.settle
	s.Void, s.Net, s.Rounding, s.Players, s.Chunks = false, 0, 0, 0, 0
	if s.Reason != "" {
		s.Reason = ""
	}
	r.fillDealer()
	r.sideBuf, r.wagerBuf = r.sideBuf[:0], r.wagerBuf[:0]
	if cap(s.Seats) == 0 {
		s.Seats = make([]SeatResult, 1, 8)
	}
	s.Seats = s.Seats[:1]
	sr := &s.Seats[0]
	bx := r.soloBox
	sr.Seat, sr.Player, sr.Behind, sr.Slot = bx.seat, p.id, false, int(p.slot)
	// The pointer fields are nil after most rounds: a test of each costs
	// less than a store with its write-barrier check.
	if sr.Side != nil {
		sr.Side = nil
	}
	if sr.Insurance != nil {
		sr.Insurance = nil
	}
	n := p.n
	if cap(r.handBuf) < 2 {
		r.handBuf = make([]HandResult, 2, 16)
	}
	r.handBuf = r.handBuf[:n]
	sr.Hands = r.handBuf[:n:n]
	dt, dbj := s.Dealer.Total, s.Dealer.Blackjack
	h := &p.hands[0]
	s.Rounding = r.settleHand(h, 0, dt, dbj)
	setHand(&sr.Hands[0], h)
	sr.MainNet, sr.Net = h.net, 0
	if n == 2 {
		h = &p.hands[1]
		s.Rounding += r.settleHand(h, 1, dt, dbj)
		setHand(&sr.Hands[1], h)
		sr.MainNet += h.net
	}
	r.closeSeat(bx, p, sr)
	s.Net = sr.Net
}

// Net is the settled round's net over every player (Settlement().Net) and
// the rounding of its payouts (Settlement().Rounding); zeros before the
// round is settled. It does not build a settlement that finish left
// unbuilt: a simulator reads it every round.
func (r *Round) Net() (net, rounding int64) {
	switch {
	case r.phase != PhaseSettled:
		return 0, 0
	case r.unbuilt:
		return r.quickNet, r.quickRounding
	}
	return r.settle.Net, r.settle.Rounding
}

func (r *Round) settlePlayer(bx *box, p *player, sr *SeatResult) {
	sr.Seat, sr.Player, sr.Slot = bx.seat, p.id, int(p.slot)
	sr.Hands = r.handResults(p.n)
	for k := range sr.Hands {
		h := &p.hands[k]
		r.settle.Rounding += r.settleHand(h, k, r.settle.Dealer.Total, r.settle.Dealer.Blackjack)
		setHand(&sr.Hands[k], h)
		sr.MainNet += h.net
	}
	r.closeSeat(bx, p, sr)
}

// setHand writes the result of a settled hand.
func setHand(hr *HandResult, h *hand) {
	hr.Cards = h.list()
	hr.Total, _ = h.total()
	hr.Stake, hr.Free, hr.Doubled, hr.Outcome, hr.Net = h.stake, h.free, h.doubled, h.outcome, h.net
}

// settleBehind settles a Bet Behind on the seat owner's hands, with the
// follower's own stake and follow preferences.
func (r *Round) settleBehind(bx *box, owner, p *player, sr *SeatResult) {
	sr.Seat, sr.Player, sr.Behind, sr.Slot = bx.seat, p.id, true, int(p.slot)
	hs := r.handResults(2)
	sr.Hands = hs[:0]
	if owner == nil {
		return
	}
	n := owner.n
	if n == 2 && !p.followSpl {
		n = 1
	}
	for k := 0; k < n; k++ {
		oh := &owner.hands[k]
		h := *oh
		h.base = p.main
		h.stake = p.main
		h.free = 0
		if oh.doubled && !oh.freeDouble {
			if p.followDbl {
				h.stake = 2 * p.main
			} else {
				h.doubled = false
			}
		}
		if k == 1 && !p.followSpl {
			continue
		}
		r.settle.Rounding += r.settleHand(&h, k, r.settle.Dealer.Total, r.settle.Dealer.Blackjack)
		sr.Hands = sr.Hands[:len(sr.Hands)+1]
		setHand(&sr.Hands[len(sr.Hands)-1], &h)
		sr.MainNet += h.net
	}
	r.closeSeat(bx, p, sr)
}

// settleHand decides one hand's outcome and net against the dealer's total
// dt (dbj: a blackjack) and returns what a 3:2 payout's rounding dropped.
func (r *Round) settleHand(h *hand, idx, dt int, dbj bool) (rounding int64) {
	rs := r.rs
	stake, base, free := h.stake, h.base, h.free
	t, _ := h.total()
	charlie := rs.Charlie > 0 && int(h.n) >= rs.Charlie && t <= 21
	switch {
	case h.surrender:
		h.outcome, h.net = OutcomeSurrender, -stake/2
	case t > 21:
		h.outcome, h.net = OutcomeBust, -stake
	case h.natural:
		if dbj {
			h.outcome, h.net = OutcomePush, 0
		} else {
			var win int64
			win, rounding = rs.BlackjackPays.Of(stake)
			h.outcome, h.net = OutcomeBlackjack, win
		}
	case dbj && !(charlie && rs.CharlieBeatsDealerBJ):
		// A dealer blackjack: found by the peek (the round ended before
		// any decision: the hand holds only its bet) or late, settled by
		// the game's late-BJ rule.
		h.outcome = OutcomeLose
		switch rs.LateBJFor(r.upValue()) {
		case rules.LateBJAll:
			h.net = -stake
		case rules.LateBJDoubleBack:
			h.net = -base
		case rules.LateBJOriginalOnly:
			if idx == 0 {
				h.net = -base
			} else {
				h.net = 0
			}
		}
	case charlie:
		h.outcome, h.net = OutcomeCharlie, stake+free
	case dt > 21:
		if rs.Dealer22Push && dt == 22 {
			h.outcome, h.net = OutcomePush, 0
		} else {
			h.outcome, h.net = OutcomeWin, stake+free
		}
	case t > dt:
		h.outcome, h.net = OutcomeWin, stake+free
	case t == dt:
		h.outcome, h.net = OutcomePush, 0
	default:
		h.outcome, h.net = OutcomeLose, -stake
	}
	return rounding
}

// closeSeat settles the seat's insurance and side bets, where it has any
// (most seats have none, and need no call for them), and totals it.
func (r *Round) closeSeat(bx *box, p *player, sr *SeatResult) {
	if p.insurance == 1 || len(p.side) > 0 {
		r.settleExtras(bx, p, sr)
	}
	sr.Net += sr.MainNet
}

// settleExtras settles insurance and side bets.
func (r *Round) settleExtras(bx *box, p *player, sr *SeatResult) {
	if p.insurance == 1 {
		stake := p.main / 2
		w := Wager{Stake: stake, Net: -stake}
		if r.settle.Dealer.Blackjack {
			w.Net, _ = r.rs.InsurancePays.Of(stake)
		}
		if len(r.wagerBuf) == cap(r.wagerBuf) {
			// A new array: earlier pointers keep the old one, still valid.
			r.wagerBuf = make([]Wager, 0, 2*cap(r.wagerBuf)+8)
		}
		r.wagerBuf = append(r.wagerBuf, w)
		sr.Insurance = &r.wagerBuf[len(r.wagerBuf)-1]
		sr.Net += w.Net
	}
	if len(p.side) > 0 && len(bx.stream) >= 2 {
		start := len(r.sideBuf)
		for range p.side {
			r.sideBuf = append(r.sideBuf, SideResult{})
		}
		sr.Side = r.sideBuf[start:start:len(r.sideBuf)]
		a, b := bx.stream[0], bx.stream[1]
		up := r.dealer.c[0]
		var hole card.Card
		if r.dealer.n >= 2 {
			hole = r.dealer.c[1]
		}
		dt, _ := r.dealer.total()
		natural, _ := Total(bx.stream[:2])
		for _, sd := range p.side {
			var res sidebets.Result
			switch sd.Kind {
			case "perfect_pairs":
				res = sidebets.Pair(a, b)
			case "dealer_pair":
				res = "lose"
				if hole.Valid() {
					res = sidebets.Pair(up, hole)
				}
			case "21+3", "top3":
				res = sidebets.ThreeCard(a, b, up)
			case "hot3":
				res = sidebets.Hot3(a, b, up)
			case "bust_it":
				res = sidebets.BustIt(r.dealer.list(), dt > 21, natural == 21)
			}
			sb, _ := r.rs.Side(sd.Kind)
			if _, pays := sb.Paytable[res]; !pays && res != sidebets.PushPlayerBlackjack {
				// A hand the bet does not pay (a plain straight on Top 3) is a loss.
				res = sidebets.Lose
			}
			o := sidebets.Settle(sd.Stake, res, sb.Paytable)
			sr.Side = append(sr.Side, SideResult{Kind: sd.Kind, Stake: sd.Stake, Result: o.Result, Net: o.Net})
			sr.Net += o.Net
		}
	}
}

// Settlement returns the round's settlement once it is settled, else nil.
// It is owned by the round and valid until the next Start. A round whose
// caller does not keep EvSettled may build it here, on the first call.
func (r *Round) Settlement() *Settlement {
	if r.phase != PhaseSettled {
		return nil
	}
	if r.unbuilt {
		r.settleAll()
	}
	return &r.settle
}
