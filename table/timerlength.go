package table

import "time"

// TimerLength is the longest the machine arms timer name for: the game's
// time for it (a decision's, the insurance offer's, betting's), the
// pause after a settlement, the backend's grace after the last call.
// The controller bounds a deadline it restores after a restart by it: a
// deadline is a wall-clock time in the journal, and a wall clock stepped
// back while the daemon was down would otherwise hold the table for as
// long as the step (the simulation's seed 270: the pause after a
// settlement was to end in 1 h 36 min).
func (m *Machine) TimerLength(name TimerName) time.Duration {
	rs := m.cfg.Rules
	switch name {
	case TimerLastCall:
		return rs.BettingTime - rs.LastCallTime
	case TimerBetsDeadline:
		return rs.LastCallTime + m.cfg.BetsGrace
	case TimerNext:
		return m.cfg.SettleDelay
	case TimerInsurance:
		return rs.InsuranceTime
	case TimerDecision:
		return rs.DecisionTime
	}
	return 0
}
