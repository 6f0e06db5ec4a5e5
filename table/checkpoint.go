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
// have passed since the last one. It is never submitted from outside.
type Checkpoint struct {
	// Prev is the journal seq of the previous checkpoint, 0 for the first:
	// a restart walks back this chain to replay enough rounds for recall.
	Prev uint64 `json:"prev,omitempty"`
	// Seq is the number of the last event published before it.
	// No round id, pause or held cards: a checkpoint is only taken when
	// betting has opened on a table that is not paused.
	Seq      uint64    `json:"seq"`
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
}

// SeenCommand is one remembered command id and its verdict.
type SeenCommand struct {
	ID string `json:"id"`
	// Rejected is the rejection's message, empty when accepted.
	Rejected string `json:"rejected,omitempty"`
	// Class is the message of the sentinel the rejection wrapped
	// (round.ErrIllegalAction...), so errors.Is still works after a restore.
	Class string `json:"class,omitempty"`
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
	ErrPaused, ErrJournal, ErrUnknownInput, ErrDuplicateFrame,
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

// checkpoint captures the table's state. Only called between rounds.
func (c *Controller) checkpoint() Checkpoint {
	ck := Checkpoint{
		Prev: c.ckSeq, Seq: c.seq, Phase: c.phase, Deadline: c.deadline,
		ShoeID: c.shoeID, CutCard: c.cutCard, Dealt: c.dealt, Burn: c.burn, Rounds: c.rounds,
		LastCode: c.lastCode, CodeN: c.codeN, TimerGen: c.timerGen, Timer: c.timerName, TimerAt: c.timerAt,
		Alarms: slices.Clone(c.alarms), Devices: maps.Clone(c.devSeen),
	}
	ids := c.cmdOrder[max(0, len(c.cmdOrder)-checkpointCommands):]
	for _, id := range ids {
		ck.Commands = append(ck.Commands, seenCommand(id, c.cmdSeen[id]))
	}
	return ck
}

// restore makes ck the table's state: the start of a replay that does not
// begin at the journal's first record.
func (c *Controller) restore(ck Checkpoint) {
	c.seq, c.phase, c.deadline, c.roundID = ck.Seq, ck.Phase, ck.Deadline, ""
	c.paused, c.pauseWhy, c.held = false, "", nil
	c.shoeID, c.cutCard, c.dealt, c.burn, c.rounds = ck.ShoeID, ck.CutCard, ck.Dealt, ck.Burn, ck.Rounds
	c.lastCode, c.codeN = ck.LastCode, ck.CodeN
	c.timerGen, c.timerName, c.timerAt = ck.TimerGen, ck.Timer, ck.TimerAt
	c.alarms = slices.Clone(ck.Alarms)
	c.devSeen = maps.Clone(ck.Devices)
	if c.devSeen == nil {
		c.devSeen = map[string]uint64{}
	}
	c.cmdSeen, c.cmdOrder = map[string]error{}, nil
	for _, sc := range ck.Commands {
		if _, ok := c.cmdSeen[sc.ID]; !ok {
			c.cmdOrder = append(c.cmdOrder, sc.ID)
		}
		c.cmdSeen[sc.ID] = sc.verdict()
	}
	c.rnd = round.New(c.opts.Rules)
}

// checkpointDrift names the first field where the state rebuilt by replay
// differs from a checkpoint the live table wrote, "" when they agree.
func (c *Controller) checkpointDrift(ck Checkpoint) string {
	now := c.checkpoint()
	switch {
	case now.Seq != ck.Seq:
		return fmt.Sprintf("event seq %d, checkpoint %d", now.Seq, ck.Seq)
	case now.Phase != ck.Phase:
		return fmt.Sprintf("phase %s, checkpoint %s", now.Phase, ck.Phase)
	case now.Rounds != ck.Rounds:
		return fmt.Sprintf("rounds %d, checkpoint %d", now.Rounds, ck.Rounds)
	case now.ShoeID != ck.ShoeID || now.Dealt != ck.Dealt || now.CutCard != ck.CutCard || now.Burn != ck.Burn:
		return fmt.Sprintf("shoe %s/%d, checkpoint %s/%d", now.ShoeID, now.Dealt, ck.ShoeID, ck.Dealt)
	case now.LastCode != ck.LastCode || now.CodeN != ck.CodeN:
		return fmt.Sprintf("last round %s, checkpoint %s", now.LastCode, ck.LastCode)
	case c.paused:
		return "paused, checkpoint not"
	}
	return ""
}

// checkpointDue reports whether a checkpoint should follow the input just
// applied: betting has just opened (no round in play, not paused) and
// enough rounds, or inputs, have passed since the last one.
func (c *Controller) checkpointDue() bool {
	if c.opts.Journal == nil || c.recallOnly || c.phase != PhaseBetting || c.paused || c.roundID != "" {
		return false
	}
	every := c.opts.CheckpointEvery
	if every < 0 {
		return false
	}
	if every == 0 {
		every = DefaultCheckpointEvery
	}
	// An idle table (betting opening and closing with no bets) still
	// checkpoints now and then, so retention can go on deleting.
	return c.ckSeq == 0 || c.rounds-c.ckRounds >= every || c.sinceCk >= every*inputsPerRound
}

// DefaultCheckpointEvery is how many rounds pass between checkpoints when
// Options.CheckpointEvery is zero: a restart replays at most about twice
// that many rounds, and the console's recall gets at least that many.
const DefaultCheckpointEvery = 100

// inputsPerRound is a generous count of journaled inputs per round, used to
// checkpoint an idle table by inputs instead of rounds.
const inputsPerRound = 40

// writeCheckpoint journals a checkpoint of the current state.
func (c *Controller) writeCheckpoint() error {
	data, err := EncodeInput(c.checkpoint())
	if err != nil {
		return err
	}
	seq, err := c.opts.Journal.Append(Entry{At: c.now, Kind: CheckpointKind, Shoe: c.shoeID, Data: data})
	if err != nil {
		c.alarm("journal", fmt.Sprintf("journal append failed: %v", err), true)
		c.publishState()
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	c.markCheckpoint(seq)
	return nil
}

// markCheckpoint records that the state at journal record seq is
// checkpointed: the next one is due CheckpointEvery rounds later.
func (c *Controller) markCheckpoint(seq uint64) {
	c.ckSeq, c.ckRounds, c.sinceCk = seq, c.rounds, 0
}

// errStopReplay ends a replay that has read what it needed.
var errStopReplay = errors.New("table: replay stop")

// readCheckpoint returns the checkpoint journaled at seq; ok is false when
// retention has deleted it.
func (c *Controller) readCheckpoint(seq uint64) (ck Checkpoint, ok bool, err error) {
	err = c.opts.Journal.Replay(seq, func(got uint64, _ time.Time, data []byte) error {
		if got != seq {
			return errStopReplay // the journal starts after seq
		}
		in, err := DecodeInput(data)
		if err != nil {
			return err
		}
		v, isCk := in.(Checkpoint)
		if !isCk {
			return fmt.Errorf("table: journal record %d is a %s, not a checkpoint", seq, in.Kind())
		}
		ck, ok = v, true
		return errStopReplay
	})
	if errors.Is(err, errStopReplay) {
		err = nil
	}
	return ck, ok, err
}

// replayStart picks where a restart begins replaying: one checkpoint
// before the newest (so recall has at least CheckpointEvery rounds), and
// further back while the outbox has not yet seen the checkpoint's events
// (they must be regenerated to be published), but never before the oldest
// checkpoint retained. 0 means the whole journal.
func (c *Controller) replayStart() (uint64, error) {
	at, start := c.opts.Journal.LastOfKind(CheckpointKind), uint64(0)
	for steps := 0; at != 0; steps++ {
		ck, ok, err := c.readCheckpoint(at)
		if err != nil {
			return 0, err
		}
		if !ok {
			return start, nil
		}
		start = at
		// RepublishAfter 0: no outbox (or an empty one) to catch up.
		if steps > 0 && (ck.Seq <= c.opts.RepublishAfter || c.opts.RepublishAfter == 0) {
			return at, nil
		}
		at = ck.Prev
	}
	return 0, nil
}

// checkpointAtOrBefore returns the journal seq of the newest checkpoint at
// or before seq, 0 when there is none retained.
func (c *Controller) checkpointAtOrBefore(seq uint64) (uint64, error) {
	at := c.opts.Journal.LastOfKind(CheckpointKind)
	for at > seq {
		ck, ok, err := c.readCheckpoint(at)
		if err != nil || !ok {
			return 0, err
		}
		at = ck.Prev
	}
	return at, nil
}

// checkpointBeforeEvent returns the journal seq of the newest checkpoint
// taken before event seq was published (its Seq, the last event before it,
// is lower), 0 when there is none retained.
func (c *Controller) checkpointBeforeEvent(seq uint64) (uint64, error) {
	at := c.opts.Journal.LastOfKind(CheckpointKind)
	for at != 0 {
		ck, ok, err := c.readCheckpoint(at)
		if err != nil || !ok {
			return 0, err
		}
		if ck.Seq < seq {
			return at, nil
		}
		at = ck.Prev
	}
	return 0, nil
}
