package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/firmware-protocols/shoeproto"
	"github.com/livetable/livetable/shoereader/serialport"
	simshoe "github.com/livetable/livetable/simulators/shoe"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
)

// cardInterval is the dealer's fastest pace in the benchmark: one card per
// 5 ms, never sooner than the table asks for it.
const cardInterval = 5 * time.Millisecond

// bareAfter is how long after a card's state the bare path is sampled:
// well inside cardInterval, past the daemon's work on the card.
const bareAfter = 2 * time.Millisecond

// benchWait bounds every wait of the benchmark: a stuck daemon fails it
// with the table's last state instead of hanging.
const benchWait = 15 * time.Second

// benchSeats is how many seats bet each round: many cards per round, so
// the round gaps (bets, decisions, settle pause) stay a small part of the run.
const benchSeats = 7

// BenchmarkCardToState times each card from the CARD frame written on the
// shoe's pseudo-terminal to the arrival, at an MQTT subscriber on loopback
// mosquitto, of the first retained state message that shows it (its
// shoe.dealt count). The whole daemon runs in process (serve: the serial
// reader, the journal with its fsync, the controller, the MQTT link and its
// outbox), driven like a table in play: a backend closes bets for seven
// seats, stands every hand and declines insurance over MQTT, and the
// benchmark deals as the instruction line asks, one card per 5 ms at most.
// Those command round trips and the pauses between rounds are not measured.
// b.N is the number of cards (make bench runs 10,000).
//
// The bare path is measured in the same run, one sample 2 ms after each
// card's state (bareAfter) so both see the same load: a pty read of one frame, one fsync'd 64-byte
// append in the same temp dir, and one paho -> mosquitto -> paho QoS 1 hop
// of a small message. Right after it, the contract's floor ("two-"): the
// same pty read and append, then a 210-byte event and a 1.5 KB retained
// state published in that order on one connection, each to its own
// subscriber, timed to the state: the two messages the contract has a
// table send per card (the state must not overtake its event), with
// nothing of the daemon's between them. Targets (issue 21): the daemon's p99 within 1.3x
// the bare path's (p99-ratio) and its p50 within 1.1x (p50-ratio), over
// 10,000 cards a run (so a p99 rests on 100 samples), 3 runs (make bench:
// -benchtime=10000x -count=3), the spread read across them. The ack- and event- metrics split the daemon's
// time: the shoe has its ACK (sent once the journal has the card), and the
// card's card_dealt event is at the subscriber (the state is published
// right after it, both in flight together). rss-MiB is the whole test
// process, daemon and harness together.
func BenchmarkCardToState(b *testing.B) {
	mosq := mqttlinktest.StartMosquitto(b, mqttlinktest.MosquittoOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	dev, err := simshoe.New(simshoe.Options{Seed: 7, Heartbeat: time.Second}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = dev.Run(ctx) }()

	dir := b.TempDir()
	cfg := DefaultConfig()
	cfg.Studio, cfg.Table, cfg.Game = "bench", "t1", "000"
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Broker.URL = mosq.URL()
	cfg.Shoe.Path = dev.Path()
	cfg.GPIO.Sim = true
	noShuffler := false
	cfg.GPIO.Shuffler = &noShuffler // the benchmark changes the shoe itself
	cfg.Console.Addr = "127.0.0.1:0"
	cfg.Timing.Settle = 20 * time.Millisecond
	cfg.Timing.Insurance = 200 * time.Millisecond // answered at once; the timer only backs it up
	serveDone := make(chan error, 1)
	go func() {
		defer wg.Done()
		serveDone <- serve(ctx, cfg, zerolog.New(zerolog.NewTestWriter(b)).Level(zerolog.WarnLevel))
	}()
	b.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = dev.Close()
	})

	tb := newBenchTable(b, mosq.URL(), "livetable/bench/t1/")
	bare := newBarePath(b, mosq.URL(), dir)

	// Warm-up: the first 20 cards (connections, first fsyncs, page faults)
	// are dealt but not counted.
	const warmup = 20
	lat := make([]time.Duration, 0, b.N)
	bareLat := make([]time.Duration, 0, b.N)
	twoLat := make([]time.Duration, 0, b.N)
	ack := make([]time.Duration, 0, b.N)
	event := make([]time.Duration, 0, b.N)
	dealt := 0
	b.ResetTimer()
	err = tb.deal(ctx, dev, warmup+b.N, func(s cardTimes) {
		dealt++
		if dealt <= warmup {
			return
		}
		lat = append(lat, s.state)
		ack = append(ack, s.ack)
		event = append(event, s.event)
		// The bare sample waits until the daemon has finished with the
		// card (the broker's acknowledgements, the outbox's write and
		// its once-a-second fsync follow the state): each sample then
		// starts from a quiet daemon, as the card did, and neither
		// counts the other's work. The dealer's pace leaves room for it.
		if err := sleepCtx(ctx, bareAfter); err != nil {
			return
		}
		bareLat = append(bareLat, bare.one(b))
		twoLat = append(twoLat, bare.two(b))
	})
	b.StopTimer()
	select {
	case serr := <-serveDone:
		b.Fatalf("daemon stopped after %d cards: %v (dealing: %v)", dealt, serr, err)
	default:
	}
	if err != nil {
		b.Fatalf("after %d cards: %v", dealt, err)
	}
	p99 := report(b, "", lat)
	bp99 := report(b, "bare-", bareLat)
	b.ReportMetric(float64(p99)/float64(max(bp99, 1)), "p99-ratio")
	p50, _ := percentiles(lat)
	bp50, _ := percentiles(bareLat)
	b.ReportMetric(float64(p50)/float64(max(bp50, 1)), "p50-ratio")
	// The contract's floor: what the daemon adds to the two messages the
	// contract has it send per card (p50-ratio against it is the daemon's
	// own overhead; the rest of p50-ratio is the second message).
	report(b, "two-", twoLat)
	tp50, _ := percentiles(twoLat)
	b.ReportMetric(float64(p50)/float64(max(tp50, 1)), "p50-ratio-two")
	b.ReportMetric(float64(tb.rounds()), "rounds")
	// Where the time goes: the shoe has its ACK (the journal made the card
	// durable), the card_dealt event is at the subscriber.
	report(b, "ack-", ack)
	report(b, "event-", event)
	b.ReportMetric(rssMiB(), "rss-MiB")
}

// report adds the p50 and p99 of samples as metrics named with prefix, and
// returns the p99.
func report(b *testing.B, prefix string, samples []time.Duration) time.Duration {
	p50, p99 := percentiles(samples)
	b.ReportMetric(us(p50), prefix+"p50-us")
	b.ReportMetric(us(p99), prefix+"p99-us")
	return p99
}

// rssMiB is this process's resident set: the daemon and, beside it, the
// benchmark's simulated shoe, backend and bare path (an upper bound for
// one table's daemon).
func rssMiB() float64 { return procRSSMiB(os.Getpid()) }

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*50/100], s[(len(s)-1)*99/100]
}

// stateAt is one state message and when the subscriber got it.
type stateAt struct {
	at time.Time
	st table.State
}

// cardTimes are one card's times from its frame on the pty: the shoe has
// the ACK (sent once the journal has the card), the card_dealt event is at
// the subscriber, the state showing the card is at the subscriber.
type cardTimes struct {
	ack, event, state time.Duration
}

// benchTable is the backend and the dealer's eyes: it answers the table
// over MQTT (bets, decisions, insurance) and hands every state message,
// time-stamped on arrival, to the dealing loop.
type benchTable struct {
	b      *testing.B
	root   string
	client paho.Client
	states chan stateAt
	// lastCard is when the last card_dealt event arrived (unix ns).
	lastCard atomic.Int64
	// backlog hands events from paho's delivery goroutine to the backend
	// goroutine (see onEvent).
	backlog chan []byte

	// pace is the least time between two cards (cardInterval unless set).
	pace func() time.Duration

	mu      sync.Mutex // guards the following
	cmdN    int
	settled int
	// seen is the newest seq of the events the backend decoded, sent
	// with each command as a real backend does (contract 2.4.0). The
	// card_dealt events it skips unread (onEvent) leave it lower than
	// the newest received, never above what it acted on: a command is
	// made on a later event (a prompt, betting), whose seq it holds.
	seen uint64
}

// newTableBackend is a benchTable without clients of its own: the caller
// feeds it messages (onState, onEvent) and gives it the client it sends
// commands with.
func newTableBackend(b *testing.B, client paho.Client, root string, queue int) *benchTable {
	t := &benchTable{b: b, root: root, client: client, states: make(chan stateAt, queue), backlog: make(chan []byte, queue),
		pace: func() time.Duration { return cardInterval }}
	done := make(chan struct{})
	go t.backend(done)
	b.Cleanup(func() { close(done) })
	return t
}

func newBenchTable(b *testing.B, url, root string) *benchTable {
	t := newTableBackend(b, nil, root, 1<<14)
	// Two clients, as in a studio: the overlay that draws the table reads
	// the state, the backend reads the events and sends the commands. On
	// one client the state would wait behind each event's delivery and
	// acknowledgement on paho's single delivery goroutine, and that wait
	// would count as the daemon's.
	t.client = connectClient(b, url, "bench-backend", benchWait)
	overlay := connectClient(b, url, "bench-overlay", benchWait)
	for _, sub := range []struct {
		c     paho.Client
		topic string
		h     paho.MessageHandler
	}{
		{overlay, root + "state", t.onState},
		{t.client, root + "events", t.onEvent},
	} {
		if tok := sub.c.Subscribe(sub.topic, 1, sub.h); !tok.WaitTimeout(benchWait) || tok.Error() != nil {
			b.Fatalf("subscribe %s: %v", sub.topic, tok.Error())
		}
	}
	return t
}

// connectClient is a clean-session paho client of the test's, in order,
// connected within wait and disconnected at the test's end.
func connectClient(tb testing.TB, url, id string, wait time.Duration) paho.Client {
	o := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetCleanSession(true).
		SetOrderMatters(true).SetConnectRetry(true).SetConnectRetryInterval(50 * time.Millisecond)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(wait) || tok.Error() != nil {
		tb.Fatalf("%s connect: %v", id, tok.Error())
	}
	tb.Cleanup(func() { c.Disconnect(100) })
	return c
}

func (t *benchTable) onState(_ paho.Client, m paho.Message) {
	at := time.Now()
	var env struct {
		Data table.State `json:"data"`
	}
	if err := json.Unmarshal(m.Payload(), &env); err != nil {
		t.b.Errorf("state message: %v", err)
		return
	}
	select {
	case t.states <- stateAt{at: at, st: env.Data}:
	default:
		t.b.Errorf("state queue full: the dealing loop is stuck")
	}
}

// onEvent runs on paho's delivery goroutine, which hands the messages of
// both topics over one at a time, in order: whatever it does here delays
// the state message behind the event, and that time would be counted as
// the daemon's. So it only notes a card's arrival and passes the event on
// to the backend goroutine (a real backend does not answer on its MQTT
// client's delivery goroutine either). A card_dealt event, which the
// backend does not act on, is not passed on: the backend runs on the
// daemon's two cores here, not on a host of its own as in a studio, and
// decoding every card's event there, while the card's state is on its
// way, would count its time as the daemon's.
func (t *benchTable) onEvent(_ paho.Client, m paho.Message) {
	if bytes.Contains(m.Payload(), []byte(`"kind":"card_dealt"`)) {
		t.lastCard.Store(time.Now().UnixNano())
		return
	}
	select {
	case t.backlog <- m.Payload():
	default:
		t.b.Errorf("event queue full: the backend is stuck")
	}
}

// backend plays the studio: bets for every seat as soon as betting opens,
// stand on every decision, no insurance, until done is closed.
func (t *benchTable) backend(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case p := <-t.backlog:
			t.onEventData(p)
		}
	}
}

func (t *benchTable) onEventData(payload []byte) {
	var e mqttlinktest.Event
	if json.Unmarshal(payload, &e) != nil {
		return
	}
	t.mu.Lock()
	t.seen = max(t.seen, e.Seq)
	t.mu.Unlock()
	var d struct {
		Phase string `json:"phase"`
		Seat  int    `json:"seat"`
	}
	_ = json.Unmarshal(e.Data, &d)
	switch {
	case e.Kind == "phase" && d.Phase == string(table.PhaseBetting):
		bets := make([]map[string]any, 0, benchSeats)
		for s := 1; s <= benchSeats; s++ {
			bets = append(bets, map[string]any{"seat": s, "player": "p" + strconv.Itoa(s), "main": 1000})
		}
		t.send(map[string]any{"type": "bets_closed", "bets": bets})
	case e.Kind == "decision_requested":
		t.send(map[string]any{"type": "decision", "seat": d.Seat, "player": "p" + strconv.Itoa(d.Seat), "action": "stand"})
	case e.Kind == "insurance_offered":
		for s := 1; s <= benchSeats; s++ {
			t.send(map[string]any{"type": "insurance", "seat": s, "player": "p" + strconv.Itoa(s), "take": false})
		}
	case e.Kind == "round_settled" || e.Kind == "round_void":
		t.mu.Lock()
		t.settled++
		t.mu.Unlock()
	}
}

func (t *benchTable) send(cmd map[string]any) {
	t.mu.Lock()
	t.cmdN++
	cmd["id"], cmd["schema"] = "bench-"+strconv.Itoa(t.cmdN), 1
	if t.seen > 0 {
		cmd["seen"] = t.seen
	}
	t.mu.Unlock()
	payload, err := json.Marshal(cmd)
	if err != nil {
		t.b.Errorf("command: %v", err)
		return
	}
	t.client.Publish(t.root+"commands/"+cmd["type"].(string), 1, false, payload)
}

func (t *benchTable) rounds() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.settled
}

// next waits for the next state message.
func (t *benchTable) next(ctx context.Context, last table.State) (stateAt, error) {
	timer := time.NewTimer(benchWait)
	defer timer.Stop()
	select {
	case s := <-t.states:
		return s, nil
	case <-ctx.Done():
		return stateAt{}, ctx.Err()
	case <-timer.C:
		return stateAt{}, fmt.Errorf("no state message for %s; last: phase=%s paused=%v (%s) next=%q dealt=%d seq=%d alarms=%v",
			benchWait, last.Phase, last.Paused, last.PauseReason, last.Round.Next, last.Shoe.Dealt, last.Seq, last.Alarms)
	}
}

// deal follows the instruction line until n cards are dealt, calling
// measured with each card's times. It changes the shoe when
// the table asks for it and deals a card only when the table wants one and
// shows every card dealt so far, at most one per cardInterval.
func (t *benchTable) deal(ctx context.Context, dev *simshoe.Device, n int, measured func(cardTimes)) error {
	var cur table.State
	var lastCard time.Time
	changed := false
	for i := 0; i < n; {
		// Act on the newest state queued.
		for more := true; more; {
			select {
			case s := <-t.states:
				cur = s.st
			default:
				more = false
			}
		}
		next := cur.Round.Next
		if cur.Phase != table.PhaseClosed {
			changed = false
		}
		switch {
		case cur.Paused:
			return fmt.Errorf("table paused: %s (alarms %v)", cur.PauseReason, cur.Alarms)
		case cur.Phase == table.PhaseClosed || next == "change shoe":
			if !changed {
				changed = true
				if err := dev.NewShoe(ctx, nil); err != nil {
					return fmt.Errorf("new shoe: %w", err)
				}
			}
		case cur.Phase == table.PhaseDealing && (strings.HasPrefix(next, "card to") || strings.HasPrefix(next, "hole card")):
			if err := sleepCtx(ctx, time.Until(lastCard.Add(t.pace()))); err != nil {
				return err
			}
			want, shoe := cur.Shoe.Dealt+1, cur.Shoe.ID
			lastCard = time.Now()
			// Queued, not waited for: a dealer does not wait for the
			// shoe's ACK, and a dealing loop woken by it would run on
			// the daemon's two cores while the card's state is on its
			// way, counted as the daemon's time. The shoe notes when
			// it read the ACK.
			q, err := dev.QueuePullN(1)
			if err != nil {
				return fmt.Errorf("pull: %w", err)
			}
			// A table that has not told a shoe id yet (its first card
			// after starting) takes whichever shoe the state then names.
			for (shoe != "" && cur.Shoe.ID != shoe) || cur.Shoe.Dealt < want {
				s, err := t.next(ctx, cur)
				if err != nil {
					return fmt.Errorf("card %d of shoe %q: %w", want, shoe, err)
				}
				cur = s.st
				if (shoe == "" || cur.Shoe.ID == shoe) && cur.Shoe.Dealt >= want {
					if err := q.Wait(ctx); err != nil {
						return fmt.Errorf("card %d of shoe %q: ACK: %w", want, shoe, err)
					}
					measured(cardTimes{ack: q.AckedAt().Sub(lastCard), event: time.Unix(0, t.lastCard.Load()).Sub(lastCard), state: s.at.Sub(lastCard)})
				}
			}
			i++
			continue
		}
		s, err := t.next(ctx, cur)
		if err != nil {
			return err
		}
		cur = s.st
	}
	return nil
}

// sleepCtx sleeps for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// barePath is the floor the daemon is compared with: the same three
// costs, back to back, with nothing else in between.
type barePath struct {
	master *os.File
	port   interface {
		Read([]byte) (int, error)
	}
	frame []byte
	file  *os.File
	rec   []byte
	pub   paho.Client
	got   chan struct{}
	buf   []byte

	// The contract's floor (two): the same pty read and fsync'd append,
	// then what the contract has a table send per card on one connection,
	// its event (twoEvent bytes) and after it the retained state
	// (twoState bytes), each to its own subscriber as in a studio (the
	// backend reads events, the overlay states); timed to the state.
	event, state []byte
	gotState     chan struct{}
}

// The sizes of a card's two messages in BenchmarkCardToState's 7-seat
// game 000 (a card_dealt event's envelope, a state mid-round).
const (
	twoEvent = 210
	twoState = 1500
)

func newBarePath(b *testing.B, url, dir string) *barePath {
	must := func(err error) {
		if err != nil {
			b.Fatalf("bare path: %v", err)
		}
	}
	m, s, err := pty.Open()
	must(err)
	port, err := serialport.Open(s.Name(), serialport.DefaultBaud)
	must(err)
	frame, err := shoeproto.AppendMessage(nil, 1, &shoeproto.Message{Type: shoeproto.TypeCard, Card: card.MustParse("As"), Confidence: 99})
	must(err)
	f, err := os.OpenFile(filepath.Join(dir, "bare.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	must(err)
	bp := &barePath{master: m, port: port, frame: frame, file: f, rec: make([]byte, 64),
		got: make(chan struct{}, 1), buf: make([]byte, 4096),
		event: bytes.Repeat([]byte{'e'}, twoEvent), state: bytes.Repeat([]byte{'s'}, twoState),
		gotState: make(chan struct{}, 1)}
	connect := func(id string) paho.Client {
		c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(id))
		if tok := c.Connect(); !tok.WaitTimeout(benchWait) || tok.Error() != nil {
			b.Fatalf("bare path %s: %v", id, tok.Error())
		}
		return c
	}
	sub := connect("bench-bare-sub")
	if tok := sub.Subscribe("bench/bare", 1, func(paho.Client, paho.Message) { bp.got <- struct{}{} }); !tok.WaitTimeout(benchWait) || tok.Error() != nil {
		b.Fatalf("bare path subscribe: %v", tok.Error())
	}
	// The two-message floor's subscribers: the event's (it only
	// acknowledges) and the state's, on clients of their own.
	evSub, stSub := connect("bench-bare-events"), connect("bench-bare-state")
	for _, s := range []struct {
		c     paho.Client
		topic string
		h     paho.MessageHandler
	}{
		{evSub, "bench/bare2/events", func(paho.Client, paho.Message) {}},
		{stSub, "bench/bare2/state", func(paho.Client, paho.Message) { bp.gotState <- struct{}{} }},
	} {
		if tok := s.c.Subscribe(s.topic, 1, s.h); !tok.WaitTimeout(benchWait) || tok.Error() != nil {
			b.Fatalf("bare path subscribe %s: %v", s.topic, tok.Error())
		}
	}
	bp.pub = connect("bench-bare-pub")
	b.Cleanup(func() {
		bp.pub.Disconnect(100)
		sub.Disconnect(100)
		evSub.Disconnect(100)
		stSub.Disconnect(100)
		for _, c := range []interface{ Close() error }{f, port, m, s} {
			_ = c.Close()
		}
	})
	return bp
}

// one times a frame through the pty, a 64-byte fsync'd append and one
// QoS 1 hop through mosquitto.
func (bp *barePath) one(b *testing.B) time.Duration {
	start := time.Now()
	bp.durable(b)
	bp.pub.Publish("bench/bare", 1, false, bp.rec)
	select {
	case <-bp.got:
	case <-time.After(benchWait):
		b.Fatalf("bare path: message not delivered in %s", benchWait)
	}
	return time.Since(start)
}

// two times the contract's floor: a frame through the pty, a 64-byte
// fsync'd append, then a card's event and its retained state published
// in that order on one connection, until the state is at its subscriber.
func (bp *barePath) two(b *testing.B) time.Duration {
	start := time.Now()
	bp.durable(b)
	bp.pub.Publish("bench/bare2/events", 1, false, bp.event)
	bp.pub.Publish("bench/bare2/state", 1, true, bp.state)
	select {
	case <-bp.gotState:
	case <-time.After(benchWait):
		b.Fatalf("bare path: state not delivered in %s", benchWait)
	}
	return time.Since(start)
}

// durable reads a frame through the pty and makes a 64-byte record of it
// durable: the floor's work before anything is published.
func (bp *barePath) durable(b *testing.B) {
	if _, err := bp.master.Write(bp.frame); err != nil {
		b.Fatalf("bare path: pty write: %v", err)
	}
	for have := 0; have < len(bp.frame); {
		k, err := bp.port.Read(bp.buf)
		if err != nil {
			b.Fatalf("bare path: pty read: %v", err)
		}
		have += k
	}
	if _, err := bp.file.Write(bp.rec); err != nil {
		b.Fatalf("bare path: append: %v", err)
	}
	if err := bp.file.Sync(); err != nil {
		b.Fatalf("bare path: fsync: %v", err)
	}
}
