package round

import "github.com/livetable/livetable/table/card"

// The crowd of a common-draw game (002, Infinite): thousands of players
// share one box's cards. Each player is a slot, an integer set once when
// the round starts (his bet's index in Start's bets); a batch of the
// crowd's decisions names players by slot, so a decision costs no lookup
// by string id and no allocation, and each entry gets its verdict as a
// code, not as a formatted error. The per-player events of a crowd's box
// (decision requested and made, insurance answered; cards and finished
// hands already were not) are not emitted: Prompts sums the hands that
// wait, by situation, and the settlement lists every player.

// CrowdPlayers is the most players a box may have and still get events of
// its own per player: a box with more is a crowd (see Crowd).
const CrowdPlayers = 16

// slotRef is where a slot's player is: the box's index in Round.boxes and
// the player's in the box's players; -1 for a bet that never entered the
// round (a bet behind an empty seat, refunded).
type slotRef struct{ box, idx int32 }

func growSlots(s []slotRef, n int) []slotRef {
	if cap(s) < n {
		s = make([]slotRef, n)
	}
	s = s[:n]
	for i := range s {
		s[i] = slotRef{-1, -1}
	}
	return s
}

// nextMark returns a new mark for r.mark, sized to the round's slots: a
// slot whose mark equals it was seen in the pass that took it. Nothing is
// cleared between passes.
func (r *Round) nextMark() uint32 {
	if len(r.mark) < len(r.slots) {
		r.mark = append(r.mark, make([]uint32, len(r.slots)-len(r.mark))...)
	}
	r.markGen++
	if r.markGen == 0 { // wrapped: old marks could match again
		clear(r.mark)
		r.markGen = 1
	}
	return r.markGen
}

// Crowd reports whether a box of the round in play has more than
// CrowdPlayers players.
func (r *Round) Crowd() bool { return r.crowd }

// Slots is the number of slots of the round in play: the bets Start took.
func (r *Round) Slots() int { return len(r.slots) }

// SlotOf returns the slot of player id on seat (the index of his bet in
// Start's bets), or -1 when he has no bet in the round. It looks the id
// up (a map for a crowd's box): a batch names players by slot instead.
func (r *Round) SlotOf(seat int, id string) int {
	bi := r.boxIndex(seat)
	if bi < 0 {
		return -1
	}
	bx := &r.boxes[bi]
	if pi := bx.find(id); pi >= 0 {
		return int(bx.players[pi].slot)
	}
	return -1
}

// SlotPlayer returns the seat and id of slot's player; ok is false for a
// slot that names no player of the round in play.
func (r *Round) SlotPlayer(slot int) (seat int, id string, ok bool) {
	if slot < 0 || slot >= len(r.slots) || r.slots[slot].box < 0 {
		return 0, "", false
	}
	ref := r.slots[slot]
	bx := &r.boxes[ref.box]
	return bx.seat, bx.players[ref.idx].id, true
}

// Prompted counts the crowd's decision requests since the round was
// created: when it changes, Prompts has something new to say.
func (r *Round) Prompted() uint64 { return r.prompted }

// Answer is an insurance answer in a batch entry.
type Answer uint8

// The insurance answers.
const (
	AnswerNone    Answer = iota // the entry is a decision
	AnswerTake                  // takes insurance
	AnswerDecline               // declines it
)

// SlotDecision is one entry of a batch: a player, by slot, decides Action
// on the hand that waits for him, or answers the insurance offer (Answer
// not AnswerNone). Player, when not empty, must be the slot's player: a
// check on the backend's slots that costs a string compare, no lookup.
type SlotDecision struct {
	Slot   int32
	Action Action
	Answer Answer
	Player string
}

// EntryCode is the verdict on one entry of a batch.
type EntryCode uint8

// The verdicts.
const (
	// EntryApplied: the entry was applied.
	EntryApplied EntryCode = iota
	// EntryUnknownPlayer: the slot names no player of the round, or
	// another player than the entry's.
	EntryUnknownPlayer
	// EntryDuplicate: an earlier entry of the batch named the same slot.
	EntryDuplicate
	// EntryNotAwaited: no decision (no insurance answer) is awaited from
	// the player now: he has decided, his hand is finished, or the
	// round is not at that step.
	EntryNotAwaited
	// EntryIllegal: the action is not open to the hand (double on three
	// cards, split a non-pair, a stake over the round cap).
	EntryIllegal
	// EntryMalformed: the entry names no action the round knows.
	EntryMalformed
)

var entryNames = [...]string{"applied", "unknown_player", "duplicate", "not_awaited", "illegal_action", "malformed"}

// String is the verdict's code on the wire.
func (c EntryCode) String() string {
	if int(c) < len(entryNames) {
		return entryNames[c]
	}
	return "unknown"
}

// Reason is a sentence for the verdict.
func (c EntryCode) Reason() string {
	switch c {
	case EntryApplied:
		return "applied"
	case EntryUnknownPlayer:
		return "the slot names no player of the round, or another player"
	case EntryDuplicate:
		return "the player is named by an earlier entry of the batch"
	case EntryNotAwaited:
		return "no decision or insurance answer is awaited from the player now"
	case EntryIllegal:
		return "the action is not open to the player's hand"
	case EntryMalformed:
		return "the entry could not be read"
	}
	return "unknown verdict"
}

// DecideBatch applies a batch of the crowd's entries in order and appends
// their events to dst. codes gets each entry's verdict (codes[i] for
// entries[i]); applied counts the entries applied. A refused entry
// changes nothing and does not stop the others. The batch as a whole is
// refused, with a *RuleError (ErrOutOfTurn) and nothing changed, when the
// round takes no decisions and no insurance answers now (the decision
// window is closed) and when none of its entries applies (codes says
// why). An entry is judged on the round as the entries before it left
// it: the last insurance answer ends the offer, and decisions later in
// the batch then meet the play.
func (r *Round) DecideBatch(entries []SlotDecision, codes []EntryCode, dst []Event) (_ []Event, _ []EntryCode, applied int, err error) {
	codes = codes[:0]
	if r.phase != PhasePlay && r.phase != PhaseInsurance {
		return dst, codes, 0, ruleErr(ErrOutOfTurn, 0, "", "no decisions while %s", r.phase)
	}
	r.out = dst
	gen := r.nextMark()
	for i := range entries {
		c := r.batchEntry(&entries[i], gen)
		codes = append(codes, c)
		if c == EntryApplied {
			applied++
		}
	}
	if applied == 0 {
		return dst, codes, 0, ruleErr(ErrOutOfTurn, 0, "", "none of the batch's %d entries applies", len(entries))
	}
	return r.out, codes, applied, nil
}

// batchEntry applies one entry of a batch whose pass is marked gen.
func (r *Round) batchEntry(e *SlotDecision, gen uint32) EntryCode {
	if e.Answer > AnswerDecline || e.Answer == AnswerNone && (e.Action == ActNone || e.Action > ActSurrender) {
		return EntryMalformed
	}
	if e.Slot < 0 || int(e.Slot) >= len(r.slots) {
		return EntryUnknownPlayer
	}
	ref := r.slots[e.Slot]
	if ref.box < 0 {
		return EntryUnknownPlayer
	}
	bx := &r.boxes[ref.box]
	p := &bx.players[ref.idx]
	if e.Player != "" && e.Player != p.id {
		return EntryUnknownPlayer
	}
	if r.mark[e.Slot] == gen {
		return EntryDuplicate
	}
	r.mark[e.Slot] = gen
	if e.Answer != AnswerNone {
		if r.phase != PhaseInsurance || !p.asked || p.insurance != 0 {
			return EntryNotAwaited
		}
		if r.answerInsurance(bx, p, e.Answer == AnswerTake) != nil {
			return EntryIllegal
		}
		return EntryApplied
	}
	if r.phase != PhasePlay || !p.awaiting {
		return EntryNotAwaited
	}
	if r.decide(bx, p, e.Action, false) != nil {
		return EntryIllegal
	}
	return EntryApplied
}

// crowdCard reports a card drawn for a crowd's box after the first deal:
// the next card of the seat's shared sequence, which each player who
// hit takes in turn (no event per player).
func (r *Round) crowdCard(bx *box, c card.Card) {
	if r.keeps(EvCardDealt) {
		e := r.note(EvCardDealt)
		e.Seat, e.Card, e.Players = int8(bx.seat), c, int32(len(bx.players))
	}
}

// Prompt is one situation of the crowd's waiting hands: how many players
// of a seat wait for a decision on a hand with these cards, and what they
// may do. A backend finds its players' hands from the seat's shared cards
// and their own decisions.
type Prompt struct {
	Seat      int
	Hand      int8 // 1, or 2 for the second hand of a split
	Total     int8
	Soft      bool
	Cards     int8
	PairValue int8
	Options   Options
	Players   int32
}

// Prompts appends to dst, for every crowd's box, the situations of the
// hands whose decision is awaited, with how many players are in each.
func (r *Round) Prompts(dst []Prompt) []Prompt {
	for i := range r.boxes {
		bx := &r.boxes[i]
		if !bx.crowd || bx.awaiting == 0 {
			continue
		}
		start := len(dst)
		for j := range bx.players {
			p := &bx.players[j]
			if !p.awaiting {
				continue
			}
			h := &p.hands[p.cur]
			t, soft := h.total()
			pr := Prompt{Seat: bx.seat, Hand: int8(p.cur + 1), Total: int8(t), Soft: soft, Cards: int8(h.n), Options: r.options(p, h)}
			if h.n == 2 && h.c[0].Value() == h.c[1].Value() {
				pr.PairValue = int8(h.c[0].Value())
			}
			found := false
			for k := start; k < len(dst); k++ {
				if q := &dst[k]; q.Hand == pr.Hand && q.Total == pr.Total && q.Soft == pr.Soft && q.Cards == pr.Cards &&
					q.PairValue == pr.PairValue && q.Options == pr.Options {
					q.Players++
					found = true
					break
				}
			}
			if !found {
				pr.Players = 1
				dst = append(dst, pr)
			}
		}
	}
	return dst
}

// UpValue is the value of the dealer's up card (1 for an ace), 0 before
// it is dealt.
func (r *Round) UpValue() int {
	if r.dealer.n == 0 {
		return 0
	}
	return r.upValue()
}
