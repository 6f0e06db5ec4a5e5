package world

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// finish ends the live run, then plays the same workload without a fault
// on the bare state machine and compares: every round's settlement (by
// ordinal), the shoe's inventory at every restart, money conserved in
// every round of both runs.
func (w *world) finish() {
	// The shoe's frames still unanswered are sent until answered, as the
	// shoe would after the last restart.
	for i := 0; i < 50 && len(w.wl.queue) > 0 && w.c != nil && len(w.res.Violations) == 0; i++ {
		w.wl.device(w)
	}
	w.net.heal()
	var final table.State
	if w.c != nil {
		final = w.c.Snapshot()
	}
	w.stop()
	w.res.Refused = w.wl.refused
	w.res.StraysBetween, w.res.StraysPaused, w.res.StraysWaiting = w.wl.strays.n[0], w.wl.strays.n[1], w.wl.strays.n[2]
	asideSeqs := slices.Sorted(maps.Keys(w.aside))
	liveAside := make([][]card.Card, len(asideSeqs))
	for i, s := range asideSeqs {
		liveAside[i] = w.aside[s]
		w.res.SetAside += len(liveAside[i])
	}
	if len(w.res.Violations) > 0 || len(w.wl.queue) > 0 {
		return
	}
	seqs := make([]uint64, 0, len(w.settled))
	for s := range w.settled {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	live := make([]*round.Settlement, len(seqs))
	liveCrowd := make([][]table.PlayerNet, len(seqs))
	for i, s := range seqs {
		live[i], liveCrowd[i] = w.settled[s], w.crowd[s]
	}
	w.res.Rounds = len(live)
	for _, s := range live {
		if s.Chunks > 0 {
			w.res.Crowds++
		}
	}
	for i, s := range live {
		if why := conservedAny(s, liveCrowd[i], w.wl.betsOf(i+1)); why != "" {
			w.violate("money is conserved", fmt.Sprintf("round %d: %s", i+1, why))
			return
		}
	}

	ref, err := newReference(w.options())
	if err != nil {
		w.violate("setup", err.Error())
		return
	}
	ref.trace = w.trace
	rw := newWorkload(w.opts.Seed, w.rs, false)
	points := w.points
	rw.onDevice = func(k int, st table.State) {
		for len(points) > 0 && points[0].at == k {
			// A card held while the table was paused books at once and
			// burns (003) only at the resume.
			got, want := points[0].shoe, st.Shoe
			got.BurnPending, want.BurnPending = 0, 0
			if got != want {
				ref.violate("the shoe's inventory after a restart is the fault-free run's",
					fmt.Sprintf("after %d shoe frames: restarted table books %+v, fault-free %+v", k, points[0].shoe, st.Shoe))
			}
			points = points[1:]
		}
	}
	for n := 0; n < 20*w.opts.Steps && len(ref.bad) == 0 && (len(ref.settled) < len(live) || rw.acked < w.wl.acked); n++ {
		rw.step(ref, n)
	}
	w.res.Violations = append(w.res.Violations, ref.bad...)
	if len(ref.bad) > 0 {
		return
	}
	if len(points) > 0 && points[0].at <= rw.acked {
		w.violate("the shoe's inventory after a restart is the fault-free run's",
			fmt.Sprintf("the fault-free run never answered shoe frame %d", points[0].at))
		return
	}
	if rw.acked == w.wl.acked && final.Misread == "" && final.Shoe != ref.state().Shoe {
		w.violate("every card pulled is applied exactly once",
			fmt.Sprintf("after %d shoe frames the table books %+v, the fault-free run %+v", rw.acked, final.Shoe, ref.state().Shoe))
		return
	}
	for i, s := range ref.settled {
		if why := conservedAny(s, ref.crowd[i], rw.betsOf(i+1)); why != "" {
			w.violate("money is conserved", fmt.Sprintf("fault-free run, round %d: %s", i+1, why))
			return
		}
	}
	for i := range min(len(live), len(ref.settled)) {
		a, _ := json.Marshal(emptyNil(live[i]))
		b, _ := json.Marshal(emptyNil(ref.settled[i]))
		ca, _ := json.Marshal(liveCrowd[i])
		cb, _ := json.Marshal(ref.crowd[i])
		if string(a) != string(b) || string(ca) != string(cb) {
			w.violate("settlements equal the fault-free run's", fmt.Sprintf("round %d: %s, fault-free %s", i+1, live[i], ref.settled[i]))
			return
		}
	}
	if why := compareAside(liveAside, ref.aside); why != "" {
		w.violate("the cards set aside are the fault-free run's", why)
		return
	}
	if len(ref.settled) < len(live) {
		w.violate("settlements equal the fault-free run's", fmt.Sprintf("%d rounds settled, the fault-free run %d", len(live), len(ref.settled)))
	}
}

// betsOf is round r's bets (r from 1), nil when unknown.
func (wl *workload) betsOf(r int) []table.Bet {
	if r-1 < len(wl.roundBets) {
		return wl.roundBets[r-1]
	}
	return nil
}

// conservedAny checks a round's money: a table of players by its seat
// results (conserved), a crowd by its players' nets from the chunks
// (conservedCrowd).
func conservedAny(s *round.Settlement, players []table.PlayerNet, bets []table.Bet) string {
	if s.Chunks > 0 {
		return conservedCrowd(s, players, bets)
	}
	return conserved(s, bets)
}

// conservedCrowd checks a crowd's round from its chunks, in integer minor
// units: one result per bet, by slot (the bet's index); each player
// staked at least his bet and is paid stake + net >= 0 (nothing when
// voided); the nets add up to the round's, so stakes in = payouts + the
// house's result.
func conservedCrowd(s *round.Settlement, players []table.PlayerNet, bets []table.Bet) string {
	if len(players) != s.Players {
		return fmt.Sprintf("a crowd of %d players in the summary, %d in its chunks", s.Players, len(players))
	}
	if bets != nil && len(players) != len(bets) {
		return fmt.Sprintf("%d player results for %d bets", len(players), len(bets))
	}
	var stakes, payouts int64
	for _, p := range players {
		if bets != nil {
			if p.Slot < 0 || p.Slot >= len(bets) || bets[p.Slot].Player != p.Player || bets[p.Slot].Seat != p.Seat {
				return fmt.Sprintf("slot %d (seat %d player %s): a wager nobody placed", p.Slot, p.Seat, p.Player)
			}
			placed := bets[p.Slot].Main
			for _, v := range bets[p.Slot].Side {
				placed += v
			}
			if p.Staked < placed {
				return fmt.Sprintf("slot %d player %s: staked %d, bet %d", p.Slot, p.Player, p.Staked, placed)
			}
		}
		if p.Staked+p.Net < 0 {
			return fmt.Sprintf("slot %d player %s: stake %d, net %d pays out less than nothing", p.Slot, p.Player, p.Staked, p.Net)
		}
		if s.Void && p.Net != 0 {
			return fmt.Sprintf("slot %d player %s: voided, net %d", p.Slot, p.Player, p.Net)
		}
		stakes += p.Staked
		payouts += p.Staked + p.Net
	}
	if house := stakes - payouts; house != -s.Net {
		return fmt.Sprintf("stakes in %d != payouts %d + house result %d", stakes, payouts, -s.Net)
	}
	return ""
}

// conserved checks a round's money in integer minor units: the wagers
// are the bets placed (doubled or split from them), every wager pays out
// stake + net >= 0 to its player, the nets add up per hand, per seat and
// for the round, so stakes in = payouts + the house's result (-Net); a
// voided round returns every wager.
func conserved(s *round.Settlement, bets []table.Bet) string {
	var stakes, payouts, net int64
	wager := func(stake, n int64, what string) string {
		if stake < 0 || stake+n < 0 {
			return fmt.Sprintf("%s: stake %d, net %d pays out less than nothing", what, stake, n)
		}
		if s.Void && n != 0 {
			return fmt.Sprintf("%s: voided, net %d", what, n)
		}
		stakes += stake
		payouts += stake + n
		return ""
	}
	if bets != nil && len(s.Seats) != len(bets) {
		return fmt.Sprintf("%d seat results for %d bets", len(s.Seats), len(bets))
	}
	for _, sr := range s.Seats {
		var b *table.Bet
		for i := range bets {
			if bets[i].Seat == sr.Seat && bets[i].Player == sr.Player && bets[i].Behind == sr.Behind {
				b = &bets[i]
			}
		}
		if bets != nil && b == nil {
			return fmt.Sprintf("seat %d player %s: a wager nobody placed", sr.Seat, sr.Player)
		}
		var main int64
		for k, h := range sr.Hands {
			what := fmt.Sprintf("seat %d player %s hand %d", sr.Seat, sr.Player, k+1)
			if why := wager(h.Stake, h.Net, what); why != "" {
				return why
			}
			// The player's stake is the bet, or twice it doubled; a free
			// double or split (002) is the house's (Free), not his.
			if whole := h.Stake + h.Free; b != nil && (h.Stake != b.Main && h.Stake != 0 && h.Stake != 2*b.Main ||
				whole != b.Main && whole != 2*b.Main || h.Free < 0) {
				return fmt.Sprintf("%s: stake %d (free %d) from a bet of %d", what, h.Stake, h.Free, b.Main)
			}
			main += h.Net
		}
		if main != sr.MainNet {
			return fmt.Sprintf("seat %d player %s: hands net %d, main net %d", sr.Seat, sr.Player, main, sr.MainNet)
		}
		seat := main
		for _, sd := range sr.Side {
			if why := wager(sd.Stake, sd.Net, fmt.Sprintf("seat %d %s", sr.Seat, sd.Kind)); why != "" {
				return why
			}
			if b != nil && b.Side[string(sd.Kind)] != sd.Stake {
				return fmt.Sprintf("seat %d player %s: side bet %s stake %d, bet %d", sr.Seat, sr.Player, sd.Kind, sd.Stake, b.Side[string(sd.Kind)])
			}
			seat += sd.Net
		}
		if sr.Insurance != nil {
			if why := wager(sr.Insurance.Stake, sr.Insurance.Net, fmt.Sprintf("seat %d insurance", sr.Seat)); why != "" {
				return why
			}
			seat += sr.Insurance.Net
		}
		if b != nil && !s.Void && len(sr.Side) != len(b.Side) {
			return fmt.Sprintf("seat %d player %s: %d side bets placed, %d settled", sr.Seat, sr.Player, len(b.Side), len(sr.Side))
		}
		if seat != sr.Net {
			return fmt.Sprintf("seat %d player %s: wagers net %d, seat net %d", sr.Seat, sr.Player, seat, sr.Net)
		}
		net += seat
	}
	if net != s.Net {
		return fmt.Sprintf("seats net %d, round net %d", net, s.Net)
	}
	if house := stakes - payouts; house != -s.Net {
		return fmt.Sprintf("stakes in %d != payouts %d + house result %d", stakes, payouts, -s.Net)
	}
	return ""
}

// emptyNil is s with its empty lists (no seats: a crowd's summary; no
// dealer's cards: a void before the deal) as nil, which a copy of it may
// hold as empty lists, which JSON would tell apart.
func emptyNil(s *round.Settlement) *round.Settlement {
	if s == nil {
		return s
	}
	c := *s
	if len(c.Seats) == 0 {
		c.Seats = nil
	}
	if len(c.Dealer.Cards) == 0 {
		c.Dealer.Cards = nil
	}
	return &c
}
