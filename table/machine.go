package table

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/sidebets"
	"github.com/livetable/livetable/table/strategy"
)

// errIllegal is the round engine's sentinel for an action the rules or
// the table's phase do not allow: the machine's refusals wrap it too.
var errIllegal = round.ErrIllegalAction

// MachineConfig is what a Machine is built from: the table's name, the
// game's rules and the table's timing. It is not state: the same config
// and the same inputs always give the same machine.
type MachineConfig struct {
	Table string
	Rules *rules.Set
	// SettleDelay is the pause after a settlement before bets reopen.
	SettleDelay time.Duration
	// BetsGrace is how long after the betting deadline the table waits for
	// the backend's bets_closed before it reopens betting.
	BetsGrace time.Duration
	// ResumeGrace is the least time a decision or insurance timer gets back
	// when a paused round resumes.
	ResumeGrace time.Duration
	// CheckpointEvery is how many rounds pass between checkpoints; 0 means
	// DefaultCheckpointEvery, negative none.
	CheckpointEvery int
	// ShuffleRun is the run of cards in a previous shoe's order that raises
	// the shuffle alarm; ShuffleHistory how many previous shoes a shoe is
	// compared with. 0 means the defaults.
	ShuffleRun, ShuffleHistory int
}

// Machine is the table as one pure state machine: everything that decides
// what the table does next (phase, the round, the shoe's integrity book,
// a pending misread, the pause reasons, timers as deadlines, the device
// frames and commands already applied) and Apply, the only way it
// changes. It does no I/O, reads no clock and starts no goroutine (a
// test, TestMachineIsPure, enforces it): the Controller is the loop around
// it (journal, fan-out, real timers), and a replay of the journal, game
// recall, the resend of lost events and the simulators drive the same
// Apply. A Machine belongs to one goroutine.
type Machine struct {
	cfg MachineConfig

	seq      uint64 // the last event's number
	epoch    int    // the rules the inputs are judged by (RulesEpoch)
	rnd      *round.Round
	roundID  string
	phase    Phase
	pauses   []PauseReason // empty: not paused
	pauseWhy string
	// pauseWhys is the message each pause reason came with (the first:
	// pause): from epochPauseWhy, a correction that lifts the misread's
	// reasons and leaves the table paused for another names that one's
	// (pauseWhy), as does a void that leaves it paused for its shoe.
	// Not checkpointed (a checkpoint is never paused): an entry is
	// written whenever its reason joins the pauses, and read only for a
	// reason in them.
	pauseWhys map[PauseReason]string
	// held are the cards out of the shoe the round has not had yet, in
	// the order the dealer drew them: pulled while paused (applied on
	// resume) and, from epochMisreadQueue, the cards the shoe could not
	// give, each waiting for a supervisor's correction (machine_misread.go).
	held []pulled
	// aside is the set-aside list (machine_aside.go), from epochSetAside:
	// the cards out of the shoe the table cannot use, gathered while it
	// is paused, in the order drawn; the resume or a void names them in
	// one alarm and empties it. Empty on a table not paused, so no
	// checkpoint needs it.
	aside    []card.Card
	misread  string // before epochMisreadQueue: the shoe's report of the one card the round is missing; "" none
	voided   bool   // the settled round was voided: the dealer clears the cards
	cutCard  bool
	shoeID   string
	burn     int
	dealt    int // cards out of this shoe
	timer    Deadline
	timerGen uint64
	frozen   TimerName     // the timer running when the table paused
	frozenAt time.Duration // and its time left then
	deadline time.Time
	lastCode string
	codeN    int
	// codes are the codes of the most recent rounds (recentCodes),
	// oldest first, and lastStart the latest start of a round: from
	// epochRoundCodes a round starting no later than lastStart (the wall
	// clock went back) takes a code none of them has (closeBets). Kept at
	// every epoch, so a journal upgraded to it knows the rounds before.
	codes     []string
	lastStart time.Time
	alarms    []Alarm
	rounds    int
	devSeen   map[string]uint64 // last applied frame per device session
	cmds      map[string]ledgerEntry
	cmdOrder  []string // ids in cmds, oldest first
	// gapTo is the highest event seq of the accepted losses (SeqGap):
	// from epochSeenFence a command whose sender had seen no later event
	// was made for the table before the restore (checkSeen).
	gapTo uint64
	// gapShoe is the shoe in play when an accepted loss (SeqGap) was
	// journaled (gapAt set): its record (the integrity book) is the
	// backup's, without the cards dealt since, so the paused table's line
	// tells the supervisor to change it before resuming, until it is.
	// Not checkpointed: a checkpoint is never taken while paused, and
	// the line is the paused table's.
	gapShoe string
	gapAt   bool
	shoe    shoeBook

	// out is how many cards came out of this shoe as the table heard of
	// them, read or not (each card drawn, booked or refused, each card the
	// shoe dealt unread, two for a double card): a card's position in the
	// shoe, its identity in the misread queue (pulled.at), is out when it
	// comes out. dealt counts only the cards booked so far.
	out int

	// The supervisor's pause flow (machine_shoe.go): misreadUnread is set
	// when the pending misread is a card the shoe dealt and could not
	// read (not one the integrity book refused), so resume is refused:
	// the round would go on without a card on the table; link is the
	// shoe's link as the table was told.
	misreadUnread bool
	misreadAt     int // before epochMisreadQueue: the pending misread's position in the shoe (out)
	link          shoeLink
	// misreadDealt, before epochPauseFlow, is whether the pending misread
	// is a card dealt unread (misreadUnread is not kept then): the
	// journal reaching epochUpgradeMisread with it pending makes it one
	// the resume is refused for (applyRulesEpoch).
	misreadDealt bool
	// corrected are the cards corrected since betting last opened, their
	// positions and cards: a second correct naming one of them (a double
	// click, two supervisors) is told it was corrected already
	// (ErrMisreadAt). Empty at a checkpoint (taken when betting opens).
	corrected []correction
	// repeatAt is when each coalesced alarm code was last raised while
	// the table is paused (coalesce in machine_shoe.go); empty when it
	// is not paused, so no checkpoint needs it.
	repeatAt map[string]time.Time
	// timesJournaled is set once the journal fixed the phase times
	// (PhaseTimes, or a checkpoint carrying them): the controller
	// journals the configuration's at start until then.
	timesJournaled bool

	// Checkpoint bookkeeping: the journal seq of the last checkpoint, the
	// rounds then and the inputs applied since.
	ckSeq    uint64
	ckRounds int
	sinceCk  int

	// The crowd's batches (crowd.go): the verdicts of the batch being
	// applied, the batch ids whose verdicts are kept in full, the
	// round's count of crowd prompts already published.
	batch    BatchResult
	batchIDs []string
	prompted uint64

	// Scratch, reused from input to input.
	slotBuf []round.SlotDecision
	codeBuf []round.EntryCode
	now     time.Time
	evs     []Event
	effs    []Effect
	evBuf   []round.Event
	state   *State

	// newRound is a new round's view, which the state shows once bets
	// are open (roundView).
	newRound round.View
}

// ledgerEntry is a command id's record: a hash of the command's body, so
// the id re-sent with another body is refused, and its verdict.
type ledgerEntry struct {
	hash    uint64
	verdict error
	// batch is a Decisions batch's verdicts per entry.
	batch *BatchResult
}

// maxCommandIDs bounds the remembered command ids: twice the MQTT link's
// reply ledger (4096, which answers a repeat before it gets here), hours
// of play, far more than a backend retries over. About 100 bytes an id.
const maxCommandIDs = 8192

// Step is what one applied input did: the events to publish (numbered;
// the last is the State snapshot after the input, which takes no number)
// and the effects the loop must carry out. Events and Effects are the
// machine's buffers: valid until the next Apply.
type Step struct {
	Events  []Event
	Effects []Effect
	// Fault is the verdict of an input that was applied and is reported as
	// a fault: a card that does not fit the round or breaks the shoe's
	// integrity (it is journaled: never lose a card; the table raised an
	// alarm and paused).
	Fault error
	// Repeat is set for a command whose id was applied before with the
	// same body: nothing changed, nothing is journaled, Fault is the first
	// verdict.
	Repeat bool
	// Batch is a Decisions batch's verdict per entry, also when the
	// batch is refused as a whole (then with the error) and for a
	// repeat. It is the machine's: valid until the next Apply.
	Batch *BatchResult
}

// NewMachine returns the machine of a table that has never run: idle,
// no shoe, event numbering at 0.
func NewMachine(cfg MachineConfig) (*Machine, error) {
	if cfg.Rules == nil {
		return nil, errors.New("table: no rule set")
	}
	if err := cfg.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	if cfg.ShuffleRun < 2 {
		cfg.ShuffleRun = DefaultShuffleRun
	}
	if cfg.ShuffleHistory <= 0 {
		cfg.ShuffleHistory = DefaultShuffleHistory
	}
	m := &Machine{cfg: cfg, epoch: CurrentRulesEpoch, rnd: round.New(cfg.Rules), phase: PhaseIdle, devSeen: map[string]uint64{},
		cmds: map[string]ledgerEntry{}, shoe: newShoeBook(cfg.Rules.Decks, cfg.ShuffleRun, cfg.ShuffleHistory)}
	m.newRound = m.rnd.Snapshot()
	m.state = &State{Table: cfg.Table, Game: cfg.Rules.Code, Phase: PhaseIdle}
	return m, nil
}

// Apply applies one input at host time at and returns what it did.
//
// A refused input returns a typed error (round.ErrIllegalAction,
// round.ErrOutOfTurn, ErrPaused, ErrNoMisread, ErrCommandIDReused,
// ErrDuplicateFrame, ErrStaleTimer...) and leaves the machine exactly as it
// was: the loop answers it and does not journal it. Every other input
// changed the machine and must be journaled before its events go out; a
// replay of the journal through Apply, with each record's time, rebuilds
// the same machine and the same event numbers.
//
// The machine keeps at's wall time only (at.Round(0) drops a monotonic
// reading): a replay has the journal's wall times, and a live time.Now()
// kept beside them would measure the machine's windows on another clock
// than the replay's across a wall-clock step.
func (m *Machine) Apply(at time.Time, in Input) (Step, error) {
	m.evs, m.effs, m.now = m.evs[:0], m.effs[:0], at.Round(0)
	var hash uint64
	id := commandID(in)
	if id != "" {
		hash = commandHash(in)
		if e, ok := m.cmds[id]; ok {
			if e.hash != 0 && e.hash != hash {
				return Step{}, fmt.Errorf("%w: %q", ErrCommandIDReused, id)
			}
			// Delivered again (a retry, a redelivery after a restart):
			// applied once, answered the same.
			return Step{Repeat: true, Fault: e.verdict, Batch: e.batch}, nil
		}
	}
	if seen := commandSeen(in); seen != 0 && m.epoch >= epochSeenFence {
		if err := m.checkSeen(seen); err != nil {
			if v, ok := in.(Decisions); ok {
				m.batch = BatchResult{Entries: len(v.Entries)}
				return Step{Batch: &m.batch}, err
			}
			return Step{}, err
		}
	}
	if d, ok := in.(deviceRef); ok {
		if sess, seq := d.deviceFrame(); sess != "" && seq != 0 && seq <= m.devSeen[sess] {
			return Step{}, fmt.Errorf("%w: %s #%d", ErrDuplicateFrame, sess, seq)
		}
	}
	fault, err := m.apply(in)
	_, isBatch := in.(Decisions)
	if err != nil {
		if isBatch {
			return Step{Batch: &m.batch}, err
		}
		return Step{}, err
	}
	if d, ok := in.(deviceRef); ok {
		if sess, seq := d.deviceFrame(); sess != "" && seq > m.devSeen[sess] {
			m.devSeen[sess] = seq
		}
	}
	if id != "" {
		m.remember(id, hash, fault)
		if isBatch {
			m.rememberBatch(id)
		}
	}
	m.sinceCk++
	if m.checkpointDue() {
		m.effs = append(m.effs, Effect{Kind: EffectCheckpoint})
	}
	m.publishState()
	st := Step{Events: m.evs, Effects: m.effs, Fault: fault}
	if isBatch {
		st.Batch = &m.batch
	}
	return st, nil
}

func (m *Machine) remember(id string, hash uint64, verdict error) {
	if _, ok := m.cmds[id]; !ok {
		m.cmdOrder = append(m.cmdOrder, id)
		if len(m.cmdOrder) > maxCommandIDs {
			delete(m.cmds, m.cmdOrder[0])
			m.cmdOrder = m.cmdOrder[1:]
		}
	}
	m.cmds[id] = ledgerEntry{hash: hash, verdict: verdict}
}

// commandHash is a hash of a command's body (its encoded form). Never 0:
// 0 marks a ledger entry restored without one.
func commandHash(in Input) uint64 {
	b, err := json.Marshal(in)
	if err != nil {
		return 1
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return max(h.Sum64(), 1)
}

// apply dispatches an input. err refuses it, and then nothing has
// changed; fault reports an applied input as a fault.
func (m *Machine) apply(in Input) (fault, err error) {
	switch v := in.(type) {
	case CardDrawn:
		return m.applyCard(v)
	case CutCardSeen:
		// The shoe and the GPIO sensor may both report it: once is enough.
		if !m.cutCard {
			m.cutCard = true
			m.emit(CutCard{Source: v.Source}, m.roundID)
			if m.phase == PhaseBetting || m.phase == PhaseLastCall || m.phase == PhaseSettled || m.phase == PhaseIdle {
				// Between rounds: no round may open on this shoe.
				m.stopTimer()
				m.setPhase(PhaseClosed, time.Time{}, "cut card: change shoe")
			}
		}
		return nil, nil
	case ShoeIn:
		// A loaded shoe goes in: the last one's order joins the shuffle
		// history, and this one's count is checked when it comes out.
		mid := m.epoch >= epochShoeMidRound && m.dealtMidRound()
		m.shoe.finish()
		m.shoe.started = true
		if mid {
			m.shoeMidRound("a new shoe went in")
		}
		return nil, nil
	case ShoeOut:
		return m.applyShoeOut(v), nil
	case ShoeChanged:
		mid := m.epoch >= epochShoeMidRound && m.dealtMidRound() && v.ShoeID != m.shoeID
		if m.shoe.dealt() > 0 && m.shoe.id != v.ShoeID {
			// No SHOE_IN between the shoes (the shuffler's swap, a reader
			// that missed it): the old shoe ends here.
			m.shoe.finish()
		}
		m.shoe.id = v.ShoeID
		m.shoeID, m.cutCard, m.dealt, m.out, m.burn = v.ShoeID, false, 0, 0, m.cfg.Rules.BurnOnNewShoe
		m.emit(ShoeInPlay{ShoeID: v.ShoeID, Burn: m.burn}, "")
		if mid {
			m.shoeMidRound(fmt.Sprintf("shoe %q came in", v.ShoeID))
		}
		if m.phase == PhaseClosed || m.phase == PhaseIdle {
			m.openBetting()
		}
		return nil, nil
	case BetsClosed:
		return nil, m.closeBets(v)
	case Decision:
		if m.paused() {
			return nil, fmt.Errorf("%w: table paused (%s)", ErrPaused, m.pauseWhy)
		}
		a, err := round.ParseAction(v.Action)
		if err != nil {
			return nil, err
		}
		return nil, m.roundInput(round.Input{Type: round.InDecision, Seat: v.Seat, Player: v.Player, Action: a})
	case Decisions:
		return nil, m.applyDecisions(v)
	case InsuranceAnswer:
		if m.paused() {
			return nil, fmt.Errorf("%w: table paused (%s)", ErrPaused, m.pauseWhy)
		}
		return nil, m.roundInput(round.Input{Type: round.InInsurance, Seat: v.Seat, Player: v.Player, Take: v.Take})
	case TimerFired:
		return nil, m.applyTimer(v)
	case Supervisor:
		return nil, m.applySupervisor(v)
	case DeviceAlarm:
		return nil, m.deviceAlarm(v)
	case SeqGap:
		return nil, m.applySeqGap(v)
	case RulesEpoch:
		return nil, m.applyRulesEpoch(v)
	case PhaseTimes:
		return nil, m.applyPhaseTimes(v)
	case Checkpoint:
		return nil, fmt.Errorf("%w: a checkpoint is written by the table itself", errIllegal)
	case nil:
		return nil, fmt.Errorf("%w: no input", ErrUnknownInput)
	}
	return nil, fmt.Errorf("%w %T", ErrUnknownInput, in)
}

// ErrIntegrity is the fault of a card that breaks the shoe's integrity
// (more of a card than the shoe holds, an RFID code seen twice) and of a
// shoe whose count is wrong at shoe out.
var ErrIntegrity = errors.New("table: shoe integrity")

// ErrNotShuffled is the fault of a card that completes a run of a
// previous shoe's order (ShuffleRun cards): the shoe was not shuffled.
var ErrNotShuffled = errors.New("table: shoe not shuffled")

// applyCard takes a card out of the shoe: the integrity book first (a card
// that breaks it is not booked and does not reach the round: the round
// waits for the card, which a supervisor corrects, or is voided), then the
// burn, the held cards of a paused table, or the round.
func (m *Machine) applyCard(v CardDrawn) (fault, err error) {
	if !v.Card.Valid() {
		return nil, fmt.Errorf("%w: not a card", errIllegal)
	}
	m.out++
	if why := m.checkCard(v.Card, v.Code); why != "" {
		msg := fmt.Sprintf("shoe %q: %s: card %s", m.shoe.id, why, v.Card)
		if v.Code != "" {
			msg += fmt.Sprintf(" code %q", v.Code)
		}
		m.cardMissing(msg, false)
		m.alarm("shoe.integrity_alarm", msg, PauseIntegrity)
		return fmt.Errorf("%w: %s", ErrIntegrity, msg), nil
	}
	var run int
	var past string
	if m.shoeActive() {
		run, past = m.shoe.take(v.Card, v.Code)
	}
	m.dealt++
	if m.setAsideNow() {
		// No card is the table's while it is paused like this: the card
		// joins the set-aside list, which the instruction line names; the
		// supervisor's one resume deals with the whole list.
		m.aside = append(m.aside, v.Card)
	} else if m.paused() {
		m.held = append(m.held, pulled{card: v.Card})
		m.emit(Alarm{Code: "card_while_paused", Message: fmt.Sprintf("%s pulled while paused: held until resume", v.Card)}, m.heldCardRound())
	} else {
		fault = m.place(v.Card)
	}
	return m.shuffleAlarm(run, past, fault), nil
}

// place puts a booked card where it goes: the burn a new shoe owes
// (003), aside after a void, or the round. A card held while the table
// was paused goes the same way when it resumes (the simulation's seed 53:
// a held first card of a shoe went to the round, and the burn took the
// next one).
func (m *Machine) place(c card.Card) error {
	switch {
	case m.burn > 0:
		m.burn--
		m.emit(Burned{Card: c}, "")
	case m.voided && m.phase == PhaseSettled:
		// A card on its way when the round was voided: set aside with
		// the voided round's cards.
		m.emit(Alarm{Code: "card_after_void", Message: fmt.Sprintf("%s pulled after the void: set aside with the round's cards", c)}, m.heldCardRound())
	default:
		return m.cardToRound(c)
	}
	return nil
}

// checkCard is the integrity book's check of a card, made only while a
// shoe is in play (announced by SHOE_IN or its id): a table fed cards by
// hand, without a shoe, has no composition to keep.
func (m *Machine) checkCard(c card.Card, code string) IntegrityReason {
	if !m.shoeActive() {
		return ""
	}
	return m.shoe.check(c, code)
}

func (m *Machine) shoeActive() bool { return m.shoeID != "" || m.shoe.started || m.shoe.id != "" }

// shuffleAlarm raises the shuffle alarm once per shoe, when a card ends a
// run of ShuffleRun cards in a previous shoe's order.
func (m *Machine) shuffleAlarm(run int, past string, fault error) error {
	if run < m.cfg.ShuffleRun || m.shoe.shuffle.alarmed {
		return fault
	}
	m.shoe.shuffle.alarmed = true
	msg := fmt.Sprintf("shoe %q deals %d cards in the same order as shoe %q: not shuffled", m.shoe.id, run, past)
	m.alarm("shoe.shuffle_alarm", msg, PauseShuffle)
	if fault == nil {
		fault = fmt.Errorf("%w: %s", ErrNotShuffled, msg)
	}
	return fault
}

// cardToRound hands a booked card to the round; a card the round cannot
// take pauses the table with an alarm.
func (m *Machine) cardToRound(c card.Card) error {
	err := m.roundInput(round.Input{Type: round.InCard, Card: c})
	if errors.Is(err, round.ErrUnexpectedCard) {
		if m.epoch >= epochSetAside {
			// The first of the set-aside list: the cards pulled after it
			// while the table is paused join it (machine_aside.go).
			m.aside = append(m.aside, c)
		}
		m.alarm("unexpected_card", fmt.Sprintf("card %s does not fit the round (%s): check the shoe", c, m.roundPhase()), PauseUnexpectedCard)
	}
	return err
}

// cardMissing records a pending misread when the round waits for a card
// that the shoe could not give it: a supervisor corrects it (the card the
// dealer sees) or voids the round.
func (m *Machine) cardMissing(what string, unread bool) {
	if m.epoch >= epochMisreadQueue {
		m.queueMissing(what, unread)
		return
	}
	if need, _, _ := m.rnd.NeedsCard(); need && m.misread == "" {
		m.misread, m.misreadAt, m.misreadDealt = what, m.out, unread
	}
}

func (m *Machine) applyShoeOut(v ShoeOut) error {
	var fault error
	if msg := m.shoe.countError(v.Returned); msg != "" {
		m.alarm("shoe.integrity_alarm", msg, PauseIntegrity)
		fault = fmt.Errorf("%w: %s", ErrIntegrity, msg)
	}
	m.shoe.finish()
	return fault
}

func (m *Machine) deviceAlarm(v DeviceAlarm) error {
	if err := m.coalesce(v); err != nil {
		return err
	}
	if v.Source == "shoe" {
		if done, err := m.shoeLinkAlarm(v); done {
			return err
		}
	}
	reason := PauseDevice
	switch {
	case v.Source == "journal":
		reason = PauseJournal
	case v.Source == "shoe" && (v.Code == "misread" || v.Code == "unknown_card" || v.Code == "face_up"):
		reason = PauseMisread
	case v.Source == "shoe" && v.Code == "integrity_alarm":
		reason = PauseIntegrity
	}
	if v.Pauses && (reason == PauseMisread || reason == PauseIntegrity) {
		m.out++
		m.cardMissing(v.Message, reason == PauseMisread)
	}
	if v.Pauses && reason == PauseMisread {
		m.unreadCard()
	}
	if v.Pauses && v.Source == "shoe" && v.Code == "double_card" {
		m.out += 2
	}
	if v.Pauses && v.Source == "shoe" && v.Code == "double_card" && m.shoeActive() && m.epoch >= epochPauseFlow {
		// Two cards out of the shoe at once, neither read: set aside by
		// the dealer, counted at shoe out.
		m.shoe.unread += 2
	}
	if !v.Pauses {
		reason = ""
	}
	m.alarm(v.Source+"."+v.Code, v.Message, reason)
	return nil
}

// heldCardRound is the round the alarm of a card held while paused, or
// set aside after a void, names: the round in play since c4d8cbc
// (2026-11-25 00:28), none before. That change came 18 minutes before
// rules epochs, so epoch-0 journals are replayed (and resent) as every
// build before it published them: without the round.
func (m *Machine) heldCardRound() string {
	if m.epoch < epochPauseFlow {
		return ""
	}
	return m.roundID
}

// CurrentRulesEpoch is the epoch of this build's rules (RulesEpoch). A
// change that makes the machine judge an input another way than the build
// before it (refuse what it accepted, or derive other events from it)
// raises it and keeps the older judgement for inputs of older epochs:
//
//   - 12 (2026-11-25): a round started no later than the latest round
//     start (the wall clock went back) takes a code (#HH:MM:SS, its
//     start time) none of the latest recentCodes rounds has: the next
//     suffix (-2, -3...) free. Before, only the round
//     just before was looked at, and a wall clock stepped back (NTP
//     correcting a clock that was ahead, a box restarted on the right
//     time after running ahead) past an earlier round's start named a
//     second round with its code: a void naming the first round (a
//     signed void delayed within its window; the round fence of epoch
//     9 compares codes), or a crowd's batch for it, acted on the second.
//     Journals of epochs 9 to 11 replay with the codes they had
//     (testdata/epoch9-repeated-code, where such a void voided the
//     second round).
//   - 11 (2026-11-25): a shoe that comes in while a round is dealt
//     (SHOE_IN, or a SHOE_ID naming another shoe) pauses the table
//     (shoe.changed_mid_round, integrity) with what to do; the change is
//     booked as before. Before, the round went on with the new shoe's
//     cards and said nothing (a new shoe's burn took one mid-round).
//     Epoch-10 journals replay as before (testdata/epoch10-shoe-mid-round).
//   - 10 (2026-11-25): the phase times are journaled (PhaseTimes, at each
//     start whose configuration's differ from the journal's, and in the
//     checkpoints), and a replay derives the phase events' deadlines and
//     the timers from them. Before, a replay took them from the
//     configuration of the day: a restart with other timing: re-derived
//     published events (a resend, game recall) with other deadlines
//     under the same seqs. No input of an older epoch is judged
//     otherwise: an epoch-9 journal holds no phase_times and replays
//     with the configuration's, as before (the epoch fixtures); the
//     epoch keeps an epoch-9 build from meeting a phase_times it does
//     not know.
//   - 9 (2026-11-25): a supervisor's void or correct that names a round
//     (Supervisor.Round) other than the table's round (the state's
//     round), or names one when no round is in play to void, is refused
//     (ErrWrongRound), nothing changed. Before, a void named no round:
//     one meant for a round that settled while it travelled (a signed
//     void delayed within its window, a console's late click) voided the
//     next round and refunded it. A void or correct naming no round is
//     judged as before; epoch-8 journals hold no round on them (no build
//     before sent it), so they replay the same (testdata/epoch8-void).
//   - 8 (2026-11-25): a command that says the newest event seq its
//     sender had seen (BetsClosed.Seen...) is refused (ErrStaleCommand)
//     when that seq is at or below the highest seq of an accepted loss
//     (SeqGap: a restore, accept-loss): made for the table before the
//     restore, it may have been applied in what was lost (the command
//     ledger lost its id too) or be meant for a round that is gone; and
//     when it is above every seq the table numbered. Before, a bets_closed
//     or a decision of the lost stretch, sent again with its id after the
//     supervisor's resume, was applied to the table's next round. Epochs 6
//     and 7 journals hold no seen (no build before took it), so they replay
//     the same (testdata/epoch6-seq-gap).
//   - 7 (2026-11-25): a supervisor's correction that lifts the last
//     card waiting and leaves the table paused for another reason (a
//     supervisor's own pause, a device) gives the table that reason's
//     message (the state's pause_reason and instruction line, the
//     refusals of a paused table); a void that leaves the table paused
//     because its shoe is down publishes the shoe's message in its phase
//     event. Before, both kept the first cause of the pause: the
//     misread the correction or the void had dealt with.
//   - 6 (2026-11-25): a paused table's coalescing of a device's repeated
//     alarm (coalesce) takes an alarm whose time is earlier than the
//     last one raised (the wall clock stepped back: NTP correcting a
//     clock that was ahead) as outside AlarmRepeatWindow, and the window
//     starts again from it. Before, the window was judged by the inputs'
//     times alone, so after a step back of an hour every repeat was
//     refused (ErrAlarmRepeated) for that hour plus the window: a device
//     fault a supervisor needed to see never reached them. The change
//     only accepts what epoch 5 refused, so an epoch-5 journal replays
//     the same under it; the epoch keeps an epoch-5 build from replaying
//     an epoch-6 journal (a rollback) whose accepted repeat it would
//     refuse (testdata/epoch5-clock-back).
//   - 5 (2026-11-25): a journal of a build before epochs (0) that stopped
//     paused on a misread, reaching this epoch, keeps the card dealt
//     unread as one a resume is refused for (ErrMisreadPending) until it
//     is corrected. Builds of epochs 1 to 4 carried it over as a card
//     the integrity book refused: the upgraded table resumed past it and
//     the round took the next card pulled in its place.
//   - 4 (2026-11-25): a correct may name the card it corrects
//     (Supervisor.At, its position in the shoe, published as the state's
//     misread_at): naming another than the next to correct, one
//     corrected already, or any when none waits, is refused
//     (ErrMisreadAt). Before, the field was not judged: every correct
//     filled the next card, so a double click or two supervisors at once
//     filled the second card with the first one's value.
//   - 3 (2026-11-25): the set-aside list (machine_aside.go): a card
//     pulled while the table is paused and needs no card (the round
//     waits for none, no burn owed) is set aside at once, and the cards
//     held for the round go to it on resume only as far as it needs
//     them, the rest set aside; the resume (or a void) names them all in
//     one card_set_aside alarm. Before, each such card did not fit the
//     round when it was applied on resume and paused the table again
//     (unexpected_card): one resume per stray card.
//   - 2 (2026-11-25): the misread queue (machine_misread.go): every card
//     the shoe deals unread (or the integrity book refuses) while the
//     round or a new shoe's burn waits for a card keeps its place in
//     deal order, and each correct fills the oldest dealt unread (then
//     the oldest refused, which a resume may set aside; one pending misread
//     before: a second was never corrected, the round took the shoe's
//     next card in its place); a misread of the burn a new shoe owes is
//     corrected like the round's (the next card was burned); a card
//     corrected behind one held waits for it; a correction that leaves
//     the table paused (another reason, more to correct) starts no timer
//     (the decision timer ran while paused); a card waiting after the
//     round has what it needs is set aside (card_set_aside); one of a
//     shoe gone out is neither booked to the next nor burned by it.
//   - 1 (2026-11-25): the supervisor's pause flow: a resume is refused
//     while the round misses a card the shoe dealt unread
//     (ErrMisreadPending) or while the shoe is down (ErrShoeDown), a void
//     keeps a table whose shoe is down paused, cards dealt unread are
//     counted at shoe out, a paused table coalesces a device's repeated
//     alarms (ErrAlarmRepeated), and an alarm for a reason the table is
//     paused for already does not announce the pause again; the alarm
//     of a card held while paused or set aside after a void names the
//     round in play (heldCardRound).
const CurrentRulesEpoch = epochRoundCodes

// epochShoeMidRound is the epoch from which a shoe that comes in while a
// round is dealt pauses the table (shoeMidRound; see CurrentRulesEpoch).
const epochShoeMidRound = 11

// dealtMidRound reports whether a round in play has taken cards: a shoe
// that comes in before its first card (a demo's shoe connecting after the
// bets closed, the table's first shoe) is the round's shoe.
func (m *Machine) dealtMidRound() bool { return m.MidRound() && m.rnd.CardsUsed() > 0 }

// shoeMidRound pauses the table for a shoe that came in (what) while a
// round is dealt: its cards are of a shoe the round was not dealt from,
// so none goes to the round until a supervisor decides (cards drawn
// meanwhile are held, as in any pause). The shoe change itself is
// booked: the shoe in the slot is the new one, and its inventory is
// kept from its first card.
func (m *Machine) shoeMidRound(what string) {
	m.alarm("shoe.changed_mid_round",
		fmt.Sprintf("%s while round %s was dealt: its cards are not the round's shoe's: void the round, then resume on the new shoe", what, m.roundID),
		PauseIntegrity)
}

// epochPauseFlow is the epoch of the supervisor's pause flow (see
// CurrentRulesEpoch).
const epochPauseFlow = 1

// epochMisreadQueue is the epoch of the misread queue (see
// CurrentRulesEpoch).
const epochMisreadQueue = 2

// epochSetAside is the epoch of the set-aside list (see
// CurrentRulesEpoch).
const epochSetAside = 3

// epochCorrectAt is the epoch of the correct that names its card (see
// CurrentRulesEpoch).
const epochCorrectAt = 4

// epochUpgradeMisread is the epoch of the misread an older build's
// journal stopped on, kept for correction (see CurrentRulesEpoch).
const epochUpgradeMisread = 5

// epochClockBack is the epoch of the alarm coalescing that a wall clock
// stepped back does not stretch (see CurrentRulesEpoch).
const epochClockBack = 6

// epochPauseWhy is the epoch of the pause reason a correction or a void
// leaves standing (see CurrentRulesEpoch).
const epochPauseWhy = 7

// epochSeenFence is the epoch of the commands judged by the event seq
// their sender had seen (see CurrentRulesEpoch, checkSeen).
const epochSeenFence = 8

// epochRoundFence is the epoch of the void and correct judged by the
// round they name (see CurrentRulesEpoch, checkRound).
const epochRoundFence = 9

// epochRoundCodes is the epoch of the round codes that repeat none of
// the recent rounds' (see CurrentRulesEpoch, closeBets).
const epochRoundCodes = 12

// applyRulesEpoch takes the inputs after it to epoch v.Epoch. An epoch
// above this build's is a journal a newer build wrote (a rollback): its
// inputs cannot be judged as they were, so it is refused with
// ErrRulesEpoch, which stops a replay.
func (m *Machine) applyRulesEpoch(v RulesEpoch) error {
	switch {
	case v.Epoch > CurrentRulesEpoch:
		return fmt.Errorf("%w: the journal's inputs are under rules epoch %d, this build's are %d: run the newer build (or restore the data directory saved before it)",
			ErrRulesEpoch, v.Epoch, CurrentRulesEpoch)
	case v.Epoch < m.epoch:
		return fmt.Errorf("%w: rules epoch %d after %d", errIllegal, v.Epoch, m.epoch)
	}
	if m.epoch < epochPauseFlow && v.Epoch >= epochUpgradeMisread && m.misread != "" && m.misreadDealt {
		// An upgrade while an older build's table waits on a misread:
		// that build let a resume give the round the next card in the
		// misread one's place; from here a resume is refused until the
		// card on the table is corrected, as for a misread of this build
		// (counted unread at shoe out from here on, as unreadCard does).
		if m.shoeActive() {
			m.shoe.unread++
		}
		m.misreadUnread = true
	}
	if m.epoch < epochMisreadQueue && v.Epoch >= epochMisreadQueue {
		m.queueFromSingle()
	}
	m.epoch = v.Epoch
	return nil
}

// Epoch is the rules epoch the machine judges inputs by (RulesEpoch).
func (m *Machine) Epoch() int { return m.epoch }

// ErrStaleCommand refuses a command made for another table than this
// one (from epochSeenFence): its sender had seen no event after the
// table's last accepted loss of events (a restore: the round it was meant
// for may be lost, and the command may have been applied there already),
// or had seen events this table never numbered (a table behind its
// backend). Nothing changed: read the table's state and send a new
// command under a new id.
var ErrStaleCommand = errors.New("table: command made before the table's restore")

// checkSeen judges a command by the newest event seq its sender had seen.
func (m *Machine) checkSeen(seen uint64) error {
	switch {
	case seen <= m.gapTo:
		return fmt.Errorf("%w: the sender had seen event %d, and events up to %d were lost from this table's journal (restored); the command may have been applied in what was lost, or be for a round that is gone: read the state (seq %d) and send a new command",
			ErrStaleCommand, seen, m.gapTo, m.seq)
	case seen > m.seq:
		return fmt.Errorf("%w: the sender had seen event %d, and this table has numbered only %d: the table is behind what was published (restored from an older backup?)",
			ErrStaleCommand, seen, m.seq)
	}
	return nil
}

// ErrWrongRound refuses a supervisor's void or correct that names
// another round than the table's (from epochRoundFence): the round the
// supervisor looked at settled and another began before the command
// arrived, or no round is in play to void. Nothing changed: read the
// state and send the command again for the round it shows.
var ErrWrongRound = errors.New("table: command names another round than the table's")

// checkRound judges the round a void or a correct names (v.Round): it
// must be the table's round (m.roundID, the state's round), and for a
// void that round must be in play. A command naming none is judged as
// before, as is every command of an epoch before epochRoundFence.
func (m *Machine) checkRound(cmd SupervisorCommand, v Supervisor) error {
	if m.epoch < epochRoundFence || v.Round == "" {
		return nil
	}
	if v.Round != m.roundID {
		if m.roundID == "" {
			return fmt.Errorf("%w: %s names round %s, and the table has no round: nothing changed", ErrWrongRound, cmd, v.Round)
		}
		return fmt.Errorf("%w: %s names round %s, and the table's round is %s: nothing changed (read the state and send it again for the round it shows)",
			ErrWrongRound, cmd, v.Round, m.roundID)
	}
	if cmd == CmdVoid {
		if rp := m.rnd.Phase(); rp == round.PhaseSettled || rp == round.PhaseNew {
			return fmt.Errorf("%w: void names round %s, which is settled: no round in play to void, nothing changed", ErrWrongRound, v.Round)
		}
	}
	return nil
}

func (m *Machine) applySeqGap(v SeqGap) error {
	if v.LostFrom == 0 || v.LostTo < v.LostFrom {
		return fmt.Errorf("%w: seq gap %d-%d", errIllegal, v.LostFrom, v.LostTo)
	}
	// Kept at every epoch (judged from epochSeenFence): a journal that
	// reaches that epoch after its gap fences the commands of before.
	m.gapTo = max(m.gapTo, v.LostTo)
	// Numbering continues above every seq that was published: a seq the
	// backend may already have is never given to another event.
	m.seq = max(m.seq, v.LostTo)
	m.alarm("seq_gap", v.Message(), PauseSeqGap)
	m.gapShoe, m.gapAt = m.shoeID, true
	return nil
}

// roundInput applies a round input; the round refuses without changing.
func (m *Machine) roundInput(in round.Input) error {
	evs, err := m.rnd.Apply(in, m.evBuf[:0])
	m.evBuf = evs
	if err != nil {
		return err
	}
	m.emitRound(evs)
	return nil
}

// emitRound publishes round events and acts on what they mean for the
// table: timers for decisions and insurance, the end of the round.
func (m *Machine) emitRound(evs []round.Event) {
	for i := range evs {
		// Each event as the round made it, self-contained: its context
		// names the player and holds the settlement (copied for
		// publication by emitSettlement: the round's own is rewritten
		// next round).
		ev := evs[i]
		if ev.Type == round.EvSettled && ev.Settlement() != nil {
			m.emitSettlement(ev)
			continue
		}
		m.emit(ev, m.roundID)
	}
	m.crowdPrompt()
	rs := m.cfg.Rules
	if m.paused() && m.epoch >= epochMisreadQueue {
		// A correction gave the round its card while the table stays
		// paused (another reason, or more cards to correct): no clock
		// runs while paused. The resume starts what the round waits on
		// (rearm: the full time of a decision that was not running; the
		// settlement's pause). Before epochMisreadQueue the timer ran,
		// and could time a player out, or open betting, while paused.
		if m.rnd.Phase() == round.PhaseSettled {
			m.rounds++
		}
		m.frozen, m.frozenAt = "", 0
		m.stopTimer()
		return
	}
	switch {
	case m.rnd.Phase() == round.PhaseSettled:
		m.rounds++
		if m.cutCard {
			m.stopTimer()
			m.setPhase(PhaseClosed, time.Time{}, "cut card: change shoe")
		} else {
			m.setPhase(PhaseSettled, m.now.Add(m.cfg.SettleDelay), "")
			m.arm(TimerNext, m.cfg.SettleDelay)
		}
	case m.rnd.Phase() == round.PhaseInsurance:
		m.arm(TimerInsurance, rs.InsuranceTime)
	case m.rnd.Awaiting() > 0:
		m.arm(TimerDecision, rs.DecisionTime)
	default:
		m.stopTimer()
	}
}

func (m *Machine) closeBets(v BetsClosed) error {
	if m.phase != PhaseBetting && m.phase != PhaseLastCall {
		return fmt.Errorf("%w: bets are not open (%s)", errIllegal, m.phase)
	}
	bets := toBets(v.Bets)
	// The round code is its start time in GMT (#HH:MM:SS, as the game
	// documents show it); rounds started within one second get a suffix.
	code := m.now.UTC().Format("#15:04:05")
	id, n := code, 1
	if hasPrefixCode(m.lastCode, code) {
		n = m.codeN + 1
		id = fmt.Sprintf("%s-%d", code, n)
	}
	if m.epoch >= epochRoundCodes && !m.now.After(m.lastStart) {
		// The wall clock stepped back (NTP correcting a clock that was
		// ahead) past a recent round's start: its code would name two
		// rounds, and a command naming the first (a void, a batch) would
		// act on the second. A clock going forward repeats a code only
		// a day later, which no command naming a round lives to see.
		for slices.Contains(m.codes, id) {
			n++
			id = fmt.Sprintf("%s-%d", code, n)
		}
	}
	evs, err := m.rnd.Start(id, bets, m.evBuf[:0])
	m.evBuf = evs
	if err != nil {
		return err
	}
	m.codeN, m.lastCode, m.roundID, m.voided = n, id, id, false
	m.rememberCode(id)
	if m.now.After(m.lastStart) {
		m.lastStart = m.now
	}
	m.setPhase(PhaseDealing, time.Time{}, "")
	m.emitRound(evs)
	return nil
}

func hasPrefixCode(last, code string) bool { return len(last) >= len(code) && last[:len(code)] == code }

// recentCodes is how many of the latest round codes the machine keeps
// (Machine.codes): an hour of rounds and more, far longer than a command
// naming a round travels (a signed void's window is 60 s).
const recentCodes = 64

// rememberCode adds a new round's code to the recent ones.
func (m *Machine) rememberCode(id string) {
	if len(m.codes) >= recentCodes {
		m.codes = slices.Delete(m.codes, 0, len(m.codes)-recentCodes+1)
	}
	m.codes = append(m.codes, id)
}

func toBets(in []Bet) []round.Bet {
	out := make([]round.Bet, 0, len(in))
	for _, b := range in {
		rb := round.Bet{Seat: b.Seat, Player: b.Player, Main: b.Main, Behind: b.Behind,
			FollowDouble: b.FollowDouble, FollowSplit: b.FollowSplit}
		for k, v := range b.Side {
			rb.Side = append(rb.Side, round.SideStake{Kind: sidebets.Kind(k), Stake: v})
		}
		// Map order is random; journal replay needs one order.
		slices.SortFunc(rb.Side, func(a, b round.SideStake) int { return strings.Compare(string(a.Kind), string(b.Kind)) })
		out = append(out, rb)
	}
	return out
}

func (m *Machine) applyTimer(v TimerFired) error {
	if v.Timer != "" && (m.timer.Name == "" || v.Round != m.timer.Key) {
		// Replaced or stopped before it fired (it was already on its way).
		return ErrStaleTimer
	}
	name := TimerName(timerName(v.Timer))
	switch name {
	case TimerLastCall:
		if m.phase == PhaseBetting {
			m.setPhase(PhaseLastCall, m.deadline, "")
			m.arm(TimerBetsDeadline, m.cfg.Rules.LastCallTime+m.cfg.BetsGrace)
		}
	case TimerBetsDeadline:
		if m.phase == PhaseLastCall || m.phase == PhaseBetting {
			// No bets closed by the deadline: betting reopens.
			m.openBetting()
		}
	case TimerNext:
		if m.phase == PhaseSettled {
			m.openBetting()
		}
	case TimerInsurance:
		return m.roundInput(round.Input{Type: round.InInsuranceTimeout})
	case TimerDecision:
		if m.cfg.Rules.DecisionTimeout == rules.TimeoutAutoTable {
			return m.autoPlay()
		}
		return m.roundInput(round.Input{Type: round.InDecisionTimeout})
	default:
		return fmt.Errorf("%w: unknown timer %q", errIllegal, v.Timer)
	}
	return nil
}

func timerName(s string) string {
	if i := strings.IndexByte(s, '@'); i >= 0 {
		return s[:i]
	}
	return s
}

// autoTables are the strategy tables a game may name for automatic play.
var autoTables = map[string]func() *strategy.Table{
	"004-auto": strategy.SisalNoDoubleNoSplit,
}

// autoPlay decides every waiting hand with the game's automatic-play table
// (004: a hand left pending is played with the no-double, no-split table).
// Only the timer is journaled: replay derives the same decisions.
func (m *Machine) autoPlay() error {
	mk, ok := autoTables[m.cfg.Rules.AutoPlayTable]
	if !ok {
		return fmt.Errorf("%w: game %s names unknown auto-play table %q", errIllegal, m.cfg.Rules.Code, m.cfg.Rules.AutoPlayTable)
	}
	tbl := mk()
	for _, w := range m.rnd.Waiting(nil) {
		s := strategy.Situation{Total: w.Total, Soft: w.Soft, PairValue: w.PairValue, Cards: w.Cards, Up: w.Up,
			CanDouble: w.Options.Has(round.ActDouble), CanSplit: w.Options.Has(round.ActSplit)}
		a := round.ActStand
		switch tbl.Decide(s) {
		case strategy.Hit:
			a = round.ActHit
		case strategy.Double:
			a = round.ActDouble
		case strategy.Split:
			a = round.ActSplit
		}
		if err := m.roundInput(round.Input{Type: round.InDecision, Seat: w.Seat, Player: w.Player, Action: a, Auto: true}); err != nil {
			return err
		}
	}
	return nil
}

func (m *Machine) applySupervisor(v Supervisor) error {
	cmd, err := ParseSupervisorCommand(v.Command)
	if err != nil {
		return err
	}
	switch cmd {
	case CmdPause:
		since := v.Since
		if since.IsZero() || since.After(m.now) {
			since = m.now
		}
		m.freezeTimer(since)
		cause := v.Cause
		if cause == "" {
			cause = PauseSupervisor
		}
		m.pause(cause, v.By, v.Reason)
	case CmdResume:
		if !m.paused() {
			return fmt.Errorf("%w: %w", errIllegal, ErrNotPaused)
		}
		if err := m.resumeRefused(); err != nil {
			return err
		}
		// The supervisor has looked: every reason goes, and a pending
		// misread with them (a card the integrity book refused, set
		// aside: the round waits for the next).
		m.pauses, m.misread = m.pauses[:0], ""
		m.dropRefused()
		m.resume(v.By)
	case CmdVoid:
		if err := m.checkRound(cmd, v); err != nil {
			return err
		}
		rp := m.rnd.Phase()
		if rp == round.PhaseSettled || rp == round.PhaseNew {
			return fmt.Errorf("%w: no round in play to void", errIllegal)
		}
		reason := v.Reason
		if reason == "" {
			reason = "voided by " + v.By
		}
		wasPaused := m.paused()
		// A card misread stays counted as dealt unread: it lies with
		// the voided round's cards.
		if m.epoch >= epochSetAside {
			// The cards held for the round lie with its cards now:
			// named with the set-aside list.
			for _, h := range m.held {
				if !h.waiting() {
					m.aside = append(m.aside, h.card)
				}
			}
		}
		m.pauses, m.misread, m.misreadUnread, m.held, m.voided = m.pauses[:0], "", false, nil, true
		deviceWhy := m.pauseWhys[PauseDevice]
		clear(m.pauseWhys)
		if m.link == shoeDown {
			// The round is voided and the table stays stopped, its
			// alarms listed: no round opens without its shoe (the
			// supervisor resumes once it is back).
			m.pauses = append(m.pauses, PauseDevice)
			m.noteWhy(PauseDevice, deviceWhy)
			if m.epoch >= epochPauseWhy && deviceWhy != "" {
				// The pause it stays in is the shoe's: the phase event
				// below and the state name it, not the first cause of
				// the pause (a misread the void has dealt with).
				m.pauseWhy = deviceWhy
			}
		} else {
			m.alarms = m.alarms[:0]
			clear(m.repeatAt)
			m.pauseWhy = "" // the state names no reason of a pause that ended
			if wasPaused {
				m.emit(Resumed{By: v.By}, m.roundID)
			}
		}
		// Cannot fail: a round is in play.
		_ = m.roundInput(round.Input{Type: round.InVoid, Reason: reason})
		// The cards set aside during the pause lie with the voided
		// round's: the void names them, as a resume would.
		m.announceAside("round voided by " + v.By)
		if m.paused() {
			m.stopTimer()
			m.setPhase(PhasePaused, time.Time{}, m.pauseWhy)
		}
	case CmdCorrect:
		if err := m.checkRound(cmd, v); err != nil {
			return err
		}
		if m.epoch >= epochMisreadQueue {
			return m.correctQueued(v)
		}
		return m.correct(v)
	case CmdOpen:
		if m.phase != PhaseIdle && m.phase != PhaseClosed {
			return fmt.Errorf("%w: bets open only from idle or closed", errIllegal)
		}
		m.openBetting()
	}
	return nil
}

// correct gives the round the card a supervisor read for a pending
// misread. The card goes to the round at once (not held: it is the fix of
// the pause); the misread's pause reasons go, and when none is left the
// table resumes by itself.
func (m *Machine) correct(v Supervisor) error {
	if m.misread == "" {
		return fmt.Errorf("%w: correct is for a card the shoe could not read", ErrNoMisread)
	}
	if !v.Card.Valid() {
		return fmt.Errorf("%w: correct needs a card", errIllegal)
	}
	if why := m.checkCard(v.Card, ""); why != "" {
		return fmt.Errorf("%w: %s: %s", errIllegal, v.Card, why)
	}
	if need, _, _ := m.rnd.NeedsCard(); !need {
		return fmt.Errorf("%w: the round waits for no card", errIllegal)
	}
	var evs []round.Event
	if m.burn == 0 {
		var err error
		if evs, err = m.roundTakes(v.Card); err != nil {
			return err
		}
	}
	var run int
	var past string
	if m.shoeActive() {
		run, past = m.shoe.take(v.Card, "")
	}
	m.dealt++
	m.correctedUnread()
	m.misread = ""
	m.pauses = slices.DeleteFunc(m.pauses, func(p PauseReason) bool { return p == PauseMisread || p == PauseIntegrity })
	if m.burn > 0 {
		// The card the shoe could not read was the burn a new shoe owes
		// (003): it is burned, and the round still waits for its card
		// (the simulation's seed 288: it went to the round, and the
		// burn took the next one).
		m.burn--
		m.emit(Burned{Card: v.Card}, "")
	} else {
		m.emitRound(evs)
	}
	if len(m.pauses) == 0 {
		m.resume(v.By)
	}
	_ = m.shuffleAlarm(run, past, nil)
	return nil
}

// roundTakes gives the round a corrected card; its events are in
// m.evBuf. The round refuses without changing.
func (m *Machine) roundTakes(c card.Card) ([]round.Event, error) {
	evs, err := m.rnd.Apply(round.Input{Type: round.InCard, Card: c}, m.evBuf[:0])
	m.evBuf = evs
	return evs, err
}

// resume ends a pause whose reasons are all gone: the phase of the round,
// the held cards, the timer the round waits on.
func (m *Machine) resume(by string) {
	m.alarms = m.alarms[:0]
	clear(m.repeatAt)
	clear(m.pauseWhys)
	m.link = shoeUp
	m.pauseWhy = ""
	m.emit(Resumed{By: by}, m.roundID)
	if p := m.resumePhase(); p == PhaseSettled {
		// The round ended while the table was paused, or with the
		// correction that resumes it: the settlement's pause comes
		// before bets open, as after any round (the dealer collects
		// and pays; 001 and 004 reshuffle).
		m.setPhase(PhaseSettled, m.now.Add(m.cfg.SettleDelay), "")
		m.arm(TimerNext, m.cfg.SettleDelay)
	} else {
		m.setPhase(p, time.Time{}, "")
	}
	held := m.held
	m.held = nil
	for _, h := range held {
		if m.paused() {
			m.held = append(m.held, h)
			continue
		}
		if m.asideOnResume(h) {
			// The round has what it needs: the rest of the cards held
			// are set aside together, one alarm for all, no new pause.
			m.aside = append(m.aside, h.card)
			continue
		}
		_ = m.place(h.card)
	}
	if !m.paused() {
		m.announceAside("resumed by " + by)
	}
	if m.paused() {
		return
	}
	switch m.phase {
	case PhaseIdle:
		m.openBetting()
	case PhaseSettled:
	default:
		m.rearm()
	}
}

func (m *Machine) resumePhase() Phase {
	switch m.rnd.Phase() {
	case round.PhaseDealing, round.PhaseInsurance, round.PhasePlay, round.PhaseDealer:
		return PhaseDealing
	}
	if m.cutCard {
		return PhaseClosed
	}
	if m.rnd.Phase() == round.PhaseSettled && m.roundID != "" {
		return PhaseSettled // bets have not opened since the round
	}
	return PhaseIdle
}

func (m *Machine) paused() bool { return len(m.pauses) > 0 }

// noteWhy records the message a pause reason came with (pauseWhys).
func (m *Machine) noteWhy(reason PauseReason, why string) {
	if m.pauseWhys == nil {
		m.pauseWhys = map[PauseReason]string{}
	}
	m.pauseWhys[reason] = why
}

// liftCardReasons takes away the pause reasons of cards waiting for a
// correction (the misread's, the integrity book's) once none waits. Left
// paused for another reason, from epochPauseWhy the state names that
// one: before, it still named the card just corrected ("stop: table
// paused (misread #4)" on a table a supervisor had paused to look at
// the camera), and a later void with the shoe down published it.
func (m *Machine) liftCardReasons() {
	m.pauses = slices.DeleteFunc(m.pauses, func(p PauseReason) bool { return p == PauseMisread || p == PauseIntegrity })
	delete(m.pauseWhys, PauseMisread)
	delete(m.pauseWhys, PauseIntegrity)
	if len(m.pauses) > 0 && m.epoch >= epochPauseWhy {
		m.pauseWhy = m.pauseWhys[m.pauses[0]]
	}
}

// pause adds a reason; the first one stops the table.
func (m *Machine) pause(reason PauseReason, by, why string) {
	if !slices.Contains(m.pauses, reason) {
		m.pauses = append(m.pauses, reason)
		m.noteWhy(reason, why)
	}
	if len(m.pauses) > 1 {
		return
	}
	m.pauseWhy = why
	m.stopTimer()
	m.emit(Paused{By: by, Reason: why}, m.roundID)
	m.setPhase(PhasePaused, time.Time{}, why)
}

// maxListedAlarms bounds the state's list of the alarms raised since the
// last resume: the first and the latest. Every alarm is an event of its
// own (and a metric); the list is what the supervisor's view and every
// state message carry, so a shoe flooding the table with alarms (a
// misread frame after every card, a refused HELLO at line rate, a link
// falling silent again and again) while nobody resumes made each state
// larger and each input dearer than the one before.
const maxListedAlarms = 32

// alarm raises an alarm; with a reason it pauses the table.
func (m *Machine) alarm(code, msg string, reason PauseReason) {
	a := Alarm{Code: code, Message: msg, Pauses: reason != ""}
	if len(m.alarms) >= maxListedAlarms {
		// Keep the first, the cause of the pause, and the latest.
		m.alarms = append(m.alarms[:1], m.alarms[2:]...)
	}
	m.alarms = append(m.alarms, a)
	m.emit(a, m.roundID)
	if reason != "" && (!slices.Contains(m.pauses, reason) || m.epoch < epochPauseFlow) {
		// Paused for this reason already: the alarm is listed and
		// published, the pause (its event, its phase, the reason the
		// state gives: the first cause) stays as it is.
		m.freezeTimer(m.now)
		m.pause(reason, "system", msg)
	}
}

// freezeTimer keeps the time a player had left on a decision or insurance
// timer when the table pauses (at since), for rearm on resume. Phase timers
// (betting, the pause after a settlement) restart from their phase instead.
func (m *Machine) freezeTimer(since time.Time) {
	if m.paused() {
		return
	}
	m.frozen, m.frozenAt = "", 0
	if m.timer.Name == TimerDecision || m.timer.Name == TimerInsurance {
		// Bounded by the timer's length: a wall clock stepped back while
		// the daemon was down (since is then the restart's now) showed
		// hours left in the state; the resume gives the same either way.
		m.frozen, m.frozenAt = m.timer.Name, min(max(0, m.timer.At.Sub(since)), m.TimerLength(m.timer.Name))
	}
}

func (m *Machine) openBetting() {
	if m.paused() {
		return
	}
	if m.cutCard {
		m.stopTimer()
		m.setPhase(PhaseClosed, time.Time{}, "cut card: change shoe")
		return
	}
	rs := m.cfg.Rules
	m.roundID, m.voided, m.corrected = "", false, m.corrected[:0]
	m.setPhase(PhaseBetting, m.now.Add(rs.BettingTime), "")
	m.arm(TimerLastCall, rs.BettingTime-rs.LastCallTime)
}

// rearm restarts the timer the round waits on after a resume: the time
// the player had left when the table paused (at least ResumeGrace), or the
// full time for a decision that was not running then.
func (m *Machine) rearm() {
	rs := m.cfg.Rules
	grant := func(name TimerName, full time.Duration) time.Duration {
		if m.frozen != name {
			return full
		}
		return min(full, max(m.frozenAt, m.cfg.ResumeGrace))
	}
	switch {
	case m.rnd.Phase() == round.PhaseInsurance:
		m.arm(TimerInsurance, grant(TimerInsurance, rs.InsuranceTime))
	case m.rnd.Phase() == round.PhasePlay && m.rnd.Awaiting() > 0:
		m.arm(TimerDecision, grant(TimerDecision, rs.DecisionTime))
	}
	m.frozen, m.frozenAt = "", 0
}

// setPhase enters phase p; deadline is when p ends by itself (zero when
// it does not), and the state reports it for the phase it is in.
func (m *Machine) setPhase(p Phase, deadline time.Time, reason string) {
	m.phase = p
	m.deadline = deadline
	m.emit(PhaseChanged{Phase: p, Deadline: deadline, Reason: reason}, m.roundID)
}

// arm sets the one timer: a deadline with a new key, and the effect that
// asks the loop to start it.
func (m *Machine) arm(name TimerName, d time.Duration) {
	m.timerGen++
	m.timer = Deadline{Name: name, At: m.now.Add(d), Key: m.timerKey()}
	m.effs = append(m.effs, Effect{Kind: EffectArmTimer, Timer: m.timer})
}

func (m *Machine) stopTimer() {
	if m.timer.Name != "" {
		m.effs = append(m.effs, Effect{Kind: EffectStopTimer})
	}
	m.timer = Deadline{}
}

func (m *Machine) timerKey() string { return fmt.Sprintf("%d", m.timerGen) }

// emit numbers an event and adds it to the step. A state snapshot is not
// an event of its own: it takes no number (the events topic stays
// gap-free) and carries the number of the last event it reflects.
func (m *Machine) emit(b Body, roundID string) {
	seq := uint64(0)
	if _, ok := b.(*State); !ok {
		m.seq++
		seq = m.seq
	}
	m.evs = append(m.evs, Event{Seq: seq, Time: m.now, Table: m.cfg.Table, Round: roundID, Body: b})
}

func (m *Machine) publishState() {
	m.state = m.buildState()
	m.emit(m.state, m.roundID)
}

// buildState is the table's snapshot as the machine is now.
func (m *Machine) buildState() *State {
	st := &State{
		Seq: m.seq, Table: m.cfg.Table, Game: m.cfg.Rules.Code, Phase: m.phase, Deadline: m.deadline,
		Paused: m.paused(), PauseReason: m.pauseWhy, Round: m.roundView(),
		Shoe: ShoeState{ID: m.shoeID, Dealt: m.dealt, CutCard: m.cutCard, BurnPending: m.burn, Decks: m.cfg.Rules.Decks,
			Booked: m.shoe.dealt()},
		Alarms: append([]Alarm(nil), m.alarms...), Rounds: m.rounds,
	}
	st.Misread, st.MisreadsPending = m.awaitingCorrection()
	st.MisreadsAt = m.waitingAt()
	if len(st.MisreadsAt) > 0 {
		st.MisreadAt = st.MisreadsAt[0]
	}
	for _, c := range m.aside {
		st.SetAside = append(st.SetAside, c.String())
	}
	if len(m.pauses) > 0 {
		st.PauseReasons = slices.Clone(m.pauses)
	}
	switch {
	case m.paused() && m.frozen != "":
		st.Timer = &TimerView{Name: string(m.frozen), LeftMS: m.frozenAt.Milliseconds(), Stopped: true}
	case m.timer.Name != "":
		st.Timer = &TimerView{Name: string(m.timer.Name), Deadline: m.timer.At, LeftMS: max(0, m.timer.At.Sub(m.now).Milliseconds())}
	}
	switch {
	case m.phase == PhaseBetting || m.phase == PhaseLastCall:
		st.Round = round.View{Next: "wait: bets open"}
	case m.phase == PhaseClosed:
		st.Round.Next = "change shoe"
	case m.paused() && st.MisreadsPending > 0:
		st.Round.Next = m.misreadNext(st.Misread, st.MisreadsPending) + m.asideNote()
	case m.paused() && m.link != shoeUp:
		st.Round.Next = m.shoeLinkNext() + m.asideNote()
	case m.paused() && m.asideNext() != "":
		st.Round.Next = m.asideNext()
	case m.paused():
		why := m.pauseWhy
		if why == "" {
			// A supervisor's pause without a reason (the wire allows
			// it) showed "stop: table paused ()".
			why = string(m.pauses[0])
		}
		st.Round.Next = "stop: table paused (" + why + ")" + m.heldNote() + m.asideNote() + m.gapShoeNote()
	case m.voided && m.phase == PhaseSettled:
		st.Round.Next = "clear the cards: round voided, next round"
	case m.burn > 0:
		// The burn takes the first card out of a new shoe, whatever the
		// round asks: a round dealing with the burn owed told the dealer
		// "card to seat 1", and the card the dealer put there was burned.
		st.Round.Next = "burn one card"
	}
	return st
}

// StateEvent is the snapshot published after the last input as an event
// (seq 0), for the loop to publish again: after a replay, whose states
// were not published, subscribers need the table as it is now.
func (m *Machine) StateEvent() Event {
	return Event{Time: m.now, Table: m.cfg.Table, Round: m.roundID, Body: m.state}
}

// State returns the snapshot published after the last input. It is
// shared: callers do not modify it.
func (m *Machine) State() *State { return m.state }

// Seq is the number of the last event.
func (m *Machine) Seq() uint64 { return m.seq }

// Timer is the running timer's deadline; Name is empty when none runs.
func (m *Machine) Timer() Deadline { return m.timer }

// RoundID is the round in play, "" between rounds.
func (m *Machine) RoundID() string { return m.roundID }

// ShoeID is the shoe in play.
func (m *Machine) ShoeID() string { return m.shoeID }

// Paused reports whether the table is paused, and for which reasons.
func (m *Machine) Paused() []PauseReason { return slices.Clone(m.pauses) }

// MidRound reports whether a round is in play (dealt, not settled).
func (m *Machine) MidRound() bool {
	p := m.rnd.Phase()
	return p != round.PhaseSettled && p != round.PhaseNew
}

// checkpointDue reports whether a checkpoint should follow the input just
// applied: betting has just opened (no round in play, not paused) and
// enough rounds, or inputs, have passed since the last one.
func (m *Machine) checkpointDue() bool {
	if m.phase != PhaseBetting || m.paused() || m.roundID != "" {
		return false
	}
	every := m.cfg.CheckpointEvery
	if every < 0 {
		return false
	}
	if every == 0 {
		every = DefaultCheckpointEvery
	}
	// An idle table (betting opening and closing with no bets) still
	// checkpoints now and then, so retention can go on deleting.
	return m.ckSeq == 0 || m.rounds-m.ckRounds >= every || m.sinceCk >= every*inputsPerRound
}

// MarkCheckpoint records that the machine's state is checkpointed at
// journal record seq: the next checkpoint is due CheckpointEvery rounds
// later, and the next one's Prev is seq.
func (m *Machine) MarkCheckpoint(seq uint64) {
	m.ckSeq, m.ckRounds, m.sinceCk = seq, m.rounds, 0
}
