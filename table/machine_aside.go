package table

import (
	"fmt"
	"slices"
	"strings"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// This file is the set-aside list of epochSetAside: the cards out of the
// shoe that the table cannot use, gathered while it is paused and dealt
// with by one supervisor action. Until epoch 3 a card that did not fit
// the round paused the table, and every further card pulled then was held
// for the resume, where each in turn did not fit and paused the table
// again: three stray cards between rounds cost three resumes, and of
// three cards pulled during a supervisor's pause of which the round
// needed one, the other two cost a resume each (found with the real
// binaries, 2026-11-25).
//
// Now: the card that does not fit the round still stops the table
// (unexpected_card: the dealer pulled a card no one asked for, which a
// supervisor looks at), and is the first of the list. A card pulled while
// the table is paused and needs no card (the round waits for none, no
// burn is owed: the round cannot change while paused, so no resume will
// want it) joins the list at once and pauses nothing again. A card held
// because the round did need one goes to it on resume as far as it still
// needs cards, in the order drawn; the rest join the list. The resume (or
// a void) names the list in one card_set_aside alarm and empties it. A
// card set aside was booked when it came out of the shoe (composition,
// codes, order, dealt count), so the count at shoe out balances without
// anyone acting on it: the resume that looked at the table is the one
// action, and the cards set aside at the resume itself (the rest of the
// held cards) cost no second stop.

// setAsideNow reports whether a card pulled now, on a paused table, joins
// the set-aside list at once: under epochSetAside, when the table needs
// no card (the round waits for none, no burn is owed). Nothing but a
// correction or a new shoe changes that while paused, and neither makes
// an earlier card the round's.
func (m *Machine) setAsideNow() bool {
	return m.epoch >= epochSetAside && m.paused() && !m.needsCard()
}

// asideOnResume reports whether a held card goes to the set-aside list
// instead of the round when the table resumes: the table needs no more
// cards (under older epochs each went to the round, and paused the table
// again when it did not fit).
func (m *Machine) asideOnResume(h pulled) bool {
	return m.epoch >= epochSetAside && !h.waiting() && !m.needsCard()
}

// announceAside raises the one card_set_aside alarm that names every card
// in the set-aside list, after the supervisor's resume or void, and empties
// the list. It pauses nothing: the cards are booked and the dealer puts
// them aside together.
func (m *Machine) announceAside(action string) {
	if len(m.aside) == 0 {
		return
	}
	msg := fmt.Sprintf("%s set aside (%s): the round waits for no card (%s); booked as dealt, no correction needed; %s",
		cardsCount(len(m.aside)), cardList(m.aside), m.roundPhase(), action)
	m.aside = nil
	m.alarm("card_set_aside", msg, "")
}

// roundPhase is the round's phase as the alarms of a card that fits no
// round name it. Once bets are open (no round id) the round the machine
// holds is the last one, settled, on the table that played it, and a new
// one on a table rebuilt from the checkpoint written as bets opened (a
// checkpoint keeps no round): both are "no round in play", so a replay
// from either derives the same events. The simulation's stray cards found
// it: a stray pulled once bets were open published "(settled)", and the
// restarted table's journal derived the same seqs with "(new)".
func (m *Machine) roundPhase() string {
	if m.roundID == "" && !m.MidRound() {
		return "no round in play"
	}
	return m.rnd.Phase().String()
}

// roundView is the round as the state shows it. Once bets are open (no
// round id) it is a new round's, not the last one's that the machine still
// holds: a table rebuilt from the checkpoint written as bets opened holds
// a new one, and the state of a table paused between rounds (a stray
// card, the cut card) showed the last round's cards before a restart and
// none after it.
func (m *Machine) roundView() round.View {
	if m.roundID == "" && m.rnd.Phase() == round.PhaseSettled {
		return m.newRound
	}
	return m.rnd.Snapshot()
}

// asideNext is the instruction line of a paused table with cards in the
// set-aside list: the dealer puts them aside together. Paused only by the
// card that did not fit, the supervisor's resume is all that is left.
func (m *Machine) asideNext() string {
	n, list := cardsCount(len(m.aside)), cardList(m.aside)
	if len(m.pauses) == 1 && m.pauses[0] == PauseUnexpectedCard && m.link == shoeUp {
		return "stop: put aside " + n + ": " + list + "; wait for the supervisor" + m.heldNote()
	}
	return ""
}

// asideNote tells the instruction line of a table paused for another
// reason about the cards in the set-aside list.
func (m *Machine) asideNote() string {
	if len(m.aside) == 0 {
		return ""
	}
	return fmt.Sprintf(" (put aside %s the round cannot use: %s)", cardsCount(len(m.aside)), cardList(m.aside))
}

// SetAside is the set-aside list: the cards out of the shoe that the
// table cannot use, gathered while it is paused, in the order drawn.
func (m *Machine) SetAside() []card.Card { return slices.Clone(m.aside) }

func cardsCount(n int) string {
	if n == 1 {
		return "1 card"
	}
	return fmt.Sprintf("%d cards", n)
}

func cardList(cs []card.Card) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}
