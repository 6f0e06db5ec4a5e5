package world

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// side is a table the workload plays: the live daemon of the world (its
// controller on the simulated disk, restarted after faults) or the
// reference, the bare state machine of the same game with no fault at all.
// The same workload on both must give the same rounds.
type side interface {
	// state is the table as its last input left it.
	state() table.State
	// submit hands one input to the table. errRestarted: no verdict, the
	// daemon restarted (the input may or may not be journaled).
	submit(in table.Input) error
	// fire lets the running timer's deadline pass (its input is taken
	// before fire returns); tick lets time pass between two inputs, never
	// as far as a deadline, so that no timer fires unless the workload
	// means it to, in both runs alike.
	fire()
	tick()
	// shoe sends one of the shoe's frames and returns the table's
	// verdict (errRestarted: none, the shoe keeps the frame).
	shoe(d devInput) error
	tracef(format string, args ...any)
	// violate records an invariant that did not hold.
	violate(inv, detail string)
}

// The device session of the simulated shoe: its frames are applied once
// (table.Machine drops a (Device, DeviceSeq) it has applied).
const shoeDevice = "sim-shoe/1"

// devInput is a frame of the shoe not answered yet: the shoe keeps it and
// sends it again after a restart.
type devInput struct {
	in      table.Input
	card    card.Card // the physical card, for a card or a misread
	misread bool
	pulled  bool   // a card out of the shoe (counts for the inventory)
	stray   bool   // pulled by mistake (strays.go): it may fit no round
	seq     uint64 // the workload's number of the frame
}

// seatPlayer names one player's position.
type seatPlayer struct {
	seat   int
	player string
}

// workload is the seeded dealer, players and supervisor. Every choice is
// drawn from the seed and the logical point of the game (round, seat,
// player, how many decisions before), never from the step count, so the
// live run, which repeats what a restart left unanswered, makes the same
// choices as the fault-free reference.
type workload struct {
	seed   uint64
	rs     *rules.Set
	faults bool // the live run: misreads and illegal inputs happen

	shoeN   int
	shoeID  string
	shoe    []card.Card // cards left in the physical shoe
	out     int         // cards out of this shoe
	queue   []devInput
	devSeq  uint64
	acked   int // device frames answered (the inventory's point)
	pulled  int // cards out of every shoe, answered
	misread card.Card

	round     int // the round ordinal the counters below are for
	cards     int // cards pulled for this round
	decisions int
	timeouts  int
	made      map[seatPlayer]int
	insured   map[seatPlayer]bool
	supDone   map[int]bool
	bets      []table.Bet
	reshuffle int // reshuffled games: rounds settled when the shoe was last changed
	supN      int
	refused   int
	illegal   int
	foreign   bool // a card of another shoe came out (the line's fault): the supervisor sets it aside
	decks     map[card.Card]int
	betsID    string         // the last bets accepted
	tries     map[string]int // command ids refused, and how often
	strays    strays         // the stray cards the dealer pulls by mistake (strays.go)
	// cut is the decision whose answer a restart cut off, offered again
	// as it was before any other (decide).
	cut *cutDecision

	// roundID is the newest round the workload has seen in the state,
	// prevRound the one before it: a supervisor's late void names it.
	roundID, prevRound string

	// Bets per round ordinal (index r-1), for the money checks.
	roundBets [][]table.Bet
	// onDevice, when set, sees the table after each answered device frame.
	onDevice func(k int, st table.State)
}

func newWorkload(seed uint64, rs *rules.Set, faults bool) *workload {
	return &workload{seed: seed, rs: rs, faults: faults, made: map[seatPlayer]int{}, insured: map[seatPlayer]bool{},
		supDone: map[int]bool{}, reshuffle: -1, tries: map[string]int{}, strays: newStrays()}
}

// roll is a number in [0, n) drawn from the seed and a logical point.
func (wl *workload) roll(n int, parts ...uint64) int {
	h := wl.seed ^ 0x9e3779b97f4a7c15
	for _, p := range parts {
		h ^= p + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h = mix(h)
	}
	return int(h % uint64(n))
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func str(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// step offers the input a dealer, the players or a supervisor would give
// the table now. n is the step's number (for the illegal inputs only,
// which change nothing).
func (wl *workload) step(t side, n int) {
	t.tick()
	if len(wl.queue) > 0 {
		wl.device(t)
		return
	}
	if wl.shoeN == 0 {
		// The dealer puts the first shoe in.
		wl.changeShoe()
		wl.device(t)
		return
	}
	st := t.state()
	wl.counters(st)
	if wl.misread.Valid() && st.Misread == "" {
		// The correction was applied though a restart cut its answer off.
		wl.misread = card.Card{}
		wl.pulled++
	}
	if !st.Paused {
		wl.foreign = false // set aside
	}
	if wl.faults && wl.roll(6, uint64(n), 'x') == 0 {
		wl.tryIllegal(t, st, n)
		st = t.state()
	}
	switch {
	case st.Paused && wl.strays.pending != nil:
		wl.pullWhilePaused(t)
	case st.Paused:
		wl.supervise(t, st)
	case st.Phase == table.PhaseClosed:
		wl.changeShoe()
		wl.device(t)
	case st.Phase == table.PhaseIdle:
		wl.submit(t, table.Supervisor{Command: "open", By: "sim", ID: fmt.Sprintf("o%d", st.Rounds)})
	case wl.rs.ReshuffleEachRound && (st.Phase == table.PhaseBetting || st.Phase == table.PhaseLastCall) &&
		st.Rounds > 0 && wl.reshuffle != st.Rounds:
		// The settlement's pause ended before the workload saw it: a
		// restart in it with the wall clock stepped forward since the
		// players' stretch began, whose deadline (the journal's, in the
		// time before the step) looked passed and fired at once (seed
		// 1211). The dealer reshuffles before the bets, as the
		// fault-free run did in the pause.
		wl.reshuffle = st.Rounds
		wl.changeShoe()
		wl.device(t)
	case st.Phase == table.PhaseBetting || st.Phase == table.PhaseLastCall:
		wl.bet(t)
	case st.Phase == table.PhaseDealing:
		wl.play(t, st)
	case wl.rs.ReshuffleEachRound && st.Phase == table.PhaseSettled && wl.reshuffle != st.Rounds:
		// Every card goes back after the round: the next round deals
		// from a new shuffle.
		wl.reshuffle = st.Rounds
		wl.changeShoe()
		wl.device(t)
	default:
		t.fire()
	}
}

// counters start the per-round choices when a new round comes.
func (wl *workload) counters(st table.State) {
	if id := st.Round.ID; id != "" && id != wl.roundID {
		wl.prevRound, wl.roundID = wl.roundID, id
	}
	if r := st.Rounds + 1; r != wl.round {
		wl.round, wl.cards, wl.decisions, wl.timeouts = r, 0, 0, 0
		clear(wl.made)
		clear(wl.insured)
		clear(wl.supDone)
		wl.bets = nil
		wl.cut = nil
	}
}

// cutDecision is a player's decision whose answer a restart cut off.
type cutDecision struct {
	p  seatPlayer
	in table.Decision
}

// decideAgain offers the decision a restart cut the answer of again, as
// it was (its id), and reports whether the step is done. Journaled before
// the restart, it is answered by its id and counts as made; not, the
// round still waits for it. Drawing the decision anew instead could draw
// another: the player's count of decisions made had not moved, and when
// the cut one was a fallback (a stand after a double refused) that the
// table had applied, the next hand (a split's second) could take the
// double refused before (seed 968: the fault-free run stood and then
// stood again, the live run stood and doubled).
func (wl *workload) decideAgain(t side) bool {
	c := wl.cut
	if c == nil {
		return false
	}
	switch err := wl.submit(t, c.in); {
	case errors.Is(err, errRestarted):
		return true
	case err == nil:
		wl.cut = nil
		wl.made[c.p]++
		wl.decisions++
		return true
	}
	wl.cut = nil // refused: the round has moved past it
	return false
}

// submit offers one input and checks a refusal: it is typed and changed
// nothing.
func (wl *workload) submit(t side, in table.Input) error {
	// A command refused keeps its verdict under its id (the table
	// remembers refusals too): the same command offered again later is
	// a new command, with an id of its own. One whose answer a restart
	// cut off is offered again with its id.
	id := table.CommandID(in)
	if n := wl.tries[id]; id != "" && n > 0 {
		in = withID(in, fmt.Sprintf("%s/%d", id, n))
	}
	err := wl.offer(t, in)
	if err != nil && id != "" && !errors.Is(err, errRestarted) && !applied(err) {
		wl.tries[id]++
	}
	return err
}

// offer offers one input as it is and checks a refusal: it is typed and
// changed nothing.
func (wl *workload) offer(t side, in table.Input) error {
	before := t.state()
	err := t.submit(in)
	if err == nil || errors.Is(err, errRestarted) || applied(err) {
		return err
	}
	wl.refused++
	after := t.state()
	if !typed(err) {
		t.violate("a refused input has a typed error", fmt.Sprintf("%s: %v", in.Kind(), err))
	}
	if after.Seq != before.Seq || !reflect.DeepEqual(after, before) {
		t.violate("a refused input changes nothing", fmt.Sprintf("%s refused (%v) but the state changed: seq %d -> %d", in.Kind(), err, before.Seq, after.Seq))
	}
	return err
}

// applied reports an error that is the fault of an input the table
// applied (journaled and reported): not a refusal.
func applied(err error) bool {
	return errors.Is(err, table.ErrIntegrity) || errors.Is(err, table.ErrNotShuffled) || errors.Is(err, round.ErrUnexpectedCard)
}

var refusals = []error{round.ErrIllegalAction, round.ErrOutOfTurn, round.ErrDuplicate, round.ErrBetLimit,
	round.ErrRoundCap, round.ErrBadBet, round.ErrFinished, table.ErrPaused, table.ErrNoMisread,
	table.ErrCommandIDReused, table.ErrStaleTimer, table.ErrNotPaused, table.ErrDuplicateFrame, table.ErrUnknownInput,
	table.ErrShoeDown, table.ErrShoeUp, table.ErrMisreadPending, table.ErrAlarmRepeated, table.ErrMisreadAt, table.ErrWrongRound}

func typed(err error) bool {
	for _, s := range refusals {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// device sends the shoe's oldest unanswered frame. A frame the table
// applied (or had applied: a duplicate) leaves the shoe's memory.
func (wl *workload) device(t side) {
	d := wl.queue[0]
	err := t.shoe(d)
	switch {
	case errors.Is(err, errRestarted):
		return // the shoe sends it again
	case err != nil && !errors.Is(err, table.ErrDuplicateFrame) && !(d.stray && errors.Is(err, round.ErrUnexpectedCard)):
		// A stray card that does not fit the round is applied: it stops
		// the table and heads the set-aside list (strays.go).
		t.violate("every card fits the table", fmt.Sprintf("%s: %v", d.in.Kind(), err))
	}
	wl.queue = wl.queue[1:]
	wl.acked++
	if d.misread {
		wl.misread = d.card
	}
	if d.pulled && !d.misread {
		wl.pulled++
	}
	if wl.onDevice != nil {
		wl.onDevice(wl.acked, t.state())
	}
}

func (wl *workload) frame(d devInput) {
	wl.devSeq++
	d.seq = wl.devSeq
	switch v := d.in.(type) {
	case table.CardDrawn:
		v.Device, v.DeviceSeq = shoeDevice, wl.devSeq
		d.in = v
	case table.DeviceAlarm:
		v.Device, v.DeviceSeq = shoeDevice, wl.devSeq
		d.in = v
	case table.CutCardSeen:
		v.Device, v.DeviceSeq = shoeDevice, wl.devSeq
		d.in = v
	case table.ShoeChanged:
		v.Device, v.DeviceSeq = shoeDevice, wl.devSeq
		d.in = v
	case table.ShoeIn:
		v.Device, v.DeviceSeq = shoeDevice, wl.devSeq
		d.in = v
	case table.ShoeOut:
		v.Device, v.DeviceSeq = shoeDevice, wl.devSeq
		d.in = v
	}
	wl.queue = append(wl.queue, d)
}

// changeShoe takes the shoe out (the count of the cards left in it) and
// puts a new shuffle in: SHOE_OUT, SHOE_IN, SHOE_ID. A game that
// reshuffles every round only names the new shuffle.
func (wl *workload) changeShoe() {
	if !wl.rs.ReshuffleEachRound {
		if wl.shoeN > 0 {
			wl.frame(devInput{in: table.ShoeOut{Returned: len(wl.shoe)}})
		}
		wl.frame(devInput{in: table.ShoeIn{}})
	}
	wl.shoeN++
	wl.shoe = card.NewShoe(wl.rs.Decks, rand.New(rand.NewPCG(wl.seed, uint64(wl.shoeN))))
	wl.out = 0
	wl.decks = map[card.Card]int{}
	wl.shoeID = fmt.Sprintf("shoe-%d", wl.shoeN)
	wl.frame(devInput{in: table.ShoeChanged{ShoeID: wl.shoeID}})
}

// pull takes the next card out of the shoe: a card frame, or (a misread,
// live run only) a misread frame the supervisor corrects; the cut card
// follows the card at the game's penetration.
func (wl *workload) pull() { wl.pullCard(false) }

// pullCard takes the next card out of the shoe. A stray card (pulled by
// mistake, strays.go) is never misread, so the fault-free run books the
// same cards at the same frames.
func (wl *workload) pullCard(stray bool) {
	if len(wl.shoe) == 0 {
		wl.frame(devInput{in: table.CutCardSeen{Source: "shoe"}})
		return
	}
	c := wl.shoe[0]
	wl.shoe = wl.shoe[1:]
	wl.out++
	// Every physical card has its RFID code: its deck and itself.
	wl.decks[c]++
	code := string(shoeproto.AppendCode(nil, wl.decks[c], c))
	wl.cards++
	if !stray && wl.faults && wl.roll(40, uint64(wl.shoeN), uint64(wl.out), 'm') == 0 {
		wl.frame(devInput{in: table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "card misread", Pauses: true},
			card: c, misread: true, pulled: true})
	} else {
		wl.frame(devInput{in: table.CardDrawn{Card: c, ShoeID: wl.shoeID, Code: code}, card: c, pulled: true, stray: stray})
	}
	if !wl.rs.ReshuffleEachRound && wl.out == wl.rs.Penetration {
		wl.frame(devInput{in: table.CutCardSeen{Source: "shoe"}})
	}
}

// supervise answers a paused table: the misread card corrected, a card
// nobody knows voided, else a resume.
func (wl *workload) supervise(t side, st table.State) {
	wl.supN++
	switch {
	case st.Misread != "" && wl.misread.Valid():
		// Naming the card, as tablectl and the console do: a replay
		// after a restart must give it the same position.
		err := wl.submit(t, table.Supervisor{Command: "correct", By: "sim", Card: wl.misread, At: st.MisreadAt, ID: fmt.Sprintf("c%d", wl.supN)})
		if err == nil {
			wl.misread = card.Card{}
			wl.pulled++
		}
	case st.Misread != "" && wl.foreign:
		// A card of another shoe: set aside; the round waits for its card.
		if err := wl.submit(t, table.Supervisor{Command: "resume", By: "sim", ID: fmt.Sprintf("r%d", wl.supN)}); err == nil {
			wl.foreign = false
		}
	case st.Misread != "":
		// The void names the round the supervisor sees, as the console
		// and tablectl send it.
		_ = wl.submit(t, table.Supervisor{Command: "void", By: "sim", Reason: "card not known", Round: st.Round.ID, ID: fmt.Sprintf("v%d", wl.supN)})
	default:
		if err := wl.submit(t, table.Supervisor{Command: "resume", By: "sim", ID: fmt.Sprintf("r%d", wl.supN)}); err == nil {
			wl.foreign = false
		}
	}
}

// play deals the round: insurance answers, decisions, or the next card,
// with now and then a supervisor's void or pause before a card.
func (wl *workload) play(t side, st table.State) {
	next := st.Round.Next
	switch {
	case st.Round.Phase == "insurance":
		if !wl.strayWaiting(t, waitInsurance) {
			wl.insurance(t)
		}
	case strings.HasPrefix(next, "wait: seat"):
		if !wl.strayWaiting(t, waitDecision) {
			wl.decide(t, st)
		}
	case strings.HasPrefix(next, "card to") || strings.HasPrefix(next, "hole card") || strings.HasPrefix(next, "burn"):
		if !wl.supDone[wl.cards] {
			switch wl.roll(60, uint64(wl.round), uint64(wl.cards), 's') {
			case 0:
				err := wl.submit(t, table.Supervisor{Command: "void", By: "sim", Reason: "dealer error", Round: st.Round.ID, ID: fmt.Sprintf("v%d-%d", wl.round, wl.cards)})
				if !errors.Is(err, errRestarted) {
					wl.supDone[wl.cards] = true
				}
				return
			case 1, 2:
				// Now and then the dealer pulls cards while the
				// table is paused (strays.go): decided here, with
				// the pause, and pulled at the first step that
				// finds the table paused.
				wl.strayPause()
				err := wl.submit(t, table.Supervisor{Command: "pause", By: "sim", Reason: "check", ID: fmt.Sprintf("p%d-%d", wl.round, wl.cards)})
				if !errors.Is(err, errRestarted) {
					wl.supDone[wl.cards] = true
				}
				if err != nil && !errors.Is(err, errRestarted) {
					wl.strays.pending = nil // not paused: no cards pulled
				}
				return
			}
		}
		wl.pull()
		wl.device(t)
	default:
		t.fire()
	}
}

// players are the round's positions that decide, in seat order.
func (wl *workload) players() []seatPlayer {
	var out []seatPlayer
	for _, b := range wl.bets {
		if !b.Behind {
			out = append(out, seatPlayer{b.Seat, b.Player})
		}
	}
	return out
}

var actions = [...]string{"hit", "hit", "hit", "stand", "stand", "stand", "double", "split"}

// decide gives one awaited hand its decision (drawn from the player's
// count of decisions in the round); now and then the workload lets the
// decision time out instead (004 plays it by its automatic table).
func (wl *workload) decide(t side, st table.State) {
	// Drawn from the round as it stands (not from a count of timeouts
	// offered: a timer whose input met a failing journal may or may not
	// have been applied, and the table says which).
	// First the decision a restart cut the answer of: the timer's draw
	// and the next decision's are then made at the points the
	// fault-free run made them, with the player's count of decisions
	// where it was there.
	if wl.decideAgain(t) {
		return
	}
	if wl.roll(12, uint64(wl.round), viewKey(st.Round), 't') == 0 {
		wl.timeouts++
		t.fire()
		return
	}
	if seat := awaitedSeat(st.Round.Next); seat != 0 && wl.crowdAt(seat) {
		wl.decideCrowd(t, st, seat)
		return
	}
	for _, p := range wl.players() {
		k := wl.made[p]
		a := actions[wl.roll(len(actions), uint64(wl.round), uint64(p.seat), str(p.player), uint64(k), 'a')]
		for _, action := range []string{a, "stand"} {
			d := table.Decision{Seat: p.seat, Player: p.player, Action: action,
				ID: fmt.Sprintf("d%d-%d-%s-%d-%s", wl.round, p.seat, p.player, k, action)}
			err := wl.submit(t, d)
			switch {
			case errors.Is(err, errRestarted):
				wl.cut = &cutDecision{p: p, in: d}
				return
			case err == nil:
				wl.made[p]++
				wl.decisions++
				return
			case errors.Is(err, round.ErrOutOfTurn):
			default:
				continue // not allowed for this hand: stand
			}
			break
		}
	}
	// Nobody the workload knows is awaited: the timer decides.
	wl.timeouts++
	t.fire()
}

// awaitedSeat is the seat a "wait: seat N to decide" instruction names
// (0: none).
func awaitedSeat(next string) int {
	var seat int
	if _, err := fmt.Sscanf(next, "wait: seat %d to decide", &seat); err != nil {
		return 0
	}
	return seat
}

// crowdAt reports a seat with more players than get events of their own.
func (wl *workload) crowdAt(seat int) bool {
	n := 0
	for _, b := range wl.bets {
		if b.Seat == seat && !b.Behind {
			n++
		}
	}
	return n > round.CrowdPlayers
}

// crowdKey stands for a crowd seat's batches in made and insured.
func crowdKey(seat int) seatPlayer { return seatPlayer{seat, "*crowd"} }

// batch is one decisions batch for every player of a crowd seat, by
// slot (the bet's index in the round's bets), each action drawn from the
// round, the slot and the seat's count of batches: an entry not allowed
// for its hand, or for a player not awaited, is refused alone.
func (wl *workload) batch(st table.State, seat int, id string, action func(slot int) string) table.Decisions {
	d := table.Decisions{ID: id, Round: st.Round.ID}
	for slot, b := range wl.bets {
		if b.Seat == seat && !b.Behind {
			d.Entries = append(d.Entries, table.DecisionEntry{Slot: slot, Player: b.Player, Action: action(slot)})
		}
	}
	return d
}

// decideCrowd sends the awaited crowd seat a batch of decisions; a batch
// none of whose entries applies is refused whole, and the timer decides.
func (wl *workload) decideCrowd(t side, st table.State, seat int) {
	key := crowdKey(seat)
	k := wl.made[key]
	d := wl.batch(st, seat, fmt.Sprintf("D%d-%d-%d", wl.round, seat, k), func(slot int) string {
		return actions[wl.roll(len(actions), uint64(wl.round), uint64(slot), uint64(k), 'A')]
	})
	switch err := wl.submit(t, d); {
	case errors.Is(err, errRestarted):
		return
	case err == nil:
		wl.made[key]++
		wl.decisions++
		return
	}
	wl.timeouts++
	t.fire()
}

// insurance answers the offer: a crowd seat by one batch, the others
// player by player; then lets it close.
func (wl *workload) insurance(t side) {
	st := t.state()
	for _, p := range wl.players() {
		if !wl.crowdAt(p.seat) || wl.insured[crowdKey(p.seat)] {
			continue
		}
		d := wl.batch(st, p.seat, fmt.Sprintf("I%d-%d", wl.round, p.seat), func(slot int) string {
			if wl.roll(3, uint64(wl.round), uint64(slot), 'I') == 0 {
				return table.ActionInsurance
			}
			return table.ActionNoInsurance
		})
		err := wl.submit(t, d)
		if errors.Is(err, errRestarted) {
			return
		}
		wl.insured[crowdKey(p.seat)] = true
		if err == nil {
			return
		}
	}
	for _, p := range wl.players() {
		if wl.insured[p] || wl.crowdAt(p.seat) {
			continue
		}
		take := wl.roll(3, uint64(wl.round), uint64(p.seat), str(p.player), 'i') == 0
		err := wl.submit(t, table.InsuranceAnswer{Seat: p.seat, Player: p.player, Take: take,
			ID: fmt.Sprintf("i%d-%d-%s", wl.round, p.seat, p.player)})
		if errors.Is(err, errRestarted) {
			return
		}
		wl.insured[p] = true
		if err == nil {
			return
		}
	}
	t.fire()
}

// bet closes the betting with the round's bets, drawn from the round's
// ordinal: seats with side bets, a crowd on common cards (002), bets
// behind (000), one player on several positions (001, 004: over the
// round's cap now and then, refused, then within it).
func (wl *workload) bet(t side) {
	if wl.strayBetween(t) {
		return
	}
	bets := wl.makeBets()
	id := fmt.Sprintf("b%d", wl.round)
	err := wl.submit(t, table.BetsClosed{ID: id, Bets: bets})
	if err != nil && !errors.Is(err, errRestarted) {
		// Over the cap or the limits: the same bets at the minimum.
		for i := range bets {
			bets[i].Main, bets[i].Side = wl.rs.MinBet, nil
		}
		id += "-min"
		err = wl.submit(t, table.BetsClosed{ID: id, Bets: bets})
	}
	if err == nil || errors.Is(err, errRestarted) {
		// Answered, or cut off by a restart (and maybe journaled: the
		// table then deals them; else they are offered again).
		wl.betsID = id
		wl.bets = bets
		for len(wl.roundBets) < wl.round {
			wl.roundBets = append(wl.roundBets, nil)
		}
		wl.roundBets[wl.round-1] = bets
	}
}

func (wl *workload) makeBets() []table.Bet {
	rs, r := wl.rs, uint64(wl.round)
	stake := func(parts ...uint64) int64 {
		return rs.MinBet * int64(1+wl.roll(60, append(parts, 'm')...))
	}
	side := func(parts ...uint64) map[string]int64 {
		if len(rs.SideBets) == 0 || wl.roll(3, append(parts, 's')...) != 0 {
			return nil
		}
		sb := rs.SideBets[wl.roll(len(rs.SideBets), append(parts, 'k')...)]
		return map[string]int64{string(sb.Kind): sb.Min * int64(1+wl.roll(5, append(parts, 'v')...))}
	}
	var bets []table.Bet
	seats := 1 + wl.roll(min(rs.MaxSeats, 4), r, 'n')
	first := 1 + wl.roll(rs.MaxSeats-seats+1, r, 'f')
	crowdSeat := 0
	if rs.CommonDraw && wl.roll(4, r, 'C') == 0 {
		// A round in four, the first seat is a crowd: more players than
		// get events of their own, deciding by batches (decideCrowd).
		crowdSeat = first
	}
	for s := first; s < first+seats; s++ {
		crowd := 1
		if rs.CommonDraw {
			crowd = 1 + wl.roll(6, r, uint64(s), 'c')
		}
		if s == crowdSeat {
			crowd = round.CrowdPlayers + 1 + wl.roll(24, r, 'z')
		}
		for k := 0; k < crowd; k++ {
			player := fmt.Sprintf("p%d", s)
			if k > 0 {
				player = fmt.Sprintf("p%d-%d", s, k)
			}
			if rs.OnePlayer {
				player = "p1"
			}
			b := table.Bet{Seat: s, Player: player, Main: stake(r, uint64(s), uint64(k)), Side: side(r, uint64(s), uint64(k))}
			if rs.RoundCap > 0 {
				// Positions of one player: their sum may pass the cap.
				b.Main = rs.MinBet * int64(1+wl.roll(400, r, uint64(s), 'M'))
			}
			bets = append(bets, b)
		}
	}
	if rs.BetBehind {
		for k := 0; k < wl.roll(3, r, 'b'); k++ {
			s := first + wl.roll(seats, r, uint64(k), 'B')
			bets = append(bets, table.Bet{Seat: s, Player: fmt.Sprintf("q%d", k), Behind: true, Main: stake(r, uint64(k), 'q'),
				FollowDouble: wl.roll(2, r, uint64(k), 'D') == 0, FollowSplit: wl.roll(2, r, uint64(k), 'S') == 0})
		}
	}
	return bets
}

// tryIllegal offers an input the table must refuse, with a typed error
// and no change (submit checks both); one the table accepts is a
// violation.
func (wl *workload) tryIllegal(t side, st table.State, n int) {
	var in table.Input
	id := fmt.Sprintf("x%d", n)
	switch k := wl.roll(7, uint64(n), 'k'); {
	case k == 0:
		in = table.Decision{Seat: 1, Player: "p1", Action: "surrender", ID: id}
	case k == 1:
		in = table.Supervisor{Command: "fly", By: "sim", ID: id}
	case k == 2 && !st.Paused:
		in = table.Supervisor{Command: "resume", By: "sim", ID: id}
	case k == 3 && st.Misread == "":
		in = table.Supervisor{Command: "correct", By: "sim", Card: card.MustParse("As"), ID: id}
	case k == 3 && st.MisreadAt > 0:
		// A correct naming a card that does not wait (a double click's
		// second, say): refused, nothing changes.
		in = table.Supervisor{Command: "correct", By: "sim", Card: card.MustParse("As"), At: st.MisreadAt + 1000, ID: id}
	case k == 6 && st.Phase == table.PhaseDealing && n%2 == 1 && wl.prevRound != "" && wl.prevRound != st.Round.ID:
		// A supervisor's void for the round before, arriving while the
		// next one deals (a late click): refused wrong_round, the round
		// in play untouched.
		in = table.Supervisor{Command: "void", By: "sim", Reason: "late", Round: wl.prevRound, ID: id}
	case k == 6 && st.Phase == table.PhaseSettled && st.Round.ID != "":
		// A void for the round the state shows settled: nothing to void.
		in = table.Supervisor{Command: "void", By: "sim", Reason: "late", Round: st.Round.ID, ID: id}
	case k == 4 && st.Phase == table.PhaseDealing:
		in = table.BetsClosed{ID: id, Bets: []table.Bet{{Seat: 1, Player: "p1", Main: wl.rs.MinBet}}}
	case k == 5 && (st.Phase == table.PhaseBetting || st.Phase == table.PhaseLastCall):
		in = table.BetsClosed{ID: id, Bets: []table.Bet{{Seat: 1, Player: "p1", Main: wl.rs.MinBet - 1}}}
	case k == 6 && wl.betsID != "" && st.Phase == table.PhaseDealing:
		// The bets' id, with another body.
		in = table.Decision{Seat: 1, Player: "p1", Action: "hit", ID: wl.betsID}
	case k == 6 && (st.Phase == table.PhaseBetting || st.Phase == table.PhaseLastCall):
		// No round in play; half the time the void names the round
		// that just settled, as a late click does.
		in = table.Supervisor{Command: "void", By: "sim", ID: id}
		if n%2 == 1 {
			in = table.Supervisor{Command: "void", By: "sim", Round: wl.roundID, ID: id}
		}
	default:
		in = table.Decision{Seat: 9, Player: "nobody", Action: "hit", ID: id}
	}
	wl.illegal++
	if err := wl.offer(t, in); err == nil {
		t.violate("an illegal input is refused", fmt.Sprintf("%s accepted", mustEncode(in)))
	}
}

func mustEncode(in table.Input) string {
	b, _ := table.EncodeInput(in)
	return string(b)
}

// viewKey is a hash of what the round shows (its id aside, which is a
// time): the same round at the same point has the same key in both runs.
func viewKey(v round.View) uint64 {
	h := str(v.Next)
	add := func(cs []card.Card) {
		for _, c := range cs {
			h = mix(h ^ uint64(c.Index()+1))
		}
		h = mix(h ^ 0xff)
	}
	add(v.Dealer.Cards)
	for _, s := range v.Seats {
		h = mix(h ^ uint64(s.Seat))
		add(s.Cards)
		for _, hv := range s.Hands {
			add(hv.Cards)
			if hv.Done {
				h = mix(h ^ 0xd)
			}
		}
	}
	return h
}

// withID is a command with another id.
func withID(in table.Input, id string) table.Input {
	switch v := in.(type) {
	case table.BetsClosed:
		v.ID = id
		return v
	case table.Decision:
		v.ID = id
		return v
	case table.InsuranceAnswer:
		v.ID = id
		return v
	case table.Supervisor:
		v.ID = id
		return v
	case table.Decisions:
		v.ID = id
		return v
	}
	return in
}
