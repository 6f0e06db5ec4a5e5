// Package world is the deterministic simulation of a table (issue 17,
// first slice): the real table controller (its loop and the pure state
// machine), the real journal and the continuity check at start, on the
// simulated disk of simulators/disk and a fake clock, with a seeded
// dealer, players and supervisor, power cuts and disk faults. One seed
// is one run. docs/simulation.md says what is simulated, what is real,
// which invariants are checked and what is not simulated yet.
package world

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/simulators/disk"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/continuity"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// Options configures one run.
type Options struct {
	// Seed decides everything: the disk's behaviour, the shoe's order,
	// the bets, the decisions, when the power is cut and which faults come.
	Seed uint64
	// Game is the game code ("000".."004"); empty or "all" draws it from
	// the seed (seed mod 5).
	Game string
	// Steps is how many inputs the workload offers (default 400).
	Steps int
	// Trace, when set, gets a readable line per step and per fault.
	Trace io.Writer
	// PowerCutsOnly leaves out the disk faults (EIO, a full disk): only
	// power cuts.
	PowerCutsOnly bool
	// NoSerial hands the shoe's frames straight to the controller, as
	// the reader's bridge would, without the serial line and the reader.
	NoSerial bool
	// NoClockJumps keeps the wall clock with the monotonic one.
	NoClockJumps bool
	// JumpEvery steps the wall clock in 1 of JumpEvery steps in every
	// seed (at least 2); 0 leaves it to the seed: half the seeds step it,
	// in 1 of 20 to 80 steps.
	JumpEvery int
	// NoNetwork leaves the MQTT link, the broker and the backend out: the
	// backend's view is what the controller hands out (net.go).
	NoNetwork bool

	noResends bool // the backend never asks for a resend (tests of the checks)
}

// Violation is an invariant that did not hold.
type Violation struct {
	Invariant string
	Detail    string
}

// String is the violation as the report prints it: invariant, then detail.
func (v Violation) String() string { return v.Invariant + ": " + v.Detail }

// Result is what a run did and found.
type Result struct {
	Seed       uint64
	Game       string
	Steps      int // inputs offered
	Accepted   int // inputs the controller accepted
	Restarts   int // power cuts and faults survived by a restart
	Published  uint64
	Net        NetStats // the network's side (net.go)
	Rounds     int      // rounds settled (voided included), compared with the fault-free run
	Refused    int      // inputs refused (each checked: typed error, nothing changed)
	Crowds     int      // rounds of a crowd (002: a seat of more than round.CrowdPlayers players, deciding by batches) settled
	Violations []Violation

	// Stray cards (strays.go): the cards the dealer pulled by mistake
	// before a round's bets (StraysBetween), while the table was paused
	// before a card of the round (StraysPaused) and while the round
	// waited for a player's insurance or decision (StraysWaiting); the cards the
	// table's card_set_aside alarms named (SetAside, compared with the
	// fault-free run's); the restarts that came while stray cards were
	// unanswered in the shoe or in the table's set-aside list.
	StraysBetween int
	StraysPaused  int
	StraysWaiting int
	SetAside      int
	StrayRestarts int

	// The wall clock's steps (ClockSteps), the pauses of a player's
	// timer after a step since the world first saw it running
	// (PausedAcrossSteps: the time kept checked against the monotonic
	// clock), and the snapshots that showed a running timer again after
	// a step since it was first seen (ShownAcrossSteps: its deadline
	// checked to be where it was on the monotonic clock); timers.go.
	ClockSteps        int
	PausedAcrossSteps int
	ShownAcrossSteps  int
}

// Games are the games the simulation plays.
var Games = []string{"000", "001", "002", "003", "004"}

const (
	dataDir    = "/table"
	journalDir = dataDir + "/journal"
)

var epoch = time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)

// world is one run's state.
type world struct {
	opts  Options
	rs    *rules.Set
	rng   *rand.Rand
	d     *disk.Disk
	clk   *jumpClock // wall clock with its steps, over the monotonic one timers run on (clock.go)
	res   Result
	trace func(format string, args ...any)

	j      *journal.Journal
	c      *table.Controller
	events <-chan table.Event
	cancel context.CancelFunc
	done   chan error
	live   context.Context // cancelled when the controller's Run returns

	published map[uint64]string // seq -> wire payload: the backend's view
	maxSeq    uint64
	checked   uint64   // published seqs up to it were checked against the journal
	acked     [][]byte // encoded inputs the controller accepted, in order

	net *network // the MQTT link, the broker and the backend (net.go)

	wl      *workload
	settled map[uint64]*round.Settlement // published settlements by seq
	crowd   map[uint64][]table.PlayerNet // a crowd's players, from the chunks after its settlement (by the settlement's seq)
	lastSet uint64                       // the newest settlement's seq, which the chunks after it belong to
	aside   map[uint64][]card.Card       // the cards each card_set_aside alarm named, by seq (strays.go)
	// points are the shoe's inventory after each restart, at the number
	// of device frames answered then: the reference must show the same.
	points []inventory
	mark   bool            // the daemon restarted: the next answered frame is a point
	ids    map[string]bool // command ids whose answer a restart cut off

	serial     *serial // the shoe's line and the reader (serial.go); nil: frames go straight to Submit
	restartDue bool    // the journal failed: the daemon restarts
	failure    string

	jumps   int // a step of the wall clock in 1 of jumps steps; 0 never
	jumpRng *rand.Rand
	lengths *table.Machine // the timers' lengths
	grace   time.Duration  // the least time a resume gives a player back
	seen    seenTimer      // the table's timer as last seen (timers.go)
}

// inventory is the shoe as the table books it, at a point of the workload.
type inventory struct {
	at   int
	shoe table.ShoeState
}

// Run plays one seeded run and returns what it found.
func Run(opts Options) Result {
	if opts.Game == "" || opts.Game == "all" {
		opts.Game = Games[opts.Seed%uint64(len(Games))]
	}
	if opts.Steps <= 0 {
		opts.Steps = 400
	}
	w := &world{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x3017d)), published: map[uint64]string{},
		clk: newJumpClock(epoch), settled: map[uint64]*round.Settlement{}, crowd: map[uint64][]table.PlayerNet{}, ids: map[string]bool{},
		aside: map[uint64][]card.Card{}}
	w.res.Seed = opts.Seed
	w.trace = func(string, ...any) {}
	if opts.Trace != nil {
		w.trace = func(format string, args ...any) { fmt.Fprintf(opts.Trace, format+"\n", args...) }
	}
	rs, err := rules.Game(opts.Game)
	if err != nil {
		w.violate("setup", err.Error())
		return w.res
	}
	w.rs = rs
	w.res.Game = rs.Code
	o := table.DefaultOptions(rs)
	w.grace = o.ResumeGrace
	if w.lengths, err = table.NewMachine(table.MachineConfig{Rules: rs, SettleDelay: o.SettleDelay, BetsGrace: o.BetsGrace}); err != nil {
		w.violate("setup", err.Error())
		return w.res
	}
	w.wl = newWorkload(opts.Seed, rs, true)
	w.wl.onDevice = func(k int, st table.State) {
		// The shoe's first frame after a restart is answered (applied,
		// or a duplicate: it was journaled before the cut): the
		// inventory then is the fault-free run's after as many frames.
		if w.mark && st.Misread == "" {
			w.points = append(w.points, inventory{at: k, shoe: st.Shoe})
		}
		w.mark = false
	}
	w.d = disk.New(disk.Options{Seed: opts.Seed, KeepUnsynced: opts.Seed%2 == 0, TearZeros: opts.Seed%3 == 0})
	strayCuts := rand.New(rand.NewPCG(opts.Seed, 0x57a7))
	w.wl.strays.pulled = func() {
		// A power cut amid one stray pull in three, within the next few
		// steps' disk operations: the set-aside list and the held cards
		// meet restarts far more often than the seed's own faults alone
		// would bring them (a stream of its own: the other draws stay).
		if strayCuts.IntN(3) == 0 {
			n := 1 + strayCuts.IntN(4*w.opsPerStep())
			w.d.PowerCutAt(n)
			w.trace("fault: power cut in %d operations, amid the stray cards", n)
		}
	}
	if !opts.NoNetwork {
		w.net = newNetwork(w)
	}
	w.jumpRng = rand.New(rand.NewPCG(opts.Seed, 0xc10c))
	if w.jumpRng.IntN(2) == 0 && !opts.NoClockJumps {
		w.jumps = 20 + w.jumpRng.IntN(60)
	}
	if opts.JumpEvery > 0 && !opts.NoClockJumps {
		w.jumps = max(opts.JumpEvery, 2)
	}
	if w.jumps > 0 {
		w.trace("clock: the wall clock steps 1 in %d steps", w.jumps)
	}
	if !opts.NoSerial {
		w.serial = newSerial(w)
		w.trace("serial faults: %v", w.serial.faults)
	}
	if !w.start() {
		return w.res
	}
	w.schedule()
	for step := 0; step < opts.Steps && len(w.res.Violations) == 0; step++ {
		w.res.Steps++
		if w.c == nil {
			break
		}
		w.wl.step(w, step)
		w.net.step()
	}
	w.finish()
	return w.res
}

func (w *world) violate(inv, detail string) {
	w.trace("VIOLATION %s: %s", inv, detail)
	w.res.Violations = append(w.res.Violations, Violation{Invariant: inv, Detail: detail})
}

// schedule draws the next fault: a power cut within the next operations,
// sometimes an EIO from an fsync or a write of the journal, or a disk
// about to fill.
func (w *world) schedule() {
	kind := w.rng.IntN(6)
	if w.opts.PowerCutsOnly {
		kind = 2
	}
	switch kind {
	case 0:
		n := 1 + w.rng.IntN(20)
		w.d.Inject(disk.Fault{Op: disk.OpSync, Path: ".ltj", N: n, Err: syscall.EIO})
		w.trace("fault: EIO at the journal's fsync %d from now", n)
	case 1:
		c := int64(4<<10 + w.rng.IntN(64<<10))
		w.d.SetCapacity(c)
		w.trace("fault: the disk holds %d bytes", c)
	default:
		n := 1 + w.rng.IntN(200*w.opsPerStep())
		w.d.PowerCutAt(n)
		w.trace("fault: power cut in %d operations", n)
	}
}

// options are the controller's, on the world's journal.
func (w *world) options() table.Options {
	o := table.DefaultOptions(w.rs)
	o.Studio, o.Table, o.Clock = "sim", "t1", w.clk
	o.CheckpointEvery = 3
	o.Journal = table.NewJournal(w.j)
	o.RepublishAfter = w.republishAfter()
	return o
}

// start opens the journal, checks it against what was published (the
// daemon's continuity check) and runs a controller. false stops the run.
func (w *world) start() bool {
	j, rep, err := journal.Open(journal.Options{Dir: journalDir, FS: w.d, SegmentBytes: 8 << 10,
		AnchorKind: table.CheckpointKind, Clock: w.clk}, zerolog.Nop())
	if err != nil {
		w.violate("journal opens after any fault", err.Error())
		return false
	}
	if rep.Tail != nil {
		w.trace("recovery: %v", rep.Tail)
	}
	w.j = j
	if err := w.net.preStart(); err != nil {
		w.violate("outbox opens after any fault", err.Error())
		return false
	}
	opts := w.options()
	if err := w.checkJournal(opts); err != nil {
		return false
	}
	n, _, err := continuity.Start(opts, w.d, continuity.AcceptPath(dataDir), w.maxSeq, w.clk.Now())
	if err != nil {
		w.violate("journal never behind what was published",
			fmt.Sprintf("journal derives seq %d, published %d: %v", n.Journal, n.Outbox, err))
		return false
	}
	c, err := table.New(opts, zerolog.Nop())
	if err != nil {
		w.violate("setup", err.Error())
		return false
	}
	w.c = c
	w.events, _ = c.Subscribe("backend", 1<<13)
	if err := w.net.open(); err != nil {
		w.violate("outbox opens after any fault", err.Error())
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	live, died := context.WithCancel(ctx)
	w.cancel, w.done, w.live = cancel, make(chan error, 1), live
	go func() {
		err := c.Run(ctx, nil)
		w.done <- err
		died()
	}()
	if err := c.Ping(live); err != nil {
		w.violate("controller starts", err.Error())
		return false
	}
	// The new controller arms the timer the replay left on the wall clock
	// of now, for no longer than the timer's length (table.Controller).
	// The snapshot the start published shows the journal's deadline and
	// its time left at the journal's last input: the world's account of
	// the timer starts from the controller's rule, not from it (observe).
	w.seen = seenTimer{}
	if st := c.Snapshot(); st.Timer != nil {
		w.seen = seenTimer{ptr: st.Timer, name: st.Timer.Name, left: time.Duration(st.Timer.LeftMS) * time.Millisecond}
		if !st.Timer.Stopped && !st.Timer.Deadline.IsZero() {
			left := min(max(st.Timer.Deadline.Sub(w.clk.Now()), 0), w.lengths.TimerLength(table.TimerName(st.Timer.Name)))
			w.seen.running, w.seen.mono = true, w.clk.Mono().Add(left)
		}
	}
	if w.serial != nil {
		w.serial.startReader()
	}
	w.drain()
	// A deadline that passed while the table was down fires at once, from
	// the timer's goroutine: wait for it before the next input.
	w.advance(0)
	return w.c != nil
}

// checkJournal replays the journal: every input the controller accepted
// is there, in order, and every event it derives that was published has
// the published content.
func (w *world) checkJournal(opts table.Options) error {
	var recs [][]byte
	if err := w.j.Replay(0, func(r journal.Record) error {
		recs = append(recs, r.Data)
		return nil
	}); err != nil {
		w.violate("journal replays", err.Error())
		return err
	}
	k := 0
	for _, r := range recs {
		if k < len(w.acked) && string(r) == string(w.acked[k]) {
			k++
		}
	}
	if k < len(w.acked) {
		w.violate("no acknowledged input lost", fmt.Sprintf("input %d of %d (%s) is not in the journal", k+1, len(w.acked), w.acked[k]))
		return errors.New("lost")
	}
	var bad error
	// From the checkpoint before the last seq checked at the previous
	// restart: what comes before it cannot have changed since.
	err := table.ReplayEventsSince(opts, w.checked, func(ev table.Event) {
		if ev.Seq == 0 || bad != nil {
			return
		}
		b, _ := wire.Encode(ev)
		if prev, ok := w.published[ev.Seq]; ok && prev != string(b) {
			bad = fmt.Errorf("seq %d published as %s, the journal derives %s", ev.Seq, prev, b)
		}
	})
	if err != nil {
		w.violate("journal replays", err.Error())
		return err
	}
	if bad != nil {
		w.violate("every seq has one content", bad.Error())
		return bad
	}
	w.checked = w.maxSeq
	return nil
}

// drain takes what the controller published: each seq with one content.
func (w *world) drain() {
	var evs []table.Event
	defer func() { w.net.take(evs) }() // the link's intake
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				return
			}
			evs = append(evs, ev)
			if ev.Seq == 0 {
				continue
			}
			b, err := wire.EncodeShared(ev) // the encoding the link publishes
			if b == nil {
				w.violate("every event encodes", err.Error())
				continue
			}
			prev, seen := w.published[ev.Seq]
			if seen && prev != string(b) {
				w.violate("every seq has one content", fmt.Sprintf("seq %d: %s, then %s", ev.Seq, prev, b))
			}
			w.published[ev.Seq] = string(b)
			if re, ok := ev.Body.(round.Event); ok && re.Type == round.EvSettled && re.Settlement() != nil {
				w.settled[ev.Seq] = re.Settlement()
				w.lastSet = ev.Seq
			}
			if ch, ok := ev.Body.(table.SettlementChunk); ok && !seen && w.lastSet != 0 && ev.Seq > w.lastSet {
				w.crowd[w.lastSet] = append(w.crowd[w.lastSet], ch.Players...)
			}
			if cs, ok := asideCards(ev.Body); ok {
				w.aside[ev.Seq] = cs
			}
			w.maxSeq = max(w.maxSeq, ev.Seq)
			w.res.Published = max(w.res.Published, ev.Seq)
		default:
			return
		}
	}
}

func (w *world) stop() {
	if w.c == nil {
		return
	}
	if w.serial != nil {
		w.serial.stopReader()
	}
	w.cancel()
	<-w.done
	w.drain()
	w.net.close()
	_ = w.j.Close()
	w.c = nil
}

// restart is the daemon restarting after the power came back (or the
// disk was repaired): a new journal and controller on the same disk.
func (w *world) restart(why string) bool {
	if w.c != nil && (len(w.c.Snapshot().SetAside) > 0 || slices.ContainsFunc(w.wl.queue, func(d devInput) bool { return d.stray })) {
		w.res.StrayRestarts++
	}
	w.stop()
	w.res.Restarts++
	if !w.d.IsCut() {
		w.d.PowerCut() // a failing disk is replaced or repaired: the machine reboots
	}
	w.d.ClearFaults()
	w.d.SetCapacity(0)
	w.d.Reboot()
	w.trace("restart after %s", why)
	if !w.start() {
		return false
	}
	w.mark = true
	w.schedule()
	return true
}

// errRestarted is submit's answer when the input met a failing journal
// and the daemon restarted.
var errRestarted = errors.New("world: the daemon restarted")

// submit hands one input to the controller; a journal failure restarts
// the daemon.
func (w *world) submit(in table.Input) error {
	err := w.apply(in)
	w.restartIfDue()
	return err
}

// restartIfDue restarts the daemon whose journal failed.
func (w *world) restartIfDue() {
	for w.restartDue {
		w.restartDue = false
		w.restart(w.failure)
	}
}

// apply hands one input to the controller; a journal failure makes the
// restart due (errRestarted).
func (w *world) apply(in table.Input) error {
	if w.c == nil {
		return errRestarted
	}
	data, _ := table.EncodeInput(in)
	err := w.c.Submit(w.live, in)
	// The journal's failure is known when Submit returns (the controller
	// stops its loop after it): the trace does not depend on when the
	// loop's goroutine ends.
	if failed := w.j.Err(); failed != nil {
		// Submit's answer is ErrJournal, or the loop's end when it came
		// first: either way the daemon restarts.
		w.drain()
		if errors.Is(err, table.ErrJournal) {
			// The table cannot go on: it shows itself stopped, with the
			// alarm, until the daemon's restart reopens the journal.
			if st := w.c.Snapshot(); !st.Paused || !slices.Contains(st.PauseReasons, table.PauseJournal) || len(st.Alarms) == 0 {
				w.violate("a fault the table cannot recover from pauses it with an alarm",
					fmt.Sprintf("%s met %v; the table shows paused=%v reasons %v", data, err, st.Paused, st.PauseReasons))
			}
		}
		w.trace("%s: not answered", data)
		if id := table.CommandID(in); id != "" {
			w.ids[id] = true
		}
		w.restartDue, w.failure = true, failed.Error()
		return errRestarted
	}
	_ = w.c.Ping(w.live)
	w.drain()
	switch {
	case err == nil:
		w.res.Accepted++
		if id := table.CommandID(in); id == "" || !w.ids[id] {
			// A command sent again after a restart that cut its answer
			// off may have been journaled before: then it is answered
			// by its id, not journaled again, and where it stands in
			// the journal is not known.
			w.acked = append(w.acked, data)
		}
		w.trace("%s ok", data)
	default:
		w.trace("%s refused: %v", data, err)
	}
	return err
}

// RunMany runs seeds first..first+n-1 on workers goroutines and calls
// report with each result, in seed order.
func RunMany(first uint64, n, workers int, base Options, report func(Result)) {
	results := make([]chan Result, n)
	for i := range results {
		results[i] = make(chan Result, 1)
	}
	next := make(chan int)
	for range max(workers, 1) {
		go func() {
			for i := range next {
				o := base
				o.Seed, o.Trace = first+uint64(i), nil
				results[i] <- Run(o)
			}
		}()
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for i := range n {
		report(<-results[i])
	}
}

func (w *world) tracef(format string, args ...any) { w.trace(format, args...) }

func (w *world) state() table.State {
	if w.c == nil {
		return table.State{}
	}
	return w.c.Snapshot()
}

// deadline is the running timer's deadline on the monotonic clock (where
// it fires), zero when none runs. The world reads it before it moves
// the clock or steps the wall clock, so it sees every snapshot at the
// monotonic time the table published it (observe).
func (w *world) deadline() time.Time { return w.deadlineOf(w.c.Snapshot()) }

// deadlineOf is deadline as snapshot st shows it.
func (w *world) deadlineOf(st table.State) time.Time {
	w.observe(st)
	if !w.seen.running {
		return time.Time{}
	}
	return w.seen.mono
}

// tick lets 50-550 ms pass, never as far as the running timer's
// deadline: a timer fires only when the workload means it to. Now and
// then the wall clock steps (NTP, an operator), forward or back.
func (w *world) tick() {
	if w.c == nil {
		return
	}
	dl := w.deadline()
	if w.jumps > 0 && w.jumpRng.IntN(w.jumps) == 0 {
		j := time.Duration(1+w.jumpRng.IntN(7200)) * time.Second
		if w.jumpRng.IntN(2) == 0 {
			j = -j
		}
		w.clk.Jump(j)
		w.res.ClockSteps++
		w.trace("clock: the wall clock steps %+v", j)
	}
	d := time.Duration(50+w.rng.IntN(500)) * time.Millisecond
	if !dl.IsZero() {
		d = min(d, dl.Sub(w.clk.Mono())-time.Millisecond)
	}
	if d > 0 {
		w.clk.Advance(d)
	}
}

// fire moves the clock to the table's deadline, so the controller's
// timer fires as it would.
func (w *world) fire() {
	if w.c == nil {
		return
	}
	if dl := w.deadline(); !dl.IsZero() {
		w.advance(max(dl.Sub(w.clk.Mono()), 0))
	}
}

// advance moves the clock by d and, when that passes the table's
// deadline, waits until the controller's loop has taken the timer's input
// (so the next input comes after it, every run alike).
func (w *world) advance(d time.Duration) {
	// The deadline from the snapshot the wait below compares with: a
	// timer that fires on its own (one that passed while the daemon was
	// down fires as it starts) may change the snapshot at any moment, and
	// a deadline read from the one before it, with the snapshot after,
	// waited for a timer that had fired already (seeds 6370 and 6826
	// under load, about one in 10,000).
	st := w.c.Snapshot()
	dl := w.deadlineOf(st)
	due := !dl.IsZero() && !w.clk.Mono().Add(d).Before(dl)
	w.clk.Advance(d)
	if !due {
		return
	}
	// The timer's callback hands its input to the loop from a goroutine
	// of its own: wait for the input's effect (every timer the machine
	// arms changes the state when it fires), however long the scheduler
	// takes, so that no later input overtakes it.
	fired := false
	for bound := time.Now().Add(30 * time.Second); !fired && time.Now().Before(bound); time.Sleep(10 * time.Microsecond) {
		if w.j.Err() != nil || w.c.Ping(w.live) != nil {
			fired = true
			break
		}
		now := w.c.Snapshot()
		fired = now.Seq != st.Seq || now.Timer == nil || !now.Timer.Deadline.Equal(st.Timer.Deadline)
	}
	if !fired {
		w.violate("a timer fires at its deadline", fmt.Sprintf("timer %s due at %v (monotonic) did not fire", st.Timer.Name, dl))
	}
	// The snapshot changes when the loop has journaled the timer's input,
	// before its effects (a checkpoint's journal writes) and the release
	// of its events: a Ping, queued behind them, lets the loop finish, so
	// that the link's disk writes never interleave with the checkpoint's
	// (which moved a power cut's or an EIO's place from run to run).
	if w.j.Err() == nil {
		_ = w.c.Ping(w.live)
	}
	w.drain()
	if failed := w.j.Err(); failed != nil {
		// The timer's input met the failing journal: the daemon restarts.
		w.restart(failed.Error())
	}
}

// shoe sends one of the shoe's frames: over the serial line through the
// reader, or straight to the controller.
func (w *world) shoe(d devInput) error {
	if w.serial == nil {
		return w.submit(d.in)
	}
	foreign := false
	if _, sent := w.serial.byWorkload[d.seq]; !sent && d.pulled && w.serial.chance(w.serial.faults.foreign) {
		foreign = true
		w.wl.foreign = true
	}
	return w.serial.send(d.seq, d.in, foreign)
}

// longest is the longest timer the table arms.
func (w *world) longest() time.Duration {
	var l time.Duration
	for _, n := range []table.TimerName{table.TimerLastCall, table.TimerBetsDeadline, table.TimerNext, table.TimerInsurance, table.TimerDecision} {
		l = max(l, w.lengths.TimerLength(n))
	}
	return l
}
