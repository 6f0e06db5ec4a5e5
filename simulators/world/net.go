package world

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/livetable/livetable/simulators/disk"
	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
)

// The network side of the world (docs/simulation.md): the MQTT link's
// real logic (mqttlink.Stepper: the pump over the durable outbox on the
// simulated disk, the command intake with its ledger, signature checks
// and rate limits, the resend answering) publishes through a simulated
// broker (broker.go) to a simulated backend, which asks for resends when
// it sees a gap. Everything runs on the world's goroutine, step by step,
// from a random stream of its own (the workload's draws do not depend on
// the network's).

const outboxDir = dataDir + "/outbox"

// NetStats counts what the network did in a run.
type NetStats struct {
	Disconnects    int // connections lost
	BrokerRestarts int // broker restarts
	Lost           int // messages a broker restart lost
	Timeouts       int // publishes the client gave up on
	Commands       int // command messages the link answered
	Flooded        int // hostile commands among them
	ResendAsks     int // resends the backend asked for
	OutboxFaults   int // EIOs armed on the outbox's and the ledger's writes and fsyncs
	WrongRound     int // signed voids for a round that had settled, refused wrong_round
}

// netFaults are the broker's fault classes a seed has (not every seed
// has every class: a run stays cheap, and the classes are seen alone as
// well as together).
type netFaults struct {
	disconnects bool // the connection drops and comes back
	restarts    bool // the broker restarts: unsaved messages lost, unacknowledged ones delivered again
	disorder    bool // deliveries duplicated, delayed and reordered
	timeouts    bool // a publish the client gives up on (the broker may have it all the same)
	flood       bool // malformed, unknown, replayed, badly signed and rate-busting commands
	outboxEIO   bool // EIO from a write or an fsync of the outbox, its mark or the reply ledger
}

func (f netFaults) String() string {
	var s []string
	for _, c := range []struct {
		on   bool
		name string
	}{{f.disconnects, "disconnects"}, {f.restarts, "broker restarts"}, {f.disorder, "disorder"}, {f.timeouts, "publish timeouts"}, {f.flood, "command floods"}, {f.outboxEIO, "outbox EIO"}} {
		if c.on {
			s = append(s, c.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// network is the link, the broker and the backend of one run.
type network struct {
	w      *world
	rng    *rand.Rand
	faults netFaults
	key    ed25519.PrivateKey // the supervisor's signing key
	link   *mqttlink.Link
	st     *mqttlink.Stepper
	b      *broker
	be     *backend

	outboxSeq uint64        // the outbox's last seq at the daemon's start
	backlog   []table.Event // events the pump has not taken (outbox full)
	failed    error         // a step of the link failed: the daemon restarts
	retryIn   int           // steps until the pump's back-off has passed (0: none)
	steps     int
	replies   int    // replies published while answering one command
	body      []byte // the command being answered
	healing   bool
}

func newNetwork(w *world) *network {
	rng := rand.New(rand.NewPCG(w.opts.Seed, 0x6e657477))
	n := &network{w: w, rng: rng}
	// Each class in half the seeds, the outbox's EIO (a restart each, the
	// costly part of a run) in a quarter.
	k := rng.IntN(128)
	n.faults = netFaults{disconnects: k&1 != 0, restarts: k&2 != 0, disorder: k&4 != 0, timeouts: k&8 != 0, flood: k&16 != 0,
		outboxEIO: k&96 == 96}
	var seed [ed25519.SeedSize]byte
	for i := range seed {
		seed[i] = byte(rng.Uint32())
	}
	n.key = ed25519.NewKeyFromSeed(seed[:])
	n.b = newBroker(n)
	n.be = newBackend(n)
	w.trace("network faults: %s", n.faults)
	return n
}

// republishAfter is the seq after which the controller hands out again
// what the journal derives: as tabled, the outbox's last seq (what the
// outbox lacks is handed to the link again); without the network, what
// was handed out.
func (w *world) republishAfter() uint64 {
	if w.net == nil {
		return w.maxSeq
	}
	return w.net.outboxSeq
}

// keyRing is the table's supervisor accounts: one, "sup".
type keyRing struct{ pub ed25519.PublicKey }

func (k keyRing) SupervisorKey(by string) (ed25519.PublicKey, bool) {
	return k.pub, by == "sup"
}

// preStart reads the outbox's last seq, as tabled does before its
// controller replays the journal: events past it are handed to the link
// again.
func (n *network) preStart() error {
	if n == nil {
		return nil
	}
	seq, err := mqttlink.OutboxLastSeq(n.w.d, outboxDir, zerolog.Nop())
	if err != nil {
		return err
	}
	n.outboxSeq = seq
	return nil
}

// open starts the link's logic on the disk as it is.
func (n *network) open() error {
	if n == nil {
		return nil
	}
	w := n.w
	o := mqttlink.DefaultOptions()
	o.Studio, o.Table, o.BrokerURL, o.OutboxDir, o.FS = "sim", "t1", "tcp://broker.sim:1883", outboxDir, w.d
	o.Supervisors = keyRing{pub: n.key.Public().(ed25519.PublicKey)}
	o.Now = w.clk.Mono // the link times its pacing by Now: in tabled on the monotonic reading, which no step of the wall clock moves
	o.History = journalHistory{w: w}
	o.MaxInflight = 8
	o.ReplyCacheSize = 256 // small, so floods go past it
	o.OutboxMemoryBytes = 32 << 10
	o.OutboxCompactBytes = 16 << 10 // compactions come, under power cuts too
	link, err := mqttlink.New(o, zerolog.Nop())
	if err != nil {
		return err
	}
	st, err := link.Stepper(client{n: n}, netSubmitter{n: n})
	if err != nil {
		return err
	}
	n.link, n.st, n.failed, n.retryIn, n.backlog = link, st, nil, 0, nil
	n.b.sessionResumed()
	if n.faults.outboxEIO && n.rng.IntN(2) == 0 {
		// The link must stop (tabled restarts); a failed fsync loses its
		// writes, and the journal derives again what the outbox lost.
		f := disk.Fault{Op: disk.OpSync, Path: "/outbox/", N: 1 + n.rng.IntN(30), Err: syscall.EIO}
		if n.rng.IntN(2) == 0 {
			f.Op = disk.OpWrite
		}
		w.d.Inject(f)
		w.res.Net.OutboxFaults++
		w.trace("fault: EIO at the outbox's %s %d from now", map[disk.Op]string{disk.OpSync: "fsync", disk.OpWrite: "write"}[f.Op], f.N)
	}
	return nil
}

func (n *network) close() {
	if n == nil {
		return
	}
	if n.st == nil {
		return
	}
	_ = n.st.Close()
	n.st = nil
}

// take hands the controller's events to the pump, as the link's intake
// takes them from the controller's queue.
func (n *network) take(evs []table.Event) {
	if n == nil {
		return
	}
	if n.st == nil || n.failed != nil {
		return
	}
	// Only queued: the pump takes them at the next step, after a Ping, so
	// what it takes at once does not depend on when the controller's
	// goroutine handed them over.
	n.backlog = append(n.backlog, evs...)
}

// pump takes what waits (in batches, as the pump does), then turns.
func (n *network) pump() {
	for len(n.backlog) > 0 && n.failed == nil {
		k := min(len(n.backlog), 256)
		took, err := n.st.Take(n.backlog[:k])
		if err != nil {
			n.fail(err)
			return
		}
		if !took {
			break
		}
		n.backlog = n.backlog[k:]
	}
	n.turn()
}

func (n *network) turn() {
	if n.st == nil || n.failed != nil {
		return
	}
	// The pump's loop turns again whenever an acknowledgement comes; the
	// broker here acknowledges before Publish returns, so it turns until
	// nothing moves (a window at a time).
	for depth := -1; depth != n.st.Depth(); {
		depth = n.st.Depth()
		if err := n.st.Turn(); err != nil {
			n.fail(err)
			return
		}
	}
	if d := n.st.Backoff(); d > 0 {
		// The back-off is 50 ms to 1 s: one to three steps of the world.
		n.retryIn = 1 + int(d/(400*time.Millisecond))
	}
}

func (n *network) fail(err error) {
	if n.failed == nil {
		n.failed = err
		n.w.trace("link: %v", err)
	}
}

// step is what the network does between two inputs of the workload:
// broker faults, deliveries to the backend and to the link, the pump's
// turn, a flood of commands.
func (n *network) step() {
	if n == nil {
		return
	}
	w := n.w
	if w.c == nil || n.st == nil {
		return
	}
	n.steps++
	n.settled()
	if !n.healing {
		n.b.faultStep()
	}
	if n.retryIn > 0 {
		if n.retryIn--; n.retryIn == 0 {
			n.st.RetryDue()
		}
	}
	n.pump()
	n.b.deliverEvents()
	if n.faults.flood && !n.healing && n.rng.IntN(3) == 0 {
		n.flood()
	}
	n.be.askResends()
	n.b.deliverCommands()
	if n.failed == nil && n.st != nil {
		if err := n.st.Resends(context.Background()); err != nil {
			n.fail(err)
		}
	}
	if n.failed == nil && n.steps%3 == 0 {
		if err := n.st.Sync(); err != nil {
			n.fail(err)
		}
	}
	n.checkMemory()
	n.afterLink()
}

// afterLink restarts the daemon when the link (or the journal under it)
// failed: tabled exits and systemd restarts it.
func (n *network) afterLink() {
	w := n.w
	if w.c == nil {
		return
	}
	n.settled()
	if err := w.j.Err(); err != nil {
		n.fail(err)
	}
	if n.failed != nil {
		w.restart(n.failed.Error()) // the link's open clears failed
	}
}

// command is one command message for the link, as the broker holds it.
func (n *network) command(msg *message) {
	if n.st == nil || n.failed != nil {
		return
	}
	n.replies, n.body = 0, msg.payload
	n.w.res.Net.Commands++
	if err := n.st.Command(context.Background(), msg); err != nil {
		n.fail(err)
		return
	}
	if n.replies != 1 {
		n.w.violate("every command answered once", fmt.Sprintf("%d replies to %q", n.replies, msg.payload))
	}
	n.settled()
}

// settled drains every event the controller handed out so far: what the
// pump takes next must not depend on when the controller's goroutine
// runs. The controller stores its snapshot before it hands out the
// input's events (all of them, and the state after them, at once): a
// snapshot past the last seq drained means some are on their way, and a
// Ping waits for them.
func (n *network) settled() {
	w := n.w
	if w.c == nil {
		return
	}
	if w.c.Snapshot().Seq > w.maxSeq {
		_ = w.c.Ping(w.live)
	}
	w.drain()
}

// checkMemory: what the link holds in memory stays within its bounds,
// however many commands and events came.
func (n *network) checkMemory() {
	if n.st == nil {
		return
	}
	m, b := n.st.Memory(), n.link.MemoryBounds()
	// Past its bound the outbox reads records back from the file when
	// their turn comes, and holds each until the broker acknowledges it:
	// the window's worth (and the next one looked at) on top.
	b.OutboxMemory += int64(b.InFlight+1) * int64(n.b.largest)
	if m.Ledger > b.Ledger || m.Signatures > b.Signatures || m.Senders > b.Senders || m.Resends > b.Resends ||
		m.InFlight > b.InFlight || m.Recent > b.Recent || m.OutboxMemory > b.OutboxMemory {
		n.w.violate("link memory bounded", fmt.Sprintf("%+v over %+v", m, b))
	}
}

// netSubmitter is the controller as the link's command intake sees it.
type netSubmitter struct{ n *network }

func (s netSubmitter) Submit(_ context.Context, in table.Input) error {
	w := s.n.w
	data, _ := table.EncodeInput(in)
	err := w.c.Submit(w.live, in)
	if failed := w.j.Err(); failed != nil {
		s.n.fail(failed)
		return fmt.Errorf("world: journal failed: %w", failed)
	}
	if err == nil && !slices.ContainsFunc(w.acked, func(a []byte) bool { return bytes.Equal(a, data) }) {
		// (A repeat the controller answered from its ledger is not
		// journaled again.)
		w.acked = append(w.acked, data)
		w.trace("command %s ok", data)
	}
	return err
}

// journalHistory answers resends from the world's journal, as
// mqttlink.JournalHistory answers them from tabled's.
type journalHistory struct{ w *world }

func (h journalHistory) Events(ctx context.Context, from, to uint64, fn func(table.Event) error) error {
	opts := h.w.options()
	opts.RepublishAfter = 0
	var ferr error
	rerr := table.ReplayEventsSince(opts, from, func(ev table.Event) {
		if ferr != nil || ev.Seq < from || ev.Seq > to {
			return
		}
		if ferr = ctx.Err(); ferr == nil {
			ferr = fn(ev)
		}
	})
	return errors.Join(rerr, ferr)
}

// flood sends the link a burst of hostile commands: none may stop the
// table, and none is applied.
func (n *network) flood() {
	k := n.rng.IntN(12)
	now := n.w.clk.Mono() // the link's clock
	id := func() string { n.b.cmdN++; return fmt.Sprintf("f%d", n.b.cmdN) }
	switch k {
	case 0: // garbage bytes
		b := make([]byte, 1+n.rng.IntN(120))
		for i := range b {
			b[i] = byte(n.rng.Uint32())
		}
		n.b.sendCommand("commands", b)
	case 1: // truncated JSON
		s := fmt.Sprintf(`{"schema":2,"id":%q,"type":"decision","seat":3,"player":"p3","action":"hit"}`, id())
		n.b.sendCommand("commands", []byte(s[:n.rng.IntN(len(s))]))
	case 2: // an unknown command, or a known one on the wrong topic
		if n.rng.IntN(2) == 0 {
			n.b.sendCommand("commands", []byte(fmt.Sprintf(`{"schema":2,"id":%q,"type":"teleport"}`, id())))
		} else {
			n.b.sendCommand("commands/insurance", []byte(fmt.Sprintf(`{"schema":2,"id":%q,"type":"decision","seat":6,"player":"x","action":"hit"}`, id())))
		}
	case 3: // a command sent again, same id and body
		if m, ok := n.b.pastCommand(); ok {
			n.b.sendCommand(strings.TrimPrefix(m.topic, topics.Root), m.payload)
		}
	case 4: // an id sent again with another body (half the time one the table accepted)
		if m, ok := n.b.pastCommand(); ok {
			var c struct {
				ID string `json:"id"`
			}
			if len(n.be.accepted) > 0 && n.rng.IntN(2) == 0 {
				c.ID = n.be.accepted[n.rng.IntN(len(n.be.accepted))]
			} else {
				_ = json.Unmarshal(m.payload, &c)
			}
			if c.ID != "" {
				// Nobody sits at seat 7: whatever the id answered before,
				// this body is never accepted.
				b := []byte(fmt.Sprintf(`{"schema":2,"id":%q,"type":"decision","seat":7,"player":"mallory","action":"double"}`, c.ID))
				n.be.expect(c.ID, b, mqttlink.Reply{ID: c.ID})
				n.b.sendCommand("commands", b)
			}
		}
	case 5: // a supervisor command with a forged signature, or unsigned, or by a stranger
		sig := make([]byte, ed25519.SignatureSize)
		for i := range sig {
			sig[i] = byte(n.rng.Uint32())
		}
		by := []string{"sup", "mallory"}[n.rng.IntN(2)]
		n.b.sendCommand("commands/supervisor", []byte(fmt.Sprintf(`{"schema":2,"id":%q,"type":"pause","by":%q,"reason":"x","ts":%d,"sig":%q}`,
			id(), by, now.UnixMilli(), base64.StdEncoding.EncodeToString(sig))))
	case 6: // a genuine supervisor void replayed long after it was signed, or signed now for a round that has settled
		// The void names the round its supervisor saw, as the console
		// and tablectl send it: the round in play when it was signed
		// (the replay), or the round before the one in play now (a late
		// click: the round settled and the next began while it
		// travelled). Both are refused, the first as too old, the
		// second wrong_round; the hours drawn choose (one draw, as
		// before).
		h := 1 + n.rng.IntN(48)
		sc := mqttlink.SupervisorCommand{ID: id(), Type: "void", By: "sup", Reason: "replayed", Round: n.w.state().Round.ID,
			Time: now.Add(-time.Duration(h) * time.Hour)}
		late := h%2 == 0 && n.w.wl.prevRound != "" && n.w.wl.prevRound != n.w.state().Round.ID
		if late {
			sc.Reason, sc.Round, sc.Time = "late", n.w.wl.prevRound, now
		}
		b, err := mqttlink.SignSupervisor(n.key, mqttlink.TopicsFor("sim", "t1").Root, sc)
		if err == nil {
			if late {
				// Never accepted: the round it names is over.
				n.be.expect(sc.ID, b, mqttlink.Reply{ID: sc.ID})
			}
			n.b.sendCommand("commands/supervisor", b)
		}
	case 7: // a genuine command signed for another table
		sc := mqttlink.SupervisorCommand{ID: id(), Type: "pause", By: "sup", Reason: "elsewhere", Time: now}
		b, err := mqttlink.SignSupervisor(n.key, mqttlink.TopicsFor("sim", "t2").Root, sc)
		if err == nil {
			n.b.sendCommand("commands/supervisor", b)
		}
	case 8: // a burst past the rate limit (40 at once): decisions for a seat nobody sits at
		if n.rng.IntN(2) == 0 {
			break // (half as often as the others: the first 40 each cost a round trip to the controller)
		}
		for range 41 + n.rng.IntN(20) {
			n.b.sendCommand("commands", []byte(fmt.Sprintf(`{"schema":2,"id":%q,"type":"decision","seat":7,"player":"flood","action":"hit"}`, id())))
		}
	case 10, 11: // a decision the table took, sent again through the link
		n.replayDecision()
	default: // a resend of events that do not exist yet
		n.b.sendCommand("commands/resend", []byte(fmt.Sprintf(`{"schema":2,"id":%q,"type":"resend","from":%d}`, id(), 1_000_000+n.rng.IntN(1000))))
	}
}

// replayDecision sends the link a decision the table accepted from the
// workload (a backend retrying it), with the same id and body: the
// controller's ledger answers it as it did, accepted, and applies it
// once. The link's reply must say accepted.
func (n *network) replayDecision() {
	w := n.w
	for range 4 {
		if len(w.acked) == 0 {
			return
		}
		in, err := table.DecodeInput(w.acked[n.rng.IntN(len(w.acked))])
		d, ok := in.(table.Decision)
		if err != nil || !ok || d.ID == "" {
			continue
		}
		b := decisionCommand(d)
		n.be.expect(d.ID, b, mqttlink.Reply{ID: d.ID, Accepted: true})
		n.b.sendCommand("commands", b)
		return
	}
}

// decisionCommand is the wire command of a decision the table took, as
// its backend sent it: the same id and fields, its seen included (the
// newest seq the backend had, judged by the seen fence of rules epoch
// 8). A replay without the seen would be another body under the same id
// (refused as reused), and one the table must judge as the original.
func decisionCommand(d table.Decision) []byte {
	b, _ := json.Marshal(struct {
		Schema int    `json:"schema"`
		ID     string `json:"id"`
		Type   string `json:"type"`
		Seat   int    `json:"seat"`
		Player string `json:"player"`
		Action string `json:"action"`
		Seen   uint64 `json:"seen,omitempty"`
	}{2, d.ID, mqttlink.CmdDecision, d.Seat, d.Player, d.Action, d.Seen})
	return b
}

// heal ends the faults and lets the network settle: the broker stays up,
// the pump empties the outbox, the backend asks for what it misses until
// its view is whole. Then the backend's view must equal the journal's.
func (n *network) heal() {
	if n == nil {
		return
	}
	w := n.w
	if w.c == nil || n.st == nil || len(w.res.Violations) > 0 {
		return
	}
	w.d.ClearFaults()
	w.d.SetCapacity(0)
	w.d.NoPowerCut()
	n.healing = true
	n.b.up()
	n.be.tail = true // an online status: the backend asks for what may follow its last event
	for range 300 {
		n.step()
		if w.c == nil || len(w.res.Violations) > 0 {
			return
		}
		if n.st != nil && n.st.Depth() == 0 && len(n.b.events) == 0 && len(n.b.toLink) == 0 && n.be.whole() {
			break
		}
	}
	n.be.checkView()
}

// journalEvents are the numbered events the journal derives, by seq.
func (n *network) journalEvents() (map[uint64]string, uint64, error) {
	evs := map[uint64]string{}
	var last uint64
	opts := n.w.options()
	opts.RepublishAfter = 0
	err := table.ReplayEvents(opts, func(ev table.Event) {
		if ev.Seq == 0 {
			return
		}
		b, _ := wire.Encode(ev)
		evs[ev.Seq] = string(b)
		last = max(last, ev.Seq)
	})
	return evs, last, err
}

// opsPerStep scales the power cut's window (in disk operations): the
// link's outbox, acknowledgement mark and ledger write several times as
// often as the journal alone, and restarts (a journal replay each) are
// what a run spends most on (docs/simulation.md).
const opsPerStep = 7

// opsPerStep is the power cut's scale for this run (1 without the
// network: the first slice's window).
func (w *world) opsPerStep() int {
	if w.net == nil {
		return 1
	}
	return opsPerStep
}
