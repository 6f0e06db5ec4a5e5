package table

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/sidebets"
	"github.com/livetable/livetable/table/strategy"
)

// Journal is where the controller makes every input durable before it
// applies it. table/journal provides the real one (see NewJournal); a nil
// Journal in Options keeps inputs in memory only (tests, demos).
type Journal interface {
	// Append stores one encoded input and returns when it is durable.
	Append(at time.Time, kind, roundID string, data []byte) (uint64, error)
	// Replay calls fn with every stored input in order.
	Replay(fn func(at time.Time, data []byte) error) error
}

// Options configures a Controller.
type Options struct {
	Studio string
	Table  string
	Rules  *rules.Set
	Clock  clockwork.Clock
	// Journal stores inputs; nil keeps nothing (inputs are still applied).
	Journal Journal
	// SettleDelay is the pause after a settlement before bets reopen.
	SettleDelay time.Duration
	// BetsGrace is how long after the betting deadline the controller waits
	// for the backend's bets_closed before it skips the round.
	BetsGrace time.Duration
	// Idle keeps bets closed until OpenBetting is called (or a shoe
	// arrives); false opens betting as soon as Run starts.
	Idle bool
	// Replayed, when set, receives every event regenerated while the
	// journal is replayed at start (they are not fanned out: subscribers
	// had them before the restart). Game recall seeds itself from it.
	Replayed func(Event)
}

// DefaultOptions are the controller's defaults for a game.
func DefaultOptions(rs *rules.Set) Options {
	return Options{Studio: "studio1", Table: "table1", Rules: rs, Clock: clockwork.NewRealClock(),
		SettleDelay: 4 * time.Second, BetsGrace: 5 * time.Second}
}

// Controller is the single goroutine that owns the table: the current
// round, the phase and its timers, the event sequence. Every input (cards
// from the shoe, commands from the studio link, timers) goes through Run's
// loop: journal first, then apply, then events out to subscribers.
type Controller struct {
	opts Options
	log  zerolog.Logger
	clk  clockwork.Clock

	reqs   chan request
	timers chan TimerFired

	subMu sync.Mutex // guards subs
	subs  []*subscriber

	state atomic.Pointer[State] // last published snapshot, for readers outside Run

	// Owned by Run.
	seq       uint64
	rnd       *round.Round
	roundID   string
	phase     Phase
	paused    bool
	pauseWhy  string
	held      []CardDrawn // cards pulled while paused, applied on resume
	cutCard   bool
	shoeID    string
	burn      int
	dealt     int // cards out of this shoe
	timerGen  uint64
	timer     clockwork.Timer
	deadline  time.Time
	lastCode  string
	codeN     int
	alarms    []Alarm
	evBuf     []round.Event
	now       time.Time
	replaying bool
	rounds    int
	devSeen   map[string]uint64 // last applied frame per device session
	cmdSeen   map[string]error  // verdict of every journaled command id (bounded)
	cmdOrder  []string          // ids in cmdSeen, oldest first
}

// maxCommandIDs bounds the remembered command ids: far more than a
// backend retries over.
const maxCommandIDs = 100000

type request struct {
	in    Input
	reply chan error
}

// New returns a controller. Call Run to start it.
func New(opts Options, log zerolog.Logger) (*Controller, error) {
	if opts.Rules == nil {
		return nil, errors.New("table: no rule set")
	}
	if err := opts.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	if opts.Clock == nil {
		opts.Clock = clockwork.NewRealClock()
	}
	c := &Controller{
		opts: opts, log: log.With().Str("table", opts.Table).Logger(), clk: opts.Clock,
		reqs: make(chan request), timers: make(chan TimerFired, 4),
		rnd: round.New(opts.Rules), phase: PhaseIdle, devSeen: map[string]uint64{}, cmdSeen: map[string]error{},
	}
	c.state.Store(&State{Table: opts.Table, Game: opts.Rules.Code, Phase: PhaseIdle})
	return c, nil
}

// Submit hands one input to the controller and returns its verdict: nil,
// or the typed rule error (round.RuleError) that left the table unchanged.
func (c *Controller) Submit(ctx context.Context, in Input) error {
	req := request{in: in, reply: make(chan error, 1)}
	select {
	case c.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Snapshot returns the last published state; safe from any goroutine.
func (c *Controller) Snapshot() State { return *c.state.Load() }

// Run owns the table until ctx is done. inputs carries device inputs
// (cards, cut card, shoe changes); it may be nil.
func (c *Controller) Run(ctx context.Context, inputs <-chan Input) error {
	if err := c.replay(); err != nil {
		return err
	}
	if !c.opts.Idle && c.phase == PhaseIdle && !c.paused {
		// Opening is an input like any other, journaled, so a replay
		// reaches the same phase.
		if err := c.handle(Supervisor{Command: "open", By: "system"}); err != nil {
			return err
		}
	}
	defer c.stopTimer()
	defer c.closeSubs()
	for {
		select {
		case <-ctx.Done():
			return nil
		case in, ok := <-inputs:
			if !ok {
				inputs = nil
				continue
			}
			if err := c.handle(in); err != nil {
				c.log.Warn().Err(err).Str("input", in.Kind()).Msg("device input rejected")
			}
		case req := <-c.reqs:
			req.reply <- c.handle(req.in)
		case tf := <-c.timers:
			if err := c.handle(tf); err != nil && !errors.Is(err, errStaleTimer) {
				c.log.Warn().Err(err).Str("timer", tf.Timer).Msg("timer input rejected")
			}
		}
	}
}

var errStaleTimer = errors.New("table: stale timer")

// ReplayEvents rebuilds a table from its journal without running it, and
// calls fn with every event as it was published (`tablectl history` and
// `tablectl round` read a stopped table's journal this way).
func ReplayEvents(opts Options, fn func(Event)) error {
	opts.Replayed = fn
	c, err := New(opts, zerolog.Nop())
	if err != nil {
		return err
	}
	return c.replay()
}

// replay rebuilds the table from the journal: the same inputs through the
// same code give the same state and the same event sequence numbers.
func (c *Controller) replay() error {
	if c.opts.Journal == nil {
		return nil
	}
	c.replaying = true
	n := 0
	err := c.opts.Journal.Replay(func(at time.Time, data []byte) error {
		in, err := DecodeInput(data)
		if err != nil {
			return err
		}
		c.now = at
		_ = c.apply(in)
		c.publishState()
		n++
		return nil
	})
	c.replaying = false
	if err != nil {
		return fmt.Errorf("table: replay: %w", err)
	}
	if n > 0 {
		c.log.Info().Int("inputs", n).Uint64("seq", c.seq).Str("phase", string(c.phase)).Msg("journal replayed")
		if c.rnd.Phase() != round.PhaseSettled && c.rnd.Phase() != round.PhaseNew {
			// A round cut in the middle waits for a supervisor.
			c.pause("system", "restarted in the middle of round "+c.roundID+": resume or void")
		} else if !c.paused {
			c.rearmPhase()
		}
	}
	c.publishState()
	return nil
}

// handle journals an input and applies it. Inputs that are certainly
// rejected are not journaled, so replay sees only what changed the table
// or must be reported (unexpected cards are journaled: never lose a card).
func (c *Controller) handle(in Input) error {
	if tf, ok := in.(TimerFired); ok && tf.Timer != "" && tf.Round != c.timerKey() {
		return errStaleTimer
	}
	c.now = c.clk.Now()
	if id := commandID(in); id != "" {
		if verdict, ok := c.cmdSeen[id]; ok {
			// Delivered again (a retry, a redelivery after a restart):
			// applied once, answered the same.
			return verdict
		}
	}
	if err := c.precheck(in); err != nil {
		return err
	}
	if c.opts.Journal != nil {
		data, err := EncodeInput(in)
		if err != nil {
			return err
		}
		if _, err := c.opts.Journal.Append(c.now, in.Kind(), c.roundID, data); err != nil {
			c.alarm("journal", fmt.Sprintf("journal append failed: %v", err), true)
			c.publishState()
			return fmt.Errorf("%w: %w", ErrJournal, err)
		}
	}
	err := c.apply(in)
	c.publishState()
	return err
}

// ErrDuplicateFrame is returned for a device frame already applied (the
// device sent it again after a restart of the host); the caller may
// acknowledge it: it is durable.
var ErrDuplicateFrame = errors.New("table: device frame already applied")

// precheck rejects commands without effect before they reach the journal.
func (c *Controller) precheck(in Input) error {
	if d, ok := in.(deviceRef); ok {
		if sess, seq := d.deviceFrame(); sess != "" && seq != 0 && seq <= c.devSeen[sess] {
			return fmt.Errorf("%w: %s #%d", ErrDuplicateFrame, sess, seq)
		}
	}
	switch v := in.(type) {
	case Decision, InsuranceAnswer:
		if c.paused {
			return fmt.Errorf("%w: table paused (%s)", ErrPaused, c.pauseWhy)
		}
	case BetsClosed:
		if c.phase != PhaseBetting && c.phase != PhaseLastCall {
			return fmt.Errorf("%w: bets are not open (%s)", round.ErrIllegalAction, c.phase)
		}
		if _, err := toBets(v.Bets); err != nil {
			return err
		}
	case Supervisor:
		switch v.Command {
		case "pause", "resume", "void", "correct", "open":
		default:
			return fmt.Errorf("%w: unknown supervisor command %q", round.ErrIllegalAction, v.Command)
		}
	}
	return nil
}

// ErrJournal is returned when an input could not be made durable: it was
// not applied, and the table is paused with an alarm (disk full, I/O error).
var ErrJournal = errors.New("table: journal append failed")

// ErrPaused is returned for player inputs while the table is paused.
var ErrPaused = errors.New("table: paused")

// apply is the deterministic heart: the same input sequence always gives
// the same state and events (replay relies on it).
func (c *Controller) apply(in Input) error {
	err := c.applyInput(in)
	if id := commandID(in); id != "" {
		if _, ok := c.cmdSeen[id]; !ok {
			c.cmdOrder = append(c.cmdOrder, id)
			if len(c.cmdOrder) > maxCommandIDs {
				delete(c.cmdSeen, c.cmdOrder[0])
				c.cmdOrder = c.cmdOrder[1:]
			}
		}
		c.cmdSeen[id] = err
	}
	return err
}

func (c *Controller) applyInput(in Input) error {
	if d, ok := in.(deviceRef); ok {
		if sess, seq := d.deviceFrame(); sess != "" && seq > c.devSeen[sess] {
			c.devSeen[sess] = seq
		}
	}
	switch v := in.(type) {
	case CardDrawn:
		return c.applyCard(v)
	case CutCardSeen:
		// The shoe and the GPIO sensor may both report it: once is enough.
		if !c.cutCard {
			c.cutCard = true
			c.emit(CutCard{Source: v.Source}, c.roundID)
			if c.phase == PhaseBetting || c.phase == PhaseLastCall || c.phase == PhaseSettled || c.phase == PhaseIdle {
				// Between rounds: no round may open on this shoe.
				c.stopTimer()
				c.setPhase(PhaseClosed, time.Time{}, "cut card: change shoe")
			}
		}
		return nil
	case ShoeChanged:
		c.shoeID, c.cutCard, c.dealt, c.burn = v.ShoeID, false, 0, c.opts.Rules.BurnOnNewShoe
		c.emit(ShoeInPlay{ShoeID: v.ShoeID, Burn: c.burn}, "")
		if c.phase == PhaseClosed || c.phase == PhaseIdle {
			c.openBetting()
		}
		return nil
	case BetsClosed:
		return c.closeBets(v)
	case Decision:
		a, err := round.ParseAction(v.Action)
		if err != nil {
			return err
		}
		return c.roundInput(round.Input{Type: round.InDecision, Seat: v.Seat, Player: v.Player, Action: a})
	case InsuranceAnswer:
		return c.roundInput(round.Input{Type: round.InInsurance, Seat: v.Seat, Player: v.Player, Take: v.Take})
	case TimerFired:
		return c.applyTimer(v)
	case Supervisor:
		return c.applySupervisor(v)
	case DeviceAlarm:
		c.alarm(v.Source+"."+v.Code, v.Message, v.Pauses)
		return nil
	}
	return fmt.Errorf("%w %T", ErrUnknownInput, in)
}

func (c *Controller) applyCard(v CardDrawn) error {
	if c.paused {
		c.held = append(c.held, v)
		c.emit(Alarm{Code: "card_while_paused", Message: fmt.Sprintf("%s pulled while paused: held until resume", v.Card)}, "")
		return nil
	}
	c.dealt++
	if c.burn > 0 {
		c.burn--
		c.emit(Burned{Card: v.Card}, "")
		return nil
	}
	err := c.roundInput(round.Input{Type: round.InCard, Card: v.Card})
	if errors.Is(err, round.ErrUnexpectedCard) {
		c.alarm("unexpected_card", fmt.Sprintf("card %s does not fit the round (%s): check the shoe", v.Card, c.rnd.Phase()), true)
	}
	return err
}

func (c *Controller) roundInput(in round.Input) error {
	evs, err := c.rnd.Apply(in, c.evBuf[:0])
	c.evBuf = evs
	if err != nil {
		return err
	}
	c.emitRound(evs)
	return nil
}

// emitRound publishes round events and acts on what they mean for the
// table: timers for decisions and insurance, the end of the round.
func (c *Controller) emitRound(evs []round.Event) {
	for _, ev := range evs {
		if ev.Type == round.EvSettled && ev.Settlement != nil {
			ev.Settlement = ev.Settlement.Clone()
		}
		c.emit(ev, c.roundID)
	}
	rs := c.opts.Rules
	switch {
	case c.rnd.Phase() == round.PhaseSettled:
		c.rounds++
		if c.cutCard {
			c.setPhase(PhaseClosed, time.Time{}, "cut card: change shoe")
		} else {
			c.setPhase(PhaseSettled, c.now.Add(c.opts.SettleDelay), "")
			c.arm("next", c.opts.SettleDelay)
		}
	case c.rnd.Phase() == round.PhaseInsurance:
		c.arm("insurance", rs.InsuranceTime)
	case c.rnd.Awaiting() > 0:
		c.arm("decision", rs.DecisionTime)
	default:
		c.stopTimer()
	}
}

func (c *Controller) closeBets(v BetsClosed) error {
	if c.phase != PhaseBetting && c.phase != PhaseLastCall {
		return fmt.Errorf("%w: bets are not open (%s)", round.ErrIllegalAction, c.phase)
	}
	bets, err := toBets(v.Bets)
	if err != nil {
		return err
	}
	// The round code is its start time in GMT (#HH:MM:SS, as the game
	// documents show it); rounds started within one second get a suffix.
	code := c.now.UTC().Format("#15:04:05")
	id := code
	if hasPrefixCode(c.lastCode, code) {
		c.codeN++
		id = fmt.Sprintf("%s-%d", code, c.codeN)
	} else {
		c.codeN = 1
	}
	evs, err := c.rnd.Start(id, bets, c.evBuf[:0])
	c.evBuf = evs
	if err != nil {
		return err
	}
	c.lastCode, c.roundID = id, id
	c.setPhase(PhaseDealing, time.Time{}, "")
	c.emitRound(evs)
	return nil
}

func hasPrefixCode(last, code string) bool { return len(last) >= len(code) && last[:len(code)] == code }

func toBets(in []Bet) ([]round.Bet, error) {
	out := make([]round.Bet, 0, len(in))
	for _, b := range in {
		rb := round.Bet{Seat: b.Seat, Player: b.Player, Main: b.Main, Behind: b.Behind,
			FollowDouble: b.FollowDouble, FollowSplit: b.FollowSplit}
		for k, v := range b.Side {
			rb.Side = append(rb.Side, round.SideStake{Kind: sidebets.Kind(k), Stake: v})
		}
		sortSide(rb.Side)
		out = append(out, rb)
	}
	return out, nil
}

func sortSide(s []round.SideStake) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Kind < s[j-1].Kind; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func (c *Controller) applyTimer(v TimerFired) error {
	name := timerName(v.Timer)
	switch name {
	case "last_call":
		if c.phase == PhaseBetting {
			rs := c.opts.Rules
			c.setPhase(PhaseLastCall, c.deadline, "")
			c.arm("bets_deadline", rs.LastCallTime+c.opts.BetsGrace)
		}
	case "bets_deadline":
		if c.phase == PhaseLastCall || c.phase == PhaseBetting {
			c.log.Info().Msg("no bets closed by the deadline: betting reopens")
			c.openBetting()
		}
	case "next":
		if c.phase == PhaseSettled {
			c.openBetting()
		}
	case "insurance":
		return c.roundInput(round.Input{Type: round.InInsuranceTimeout})
	case "decision":
		if c.opts.Rules.DecisionTimeout == rules.TimeoutAutoTable {
			return c.autoPlay()
		}
		return c.roundInput(round.Input{Type: round.InDecisionTimeout})
	default:
		return fmt.Errorf("%w: unknown timer %q", round.ErrIllegalAction, v.Timer)
	}
	return nil
}

// autoTables are the strategy tables a game may name for automatic play.
var autoTables = map[string]func() *strategy.Table{
	"004-auto": strategy.SisalNoDoubleNoSplit,
}

// autoPlay decides every waiting hand with the game's automatic-play table
// (004: a hand left pending is played with the no-double, no-split table).
// Only the timer is journaled: replay derives the same decisions.
func (c *Controller) autoPlay() error {
	mk, ok := autoTables[c.opts.Rules.AutoPlayTable]
	if !ok {
		return fmt.Errorf("table: game %s names unknown auto-play table %q", c.opts.Rules.Code, c.opts.Rules.AutoPlayTable)
	}
	tbl := mk()
	for _, w := range c.rnd.Waiting(nil) {
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
		if err := c.roundInput(round.Input{Type: round.InDecision, Seat: w.Seat, Player: w.Player, Action: a, Auto: true}); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) applySupervisor(v Supervisor) error {
	switch v.Command {
	case "pause":
		c.pause(v.By, v.Reason)
	case "resume":
		if !c.paused {
			return fmt.Errorf("%w: not paused", round.ErrIllegalAction)
		}
		c.paused = false
		c.alarms = c.alarms[:0]
		c.emit(Resumed{By: v.By}, c.roundID)
		c.setPhase(c.resumePhase(), time.Time{}, "")
		held := c.held
		c.held = nil
		for _, h := range held {
			if err := c.applyCard(h); err != nil {
				c.log.Warn().Err(err).Msg("held card rejected on resume")
			}
		}
		if c.phase == PhaseIdle {
			c.openBetting()
		} else {
			c.rearm()
		}
	case "void":
		rp := c.rnd.Phase()
		if rp == round.PhaseSettled || rp == round.PhaseNew {
			return fmt.Errorf("%w: no round in play to void", round.ErrIllegalAction)
		}
		reason := v.Reason
		if reason == "" {
			reason = "voided by " + v.By
		}
		wasPaused := c.paused
		c.paused = false
		if err := c.roundInput(round.Input{Type: round.InVoid, Reason: reason}); err != nil {
			c.paused = wasPaused
			return err
		}
		c.held = nil
		c.alarms = c.alarms[:0]
	case "correct":
		if !v.Card.Valid() {
			return fmt.Errorf("%w: correct needs a card", round.ErrIllegalAction)
		}
		return c.applyCard(CardDrawn{Card: v.Card})
	case "open":
		if c.phase != PhaseIdle && c.phase != PhaseClosed {
			return fmt.Errorf("%w: bets open only from idle or closed", round.ErrIllegalAction)
		}
		c.openBetting()
	}
	return nil
}

func (c *Controller) resumePhase() Phase {
	switch c.rnd.Phase() {
	case round.PhaseDealing, round.PhaseInsurance, round.PhasePlay, round.PhaseDealer:
		return PhaseDealing
	}
	if c.cutCard {
		return PhaseClosed
	}
	return PhaseIdle
}

func (c *Controller) pause(by, why string) {
	if c.paused {
		return
	}
	c.paused = true
	c.pauseWhy = why
	c.stopTimer()
	c.emit(Paused{By: by, Reason: why}, c.roundID)
	c.setPhase(PhasePaused, time.Time{}, why)
}

func (c *Controller) alarm(code, msg string, pauses bool) {
	a := Alarm{Code: code, Message: msg, Pauses: pauses}
	c.alarms = append(c.alarms, a)
	c.emit(a, c.roundID)
	if pauses {
		c.pause("system", msg)
	}
}

func (c *Controller) openBetting() {
	if c.paused {
		return
	}
	if c.cutCard {
		c.setPhase(PhaseClosed, time.Time{}, "cut card: change shoe")
		return
	}
	rs := c.opts.Rules
	c.roundID = ""
	d := c.now.Add(rs.BettingTime)
	c.deadline = d
	c.setPhase(PhaseBetting, d, "")
	c.arm("last_call", rs.BettingTime-rs.LastCallTime)
}

// rearmPhase restarts the phase's timer after a restart (no timer runs
// during replay: the journal holds those that fired before).
func (c *Controller) rearmPhase() {
	rs := c.opts.Rules
	left := func(at time.Time) time.Duration { return max(0, at.Sub(c.clk.Now())) }
	switch c.phase {
	case PhaseBetting:
		c.arm("last_call", left(c.deadline.Add(-rs.LastCallTime)))
	case PhaseLastCall:
		c.arm("bets_deadline", left(c.deadline.Add(c.opts.BetsGrace)))
	case PhaseSettled:
		c.arm("next", c.opts.SettleDelay)
	}
}

// rearm restarts the timer the round waits on after a resume.
func (c *Controller) rearm() {
	rs := c.opts.Rules
	switch {
	case c.rnd.Phase() == round.PhaseInsurance:
		c.arm("insurance", rs.InsuranceTime)
	case c.rnd.Phase() == round.PhasePlay && c.rnd.Awaiting() > 0:
		c.arm("decision", rs.DecisionTime)
	}
}

func (c *Controller) setPhase(p Phase, deadline time.Time, reason string) {
	c.phase = p
	c.emit(PhaseChanged{Phase: p, Deadline: deadline, Reason: reason}, c.roundID)
}

// Timers: one at a time. A timer carries a generation key so one that
// fires after being replaced is recognised and ignored; during replay no
// timer is started (the journal holds the ones that fired).
func (c *Controller) arm(name string, d time.Duration) {
	c.stopTimer()
	c.timerGen++
	if c.replaying {
		return
	}
	key := c.timerKey()
	tf := TimerFired{Timer: name + "@" + key, Round: key}
	c.timer = c.clk.AfterFunc(d, func() {
		select {
		case c.timers <- tf:
		default:
			// A full queue means Run is far behind; the timer is re-armed by the next input.
		}
	})
}

func (c *Controller) timerKey() string { return fmt.Sprintf("%d", c.timerGen) }

func timerName(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			return s[:i]
		}
	}
	return s
}

func (c *Controller) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

// emit numbers an event and fans it out. A state snapshot is not an event
// of its own: it takes no number (the events topic stays gap-free) and
// carries, in its body, the number of the last event it reflects.
func (c *Controller) emit(b Body, roundID string) {
	seq := uint64(0)
	if _, ok := b.(*State); !ok {
		c.seq++
		seq = c.seq
	}
	ev := Event{Seq: seq, Time: c.now, Table: c.opts.Table, Round: roundID, Body: b}
	if c.replaying {
		if c.opts.Replayed != nil {
			c.opts.Replayed(ev)
		}
		return
	}
	c.fanout(ev)
}

func (c *Controller) publishState() {
	st := &State{
		Seq: c.seq, Table: c.opts.Table, Game: c.opts.Rules.Code, Phase: c.phase, Deadline: c.deadline,
		Paused: c.paused, PauseReason: c.pauseWhy, Round: c.rnd.Snapshot(),
		Shoe:   ShoeState{ID: c.shoeID, Dealt: c.dealt, CutCard: c.cutCard, BurnPending: c.burn, Decks: c.opts.Rules.Decks},
		Alarms: append([]Alarm(nil), c.alarms...), Rounds: c.rounds,
	}
	if c.phase == PhaseBetting || c.phase == PhaseLastCall {
		st.Round = round.View{Next: "wait: bets open"}
	} else if c.phase == PhaseClosed {
		st.Round.Next = "change shoe"
	} else if c.paused {
		st.Round.Next = "stop: table paused (" + c.pauseWhy + ")"
	} else if c.burn > 0 && c.rnd.Phase() != round.PhaseDealing {
		st.Round.Next = "burn one card"
	}
	c.state.Store(st)
	c.emit(st, c.roundID)
}

// CutCard reports the cut card out of the shoe: the round in play
// finishes, then the table closes until a new shoe is in play.
type CutCard struct {
	Source string `json:"source"`
}

// Kind implements Body.
func (CutCard) Kind() string { return "cut_card" }

// ShoeInPlay reports a new shoe in play, and how many cards it burns first.
type ShoeInPlay struct {
	ShoeID string `json:"shoe_id"`
	Burn   int    `json:"burn,omitempty"`
}

// Kind implements Body.
func (ShoeInPlay) Kind() string { return "shoe_in_play" }

// Burned reports a card burned face down from a new shoe (003).
type Burned struct {
	Card card.Card `json:"card"`
}

// Kind implements Body.
func (Burned) Kind() string { return "burned" }

// State is the retained snapshot of the whole table.
type State struct {
	// Seq is the number of the last event this snapshot reflects.
	Seq         uint64     `json:"seq"`
	Table       string     `json:"table"`
	Game        string     `json:"game"`
	Phase       Phase      `json:"phase"`
	Deadline    time.Time  `json:"deadline,omitzero"`
	Paused      bool       `json:"paused"`
	PauseReason string     `json:"pause_reason,omitempty"`
	Round       round.View `json:"round"`
	Shoe        ShoeState  `json:"shoe"`
	Alarms      []Alarm    `json:"alarms,omitempty"`
	Rounds      int        `json:"rounds"`
}

// Kind implements Body: a state snapshot goes to the retained state topic.
func (*State) Kind() string { return "state" }

// ShoeState is the shoe in play.
type ShoeState struct {
	ID          string `json:"id,omitempty"`
	Decks       int    `json:"decks"`
	Dealt       int    `json:"dealt"`
	CutCard     bool   `json:"cut_card"`
	BurnPending int    `json:"burn_pending,omitempty"`
}
