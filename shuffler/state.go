package shuffler

import (
	"fmt"
	"time"

	"github.com/livetable/livetable/firmware-protocols/shufflerproto"
	"github.com/livetable/livetable/table"
)

// State is where the dual-shoe swap stands.
type State uint8

// The states. Names follow the physical situation: which shoe is being
// dealt and what the other one is doing.
const (
	// Starting: reading the presence sensors to learn which shoe is in play.
	Starting State = iota
	// AInPlay_BShuffling: shoe A is dealt, shoe B is in the shuffler.
	AInPlay_BShuffling
	// BInPlay_AShuffling: shoe B is dealt, shoe A is in the shuffler.
	BInPlay_AShuffling
	// SwapRequested: the shoe in play is finished; waiting for the shuffler
	// to have the other shoe ready.
	SwapRequested
	// Swapping: swap_request is asserted; waiting for swap_done.
	Swapping
	// Fault: something timed out or does not add up; the table is paused
	// and the swap line released until a supervisor resets the controller.
	Fault
)

var stateNames = [...]string{
	Starting:           "Starting",
	AInPlay_BShuffling: "AInPlay_BShuffling",
	BInPlay_AShuffling: "BInPlay_AShuffling",
	SwapRequested:      "SwapRequested",
	Swapping:           "Swapping",
	Fault:              "Fault",
}

// String implements fmt.Stringer.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Shoe is one of the two shoe bodies.
type Shoe uint8

// The shoes. NoShoe is the zero value: not known yet.
const (
	NoShoe Shoe = iota
	ShoeA
	ShoeB
)

// String implements fmt.Stringer: "A", "B" or "" for NoShoe.
func (s Shoe) String() string {
	switch s {
	case ShoeA:
		return "A"
	case ShoeB:
		return "B"
	}
	return ""
}

// other is the shoe that is not s.
func (s Shoe) other() Shoe {
	if s == ShoeA {
		return ShoeB
	}
	return ShoeA
}

// inPlayState is the dealing state of a shoe.
func inPlayState(s Shoe) State {
	if s == ShoeB {
		return BInPlay_AShuffling
	}
	return AInPlay_BShuffling
}

// lines are the debounced input levels at one instant, all logical.
type lines struct {
	ready, done, presentA, presentB bool
}

func (l lines) present(s Shoe) bool {
	if s == ShoeB {
		return l.presentB
	}
	return l.presentA
}

// trigger is what a machine input is about.
type trigger uint8

const (
	tick       trigger = iota // a periodic sample of the lines
	request                   // RequestSwap
	reset                     // Reset
	report                    // a shuffler report arrived
	resetFault                // ResetFault: a supervisor's reset, from Fault only
)

// input is one thing that happens to the machine. Time is part of it, so
// next needs no clock.
type input struct {
	trigger trigger
	now     time.Time
	lines   lines
	report  shufflerproto.Report
	by      string // who asked, for resetFault
	reason  string // and why (what was fixed), for resetFault
}

// limits are the options next needs: the waits and the checks.
type limits struct {
	start, ready, shuffle, swap, removed time.Duration
	expectCards, burnCards               int
	idPrefix                             string
}

// machine is the whole state of the swap, a value.
type machine struct {
	state  State
	inPlay Shoe      // the shoe being dealt, or being swapped out
	since  time.Time // when state was entered
	// absentSince is when the shoe in play was first seen missing, zero
	// while it is there.
	absentSince time.Time
	slowWarned  bool                  // the shuffle_slow alarm was raised for this shuffle
	report      *shufflerproto.Report // the shuffler's last report for the shoe it holds
	fault       string                // the alarm code that caused Fault
	// swapAsked is a swap the table asked for while Starting: done once
	// the shoe in play is known. A table restarted with its shoe finished
	// asks at once, before the sensors are read.
	swapAsked bool
}

// actions is what the acting half must do after a transition. The level of
// swap_request is not an action: it is asserted exactly while the state is
// Swapping, so the acting half derives it from the state.
type actions struct {
	inputs []table.Input // to the table controller, in order (alarms included)
	bodies []table.Body  // reports for the journal and console, in order
	err    error         // the answer to a command (request, reset)
	// cleared is the fault code a resetFault cleared.
	cleared string
}

// next is the pure transition function: from a machine and an input, the
// next machine and what to do. It never fails; a command that does not fit
// the state is answered through actions.err and leaves the machine as it
// was.
func next(m machine, in input, lim limits) (machine, actions) {
	var act actions
	enter := func(s State, reason string) {
		act.bodies = append(act.bodies, StateChanged{
			From: m.state.String(), To: s.String(), InPlay: m.inPlay.String(), Reason: reason})
		m.state, m.since, m.absentSince = s, in.now, time.Time{}
	}
	fault := func(code, msg string) {
		m.fault, m.swapAsked = code, false
		act.inputs = append(act.inputs, alarm(code, msg, true))
		enter(Fault, code)
	}
	// enterInPlay leaves Starting for s, or straight for SwapRequested
	// when the table asked for a swap meanwhile.
	enterInPlay := func(s State, reason string) {
		if m.swapAsked {
			m.swapAsked = false
			enter(SwapRequested, reason+"; the swap asked while starting")
			return
		}
		enter(s, reason)
	}
	// removed checks the shoe in play is still in its slot, allowing it to
	// be lifted for lim.removed; it reports whether a fault was raised.
	removed := func() bool {
		if in.lines.present(m.inPlay) {
			m.absentSince = time.Time{}
			return false
		}
		if m.absentSince.IsZero() {
			m.absentSince = in.now
		}
		if in.now.Sub(m.absentSince) < lim.removed {
			return false
		}
		fault(AlarmShoeRemoved, fmt.Sprintf("shoe %s removed before the swap", m.inPlay))
		return true
	}

	switch in.trigger {
	case reset:
		m.fault, m.report, m.slowWarned, m.swapAsked = "", nil, false, false
		enter(Starting, "reset")
		return m, act
	case resetFault:
		if m.state != Fault {
			// Only a Fault waits for a supervisor; a reset in another
			// state would drop a swap under way (or asked while
			// starting), and nothing would ask for it again.
			act.err = fmt.Errorf("%w (%s)", ErrNotInFault, m.state)
			return m, act
		}
		cleared := m.fault
		m.fault, m.report, m.slowWarned, m.swapAsked = "", nil, false, false
		// The table journals who took the shuffler out of which fault:
		// the audit trail, beside the alarm that latched it.
		msg := fmt.Sprintf("shuffler reset by %s after %s", in.by, cleared)
		if in.reason != "" {
			msg += " (" + in.reason + ")"
		}
		act.inputs = append(act.inputs, alarm(AlarmReset, msg+": it reads its presence sensors again", false))
		enter(Starting, "reset by "+in.by)
		act.cleared = cleared
		return m, act
	case report:
		r := in.report
		m.report = &r
		return m, act
	case request:
		switch m.state {
		case AInPlay_BShuffling, BInPlay_AShuffling:
			enter(SwapRequested, "swap requested")
		case SwapRequested, Swapping:
			// Asking twice for the same swap is harmless.
		case Starting:
			// The shoe in play is not known yet (the daemon has just
			// started): the swap is done once it is. Refused, the
			// table's one request (its shoe closed) was lost, and the
			// table stayed closed for good.
			m.swapAsked = true
		case Fault:
			act.err = fmt.Errorf("%w (%s)", ErrFault, m.fault)
		default:
			act.err = fmt.Errorf("%w: %s", ErrNotInPlay, m.state)
		}
		return m, act
	}

	// A tick: the waits and the line changes.
	l := in.lines
	switch m.state {
	case Starting:
		switch {
		case l.presentA && !l.presentB:
			m.inPlay = ShoeA
			enterInPlay(AInPlay_BShuffling, "shoe A in the slot")
		case l.presentB && !l.presentA:
			m.inPlay = ShoeB
			enterInPlay(BInPlay_AShuffling, "shoe B in the slot")
		case in.now.Sub(m.since) >= lim.start && l.presentA:
			fault(AlarmBothShoes, "both shoes seen in the dealing slot")
		case in.now.Sub(m.since) >= lim.start:
			fault(AlarmNoShoe, "no shoe in the dealing slot")
		}
	case AInPlay_BShuffling, BInPlay_AShuffling:
		if removed() {
			break
		}
		if !l.ready && !m.slowWarned && in.now.Sub(m.since) >= lim.shuffle {
			m.slowWarned = true
			act.inputs = append(act.inputs, alarm(AlarmShuffleSlow,
				fmt.Sprintf("shoe %s not shuffled after %v", m.inPlay.other(), lim.shuffle), false))
		}
	case SwapRequested:
		switch {
		case removed():
		case l.ready && !l.done:
			enter(Swapping, "shuffler ready")
		case in.now.Sub(m.since) >= lim.ready && l.ready && l.done:
			// Ready all along: the swap waits for swap_done to fall,
			// held since the last swap (acknowledged twice, stuck).
			// "Not ready" sent the supervisor to the shuffle.
			fault(AlarmAckStuck, fmt.Sprintf("shoe %s ready but swap_done still asserted %v after the swap request (stuck since the last swap): check the swap_done line", m.inPlay.other(), lim.ready))
		case in.now.Sub(m.since) >= lim.ready:
			fault(AlarmNotReady, fmt.Sprintf("shoe %s not ready %v after the swap request", m.inPlay.other(), lim.ready))
		}
	case Swapping:
		switch {
		case l.done:
			incoming := m.inPlay.other()
			if !l.present(incoming) || l.present(m.inPlay) {
				fault(AlarmSwapPresence, fmt.Sprintf("swap acknowledged but the slot shows A=%t B=%t", l.presentA, l.presentB))
				break
			}
			m = completeSwap(m, in.now, incoming, lim, &act)
			enter(inPlayState(incoming), "swap done")
		case in.now.Sub(m.since) >= lim.swap:
			fault(AlarmNoAck, fmt.Sprintf("swap not acknowledged after %v", lim.swap))
		}
	case Fault:
		// Latched until Reset: a supervisor must look at the table first.
	}
	return m, act
}

// cutCardCounts reports whether a cut-card sensor assertion with the lines
// l can be a cut card: a shoe is in play and sits in its slot (not
// starting, not mid-swap).
func (m machine) cutCardCounts(l lines) bool {
	switch m.state {
	case Starting, Swapping:
		return false
	}
	return m.inPlay != NoShoe && l.present(m.inPlay)
}

// alarm is the table input that reports a shuffler alarm. The table
// controller journals it, raises table.Alarm{Code: "shuffler." + code} and,
// when pauses, pauses the table: one record per alarm, replayable.
func alarm(code, msg string, pauses bool) table.DeviceAlarm {
	return table.DeviceAlarm{Source: "shuffler", Code: code, Message: msg, Pauses: pauses}
}

// completeSwap puts the incoming shoe in play: it names the shoe, checks
// the shuffler's report and emits the table input and the report body.
func completeSwap(m machine, now time.Time, incoming Shoe, lim limits, act *actions) machine {
	sw := ShoeSwapped{Shoe: incoming.String(), BurnCards: lim.burnCards}
	if r := m.report; r != nil {
		sw.ShoeID, sw.Cards = r.ShoeID, r.Cards
		if r.Shoe != "" && r.Shoe != incoming.String() {
			act.inputs = append(act.inputs, alarm(AlarmWrongShoe,
				fmt.Sprintf("report names shoe %s, shoe %s came in", r.Shoe, incoming), true))
			sw.ShoeID = ""
		}
		if lim.expectCards > 0 && r.Cards > 0 && r.Cards != lim.expectCards {
			act.inputs = append(act.inputs, alarm(AlarmCardCount,
				fmt.Sprintf("shoe %s has %d cards, want %d", incoming, r.Cards, lim.expectCards), true))
		}
	}
	if sw.ShoeID == "" {
		sw.ShoeID = fmt.Sprintf("%s%s-%s", lim.idPrefix, incoming, now.UTC().Format("20060102T150405.000"))
	}
	act.inputs = append(act.inputs, table.ShoeChanged{ShoeID: sw.ShoeID})
	act.bodies = append(act.bodies, sw)
	m.inPlay, m.report, m.slowWarned = incoming, nil, false
	return m
}
