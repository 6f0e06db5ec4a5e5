package table

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/livetable/livetable/table/round"
)

// Checkpoint is the whole table between two rounds, journaled so a replay
// can start from it instead of the journal's first record. That is what
// lets journal retention delete old segments (the journal keeps every
// segment from the newest checkpoint on: journal.Options.AnchorKind), and
// what keeps a restart fast however long the table has run.
//
// The controller writes one when betting opens (no round in play: the
// round engine holds nothing a fresh one lacks) and CheckpointEvery rounds
// have passed since the last one (the machine asks: EffectCheckpoint). It
// is never submitted from outside.
type Checkpoint struct {
	// Prev is the journal seq of the previous checkpoint, 0 for the first:
	// a restart walks back this chain to replay enough rounds for recall.
	Prev uint64 `json:"prev,omitempty"`
	// Seq is the number of the last event published before it.
	// No round id, pause or held cards: a checkpoint is only taken when
	// betting has opened on a table that is not paused.
	Seq      uint64    `json:"seq"`
	Epoch    int       `json:"epoch,omitempty"` // the rules epoch (RulesEpoch); 0 before there were epochs
	Phase    Phase     `json:"phase"`
	Deadline time.Time `json:"deadline,omitzero"`
	ShoeID   string    `json:"shoe_id,omitempty"`
	CutCard  bool      `json:"cut_card,omitempty"`
	Dealt    int       `json:"dealt"`
	Burn     int       `json:"burn,omitempty"`
	Rounds   int       `json:"rounds"`
	LastCode string    `json:"last_code,omitempty"`
	CodeN    int       `json:"code_n,omitempty"`
	TimerGen uint64    `json:"timer_gen"`
	Timer    string    `json:"timer,omitempty"`
	TimerAt  time.Time `json:"timer_at,omitzero"`
	// Alarms that did not pause the table stay listed until a resume.
	Alarms []Alarm `json:"alarms,omitempty"`
	// Devices is the last applied frame of each device session.
	Devices map[string]uint64 `json:"devices,omitempty"`
	// Commands are the most recent command ids and their verdicts (at most
	// checkpointCommands): a backend's retry of a command from before the
	// checkpoint is still answered, not applied again.
	Commands []SeenCommand `json:"commands,omitempty"`
	// Shoe is the shoe's integrity book and shuffle history: a restart
	// goes on checking the shoe in play where it was.
	Shoe *ShoeBook `json:"shoe,omitempty"`
	// Out is the shoe's count of cards out, read or not (Machine.out):
	// the positions of the cards that come out after the checkpoint go
	// on from it. 0 in checkpoints written before it was kept: Dealt
	// plus the book's unread cards then.
	Out int `json:"out,omitempty"`
	// GapTo is the highest event seq of the accepted losses (SeqGap): a
	// command whose sender had seen no later one is refused
	// (ErrStaleCommand). 0: no loss, or a checkpoint before it was kept.
	GapTo uint64 `json:"gap_to,omitempty"`
	// Times are the phase times in force (PhaseTimes), nil before the
	// journal fixed them (older builds, epochs before epochPhaseTimes):
	// a replay from the checkpoint then keeps the configuration's.
	Times *PhaseTimes `json:"times,omitempty"`
	// Codes are the codes of the most recent rounds (Machine.codes): a
	// round after the restart repeats none of them. Empty in checkpoints
	// written before they were kept: LastCode alone then.
	Codes []string `json:"codes,omitempty"`
	// LastStart is the latest start of a round (Machine.lastStart); zero
	// in checkpoints written before it was kept.
	LastStart time.Time `json:"last_start,omitzero"`
}

// SeenCommand is one remembered command id and its verdict.
type SeenCommand struct {
	ID string `json:"id"`
	// Rejected is the rejection's message, empty when accepted.
	Rejected string `json:"rejected,omitempty"`
	// Class is the message of the sentinel the rejection wrapped
	// (round.ErrIllegalAction...), so errors.Is still works after a restore.
	Class string `json:"class,omitempty"`
	// Hash is a hash of the command's body: the id re-sent with another
	// body is refused. 0 in checkpoints written before it was kept.
	Hash uint64 `json:"hash,omitempty"`
}

// Kind implements Input.
func (Checkpoint) Kind() string { return CheckpointKind }
func (Checkpoint) isInput()     {}

// checkpointCommands bounds the command ids a checkpoint carries. Ids
// after the checkpoint are rebuilt by replaying the records that follow
// it; these cover a backend retrying, across a restart, a command it sent
// just before the checkpoint.
const checkpointCommands = 512

// verdictClasses are the sentinels a command's rejection may wrap; a
// restored verdict wraps the same one.
var verdictClasses = []error{
	round.ErrIllegalAction, round.ErrOutOfTurn, round.ErrDuplicate, round.ErrUnexpectedCard,
	round.ErrBetLimit, round.ErrRoundCap, round.ErrBadBet, round.ErrFinished,
	ErrPaused, ErrJournal, ErrUnknownInput, ErrDuplicateFrame, ErrIntegrity, ErrNotShuffled, ErrStaleCommand,
	ErrWrongRound,
}

// restoredVerdict is a rejection rebuilt from a checkpoint: the same
// message, and errors.Is finds the same sentinel.
type restoredVerdict struct {
	msg   string
	class error
}

func (e *restoredVerdict) Error() string { return e.msg }
func (e *restoredVerdict) Unwrap() error { return e.class }

func seenCommand(id string, verdict error) SeenCommand {
	sc := SeenCommand{ID: id}
	if verdict == nil {
		return sc
	}
	sc.Rejected = verdict.Error()
	for _, cl := range verdictClasses {
		if errors.Is(verdict, cl) {
			sc.Class = cl.Error()
			break
		}
	}
	return sc
}

func (sc SeenCommand) verdict() error {
	if sc.Rejected == "" {
		return nil
	}
	v := &restoredVerdict{msg: sc.Rejected}
	for _, cl := range verdictClasses {
		if cl.Error() == sc.Class {
			v.class = cl
		}
	}
	return v
}

// Checkpoint captures the machine's state. The loop journals it when an
// Apply asks (EffectCheckpoint): only between rounds.
func (m *Machine) Checkpoint() Checkpoint {
	ck := Checkpoint{
		Prev: m.ckSeq, Seq: m.seq, Epoch: m.epoch, Phase: m.phase, Deadline: m.deadline,
		ShoeID: m.shoeID, CutCard: m.cutCard, Dealt: m.dealt, Out: m.out, Burn: m.burn, Rounds: m.rounds,
		LastCode: m.lastCode, CodeN: m.codeN, TimerGen: m.timerGen, Timer: string(m.timer.Name), TimerAt: m.timer.At,
		Alarms: slices.Clone(m.alarms), Devices: maps.Clone(m.devSeen), Shoe: m.shoe.save(), GapTo: m.gapTo,
		Codes: slices.Clone(m.codes), LastStart: m.lastStart,
	}
	if m.timesJournaled {
		t := m.PhaseTimes()
		ck.Times = &t
	}
	ids := m.cmdOrder[max(0, len(m.cmdOrder)-checkpointCommands):]
	for _, id := range ids {
		e := m.cmds[id]
		sc := seenCommand(id, e.verdict)
		sc.Hash = e.hash
		ck.Commands = append(ck.Commands, sc)
	}
	return ck
}

// Restore makes ck the machine's state: the start of a replay that does
// not begin at the journal's first record. A checkpoint written before
// the machine kept the shoe's book restores an empty book.
func (m *Machine) Restore(ck Checkpoint) error {
	if ck.Epoch > CurrentRulesEpoch {
		return fmt.Errorf("%w: a checkpoint of rules epoch %d, this build's are %d: run the newer build (or restore the data directory saved before it)",
			ErrRulesEpoch, ck.Epoch, CurrentRulesEpoch)
	}
	if err := m.shoe.load(ck.Shoe); err != nil {
		return err
	}
	m.seq, m.epoch, m.phase, m.deadline, m.roundID = ck.Seq, ck.Epoch, ck.Phase, ck.Deadline, ""
	m.pauses, m.pauseWhy, m.held, m.misread, m.voided = nil, "", nil, "", false
	m.aside = nil
	m.shoeID, m.cutCard, m.dealt, m.burn, m.rounds = ck.ShoeID, ck.CutCard, ck.Dealt, ck.Burn, ck.Rounds
	m.out, m.gapTo = ck.Out, ck.GapTo
	m.gapShoe, m.gapAt = "", false
	if ck.Times != nil {
		m.setPhaseTimes(*ck.Times)
	}
	if m.out == 0 {
		m.out = ck.Dealt + m.shoe.unread
	}
	m.misreadAt, m.corrected = 0, nil
	m.lastCode, m.codeN = ck.LastCode, ck.CodeN
	m.codes, m.lastStart = slices.Clone(ck.Codes), ck.LastStart
	if len(m.codes) == 0 && ck.LastCode != "" {
		m.codes = []string{ck.LastCode}
	}
	m.timerGen = ck.TimerGen
	m.timer = Deadline{}
	if ck.Timer != "" {
		m.timer = Deadline{Name: TimerName(ck.Timer), At: ck.TimerAt, Key: m.timerKey()}
	}
	m.frozen, m.frozenAt = "", 0
	m.alarms = slices.Clone(ck.Alarms)
	m.devSeen = maps.Clone(ck.Devices)
	if m.devSeen == nil {
		m.devSeen = map[string]uint64{}
	}
	m.cmds, m.cmdOrder = map[string]ledgerEntry{}, nil
	for _, sc := range ck.Commands {
		if _, ok := m.cmds[sc.ID]; !ok {
			m.cmdOrder = append(m.cmdOrder, sc.ID)
		}
		m.cmds[sc.ID] = ledgerEntry{hash: sc.Hash, verdict: sc.verdict()}
	}
	m.rnd = round.New(m.cfg.Rules)
	// The whole snapshot, as the checkpoint's last input left it: a
	// restart from the newest checkpoint may apply nothing after it.
	m.state = m.buildState()
	return nil
}

// Drift names the first field where the machine differs from a
// checkpoint the live table wrote, "" when they agree.
func (m *Machine) Drift(ck Checkpoint) string {
	now := m.Checkpoint()
	switch {
	case now.Seq != ck.Seq:
		return fmt.Sprintf("event seq %d, checkpoint %d", now.Seq, ck.Seq)
	case now.Phase != ck.Phase:
		return fmt.Sprintf("phase %s, checkpoint %s", now.Phase, ck.Phase)
	case now.Rounds != ck.Rounds:
		return fmt.Sprintf("rounds %d, checkpoint %d", now.Rounds, ck.Rounds)
	case now.ShoeID != ck.ShoeID || now.Dealt != ck.Dealt || now.CutCard != ck.CutCard || now.Burn != ck.Burn:
		return fmt.Sprintf("shoe %s/%d, checkpoint %s/%d", now.ShoeID, now.Dealt, ck.ShoeID, ck.Dealt)
	case ck.Shoe != nil && (now.Shoe.Order != ck.Shoe.Order || now.Shoe.ID != ck.Shoe.ID):
		return fmt.Sprintf("shoe book %s/%d cards, checkpoint %s/%d", now.Shoe.ID, len(now.Shoe.Order)/2, ck.Shoe.ID, len(ck.Shoe.Order)/2)
	case now.LastCode != ck.LastCode || now.CodeN != ck.CodeN:
		return fmt.Sprintf("last round %s, checkpoint %s", now.LastCode, ck.LastCode)
	case m.paused():
		return "paused, checkpoint not"
	}
	return ""
}

// adopt continues from a checkpoint the live table wrote when a replay
// rebuilt something else (a build that derives other events from the same
// inputs): the checkpoint is what was published, so it wins. The command
// ids and device frames the replay rebuilt are a superset of the
// checkpoint's and are kept.
func (m *Machine) adopt(ck Checkpoint) error {
	cmds, order, devs := m.cmds, m.cmdOrder, m.devSeen
	if err := m.Restore(ck); err != nil {
		return err
	}
	m.cmds, m.cmdOrder = cmds, order
	for k, v := range devs {
		m.devSeen[k] = max(m.devSeen[k], v)
	}
	return nil
}

// DefaultCheckpointEvery is how many rounds pass between checkpoints when
// Options.CheckpointEvery is zero: a restart replays at most about that
// many rounds (more only while the outbox is behind the newest
// checkpoint), and the console's recall gets at least that many (the
// stretch before the newest checkpoint is read after the table runs:
// ReplayEarlierEvents).
const DefaultCheckpointEvery = 100

// inputsPerRound is a generous count of journaled inputs per round, used to
// checkpoint an idle table by inputs instead of rounds.
const inputsPerRound = 40
