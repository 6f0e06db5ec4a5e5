package table

import (
	"errors"
	"fmt"
	"time"
)

// SupervisorCommand is a supervisor command, typed: Supervisor.Command is
// its wire form, parsed by ParseSupervisorCommand.
type SupervisorCommand uint8

// The supervisor commands.
const (
	CmdPause SupervisorCommand = iota + 1
	CmdResume
	CmdVoid
	CmdCorrect
	CmdOpen
)

var supervisorCommands = [...]string{"", "pause", "resume", "void", "correct", "open"}

// String is the command's wire form.
func (c SupervisorCommand) String() string {
	if int(c) < len(supervisorCommands) && c != 0 {
		return supervisorCommands[c]
	}
	return fmt.Sprintf("SupervisorCommand(%d)", uint8(c))
}

// ParseSupervisorCommand parses a command's wire form; an unknown one is a
// round.ErrIllegalAction.
func ParseSupervisorCommand(s string) (SupervisorCommand, error) {
	for i, n := range supervisorCommands {
		if i > 0 && n == s {
			return SupervisorCommand(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown supervisor command %q", errIllegal, s)
}

// TimerName names the table's one running timer.
type TimerName string

// The table's timers.
const (
	TimerLastCall     TimerName = "last_call"     // betting: the last call starts
	TimerBetsDeadline TimerName = "bets_deadline" // no bets closed by then: betting reopens
	TimerNext         TimerName = "next"          // after a settlement: betting opens
	TimerInsurance    TimerName = "insurance"     // the insurance offer closes
	TimerDecision     TimerName = "decision"      // the awaited decisions time out
)

// Deadline is a timer as a value: which one, when it fires, and its key
// (the TimerFired the loop submits when it fires names it, so a timer
// replaced before it fired is recognised and refused).
type Deadline struct {
	Name TimerName
	At   time.Time
	Key  string
}

// Fired is the input the loop submits when the deadline passes.
func (d Deadline) Fired() TimerFired {
	return TimerFired{Timer: string(d.Name) + "@" + d.Key, Round: d.Key}
}

// PauseReason is why the table is paused. A table may be paused for
// several reasons at once; a supervisor's resume clears them all, a
// correction clears the misread's and the integrity book's once no card
// waits, a void clears every reason (a lost-event gap's too: the
// supervisor has dealt with the round rebuilt from what was left) but
// the device's while the shoe is down.
type PauseReason string

// The pause reasons.
const (
	PauseSupervisor     PauseReason = "supervisor"      // a supervisor (or the table's button) paused
	PauseRestart        PauseReason = "restart"         // the daemon restarted in the middle of a round
	PauseMisread        PauseReason = "misread"         // the round is missing a card the shoe could not read
	PauseIntegrity      PauseReason = "integrity"       // a card or a shoe broke the shoe's composition
	PauseShuffle        PauseReason = "shuffle"         // the shoe repeats a previous shoe's order
	PauseUnexpectedCard PauseReason = "unexpected_card" // a card no round waits for
	PauseDevice         PauseReason = "device"          // a device fault, a silent or refused device
	PauseJournal        PauseReason = "journal"         // an input could not be made durable
	PauseSeqGap         PauseReason = "seq_gap"         // events published before were lost from the journal
)

// Effect is what the loop around the machine must do after an input:
// the machine does no I/O itself.
type Effect struct {
	Kind EffectKind
	// Timer is the deadline to arm, for EffectArmTimer.
	Timer Deadline
}

// EffectKind says what an Effect asks.
type EffectKind uint8

// The effects.
const (
	// EffectArmTimer: start a timer for Effect.Timer (replacing any other).
	EffectArmTimer EffectKind = iota + 1
	// EffectStopTimer: stop the running timer.
	EffectStopTimer
	// EffectCheckpoint: journal a Checkpoint of the machine now.
	EffectCheckpoint
)

// Errors of the machine. Each leaves the machine unchanged; errors.Is
// finds the sentinel.
var (
	// ErrNoMisread: `correct` when no misread is pending.
	ErrNoMisread = errors.New("table: no misread pending")
	// ErrMisreadAt: a correct that names the card it corrects
	// (Supervisor.At) names one that is not the next to correct: another
	// waits longer, the named one was corrected already (a double click,
	// two supervisors at once, a retry under a new id), or none waits
	// (then it wraps ErrNoMisread too). The message names the next one.
	ErrMisreadAt = errors.New("table: correct names a card that is not the next to correct")
	// ErrCommandIDReused: a command id sent again with a different body.
	ErrCommandIDReused = errors.New("table: id reused with a different command")
	// ErrStaleTimer: a timer that was replaced or stopped before it fired.
	ErrStaleTimer = errors.New("table: stale timer")
	// ErrRulesEpoch: a journal of a build with newer rules than this one
	// (RulesEpoch); its replay stops.
	ErrRulesEpoch = errors.New("table: journal of newer rules")
	// ErrNotPaused: resume on a table that is not paused.
	ErrNotPaused = errors.New("table: not paused")
	// ErrMisreadPending: resume while the round is missing a card the
	// shoe dealt and could not read: the round cannot go on as if it had
	// not been dealt. The supervisor corrects it (the card on the table)
	// or voids the round.
	ErrMisreadPending = errors.New("table: the round is missing a card the shoe could not read")
	// ErrShoeDown: resume while the shoe is reported disconnected or
	// silent (shoe.silent) and not heard since: the round cannot go on
	// without it. Plug it back in (the cards pulled meanwhile wait in it)
	// or void the round.
	ErrShoeDown = errors.New("table: the shoe is not connected")
	// ErrAlarmRepeated: a device alarm raised again, the same code, while
	// the table is still paused by it and within AlarmRepeatWindow of
	// the last one journaled: coalesced, neither journaled nor published
	// (a refused device's HELLO loop, a firmware fault repeated at line
	// rate). The caller counts it and says how many in the next one.
	ErrAlarmRepeated = errors.New("table: alarm repeated")
	// ErrShoeUp: the shoe reported connected or heard again when the
	// table never heard it was down: nothing to record.
	ErrShoeUp = errors.New("table: the shoe was not down")
)
