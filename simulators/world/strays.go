package world

import (
	"fmt"
	"strings"

	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// Stray cards (rules epoch 3, table/machine_aside.go): the dealer pulls
// cards the round cannot use, which cost the table one stop and one
// resume, however many. Two kinds:
//
//   - between rounds: before the bets of one round in ten, one to three
//     cards pulled in one go. The first does not fit (unexpected_card,
//     the table stops: the first of the set-aside list), the others come
//     while it is paused and needs no card (set aside at once); the
//     supervisor's one resume names them all in one card_set_aside alarm.
//     (003: the first card of a new shoe is the burn.)
//   - while paused: after one supervisor's pause in two before a card,
//     one to three cards pulled while the table is paused. The round
//     needs one, so they are held; the resume gives the round as many as
//     it still needs, in the order drawn, and sets the rest aside.
//   - while a decision or insurance waits: at one point in sixteen where
//     the round waits for a seat's decision, and at one insurance offer
//     in three (rarer: an Ace up), one to three cards pulled in one go.
//     The round needs no card then: the first stops the table
//     (unexpected_card) and heads the set-aside list, the others join
//     it; the supervisor's resume names them all, and the round goes on
//     waiting for the same answer.
//
// Both runs must pull the same cards at the same point of the game, or
// every later frame is compared one off (the first workload, 1212166,
// decided on seeing a round settled, which a restart or a pause in the
// live run can skip: seeds 8101 and 8519). So the decision is drawn from
// the round's ordinal and the cards pulled for it (the pause's point),
// made where both runs always pass (the bets of round N: no round is
// dealt without them; the supervisor's pause before card k), and the
// workload remembers, in its own memory, which it has pulled: the dealer
// is not the daemon, and a restart (whose table is the journal's replay)
// makes it neither pull again nor skip. A pull after a pause is made at
// the first step that finds the table paused, whatever paused it: the
// supervisor's pause, or, when a restart cut its answer off, the same
// pause replayed or the restart's own pause of a round cut in the middle
// (the round waits for the same card either way). A pause answered again
// by its id (journaled before a restart the workload resumed after) does
// not pause: the pull was made while the replayed pause held.

// strays is the workload's memory of the stray cards it pulled.
type strays struct {
	between map[int]bool    // rounds whose bets came after their strays (by ordinal)
	paused  map[[2]int]bool // pauses (round, cards pulled for it) that had strays
	pending *[2]int         // a pause decided to have strays, not pulled yet
	// waiting are the points (round, cards pulled for it, insurance or
	// decision) where strays came while the round waited for a player.
	waiting map[[3]int]bool
	n       [3]int // cards pulled between rounds, while paused, while a player's answer waited
	// pulled, when set (the live run), is told of each pull: the world
	// cuts the power amid the strays now and then.
	pulled func()
}

func newStrays() strays {
	return strays{between: map[int]bool{}, paused: map[[2]int]bool{}, waiting: map[[3]int]bool{}}
}

// strayBetween pulls the strays before round wl.round's bets, once, in
// one round in ten; reports whether it did (the bets wait for the next
// step: the table stops on the first card).
func (wl *workload) strayBetween(t side) bool {
	r := wl.round
	if wl.strays.between[r] || wl.roll(10, uint64(r), 'y') != 0 {
		return false
	}
	wl.strays.between[r] = true
	n := 1 + wl.roll(3, uint64(r), 'z')
	t.tracef("strays: the dealer pulls %d card(s) by mistake before round %d's bets", n, r)
	wl.pullStrays(n, 0)
	wl.device(t)
	return true
}

// strayPause decides, with the supervisor's pause before card wl.cards of
// round wl.round, whether cards are pulled while it holds (one pause in
// two); the pull waits for a step that finds the table paused.
func (wl *workload) strayPause() {
	key := [2]int{wl.round, wl.cards}
	if wl.strays.paused[key] || wl.roll(2, uint64(key[0]), uint64(key[1]), 'w') != 0 {
		return
	}
	wl.strays.pending = &key
}

// pullWhilePaused pulls the strays of the pending pause: the table is
// paused and its round waits for card key[1].
func (wl *workload) pullWhilePaused(t side) {
	key := *wl.strays.pending
	wl.strays.pending = nil
	wl.strays.paused[key] = true
	n := 1 + wl.roll(3, uint64(key[0]), uint64(key[1]), 'W')
	t.tracef("strays: the dealer pulls %d card(s) while round %d is paused before its card %d", n, key[0], key[1])
	wl.pullStrays(n, 1)
	wl.device(t)
}

// The two answers a round waits for, in strayWaiting's key.
const (
	waitInsurance = iota
	waitDecision
)

// strayWaiting pulls strays while the round waits for an answer (what:
// waitInsurance or waitDecision), at one insurance offer in three and
// one decision point in sixteen, once per point: the round's ordinal,
// the cards pulled for it and what it waits for, so the first step that
// finds the round waiting there decides, in both runs alike (every card
// and answer before it is the same), and a restart neither pulls them
// again nor skips them. It reports whether it pulled (the answer waits
// for the next step: the table stops on the first card).
func (wl *workload) strayWaiting(t side, what int) bool {
	key := [3]int{wl.round, wl.cards, what}
	if wl.strays.waiting[key] || wl.roll([...]int{3, 16}[what], uint64(key[0]), uint64(key[1]), uint64(key[2]), 'q') != 0 {
		return false
	}
	wl.strays.waiting[key] = true
	n := 1 + wl.roll(3, uint64(key[0]), uint64(key[1]), uint64(key[2]), 'Q')
	t.tracef("strays: the dealer pulls %d card(s) while round %d waits for %s after its card %d", n, key[0], [...]string{"insurance", "a decision"}[what], key[1])
	wl.pullStrays(n, 2)
	wl.device(t)
	return true
}

// pullStrays pulls n stray cards, counted as kind (strays.n's index).
func (wl *workload) pullStrays(n, kind int) {
	for range n {
		if len(wl.shoe) > 0 {
			wl.strays.n[kind]++
		}
		wl.pullCard(true)
	}
	if wl.strays.pulled != nil {
		wl.strays.pulled()
	}
}

// asideCards are the cards a card_set_aside alarm of the set-aside list
// names ("3 cards set aside (7h 2c Ks): ..."), false for any other alarm
// (a card set aside after a correction names no card).
func asideCards(b table.Body) ([]card.Card, bool) {
	a, ok := b.(table.Alarm)
	if !ok || a.Code != "card_set_aside" {
		return nil, false
	}
	_, rest, ok := strings.Cut(a.Message, " set aside (")
	if !ok {
		return nil, false
	}
	list, _, ok := strings.Cut(rest, ")")
	if !ok {
		return nil, false
	}
	var cs []card.Card
	for _, f := range strings.Fields(list) {
		c, err := card.Parse(f)
		if err != nil {
			return nil, false
		}
		cs = append(cs, c)
	}
	return cs, len(cs) > 0
}

// compareAside checks the cards the live table set aside against the
// fault-free run's, list by list in the order announced: a set-aside list
// lost, doubled or reordered by a restart, a power cut or a journal fault
// shows here. One run may have gone on further than the other: the
// shorter is a prefix of the longer.
func compareAside(live, ref [][]card.Card) string {
	for i := range min(len(live), len(ref)) {
		if cardList(live[i]) != cardList(ref[i]) {
			return fmt.Sprintf("set-aside list %d: the table named %s, the fault-free run %s", i+1, cardList(live[i]), cardList(ref[i]))
		}
	}
	return ""
}

func cardList(cs []card.Card) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}
