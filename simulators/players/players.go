// Package players simulates the streaming backend and its players for demos
// and tests: it listens to a table over MQTT like the real backend, places
// bets when betting opens, answers insurance and plays every hand by basic
// strategy (table/strategy), sending commands on the same topics the real
// backend uses, each with the newest event seq it had acted on (seen), as
// a real backend should. Nothing here is imported by production code.
package players

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/rs/zerolog"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/rules"
	"github.com/livetable/livetable/table/strategy"
)

// Options configure the simulated backend.
type Options struct {
	BrokerURL string
	Studio    string
	Table     string
	Game      string
	// Seats is how many seats are played (one player each; in a
	// common-draw game, Seats players share seat 1).
	Seats int
	// Seed makes bets reproducible.
	Seed uint64
	// Think is how long a player takes to decide; BetDelay how long after
	// betting opens the backend closes bets.
	Think    time.Duration
	BetDelay time.Duration
	// SideBets places the game's side bets on some seats.
	SideBets bool
}

// Backend is the simulated backend.
type Backend struct {
	opts  Options
	log   zerolog.Logger
	rs    *rules.Set
	strat *strategy.Table
	rng   *rand.Rand

	mu  sync.Mutex // guards seq and seen
	seq int
	// seen is the newest event seq the backend has acted on: every
	// command carries it (contract 2.4.0), so that after the table lost
	// events (a restore from an older backup) a command made for the
	// table before the restore, delivered again, is refused stale
	// instead of applied to another round. It is the newest seq taken off
	// the work queue, not the newest received: a command made on an event
	// still queued behind a newer one must not claim what the backend
	// had not yet looked at (an event of after the restore, queued behind
	// a prompt of before it, would make the prompt's answer look new).
	seen uint64

	work chan envelope
}

// New returns a simulated backend.
func New(opts Options, log zerolog.Logger) (*Backend, error) {
	rs, err := rules.Game(opts.Game)
	if err != nil {
		return nil, err
	}
	st, err := strategy.ForGame(rs.Code)
	if err != nil {
		return nil, err
	}
	if opts.Seats <= 0 {
		opts.Seats = 3
	}
	if !rs.CommonDraw && opts.Seats > rs.MaxSeats {
		opts.Seats = rs.MaxSeats
	}
	return &Backend{opts: opts, log: log, rs: rs, strat: st,
		rng: rand.New(rand.NewPCG(opts.Seed, 7)), work: make(chan envelope, 1024)}, nil
}

type envelope struct {
	Seq   uint64          `json:"seq"`
	Round string          `json:"round"`
	Kind  string          `json:"kind"`
	Data  json.RawMessage `json:"data"`
}

type decisionRequest struct {
	Seat      int      `json:"seat"`
	Player    string   `json:"player"`
	Hand      int      `json:"hand"`
	Total     int      `json:"total"`
	Soft      bool     `json:"soft"`
	Options   []string `json:"options"`
	Cards     int      `json:"cards"`
	PairValue int      `json:"pair_value"`
	Up        int      `json:"up"`
}

func (b *Backend) root() string { return fmt.Sprintf("livetable/%s/%s/", b.opts.Studio, b.opts.Table) }

// Run connects and plays until ctx is done.
func (b *Backend) Run(ctx context.Context) error {
	co := paho.NewClientOptions().AddBroker(b.opts.BrokerURL).
		SetStore(mqttlink.NewStore()). // paho's MemoryStore races on a reconnect
		SetClientID(fmt.Sprintf("players-%s-%s", b.opts.Studio, b.opts.Table)).
		SetCleanSession(true).SetAutoReconnect(true).SetConnectRetry(true).
		SetConnectRetryInterval(200 * time.Millisecond).SetOrderMatters(false)
	events := b.root() + "events"
	co.SetOnConnectHandler(func(c paho.Client) {
		c.Subscribe(events, 1, func(_ paho.Client, m paho.Message) {
			var e envelope
			if err := json.Unmarshal(m.Payload(), &e); err != nil {
				b.log.Warn().Err(err).Msg("players: bad event")
				return
			}
			select {
			case b.work <- e:
			default:
				b.log.Warn().Msg("players: event queue full")
			}
		})
	})
	cl := paho.NewClient(co)
	tok := cl.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		cl.Disconnect(0)
		return nil
	}
	defer cl.Disconnect(100)
	var seats []int
	var cr crowd
	send := func(cmd map[string]any) { b.send(cl, cmd) }
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-b.work:
			b.saw(e.Seq)
			switch e.Kind {
			case "phase":
				var p struct {
					Phase string `json:"phase"`
				}
				if json.Unmarshal(e.Data, &p) == nil && p.Phase == "betting" {
					seats = b.placeBets(ctx, cl)
				}
			case "round_started":
				cr.start(len(seats))
			case "card_dealt":
				if b.isCrowd() {
					cr.card(e.Data)
				}
			case "crowd_prompt":
				if !wait(ctx, b.opts.Think) {
					return nil
				}
				b.sendBatch(send, e.Round, b.decideCrowd(&cr))
			case "insurance_offered":
				if b.isCrowd() {
					var es []table.DecisionEntry
					for i := range seats {
						es = append(es, table.DecisionEntry{Slot: i, Player: b.player(seats[i]), Action: table.ActionNoInsurance})
					}
					b.sendBatch(send, e.Round, es)
					continue
				}
				for _, s := range seats {
					b.send(cl, map[string]any{"type": "insurance", "seat": b.seatOf(s), "player": b.player(s), "take": false})
				}
			case "decision_requested":
				var d decisionRequest
				if err := json.Unmarshal(e.Data, &d); err != nil {
					continue
				}
				if !wait(ctx, b.opts.Think) {
					return nil
				}
				b.send(cl, map[string]any{"type": "decision", "seat": d.Seat, "player": d.Player, "action": b.decide(d)})
			}
		}
	}
}

// seatOf maps a simulated player to its seat: one each, or all on seat 1
// in a common-draw game.
func (b *Backend) seatOf(i int) int {
	if b.rs.CommonDraw {
		return 1
	}
	return i
}

func (b *Backend) player(i int) string { return fmt.Sprintf("p%d", i) }

func (b *Backend) placeBets(ctx context.Context, cl paho.Client) []int {
	if !wait(ctx, b.opts.BetDelay) {
		return nil
	}
	var bets []map[string]any
	var seats []int
	for i := 1; i <= b.opts.Seats; i++ {
		main := b.rs.MinBet * int64(1+b.rng.IntN(10))
		if main%2 != 0 {
			main++
		}
		bet := map[string]any{"seat": b.seatOf(i), "player": b.player(i), "main": main}
		if b.opts.SideBets && len(b.rs.SideBets) > 0 && b.rng.IntN(3) == 0 {
			sb := b.rs.SideBets[b.rng.IntN(len(b.rs.SideBets))]
			stake := sb.Min
			if stake <= 0 {
				stake = 100
			}
			bet["side"] = map[string]int64{string(sb.Kind): stake}
		}
		bets = append(bets, bet)
		seats = append(seats, i)
	}
	b.send(cl, map[string]any{"type": "bets_closed", "bets": bets})
	return seats
}

func (b *Backend) decide(d decisionRequest) string {
	can := map[string]bool{}
	for _, o := range d.Options {
		can[o] = true
	}
	s := strategy.Situation{Total: d.Total, Soft: d.Soft, PairValue: d.PairValue, Cards: d.Cards, Up: d.Up,
		CanDouble: can["double"], CanSplit: can["split"]}
	if s.CanDouble && d.Cards == 2 && d.Hand == 1 && b.rs.IsFreeDouble(d.Total, d.Soft) {
		s.FreeDouble = true
	}
	if s.CanSplit && b.rs.FreeSplit && d.PairValue != 10 {
		s.FreeSplit = true
	}
	return b.strat.Decide(s).String()
}

// saw notes an event taken off the work queue: seen is the newest seq
// of them (a resent event is older than those before it).
func (b *Backend) saw(seq uint64) {
	b.mu.Lock()
	b.seen = max(b.seen, seq)
	b.mu.Unlock()
}

// send publishes one command with a new id and the newest event seq the
// backend had acted on (seen, left out before the first event).
func (b *Backend) send(cl paho.Client, cmd map[string]any) {
	b.mu.Lock()
	b.seq++
	cmd["id"] = fmt.Sprintf("sim-%d-%d", time.Now().UnixNano(), b.seq)
	if b.seen > 0 {
		cmd["seen"] = b.seen
	}
	b.mu.Unlock()
	cmd["schema"] = 1
	payload, err := json.Marshal(cmd)
	if err != nil {
		b.log.Error().Err(err).Msg("players: encode command")
		return
	}
	cl.Publish(b.root()+"commands/"+cmd["type"].(string), 1, false, payload)
}

func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
