package table

import (
	"fmt"
	"slices"

	"github.com/livetable/livetable/table/round"
)

// The crowd of a common-draw game (002, thousands of players on one
// seat's cards) goes through the table in batches: the backend sends the
// crowd's decisions and insurance answers as one Decisions input (one
// journal record, one Apply), and the round's outcome goes out as a
// summary followed by SettlementChunk events of at most ChunkPlayers
// players each, keyed by player and slot, in integer minor units. While
// a crowd waits, a CrowdPrompt after each input that asked players to
// decide sums their hands by situation.

// MaxBatchEntries bounds the entries of one Decisions batch: the most
// players a backend sends at once (a crowd of more sends more batches).
const MaxBatchEntries = 10000

// ChunkPlayers is the most players one SettlementChunk lists.
const ChunkPlayers = 1000

// maxBatchDetails bounds the batches whose per-entry verdicts the machine
// remembers for a repeated id (at most 10,000 entries each): older batch
// ids keep their summary only. The MQTT link's reply ledger answers a
// repeat with the whole first reply before it gets here.
const maxBatchDetails = 64

// Decisions is a batch of the crowd's decisions and insurance answers for
// round Round. Each entry names its player by slot (his bet's index in
// the round's BetsClosed) and is judged alone: a bad entry changes nothing
// and does not stop the others (see BatchResult).
type Decisions struct {
	ID      string          `json:"id,omitempty"`
	Round   string          `json:"round"`
	Entries []DecisionEntry `json:"entries"`
	// Seen: as BetsClosed.Seen.
	Seen uint64 `json:"seen,omitempty"`
}

// DecisionEntry is one player's decision (hit, stand, double, split) or
// insurance answer (insurance, no_insurance) in a batch. Player, when
// set, must be the slot's player.
type DecisionEntry struct {
	Slot   int    `json:"slot"`
	Player string `json:"player,omitempty"`
	Action string `json:"action"`
}

// The insurance answers of a batch entry's Action.
const (
	ActionInsurance   = "insurance"
	ActionNoInsurance = "no_insurance"
)

// Kind implements Input.
func (Decisions) Kind() string { return "decisions" }
func (Decisions) isInput()     {}

// BatchResult is the verdict on each entry of a Decisions batch.
type BatchResult struct {
	// Entries is the batch's size and Applied how many were applied.
	Entries, Applied int
	// Rejected are the entries not applied, in batch order.
	Rejected []RejectedEntry
	// Trimmed is set on the answer to a repeated batch id whose entries'
	// verdicts are no longer kept (only the counts).
	Trimmed bool
}

// RejectedEntry is one entry of a batch that was not applied and why.
type RejectedEntry struct {
	Index int
	Code  round.EntryCode
}

// CrowdPrompt sums the hands of a crowd that wait for a decision, by
// situation: each player of the seat whose hand is not finished is asked.
type CrowdPrompt struct {
	// Up is the dealer's up card's value (1 for an ace).
	Up int
	// Awaiting is how many players are asked, over every situation.
	Awaiting int
	// Situations are the waiting hands, grouped.
	Situations []round.Prompt
}

// Kind implements Body.
func (CrowdPrompt) Kind() string { return "crowd_prompt" }

// SettlementChunk is one part of a crowd round's settlement: Index of
// Chunks (from 1), at most ChunkPlayers players, in slot order.
type SettlementChunk struct {
	Index, Chunks int
	// Void is set when the round was voided (every stake returned).
	Void    bool
	Players []PlayerNet
}

// Kind implements Body.
func (SettlementChunk) Kind() string { return "settlement_chunk" }

// PlayerNet is one player's money in a crowd's round, in minor units.
type PlayerNet struct {
	Slot   int
	Seat   int
	Player string
	// Staked is everything the player put up (free bets excluded).
	Staked int64
	// Net is what the round did to his balance (+ he wins), everything
	// included: hands, side bets, insurance.
	Net int64
	// Outcomes are his hands' outcomes (two after a split).
	Outcomes []round.Outcome
}

// applyDecisions applies a batch to the round in play.
func (m *Machine) applyDecisions(v Decisions) error {
	m.batch = BatchResult{Entries: len(v.Entries)}
	switch {
	case m.paused():
		return fmt.Errorf("%w: table paused (%s)", ErrPaused, m.pauseWhy)
	case len(v.Entries) > MaxBatchEntries:
		return fmt.Errorf("%w: a batch has at most %d entries (%d)", errIllegal, MaxBatchEntries, len(v.Entries))
	case v.Round == "" || v.Round != m.roundID || !m.MidRound():
		return fmt.Errorf("%w: the batch is for round %q; the round in play is %q (%s)", round.ErrOutOfTurn, v.Round, m.roundID, m.rnd.Phase())
	}
	m.slotBuf = m.slotBuf[:0]
	for _, e := range v.Entries {
		sd := round.SlotDecision{Slot: int32(e.Slot), Player: e.Player}
		if e.Slot < 0 || e.Slot > MaxBatchEntries*100 {
			sd.Slot = -1
		}
		switch e.Action {
		case ActionInsurance:
			sd.Answer = round.AnswerTake
		case ActionNoInsurance:
			sd.Answer = round.AnswerDecline
		default:
			// An unknown action stays ActNone: the round's verdict is
			// malformed, the entry's alone.
			sd.Action, _ = round.ParseAction(e.Action)
		}
		m.slotBuf = append(m.slotBuf, sd)
	}
	evs, codes, applied, err := m.rnd.DecideBatch(m.slotBuf, m.codeBuf[:0], m.evBuf[:0])
	m.evBuf, m.codeBuf = evs, codes
	m.batch.Applied = applied
	for i, c := range codes {
		if c != round.EntryApplied {
			m.batch.Rejected = append(m.batch.Rejected, RejectedEntry{Index: i, Code: c})
		}
	}
	if err != nil {
		return err
	}
	m.emitRound(evs)
	return nil
}

// crowdPrompt emits a CrowdPrompt when the round asked the crowd for
// decisions since the last one.
func (m *Machine) crowdPrompt() {
	if m.rnd.Prompted() == m.prompted {
		return
	}
	m.prompted = m.rnd.Prompted()
	if m.rnd.Awaiting() == 0 {
		return
	}
	sit := m.rnd.Prompts(nil)
	if len(sit) == 0 {
		return
	}
	cp := CrowdPrompt{Up: m.rnd.UpValue(), Situations: sit}
	for _, s := range sit {
		cp.Awaiting += int(s.Players)
	}
	m.emit(cp, m.roundID)
}

// emitSettlement publishes a settlement: whole for a table of players,
// as a summary and chunks of ChunkPlayers players for a crowd.
func (m *Machine) emitSettlement(ev round.Event) {
	s := ev.Settlement()
	if !m.rnd.Crowd() {
		m.emit(ev.WithSettlement(s.Clone()), m.roundID)
		return
	}
	chunks := (len(s.Seats) + ChunkPlayers - 1) / ChunkPlayers
	sum := &round.Settlement{Void: s.Void, Reason: s.Reason, Dealer: s.Dealer, Net: s.Net, Rounding: s.Rounding,
		Players: len(s.Seats), Chunks: chunks}
	sum.Dealer.Cards = slices.Clone(s.Dealer.Cards)
	m.emit(ev.WithSettlement(sum), m.roundID)
	// One array of players and one of outcomes for every chunk: a
	// crowd's settlement makes two allocations, not one per player.
	nets := make([]PlayerNet, len(s.Seats))
	outs := make([]round.Outcome, 0, len(s.Seats)+len(s.Seats)/8)
	for i := range s.Seats {
		sr := &s.Seats[i]
		pn := &nets[i]
		pn.Slot, pn.Seat, pn.Player, pn.Net = sr.Slot, sr.Seat, sr.Player, sr.Net
		start := len(outs)
		for _, h := range sr.Hands {
			pn.Staked += h.Stake
			outs = append(outs, h.Outcome)
		}
		pn.Outcomes = outs[start:len(outs):len(outs)]
		for _, sd := range sr.Side {
			pn.Staked += sd.Stake
		}
		if sr.Insurance != nil {
			pn.Staked += sr.Insurance.Stake
		}
	}
	for c := range chunks {
		lo, hi := c*ChunkPlayers, min((c+1)*ChunkPlayers, len(nets))
		m.emit(SettlementChunk{Index: c + 1, Chunks: chunks, Void: s.Void, Players: nets[lo:hi:hi]}, m.roundID)
	}
}

// rememberBatch keeps a batch's verdicts for a repeated id, the last
// maxBatchDetails batches' in full.
func (m *Machine) rememberBatch(id string) {
	res := m.batch
	res.Rejected = append([]RejectedEntry(nil), m.batch.Rejected...)
	e := m.cmds[id]
	e.batch = &res
	m.cmds[id] = e
	m.batchIDs = append(m.batchIDs, id)
	if len(m.batchIDs) > maxBatchDetails {
		if old, ok := m.cmds[m.batchIDs[0]]; ok && old.batch != nil {
			trimmed := BatchResult{Entries: old.batch.Entries, Applied: old.batch.Applied, Trimmed: true}
			old.batch = &trimmed
			m.cmds[m.batchIDs[0]] = old
		}
		m.batchIDs = m.batchIDs[1:]
	}
}
