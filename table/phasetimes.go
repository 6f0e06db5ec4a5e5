package table

import (
	"fmt"
	"time"
)

// PhaseTimes records the phase times the table runs with from here on:
// the betting window and its last call, the insurance offer, a player's
// decision and the pause after a settlement. They come from the daemon's
// configuration (the game's own, or timing: overrides), and the machine
// derives its phase events' deadlines and its timers from them, so a
// replay must use the times the live table used, not the configuration
// of the day it replays: a restart with other timing: over the same
// journal re-derived the published events of before (a backend's resend,
// tablectl round) with other deadlines under the same seqs, and
// tablectl's replays, which know only the game, derived every table with
// timing: overrides so. The controller journals one at start (from rules
// epoch 10, epochPhaseTimes) whenever the times in force in the journal
// are not the configuration's; a checkpoint carries them (Checkpoint.Times).
// Whole milliseconds, as configured.
type PhaseTimes struct {
	BettingMS   int64 `json:"betting_ms"`
	LastCallMS  int64 `json:"last_call_ms"`
	InsuranceMS int64 `json:"insurance_ms"`
	DecisionMS  int64 `json:"decision_ms"`
	SettleMS    int64 `json:"settle_ms"`
}

// Kind implements Input.
// Kind is "phase_times": the input's name in the journal and the logs.
func (PhaseTimes) Kind() string { return "phase_times" }

func (PhaseTimes) isInput() {}

// epochPhaseTimes is the epoch from which the phase times are journaled
// (PhaseTimes; see CurrentRulesEpoch).
const epochPhaseTimes = 10

// phaseTimesOf is the machine configuration's phase times.
func phaseTimesOf(cfg MachineConfig) PhaseTimes {
	rs := cfg.Rules
	return PhaseTimes{BettingMS: rs.BettingTime.Milliseconds(), LastCallMS: rs.LastCallTime.Milliseconds(),
		InsuranceMS: rs.InsuranceTime.Milliseconds(), DecisionMS: rs.DecisionTime.Milliseconds(),
		SettleMS: cfg.SettleDelay.Milliseconds()}
}

// PhaseTimes is the phase times the machine runs with now.
func (m *Machine) PhaseTimes() PhaseTimes { return phaseTimesOf(m.cfg) }

// applyPhaseTimes makes v the machine's phase times. Timers already
// running keep their deadlines; those armed from here on take v's.
func (m *Machine) applyPhaseTimes(v PhaseTimes) error {
	if m.epoch < epochPhaseTimes {
		return fmt.Errorf("%w: phase times are journaled from rules epoch %d (this journal is at %d)", errIllegal, epochPhaseTimes, m.epoch)
	}
	if v.BettingMS <= 0 || v.LastCallMS <= 0 || v.InsuranceMS <= 0 || v.DecisionMS <= 0 || v.SettleMS <= 0 || v.LastCallMS > v.BettingMS {
		return fmt.Errorf("%w: phase times %+v: each must be positive, the last call within betting", errIllegal, v)
	}
	m.setPhaseTimes(v)
	return nil
}

// setPhaseTimes puts v into the machine's own copy of the rule set: the
// set it was built with may be shared (the daemon's, a replay's).
func (m *Machine) setPhaseTimes(v PhaseTimes) {
	rs := *m.cfg.Rules
	rs.BettingTime, rs.LastCallTime = time.Duration(v.BettingMS)*time.Millisecond, time.Duration(v.LastCallMS)*time.Millisecond
	rs.InsuranceTime, rs.DecisionTime = time.Duration(v.InsuranceMS)*time.Millisecond, time.Duration(v.DecisionMS)*time.Millisecond
	m.cfg.Rules = &rs
	m.cfg.SettleDelay = time.Duration(v.SettleMS) * time.Millisecond
	m.timesJournaled = true
}
