package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/sidebets"
)

// crowdWait bounds every wait of the crowd's test and benchmark.
const crowdWait = 60 * time.Second

// crowdTable is a whole 002 table with a crowd, in process: the daemon
// (serve: the simulated shoe on a pty, the journal, the controller, the
// MQTT link) on a real mosquitto, a backend that bets for every player
// and answers every crowd_prompt with one decisions batch, and the
// dealer, who deals as the state's instruction line asks.
type crowdTable struct {
	tb      testing.TB
	root    string
	players int
	dev     *simshoe.Device
	backend paho.Client
	states  chan stateAt
	events  chan []byte
	results chan crowdResult
	rs      *rules.Set
	bets    []round.Bet // the bets as the table got them: slot i is bets[i]

	mu        sync.Mutex // guards the following
	cmdN      int
	lastInput time.Time // the last card pulled or batch sent
	lastKind  string    // "card" or "batch"
	replies   map[string][]wire.Reply
	seen      uint64 // the newest event seq run took, sent with each command
}

// crowdResult is one round as the backend received it, checked (check)
// as soon as its last chunk is in, and let go: a thousand rounds of ten
// thousand players are not kept.
type crowdResult struct {
	// err is check's verdict on the round.
	err error
	// batch is the round's first batch: its id and payload, to send again.
	batch   string
	payload []byte
	// latency is from the input that settled the round (the dealer's last
	// card, or the batch that ended the play when the dealer stood on his
	// two cards) to the last settlement_chunk at the backend; kind says
	// which input.
	latency time.Duration
	kind    string
}

// crowdRound is what the backend saw of a round: the table's inputs in
// order (cards, its own batches), the settlement summary and chunks.
type crowdRound struct {
	id      string
	inputs  []crowdInput
	hole    card.Card
	prompts int
	summary wire.RoundSettled
	void    bool
	chunks  map[int]wire.SettlementChunk
	got     map[int]int // slot -> times received
	batch   string      // the first batch's id
	payload []byte      // and payload
}

type crowdInput struct {
	card  card.Card
	hole  bool
	batch []round.SlotDecision
}

func startCrowdTable(tb testing.TB, players int) *crowdTable {
	mosq := mqttlinktest.StartMosquitto(tb, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	dev, err := simshoe.New(simshoe.Options{Seed: 21, Heartbeat: time.Second}, zerolog.Nop())
	require.NoError(tb, err)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = dev.Run(ctx) }()
	cfg := DefaultConfig()
	cfg.Studio, cfg.Table, cfg.Game = "crowd", "t1", "002"
	cfg.DataDir = filepath.Join(tb.TempDir(), "data")
	cfg.Broker.URL = mosq.URL()
	cfg.Shoe.Path = dev.Path()
	cfg.GPIO.Sim = true
	noShuffler := false
	cfg.GPIO.Shuffler = &noShuffler // the dealer changes the shoe himself
	cfg.Console.Addr = "off"
	cfg.Timing.Settle = 20 * time.Millisecond
	// The shoe's silence is not what these tests look at: a 10,000-player
	// round beside its own backend, on a CI host at load 30, kept the
	// reader from the shoe's heartbeats past the default 3 s, and the
	// paused table failed the round.
	cfg.Shoe.Silence = 30 * time.Second
	// Nor are the windows: the backend closes the bets and decides by
	// command, and under load (-count=3 beside a simulation) the 15 s
	// betting window closed before the 10,000 bets were in ("not settled
	// after 6 inputs"). A flow that waited on a window would now stall
	// and fail.
	cfg.Timing.Betting, cfg.Timing.Decision = 3*time.Minute, 3*time.Minute
	serveDone := make(chan error, 1)
	go func() {
		defer wg.Done()
		serveDone <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(tb)).Level(zerolog.WarnLevel))
	}()
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = dev.Close()
		select {
		case err := <-serveDone:
			if err != nil {
				tb.Errorf("daemon: %v", err)
			}
		default:
		}
	})
	return newCrowdTable(tb, mosq.URL(), "livetable/crowd/t1/", dev, players)
}

// newCrowdTable is the backend, the overlay and the dealer of a crowd
// table whose daemon (in this process or its own) is connected to the
// broker at url under the topic root and reads dev.
func newCrowdTable(tb testing.TB, url, root string, dev *simshoe.Device, players int) *crowdTable {
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	rs, err := rules.Game("002")
	require.NoError(tb, err)
	t := &crowdTable{tb: tb, root: root, players: players, dev: dev, rs: rs,
		states: make(chan stateAt, 1<<12), events: make(chan []byte, 1<<16), results: make(chan crowdResult, 16),
		replies: map[string][]wire.Reply{}}
	for i := range players {
		// Players named as a backend names them, by UUID: a 10,000-player
		// bets_closed is then about 770 KB (mqttlink.MaxBatchBytes).
		b := round.Bet{Seat: 1, Player: fmt.Sprintf("%08x-7d1e-4c2a-9b3f-%012x", i*2654435761%(1<<32), i), Main: 1000}
		if i%4 == 0 {
			b.Side = []round.SideStake{{Kind: sidebets.Kind("bust_it"), Stake: 100}}
		}
		t.bets = append(t.bets, b)
	}
	t.backend = connectClient(tb, url, "crowd-backend", crowdWait)
	overlay := connectClient(tb, url, "crowd-overlay", crowdWait)
	subscribe := func(c paho.Client, topic string, h paho.MessageHandler) {
		if tok := c.Subscribe(topic, 1, h); !tok.WaitTimeout(crowdWait) || tok.Error() != nil {
			tb.Fatalf("subscribe %s: %v", topic, tok.Error())
		}
	}
	subscribe(overlay, t.root+"state", func(_ paho.Client, m paho.Message) {
		at := time.Now()
		var env struct {
			Data table.State `json:"data"`
		}
		if json.Unmarshal(m.Payload(), &env) == nil {
			select {
			case t.states <- stateAt{at: at, st: env.Data}:
			default:
				tb.Errorf("state queue full")
			}
		}
	})
	subscribe(t.backend, t.root+"events", func(_ paho.Client, m paho.Message) {
		select {
		case t.events <- m.Payload():
		default:
			tb.Errorf("event queue full: the backend is stuck")
		}
	})
	subscribe(t.backend, t.root+"replies", func(_ paho.Client, m paho.Message) {
		var r wire.Reply
		if json.Unmarshal(m.Payload(), &r) == nil {
			t.mu.Lock()
			t.replies[r.ID] = append(t.replies[r.ID], r)
			t.mu.Unlock()
		}
	})
	go t.run(ctx)
	return t
}

// send publishes a command with a fresh id and returns the id and the
// payload.
func (t *crowdTable) send(cmd map[string]any, input string) (string, []byte) {
	t.mu.Lock()
	t.cmdN++
	id := "crowd-" + strconv.Itoa(t.cmdN)
	if t.seen > 0 {
		cmd["seen"] = t.seen
	}
	t.mu.Unlock()
	cmd["id"], cmd["schema"] = id, 2
	payload, err := json.Marshal(cmd)
	if err != nil {
		t.tb.Errorf("command: %v", err)
		return id, nil
	}
	t.mu.Lock()
	if input != "" {
		t.lastInput, t.lastKind = time.Now(), input
	}
	t.mu.Unlock()
	t.backend.Publish(t.root+"commands/"+cmd["type"].(string), 1, false, payload)
	return id, payload
}

// batch sends entries as one decisions command and logs it as an input.
func (t *crowdTable) batch(r *crowdRound, entries []round.SlotDecision) {
	es := make([]map[string]any, len(entries))
	for i, e := range entries {
		action := e.Action.String()
		switch e.Answer {
		case round.AnswerTake:
			action = table.ActionInsurance
		case round.AnswerDecline:
			action = table.ActionNoInsurance
		}
		es[i] = map[string]any{"slot": e.Slot, "player": e.Player, "action": action}
	}
	r.inputs = append(r.inputs, crowdInput{batch: entries})
	id, payload := t.send(map[string]any{"type": "decisions", "round": r.id, "entries": es}, "batch")
	if r.batch == "" {
		r.batch, r.payload = id, payload
	}
}

// run is the backend: bets for every player when betting opens, one
// batch per crowd_prompt (every player stands, hits or doubles by slot,
// then every hitter stands), no insurance, and the settlement collected.
func (t *crowdTable) run(ctx context.Context) {
	var r *crowdRound
	for {
		var p []byte
		select {
		case <-ctx.Done():
			return
		case p = <-t.events:
		}
		var e mqttlinktest.Event
		if json.Unmarshal(p, &e) != nil {
			continue
		}
		t.mu.Lock()
		t.seen = max(t.seen, e.Seq)
		t.mu.Unlock()
		switch e.Kind {
		case "phase":
			var d wire.Phase
			if json.Unmarshal(e.Data, &d) == nil && d.Phase == string(table.PhaseBetting) {
				bets := make([]map[string]any, len(t.bets))
				for i, b := range t.bets {
					bets[i] = map[string]any{"seat": b.Seat, "player": b.Player, "main": b.Main}
					if len(b.Side) > 0 {
						bets[i]["side"] = map[string]int64{string(b.Side[0].Kind): b.Side[0].Stake}
					}
				}
				t.send(map[string]any{"type": "bets_closed", "bets": bets}, "")
			}
		case "round_started":
			r = &crowdRound{id: e.Round, chunks: map[int]wire.SettlementChunk{}, got: map[int]int{}}
		case "card_dealt":
			var d wire.CardDealt
			if r == nil || json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			if d.Hole {
				r.inputs = append(r.inputs, crowdInput{hole: true})
				continue
			}
			r.inputs = append(r.inputs, crowdInput{card: card.MustParse(d.Card)})
		case "hole_revealed":
			var d wire.HoleRevealed
			if r != nil && json.Unmarshal(e.Data, &d) == nil {
				r.hole = card.MustParse(d.Card)
			}
		case "insurance_offered":
			entries := make([]round.SlotDecision, t.players)
			for i := range entries {
				entries[i] = round.SlotDecision{Slot: int32(i), Answer: round.AnswerDecline}
			}
			t.batch(r, entries)
		case "crowd_prompt":
			r.prompts++
			var entries []round.SlotDecision
			for i := range t.players {
				a := []round.Action{round.ActStand, round.ActHit, round.ActDouble}[i%3]
				if r.prompts > 1 {
					if i%3 != 1 {
						continue // stood or doubled: done
					}
					a = round.ActStand
				}
				entries = append(entries, round.SlotDecision{Slot: int32(i), Action: a, Player: t.bets[i].Player})
			}
			t.batch(r, entries)
		case "round_settled", "round_void":
			var d wire.RoundSettled
			if r != nil && json.Unmarshal(e.Data, &d) == nil {
				r.summary, r.void = d, e.Kind == "round_void"
			}
		case "settlement_chunk":
			var d wire.SettlementChunk
			if r == nil || json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			r.chunks[d.Index] = d
			for _, pn := range d.Players {
				r.got[pn.Slot]++
			}
			if len(r.chunks) == r.summary.Chunks {
				t.mu.Lock()
				res := crowdResult{latency: time.Since(t.lastInput), kind: t.lastKind, batch: r.batch, payload: r.payload}
				t.mu.Unlock()
				res.err = t.check(r)
				t.results <- res
				r = nil
			}
		}
	}
}

// play deals until n rounds are settled and received, and returns them.
func (t *crowdTable) play(ctx context.Context, n int) ([]crowdResult, error) {
	var out []crowdResult
	var cur table.State
	changed := false
	for len(out) < n {
		for more := true; more; {
			select {
			case s := <-t.states:
				cur = s.st
			case res := <-t.results:
				out = append(out, res)
			default:
				more = false
			}
		}
		if len(out) >= n {
			break
		}
		next := cur.Round.Next
		if cur.Phase != table.PhaseClosed {
			changed = false
		}
		switch {
		case cur.Paused:
			return out, fmt.Errorf("table paused: %s (alarms %v)", cur.PauseReason, cur.Alarms)
		case cur.Phase == table.PhaseClosed || next == "change shoe":
			if !changed {
				changed = true
				if err := t.dev.NewShoe(ctx, nil); err != nil {
					return out, fmt.Errorf("new shoe: %w", err)
				}
			}
		case cur.Phase == table.PhaseDealing && (strings.HasPrefix(next, "card to") || strings.HasPrefix(next, "hole card")):
			want, shoe := cur.Shoe.Dealt+1, cur.Shoe.ID
			t.mu.Lock()
			t.lastInput, t.lastKind = time.Now(), "card"
			t.mu.Unlock()
			if err := t.dev.Pull(ctx); err != nil {
				return out, fmt.Errorf("pull: %w", err)
			}
			for (shoe != "" && cur.Shoe.ID != shoe) || cur.Shoe.Dealt < want {
				select {
				case s := <-t.states:
					cur = s.st
				case res := <-t.results:
					out = append(out, res)
				case <-time.After(crowdWait):
					return out, fmt.Errorf("card %d: no state showing it; last %s %q", want, cur.Phase, cur.Round.Next)
				}
			}
			continue
		}
		select {
		case s := <-t.states:
			cur = s.st
		case res := <-t.results:
			out = append(out, res)
		case <-time.After(crowdWait):
			return out, fmt.Errorf("no state for %s; last: phase=%s next=%q", crowdWait, cur.Phase, cur.Round.Next)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}

// check compares a round the backend received with the engine's own
// settlement of the same bets, cards and batches: every player exactly
// once, with the net, stake and outcomes the engine gives.
func (t *crowdTable) check(r *crowdRound) error {
	eng := round.New(t.rs)
	if _, err := eng.Start(r.id, t.bets, nil); err != nil {
		return err
	}
	if !r.hole.Valid() && len(r.summary.Dealer.Cards) >= 2 {
		// A blackjack found by the peek ends the round with the hole card
		// never turned: the settlement shows it.
		r.hole = card.MustParse(r.summary.Dealer.Cards[1])
	}
	for _, in := range r.inputs {
		var err error
		switch {
		case in.batch != nil:
			_, _, _, err = eng.DecideBatch(in.batch, nil, nil)
		case in.hole:
			_, err = eng.Card(r.hole, nil)
		default:
			_, err = eng.Card(in.card, nil)
		}
		if err != nil {
			return fmt.Errorf("the engine refuses the round's inputs: %w", err)
		}
	}
	s := eng.Settlement()
	if s == nil {
		return fmt.Errorf("round %s: the engine's round is not settled after %d inputs", r.id, len(r.inputs))
	}
	if r.summary.Players != t.players || r.summary.Net != s.Net || len(r.summary.Seats) != 0 {
		return fmt.Errorf("summary: %d players, net %d, %d seats; the engine: net %d", r.summary.Players, r.summary.Net, len(r.summary.Seats), s.Net)
	}
	for slot := range t.players {
		if r.got[slot] != 1 {
			return fmt.Errorf("slot %d received %d times", slot, r.got[slot])
		}
	}
	for _, c := range r.chunks {
		for _, pn := range c.Players {
			sr := s.Seats[pn.Slot]
			var staked int64
			var outs []string
			for _, h := range sr.Hands {
				staked += h.Stake
				outs = append(outs, h.Outcome.String())
			}
			for _, sd := range sr.Side {
				staked += sd.Stake
			}
			if pn.Player != sr.Player || pn.Net != sr.Net || pn.Staked != staked || strings.Join(pn.Outcomes, ",") != strings.Join(outs, ",") {
				return fmt.Errorf("slot %d: got %+v, the engine %s net %d staked %d %v", pn.Slot, pn, sr.Player, sr.Net, staked, outs)
			}
		}
	}
	return nil
}

// TestCrowdRoundOverMosquitto: a whole 002 round of 10,000 players
// through the daemon and a real mosquitto: the bets and the decisions go
// in over MQTT (one batch per prompt), and the backend receives every
// player's outcome exactly once, with the net the engine gives for the
// cards and decisions it saw. A batch sent again with its id gets the
// first reply, per-entry verdicts included.
func TestCrowdRoundOverMosquitto(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 players through the daemon")
	}
	ct := startCrowdTable(t, 10000)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := ct.play(ctx, 2)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.err)
		require.NotEmpty(t, r.batch)
	}
	first := res[0].batch
	ct.backend.Publish(ct.root+"commands/decisions", 1, false, res[0].payload)
	require.Eventually(t, func() bool {
		ct.mu.Lock()
		defer ct.mu.Unlock()
		return len(ct.replies[first]) == 2
	}, crowdWait, 10*time.Millisecond)
	ct.mu.Lock()
	replies := ct.replies[first]
	ct.mu.Unlock()
	assert.Equal(t, replies[0], replies[1], "the batch's id again: the first reply")
	require.NotNil(t, replies[0].Batch)
	assert.True(t, replies[0].Accepted)
	assert.Positive(t, replies[0].Batch.Applied)
	assert.Equal(t, replies[0].Batch.Entries, replies[0].Batch.Applied+rejectedCount(replies[0].Batch))
}

func rejectedCount(b *wire.BatchReply) int {
	n := 0
	for _, r := range b.Rejected {
		n += len(r.Indexes)
	}
	return n
}

// BenchmarkCrowdRound10k plays whole 002 rounds of 10,000 players
// through the daemon (b.N rounds; make bench runs 1,000): bets and batched
// decisions in over MQTT from a backend, the journal, the engine, the
// settlement out as a summary and 10 chunks over a real mosquitto. It
// times, per round, from the input that settles the round to the last
// settlement_chunk at the backend: the dealer's last card (card-p50/p99;
// goal 200 ms), or, when the dealer stood on his first two cards, the
// backend's last batch (batch-p50/p99, its transfer of about 780 KB with UUID player ids, and its decoding
// included). Every round is checked as TestCrowdRoundOverMosquitto
// checks it, once its last chunk is in (outside the timed part). load1 is the host's load average,
// rss-MiB the whole test process's (daemon, backend and their copies of
// every message).
func BenchmarkCrowdRound10k(b *testing.B) {
	ct := startCrowdTable(b, 10000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// One round of warm-up: connections, first fsyncs, buffers.
	if _, err := ct.play(ctx, 1); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	res, err := ct.play(ctx, b.N)
	b.StopTimer()
	if err != nil {
		b.Fatalf("after %d rounds: %v", len(res), err)
	}
	var cardLat, batchLat, all []time.Duration
	for _, r := range res {
		if r.err != nil {
			b.Fatal(r.err)
		}
		all = append(all, r.latency)
		if r.kind == "card" {
			cardLat = append(cardLat, r.latency)
		} else {
			batchLat = append(batchLat, r.latency)
		}
	}
	report(b, "", all)
	if len(cardLat) > 0 {
		report(b, "card-", cardLat)
	}
	if len(batchLat) > 0 {
		report(b, "batch-", batchLat)
	}
	b.ReportMetric(float64(len(cardLat)), "card-rounds")
	b.ReportMetric(float64(len(batchLat)), "batch-rounds")
	b.ReportMetric(load1(), "load1")
	b.ReportMetric(rssMiB(), "rss-MiB")
	// What stays live after the rounds (daemon and backend): a crowd's
	// memory must not grow with the rounds played.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
}

// load1 is the host's one-minute load average.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, err := strconv.ParseFloat(string(bytes.Fields(b)[0]), 64)
	if err != nil {
		return -1
	}
	return f
}
