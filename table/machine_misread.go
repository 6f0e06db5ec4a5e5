package table

import (
	"fmt"
	"slices"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// This file is the misread queue of epochMisreadQueue: the cards out of
// the shoe that the round has not had yet, in the order the dealer drew
// them (Machine.held). A card pulled while the table is paused is held
// there as before; a card the shoe dealt and could not read (a pausing
// misread, unknown or face-up card) or that the integrity book refused,
// while the round or a burn waits for a card, takes its place there too,
// empty, until a supervisor's `correct` names it. Each correct fills the
// OLDEST empty place: the supervisor corrects the cards in the order the
// dealer drew them. Until epoch 2 the machine kept one pending misread: a
// second unread card in the same pause was counted but could never be
// corrected, the one correct resumed the table, and the round took the
// shoe's next card in its place.

// pulled is one card in Machine.held.
type pulled struct {
	// card is the card; not Valid while it waits for a correction.
	card card.Card
	// what is the shoe's report of a card it could not give ("" for a
	// card read): the supervisor's view names it.
	what string
	// unread: dealt and not read (a misread, unknown or face-up card),
	// counted in the shoe's unread cards until corrected. A resume is
	// refused while one waits (ErrMisreadPending): the round would go on
	// without a card that lies on the table. A card the integrity book
	// refused (unread false) may be resumed past: set aside.
	unread bool
	// shoe is the integrity book's generation (shoeBook.gen) the card came
	// out of: a correction after that shoe went out is not booked to the
	// next one.
	shoe int
	// at is its position in that shoe (Machine.out when it came out): the
	// identity a supervisor's correct names (Supervisor.At).
	at int
}

// correction is a card corrected since betting last opened: its
// position and the card the supervisor gave it.
type correction struct {
	at   int
	card card.Card
}

// waiting reports whether p waits for a correction.
func (p pulled) waiting() bool { return !p.card.Valid() }

// needsCard reports whether a card out of the shoe now is the table's: a
// burn a new shoe owes (003), or the round waits for one.
func (m *Machine) needsCard() bool {
	need, _, _ := m.rnd.NeedsCard()
	return need || m.burn > 0
}

// queueMissing takes the place of a card the shoe could not give (what
// is its report) in the queue, when the table needs a card: a burn (the
// burn is still owed: a misread of it no longer burns the next card) or
// the round's. Otherwise the card is no one's: counted unread (unread),
// and the supervisor may resume.
func (m *Machine) queueMissing(what string, unread bool) {
	if !m.needsCard() {
		return
	}
	m.held = append(m.held, pulled{what: what, unread: unread, shoe: m.shoe.gen, at: m.out})
}

// awaitingCorrection is the report of the card a `correct` fills next
// (toCorrect) and how many wait. Before epochMisreadQueue, the one
// pending misread.
func (m *Machine) awaitingCorrection() (next string, n int) {
	if m.misread != "" {
		return m.misread, 1
	}
	for _, p := range m.held {
		if p.waiting() {
			n++
		}
	}
	if i := m.toCorrect(); i >= 0 {
		next = m.held[i].what
	}
	return next, n
}

// toCorrect is the index in held of the card a `correct` fills, -1 when
// none waits: the oldest dealt unread, else the oldest the integrity book
// refused. A refused card may be no card of the shoe at all (a foreign
// card, set aside by a resume): one before an unread card must not stand
// in the way of the unread card's correction, which the resume needs.
func (m *Machine) toCorrect() int {
	if i := slices.IndexFunc(m.held, func(p pulled) bool { return p.waiting() && p.unread }); i >= 0 {
		return i
	}
	return slices.IndexFunc(m.held, pulled.waiting)
}

// waitingAt are the positions in the shoe of the cards waiting for a
// correction, in the order the corrects fill them (toCorrect: the dealt
// unread, then the refused, each in draw order). Before
// epochMisreadQueue, the one pending misread's.
func (m *Machine) waitingAt() []int {
	if m.misread != "" {
		return []int{m.misreadAt}
	}
	var at []int
	for _, unread := range []bool{true, false} {
		for _, p := range m.held {
			if p.waiting() && p.unread == unread {
				at = append(at, p.at)
			}
		}
	}
	return at
}

// checkAt judges the card a correct names (v.At, from epochCorrectAt;
// 0 names none and the correct fills the card toCorrect gives, as
// before): it must be that card, the one waiting longest. i is
// toCorrect's index, -1 when none waits. The refusal wraps ErrMisreadAt
// and says which card the next correct is for, or that the named one was
// corrected already (a double click, two supervisors at once, a backend
// retrying under a new id): it would otherwise fill the next card with
// the first one's value.
func (m *Machine) checkAt(v Supervisor, i int) error {
	if m.epoch < epochCorrectAt || v.At == 0 {
		return nil
	}
	if v.At < 0 {
		return fmt.Errorf("%w: card %d: a position in the shoe counts from 1", ErrMisreadAt, v.At)
	}
	if i >= 0 && m.held[i].at == v.At {
		return nil
	}
	var done string
	if j := slices.IndexFunc(m.corrected, func(c correction) bool { return c.at == v.At }); j >= 0 {
		done = fmt.Sprintf("card %d of the shoe was corrected already (%s)", v.At, m.corrected[j].card)
	} else if j := slices.IndexFunc(m.held, func(p pulled) bool { return p.at == v.At }); j >= 0 && !m.held[j].waiting() {
		done = fmt.Sprintf("card %d of the shoe was corrected already (%s)", v.At, m.held[j].card)
	}
	none := "no card waits for a correction"
	if m.voided && m.phase == PhaseSettled {
		none += fmt.Sprintf(" (round %s was voided)", m.roundID)
	}
	switch {
	case i < 0 && done != "":
		return fmt.Errorf("%w: %s, and %s: nothing changed (%w)", ErrMisreadAt, done, none, ErrNoMisread)
	case i < 0:
		return fmt.Errorf("%w: card %d of the shoe: %s: nothing changed (%w)", ErrMisreadAt, v.At, none, ErrNoMisread)
	case done != "":
		return fmt.Errorf("%w: %s; the next to correct is card %d (%s): nothing changed", ErrMisreadAt, done, m.held[i].at, m.held[i].what)
	case slices.ContainsFunc(m.held, func(p pulled) bool { return p.at == v.At && p.waiting() }):
		return fmt.Errorf("%w: card %d of the shoe waits, but card %d (%s) is corrected first, in the order the dealer drew them: nothing changed",
			ErrMisreadAt, v.At, m.held[i].at, m.held[i].what)
	default:
		return fmt.Errorf("%w: no card %d of the shoe waits for a correction; the next to correct is card %d (%s): nothing changed",
			ErrMisreadAt, v.At, m.held[i].at, m.held[i].what)
	}
}

// unreadWaiting is how many cards dealt unread wait for a correction.
func (m *Machine) unreadWaiting() (next string, n int) {
	for _, p := range m.held {
		if p.waiting() && p.unread {
			if n == 0 {
				next = p.what
			}
			n++
		}
	}
	return next, n
}

// misreadNext is the instruction line while cards wait for a correction.
func (m *Machine) misreadNext(next string, n int) string {
	if n == 1 {
		return "stop: card not read (" + next + "): supervisor corrects it" + m.orVoid(" or voids the round") + m.heldNote()
	}
	return fmt.Sprintf("stop: %d cards not read (next to correct: %s): supervisor corrects them in the order the dealer drew them", n, next) +
		m.orVoid(", or voids the round") + m.heldNote()
}

// orVoid is s when a void is one of the supervisor's ways on: a round is
// in play. A misread of the burn a new shoe owes (003) or a shoe lost
// between rounds told the supervisor to void a round there was none of,
// and the void was refused ("no round in play to void").
func (m *Machine) orVoid(s string) string {
	if !m.MidRound() {
		return ""
	}
	return s
}

// dropRefused sets aside, on a resume, the cards the integrity book
// refused that no one corrected: the round waits for the next card.
// (Cards dealt unread refuse the resume: resumeRefused.)
func (m *Machine) dropRefused() {
	m.held = slices.DeleteFunc(m.held, pulled.waiting)
}

// correctQueued fills the oldest card waiting for a correction with the
// card the supervisor read. When nothing else was drawn before it, it
// goes where it belongs at once (the burn a new shoe owes, or the round:
// a card the round refuses is refused here and nothing changes);
// otherwise it waits in its place for the resume. When no card waits any
// more, the misread's and the integrity book's pause reasons go, and with
// no other reason the table resumes (the cards held go in, in order).
func (m *Machine) correctQueued(v Supervisor) error {
	i := m.toCorrect()
	if err := m.checkAt(v, i); err != nil {
		return err
	}
	switch {
	case i < 0 && m.voided && m.phase == PhaseSettled:
		// Two supervisors at once: a void went first.
		return fmt.Errorf("%w: round %s was voided: no card waits for a correction", ErrNoMisread, m.roundID)
	case i < 0:
		return fmt.Errorf("%w: correct is for a card the shoe could not read, and none waits for one", ErrNoMisread)
	}
	if !v.Card.Valid() {
		return fmt.Errorf("%w: correct needs a card", errIllegal)
	}
	p := m.held[i]
	sameShoe := p.shoe == m.shoe.gen
	if sameShoe {
		if why := m.checkCard(v.Card, ""); why != "" {
			return fmt.Errorf("%w: %s cannot be the card on the table: %s (shoe %q has no %s left): nothing changed",
				errIllegal, v.Card, why, m.shoe.id, v.Card)
		}
	}
	now := i == 0 // nothing drawn before it waits: it goes in now
	// The burn a new shoe owes takes a card of that shoe: a card of the
	// shoe before it, corrected after the change, is the round's.
	burn := m.burn > 0 && sameShoe
	var evs []round.Event
	if now && !burn {
		if need, _, _ := m.rnd.NeedsCard(); !need {
			return fmt.Errorf("%w: the round waits for no card", errIllegal)
		}
		var err error
		if evs, err = m.roundTakes(v.Card); err != nil {
			return err
		}
	}
	var run int
	var past string
	if sameShoe {
		if m.shoeActive() {
			run, past = m.shoe.take(v.Card, "")
		}
		if p.unread && m.shoe.unread > 0 {
			m.shoe.unread--
		}
		m.dealt++
	}
	m.held[i].card = v.Card
	m.corrected = append(m.corrected, correction{at: p.at, card: v.Card})
	if next, n := m.awaitingCorrection(); n > 0 && m.pauseWhy == p.what {
		// The state's pause reason named the card just corrected: it
		// names the next one now.
		m.pauseWhy = next
	}
	if now {
		m.held = slices.Delete(m.held, 0, 1)
		if burn {
			m.burn--
			m.emit(Burned{Card: v.Card}, "")
		} else {
			m.emitRound(evs)
		}
	}
	aside := m.setAsideUnneeded()
	if _, n := m.awaitingCorrection(); n == 0 {
		m.liftCardReasons()
		if len(m.pauses) == 0 {
			m.resume(v.By)
		}
	}
	for _, p := range aside {
		// Raised after the resume, so the state lists it for the
		// supervisor until the next one.
		m.alarm("card_set_aside", fmt.Sprintf("%s: the round waits for no card (%s): the card is set aside, no correction needed", p.what, m.rnd.Phase()), "")
	}
	_ = m.shuffleAlarm(run, past, nil)
	return nil
}

// setAsideUnneeded: after a correction went in, a card waiting next that
// the table no longer needs (the round took what it waited for, and no
// burn is owed) is no one's: the dealer drew one card too many. It is set
// aside (the caller raises an alarm for each, to tell the supervisor);
// one dealt unread stays counted unread at shoe out.
func (m *Machine) setAsideUnneeded() []pulled {
	var aside []pulled
	for len(m.held) > 0 && m.held[0].waiting() && !m.needsCard() {
		aside = append(aside, m.held[0])
		m.held = slices.Delete(m.held, 0, 1)
	}
	return aside
}

// queueFromSingle carries a pending misread of the older rules into the
// queue when a journal reaches epochMisreadQueue with one (the older
// build's correct gave it to the round before any card held).
func (m *Machine) queueFromSingle() {
	if m.misread == "" {
		return
	}
	m.held = append([]pulled{{what: m.misread, unread: m.misreadUnread, shoe: m.shoe.gen, at: m.misreadAt}}, m.held...)
	m.misread, m.misreadUnread, m.misreadAt = "", false, 0
}
