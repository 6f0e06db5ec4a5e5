package mqttlink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/studio/mqttlink"
	"github.com/livetable/livetable/studio/mqttlink/mqttlinktest"
	"github.com/livetable/livetable/studio/wire"
	"github.com/livetable/livetable/studio/wire/wiretest"
	"github.com/livetable/livetable/table"
	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/journal"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// situ is one real table (the controller, its machine and rules, on a
// fake clock) behind a real link to a real mosquitto, as tabled wires
// them: the shoe's inputs go to the controller as the shoe reader gives
// them, the backend's commands go over the broker, and a subscriber
// keeps everything published under the table's topics.
type situ struct {
	t      *testing.T
	game   string
	c      *table.Controller
	clk    *clockwork.FakeClock
	topics mqttlink.Topics
	sub    *mqttlinktest.Subscriber
	stop   func()
	n      int      // command ids
	deck   []string // the cards the shoe deals next
	ctx    context.Context
}

func startSitu(t *testing.T, url, game string) *situ {
	t.Helper()
	rs, err := rules.Game(game)
	require.NoError(t, err)
	clk := clockwork.NewFakeClockAt(testNow)
	copts := table.DefaultOptions(rs)
	copts.Studio, copts.Table, copts.Clock = "s1", "g"+game, clk
	// A real journal, as tabled's: the link resends from it.
	jopts := journal.DefaultOptions()
	jopts.Dir, jopts.AnchorKind = t.TempDir(), table.CheckpointKind
	jr, _, err := journal.Open(jopts, zerolog.Nop())
	require.NoError(t, err)
	copts.Journal = table.NewJournal(jr)
	c, err := table.New(copts, zerolog.Nop())
	require.NoError(t, err)
	lopts := testOptions(t, url)
	lopts.Table = "g" + game
	lopts.History = mqttlink.JournalHistory{Dir: jopts.Dir, Options: copts, Log: zerolog.Nop()}
	topics := mqttlink.TopicsFor("s1", lopts.Table)
	sub := mqttlinktest.Subscribe(t, url, topics.Root+"#", mqttlinktest.SubscriberOptions{ClientID: "backend-" + lopts.Table, CleanSession: true})
	link, err := mqttlink.New(lopts, testLogger(t))
	require.NoError(t, err)
	evs, _ := c.Subscribe("mqtt", 4096)
	ctx, cancel := context.WithCancel(context.Background())
	ctlDone, linkDone := make(chan error, 1), make(chan error, 1)
	go func() { ctlDone <- c.Run(ctx, nil) }()
	go func() { linkDone <- link.Run(ctx, evs, c) }()
	require.Eventually(t, func() bool { return link.Stats().Ready }, waitFor, poll)
	s := &situ{t: t, game: game, c: c, clk: clk, topics: topics, sub: sub, ctx: context.Background()}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-linkDone)
		<-ctlDone
		require.NoError(t, jr.Close())
	}
	t.Cleanup(s.stop)
	return s
}

// shoe gives the controller one of the shoe's inputs; a refusal (a card
// no round waits for) is the table's business and shows in its state.
func (s *situ) shoe(in table.Input) { _ = s.c.Submit(s.ctx, in) }

func (s *situ) card(c string) { s.shoe(table.CardDrawn{Card: card.MustParse(c)}) }

// draw deals the next card of the deck.
func (s *situ) draw() {
	s.t.Helper()
	require.NotEmpty(s.t, s.deck, "the deck ran out")
	s.card(s.deck[0])
	s.deck = s.deck[1:]
}

func (s *situ) state() table.State { return s.c.Snapshot() }

// command publishes a backend command and returns its reply.
func (s *situ) command(cmd map[string]any) wire.Reply {
	s.t.Helper()
	s.n++
	id := fmt.Sprintf("%s-%d", s.topics.Root, s.n)
	cmd["id"], cmd["schema"] = id, wire.Version
	b, err := json.Marshal(cmd)
	require.NoError(s.t, err)
	return s.send(cmd["type"].(string), id, b)
}

// supervisor publishes a signed supervisor command and returns its reply.
func (s *situ) supervisor(typ, reason, c string) wire.Reply {
	s.t.Helper()
	return s.correctAt(typ, reason, c, 0)
}

// correctAt is supervisor with a correct's position of the card it is
// for (0: none).
func (s *situ) correctAt(typ, reason, c string, at int) wire.Reply {
	s.t.Helper()
	s.n++
	id := fmt.Sprintf("%s-%d", s.topics.Root, s.n)
	b, err := mqttlink.SignSupervisor(testKey, s.topics.Root, mqttlink.SupervisorCommand{ID: id, Type: typ, By: "anna",
		Reason: reason, Card: c, At: at, Time: testNow})
	require.NoError(s.t, err)
	return s.send("supervisor", id, b)
}

func (s *situ) send(sub, id string, payload []byte) wire.Reply {
	s.t.Helper()
	require.NoError(s.t, s.sub.Publish(s.ctx, s.topics.Root+"commands/"+sub, payload))
	var rep wire.Reply
	require.Eventually(s.t, func() bool {
		for _, m := range s.sub.MessagesOn(s.topics.Replies) {
			var r wire.Reply
			if json.Unmarshal(m.Payload, &r) == nil && r.ID == id {
				rep = r
				return true
			}
		}
		return false
	}, waitFor, poll, "a reply to %s", id)
	return rep
}

// betting moves the fake clock on until bets are open.
func (s *situ) betting() {
	s.t.Helper()
	require.Eventually(s.t, func() bool {
		if p := s.state().Phase; p == table.PhaseBetting || p == table.PhaseLastCall {
			return true
		}
		s.clk.Advance(time.Second)
		return false
	}, waitFor, poll, "bets open (phase %s)", s.state().Phase)
}

// bets closes bets for one player per seat (with the given side bets on
// seat 1).
func (s *situ) bets(seats int, side map[string]int64) {
	s.t.Helper()
	s.betting()
	var bets []map[string]any
	for i := 1; i <= seats; i++ {
		b := map[string]any{"seat": i, "player": fmt.Sprintf("p%d", i), "main": 1000}
		if i == 1 && side != nil {
			b["side"] = side
		}
		bets = append(bets, b)
	}
	rep := s.command(map[string]any{"type": "bets_closed", "bets": bets})
	require.True(s.t, rep.Accepted, rep.Reason)
}

// play deals and decides until the round is settled: cards as the
// dealer's line asks for them, insurance answered by every seat (seat 1
// takes it), each hand hit below 12 and stood from there.
func (s *situ) play() {
	s.t.Helper()
	answered := map[int]bool{}
	for range 100 {
		st := s.state()
		next := st.Round.Next
		switch {
		case st.Paused:
			s.t.Fatalf("%s: paused: %s", s.game, st.PauseReason)
		case st.Round.Phase == "settled" || st.Phase == table.PhaseSettled || st.Phase == table.PhaseClosed:
			return
		case strings.HasPrefix(next, "card to") || next == "hole card to dealer" || next == "burn one card":
			s.draw()
		case next == "wait: insurance offered":
			for _, seat := range st.Round.Seats {
				if !answered[seat.Seat] {
					answered[seat.Seat] = true
					rep := s.command(map[string]any{"type": "insurance", "seat": seat.Seat, "player": seat.Player, "take": seat.Seat == 1})
					require.True(s.t, rep.Accepted, rep.Reason)
				}
			}
		case strings.HasPrefix(next, "wait: seat ") && strings.HasSuffix(next, " to decide"):
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(next, "wait: seat "), " to decide"))
			require.NoError(s.t, err)
			i := slices.IndexFunc(st.Round.Seats, func(v round.SeatView) bool { return v.Seat == n })
			require.GreaterOrEqual(s.t, i, 0, next)
			seat, action := st.Round.Seats[i], "stand"
			for _, h := range seat.Hands {
				if !h.Done && h.Total < 12 {
					action = "hit"
				}
			}
			rep := s.command(map[string]any{"type": "decision", "seat": n, "player": seat.Player, "action": action})
			require.True(s.t, rep.Accepted, rep.Reason)
		default:
			s.t.Fatalf("%s: what now? %q (phase %s, round %s)", s.game, next, st.Phase, st.Round.Phase)
		}
	}
	s.t.Fatalf("%s: the round did not settle", s.game)
}

// published waits until the subscriber has every event the table made.
func (s *situ) published() {
	s.t.Helper()
	require.Eventually(s.t, func() bool { return s.sub.MaxSeq() == s.state().Seq }, waitFor, poll)
}

// TestContractSituations runs a real table of every game (controller and
// rules, on a fake clock) behind a real link to a real mosquitto through
// the situations a demo run does not reach (several cards dealt unread
// waiting for their corrections, stray cards set aside, a refused
// resume, a supervisor's pause and void, a new shoe's burn, the cut
// card, insurance, a crowd's batches with entries refused, a resend
// from the journal), and checks
// every message the backend receives (the state, every event, every
// reply, the status) and every command the link accepts against
// docs/asyncapi.yaml with a JSON Schema validator. It also checks that
// the state the backend got named the cards waiting and set aside.
func TestContractSituations(t *testing.T) {
	if testing.Short() {
		t.Skip("a real mosquitto")
	}
	contract := loadSpec(t)
	mq := mqttlinktest.StartMosquitto(t, mqttlinktest.MosquittoOptions{})
	filler := []string{"2c", "3d", "4h", "5s", "6c", "7d", "8h", "9s", "Tc", "Jd", "Qh", "Ks", "2d", "3h", "4s", "5c", "6d", "7h", "8s", "9c"}
	deck := func(cards ...string) []string { return append(cards, filler...) }

	// 000: insurance, then two cards dealt unread, three stray cards,
	// a supervisor's pause and void, and the backend's mistakes.
	g0 := startSitu(t, mq.URL(), "000")
	g0.bets(1, map[string]int64{"perfect_pairs": 100, "21+3": 100})
	g0.deck = deck("Ts", "As", "7c", "5h", "9s", "Kd")
	g0.play()

	g0.bets(2, nil)
	g0.card("9h")
	g0.shoe(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #06: card misread", Pauses: true})
	g0.shoe(table.DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #07: card misread", Pauses: true})
	st := g0.state()
	require.Equal(t, 2, st.MisreadsPending)
	rep := g0.supervisor("resume", "", "")
	assert.False(t, rep.Accepted, "a resume with cards unread")
	rep = g0.supervisor("correct", "shoe misread", "Th") // no position: the next waiting
	require.True(t, rep.Accepted, rep.Reason)
	at := g0.state().MisreadAt
	require.Positive(t, at)
	rep = g0.correctAt("correct", "shoe misread", "8c", at+1)
	assert.False(t, rep.Accepted, "a correct for a card that does not wait")
	rep = g0.correctAt("correct", "shoe misread", "8c", at)
	require.True(t, rep.Accepted, rep.Reason)
	rep = g0.supervisor("correct", "nothing waits", "Kd")
	assert.False(t, rep.Accepted, "a correction with nothing unread")
	require.False(t, g0.state().Paused)
	g0.deck = deck()
	g0.play()

	for _, c := range []string{"8d", "9d", "Kh"} { // the round is settled: none fits
		g0.card(c)
	}
	require.Equal(t, []string{"8d", "9d", "Kh"}, g0.state().SetAside)
	rep = g0.supervisor("resume", "", "")
	require.True(t, rep.Accepted, rep.Reason)

	g0.bets(1, nil)
	g0.card("4c")
	rep = g0.supervisor("pause", "camera 2 down", "")
	require.True(t, rep.Accepted, rep.Reason)
	rep = g0.supervisor("void", "misdeal", "")
	require.True(t, rep.Accepted, rep.Reason)
	if g0.state().Paused {
		require.True(t, g0.supervisor("resume", "", "").Accepted)
	}
	for _, bad := range []string{`{"schema":2,"id":"bad-1","type":"decision","seat":"one"}`, `not json`,
		`{"schema":2,"id":"bad-2","type":"fold"}`} {
		require.NoError(t, g0.sub.Publish(g0.ctx, g0.topics.Root+"commands/decision", []byte(bad)))
	}
	rep = g0.command(map[string]any{"type": "decision", "seat": 1, "action": "stand"})
	assert.False(t, rep.Accepted, "no round in play")
	rep = g0.command(map[string]any{"type": "resend", "from": 1, "to": 3})
	require.True(t, rep.Accepted, rep.Reason)
	assert.Equal(t, "resending events 1 to 3", rep.Note)
	require.Eventually(t, func() bool {
		n := 0
		for _, m := range g0.sub.MessagesOn(g0.topics.Events) {
			var ev mqttlinktest.Event
			if json.Unmarshal(m.Payload, &ev) == nil && ev.Seq <= 3 {
				n++
			}
		}
		return n >= 6
	}, waitFor, poll, "events 1 to 3 again")

	// 001 and 004: a round each, two seats.
	all := []*situ{g0}
	for _, g := range []string{"001", "004"} {
		s := startSitu(t, mq.URL(), g)
		s.bets(2, nil)
		s.deck = deck("Tc", "8d", "6h", "Js", "3c", "Th") // seat 2 hits 11 to 21
		s.play()
		all = append(all, s)
	}

	// 003: a new shoe whose first card is burned, and the cut card.
	g3 := startSitu(t, mq.URL(), "003")
	g3.betting()
	g3.shoe(table.ShoeIn{})
	g3.shoe(table.ShoeChanged{ShoeID: "S2"})
	require.Equal(t, 1, g3.state().Shoe.BurnPending)
	g3.bets(1, nil)
	g3.deck = deck("9s", "Tc", "8d")
	g3.draw() // the burn
	g3.shoe(table.CutCardSeen{Source: "shoe"})
	g3.play()

	// 002: a crowd of 20 on seat 1, deciding by batches.
	g2 := startSitu(t, mq.URL(), "002")
	g2.betting()
	var bets []map[string]any
	for i := range 20 {
		bets = append(bets, map[string]any{"seat": 1, "player": fmt.Sprintf("c%d", i), "main": 1000})
	}
	rep = g2.command(map[string]any{"type": "bets_closed", "bets": bets})
	require.True(t, rep.Accepted, rep.Reason)
	for _, c := range []string{"5s", "9d", "6c", "8h"} {
		g2.card(c)
	}
	roundID := g2.state().Round.ID
	var entries []map[string]any
	for i := range 20 {
		entries = append(entries, map[string]any{"slot": i, "action": []string{"hit", "stand"}[i%2]})
	}
	entries = append(entries, map[string]any{"slot": 99, "action": "stand"}, map[string]any{"slot": 0, "action": "stand"})
	rep = g2.command(map[string]any{"type": "decisions", "round": roundID, "entries": entries})
	require.True(t, rep.Accepted, rep.Reason)
	require.NotNil(t, rep.Batch)
	assert.Equal(t, 20, rep.Batch.Applied)
	assert.Len(t, rep.Batch.Rejected, 2, "an unknown slot, a slot named twice")
	g2.card("2c") // the hitters' card: they hold 13 and are asked again
	var stand []map[string]any
	for i := 0; i < 20; i += 2 {
		stand = append(stand, map[string]any{"slot": i, "action": "stand"})
	}
	rep = g2.command(map[string]any{"type": "decisions", "round": roundID, "entries": stand})
	require.True(t, rep.Accepted, rep.Reason)
	require.Contains(t, []string{"settled", ""}, g2.state().Round.Phase)

	all = append(all, g2, g3)
	for _, s := range all {
		s.published()
		s.stop()
	}

	// Everything the backends received, against the contract.
	perKind, perChan := map[string]int{}, map[string]int{}
	var misreadStates, asideStates, reasonStates, batchReplies, refused int
	for _, s := range all {
		require.Eventually(t, func() bool {
			m := s.sub.MessagesOn(s.topics.Status)
			return len(m) > 0 && string(m[len(m)-1].Payload) == mqttlink.StatusOffline
		}, waitFor, poll, "the clean stop's offline status")
	}
	for _, s := range all {
		for _, m := range s.sub.Messages() {
			ch := wiretest.Channel(s.topics.Root, m.Topic)
			if ch == "commands" {
				if _, err := mqttlink.DecodeCommand(m.Payload); err != nil {
					continue // sent broken on purpose
				}
			}
			perChan[ch]++
			if !assert.NoError(t, contract.Validate(ch, m.Payload), "%s: %s", m.Topic, m.Payload) {
				continue
			}
			var env struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			}
			_ = json.Unmarshal(m.Payload, &env)
			switch ch {
			case "events":
				perKind[env.Kind]++
			case "state":
				var d wire.State
				require.NoError(t, json.Unmarshal(env.Data, &d))
				if d.MisreadsPending == 2 && d.Misread == "misread #06: card misread" && len(d.MisreadsAt) == 2 {
					misreadStates++
				}
				if len(d.SetAside) == 3 {
					asideStates++
				}
				if slices.Contains(d.PauseReasons, "misread") || slices.Contains(d.PauseReasons, "unexpected_card") {
					reasonStates++
				}
			case "replies":
				var r wire.Reply
				require.NoError(t, json.Unmarshal(m.Payload, &r))
				if r.Batch != nil {
					batchReplies++
				}
				if !r.Accepted {
					refused++
				}
			}
		}
	}
	t.Logf("validated per channel %v; events per kind %v", perChan, perKind)
	for _, k := range []string{"phase", "round_started", "card_dealt", "insurance_offered", "insurance_answered", "peeked",
		"decision_requested", "decision_made", "hand_done", "hole_revealed", "dealer_done", "round_settled", "round_void",
		"crowd_prompt", "settlement_chunk", "alarm", "paused", "resumed", "cut_card", "shoe_in_play", "burned"} {
		assert.Positive(t, perKind[k], "no %s event", k)
	}
	assert.Positive(t, misreadStates, "no state named the two cards dealt unread")
	assert.Positive(t, asideStates, "no state named the three cards set aside")
	assert.Positive(t, reasonStates, "no state gave its pause reasons")
	assert.Positive(t, batchReplies, "no reply to a batch")
	assert.GreaterOrEqual(t, refused, 5, "refused commands")
	for _, ch := range []string{"status", "state", "events", "commands", "replies"} {
		assert.Positive(t, perChan[ch], ch)
	}
}
