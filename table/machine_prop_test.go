package table

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// The machine's properties over random walks: a dealer, players, devices
// and two supervisors at odds (pause, resume, void, correct naming the
// right card, another or none, open, command ids replayed with the same
// body or another, batches for rounds not in play), and a wall clock that
// steps back and forward. After every input: a refused one changed
// nothing; an applied one numbered its events one after the other; the
// instruction line says what to do (a paused table's starts with
// "stop:"); every settlement balances, a void's nets 0 and returns
// exactly the stakes taken. At the end: the accepted inputs replayed at
// their times rebuild the same machine and events, and the line,
// followed by a dealer and a supervisor, brings the table to betting.

var propWalks = flag.Int("machine.walks", 24, "random walks of TestMachineProperties (seeds 1..n)")

func TestMachineProperties(t *testing.T) {
	for seed := range uint64(*propWalks) {
		game := []string{"000", "003"}[seed%2]
		t.Run(fmt.Sprintf("seed %d game %s", seed+1, game), func(t *testing.T) {
			walkMachine(t, seed+1, game, 400)
		})
	}
}

// FuzzMachine is the walk from a fuzzed seed and length.
func FuzzMachine(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 270, 288} {
		f.Add(s, uint16(300))
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint16) {
		walkMachine(t, seed, []string{"000", "003"}[seed%2], int(n%1000))
	})
}

// walk is one random walk's inputs and bookkeeping.
type walk struct {
	t   *testing.T
	rng *rand.Rand
	x   *mt
	// journal is every input applied, at its time.
	journal []journaled
	events  []string // every numbered event, encoded
	// sent are the commands applied or refused so far, for replays.
	sent []Input
	n    int // ids handed out
	// staked is what the round in play has taken, by the inputs: the
	// bets, each double and split (the main again), insurance (half the
	// main). mains is each seat's main.
	staked int64
	mains  map[int]int64
}

type journaled struct {
	at time.Time
	in Input
}

func walkMachine(t *testing.T, seed uint64, game string, steps int) {
	w := &walk{t: t, rng: rand.New(rand.NewPCG(seed, 0x5eed)), x: newGameMT(t, game), mains: map[int]int64{}}
	w.apply(ShoeIn{})
	w.apply(ShoeChanged{ShoeID: "S1"})
	for range steps {
		w.apply(w.next())
	}
	// The replay: the same inputs at their times, on a new machine.
	y := newGameMT(t, game)
	var events []string
	for _, r := range w.journal {
		st, err := y.m.Apply(r.at, r.in)
		require.NoError(t, err, "replay of %s %+v", r.in.Kind(), r.in)
		events = append(events, encodeNumbered(t, st)...)
	}
	require.Equal(t, w.events, events, "the replay derives the events published")
	require.Equal(t, w.x.fingerprint(), y.fingerprint(), "the replay rebuilds the machine")
	w.x.t = t
	followPrompt(t, w.x)
}

// apply applies in after the clock's step and checks the properties.
func (w *walk) apply(in Input) {
	t, x := w.t, w.x
	t.Helper()
	x.at = x.at.Add(w.tick())
	before, seq := x.fingerprint(), x.m.Seq()
	pre := x.m.State()
	st, err := x.m.Apply(x.at, in)
	if commandID(in) != "" {
		w.sent = append(w.sent, in)
	}
	if err != nil || st.Repeat {
		require.Equal(t, before, x.fingerprint(), "refused or repeated %s %+v (%v): nothing changes", in.Kind(), in, err)
		if err != nil {
			require.True(t, typedRefusal(err), "%s %+v: a refusal wraps a sentinel a program can branch on: %v", in.Kind(), in, err)
		}
		return
	}
	w.journal = append(w.journal, journaled{x.at, in})
	for i, ev := range st.Events {
		if i == len(st.Events)-1 {
			require.Zero(t, ev.Seq, "the state last, unnumbered")
			continue
		}
		seq++
		require.Equal(t, seq, ev.Seq, "%s %+v: events numbered one after the other", in.Kind(), in)
	}
	w.events = append(w.events, encodeNumbered(t, st)...)
	assertPrompt(t, x)
	w.book(in, pre, st)
}

// book keeps the stakes taken and checks every settlement against them.
func (w *walk) book(in Input, pre *State, st Step) {
	switch v := in.(type) {
	case BetsClosed:
		w.staked = 0
		clear(w.mains)
		for _, b := range v.Bets {
			w.staked += b.Main
			for _, s := range b.Side {
				w.staked += s
			}
			w.mains[b.Seat] = b.Main
		}
	case Decision:
		if v.Action == "double" || v.Action == "split" {
			w.staked += w.mains[v.Seat]
		}
	case InsuranceAnswer:
		if v.Take {
			w.staked += w.mains[v.Seat] / 2
		}
	}
	for _, s := range settlementsOf(st) {
		var stakes, net int64
		for _, sr := range s.Seats {
			seat := sr.MainNet
			for _, h := range sr.Hands {
				require.Zero(w.t, h.Free, "no free bets in %s", w.x.m.cfg.Rules.Code)
				stakes += h.Stake
			}
			for _, sd := range sr.Side {
				stakes += sd.Stake
				seat += sd.Net
			}
			if sr.Insurance != nil {
				stakes += sr.Insurance.Stake
				seat += sr.Insurance.Net
			}
			require.Equal(w.t, seat, sr.Net, "seat %d: its wagers add up", sr.Seat)
			net += sr.Net
		}
		require.Equal(w.t, net, s.Net, "the settlement adds up")
		require.Equal(w.t, w.staked, stakes, "the settlement holds the stakes taken (%s %+v, void %v)", in.Kind(), in, s.Void)
		if s.Void {
			assertVoidRefund(w.t, s, w.staked)
		}
	}
	_ = pre
}

// typedRefusal reports whether err wraps a sentinel: one with a refusal
// code (RefusalCode), or one the loop answers on its own.
func typedRefusal(err error) bool {
	if RefusalCode(err) != "" {
		return true
	}
	for _, s := range []error{ErrAlarmRepeated, ErrCommandIDReused, ErrShoeUp, ErrDuplicateFrame, ErrUnknownInput} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// tick is the time to the next input: a second mostly, the decision
// timer's length now and then, and the wall clock stepped back or forward
// an hour (NTP) once in a while.
func (w *walk) tick() time.Duration {
	switch r := w.rng.IntN(100); {
	case r < 2:
		return -time.Hour
	case r < 3:
		return time.Hour
	case r < 10:
		return 15 * time.Second
	}
	return time.Second
}

func (w *walk) id(prefix string) string {
	w.n++
	return fmt.Sprintf("%s%d", prefix, w.n)
}

// next is a random input: most often what the table waits for (so the
// walk plays rounds), else anything.
func (w *walk) next() Input {
	x, rng := w.x, w.rng
	s := x.m.State()
	if rng.IntN(100) < 55 {
		if in := w.sensible(s); in != nil {
			return in
		}
	}
	switch r := rng.IntN(100); {
	case r < 25:
		if c, ok := w.card(); ok {
			code := ""
			if rng.IntN(20) == 0 {
				code = "DUP" // a code seen twice: the integrity book refuses it
			}
			return CardDrawn{Card: c, Code: code}
		}
	case r < 40:
		if ws := x.m.rnd.Waiting(nil); len(ws) > 0 {
			wt := ws[rng.IntN(len(ws))]
			acts := wt.Options.List()
			a := round.ActStand
			if len(acts) > 0 {
				a = acts[rng.IntN(len(acts))]
			}
			return Decision{Seat: wt.Seat, Player: wt.Player, Action: a.String(), ID: w.id("d")}
		}
		if x.m.rnd.Phase() == round.PhaseInsurance {
			seat := 1 + rng.IntN(3)
			return InsuranceAnswer{Seat: seat, Player: fmt.Sprintf("p%d", seat), Take: rng.IntN(2) == 0, ID: w.id("i")}
		}
	case r < 50:
		if d := x.m.Timer(); d.Name != "" {
			return d.Fired()
		}
	case r < 55:
		return w.bets()
	case r < 62:
		return w.alarm()
	case r < 90:
		return w.supervisor(s)
	case r < 95:
		if len(w.sent) > 0 {
			// A command again: the same body (a retry), or its id on
			// another command (refused).
			old := w.sent[rng.IntN(len(w.sent))]
			if rng.IntN(2) == 0 {
				return old
			}
			sv := w.supervisor(s)
			if v, ok := sv.(Supervisor); ok {
				v.ID = commandID(old)
				return v
			}
		}
	case r < 99:
		return Decisions{ID: w.id("x"), Round: []string{"", "#00:00:00", x.m.RoundID()}[rng.IntN(3)],
			Entries: []DecisionEntry{{Slot: rng.IntN(3), Action: "stand"}}}
	default:
		switch rng.IntN(5) {
		case 0:
			return CutCardSeen{Source: "sensor"}
		case 1:
			return ShoeChanged{ShoeID: w.id("S")}
		}
	}
	return TimerFired{Timer: "decision@0", Round: "0"} // refused: stale
}

// sensible is what the dealer, a player or a supervisor does next by
// the state, nil when nothing is waited for.
func (w *walk) sensible(s *State) Input {
	x, rng := w.x, w.rng
	switch {
	case s.Phase == PhaseBetting || s.Phase == PhaseLastCall:
		return w.bets()
	case s.Phase == PhaseClosed:
		// The shoe is changed: out with its count, a new one in.
		switch {
		case x.m.shoe.started:
			return ShoeOut{Returned: 8*52 - x.m.shoe.dealt() - x.m.shoe.unread}
		case rng.IntN(2) == 0:
			return ShoeIn{}
		}
		return ShoeChanged{ShoeID: w.id("S")}
	case s.MisreadsPending > 0:
		c, _ := w.card()
		return Supervisor{Command: "correct", By: "supA", Reason: "misread", Card: c, At: s.MisreadAt, ID: w.id("c")}
	case strings.Contains(s.Round.Next, "shoe not connected"):
		return DeviceAlarm{Source: "shoe", Code: "connected", Message: "shoe connected"}
	case s.Paused:
		return Supervisor{Command: "resume", By: "supB", ID: w.id("r")}
	case strings.HasPrefix(s.Round.Next, "card to") || strings.HasPrefix(s.Round.Next, "hole card") || s.Round.Next == "burn one card":
		if c, ok := w.card(); ok {
			return CardDrawn{Card: c}
		}
	case x.m.rnd.Phase() == round.PhaseInsurance && rng.IntN(3) > 0:
		seat := 1 + rng.IntN(3)
		return InsuranceAnswer{Seat: seat, Player: fmt.Sprintf("p%d", seat), Take: rng.IntN(2) == 0, ID: w.id("i")}
	case len(x.m.rnd.Waiting(nil)) > 0 && rng.IntN(4) > 0:
		ws := x.m.rnd.Waiting(nil)
		wt := ws[rng.IntN(len(ws))]
		acts := wt.Options.List()
		return Decision{Seat: wt.Seat, Player: wt.Player, Action: acts[rng.IntN(len(acts))].String(), ID: w.id("d")}
	}
	if d := x.m.Timer(); d.Name != "" {
		return d.Fired()
	}
	return nil
}

// card is a card the dealer draws: mostly one the shoe holds.
func (w *walk) card() (card.Card, bool) {
	for range 20 {
		c := card.New(card.Rank(1+w.rng.IntN(13)), card.Suit(1+w.rng.IntN(4)))
		if w.x.m.checkCard(c, "") == "" || w.rng.IntN(50) == 0 {
			return c, true
		}
	}
	return card.Card{}, false
}

func (w *walk) bets() Input {
	n := 1 + w.rng.IntN(3)
	bets := make([]Bet, n)
	for i := range bets {
		bets[i] = Bet{Seat: i + 1, Player: fmt.Sprintf("p%d", i+1), Main: 100 + int64(w.rng.IntN(4000))}
		if w.rng.IntN(3) == 0 {
			bets[i].Side = map[string]int64{"21+3": 100 + int64(w.rng.IntN(400))}
		}
	}
	return BetsClosed{ID: w.id("b"), Bets: bets}
}

func (w *walk) alarm() Input {
	n := w.rng.IntN(1000)
	switch w.rng.IntN(7) {
	case 0, 1:
		return DeviceAlarm{Source: "shoe", Code: "misread", Message: fmt.Sprintf("misread #%d", n), Pauses: true}
	case 2:
		return DeviceAlarm{Source: "shoe", Code: "silent", Message: "shoe silent", Pauses: true}
	case 3:
		return DeviceAlarm{Source: "shoe", Code: "connected", Message: "shoe connected"}
	case 4:
		return DeviceAlarm{Source: "shuffler", Code: "timeout", Message: fmt.Sprintf("shuffler timeout %d", n), Pauses: true}
	case 5:
		return DeviceAlarm{Source: "shoe", Code: "double_card", Message: "two cards at once", Pauses: true}
	}
	return refusedHello(n)
}

// supervisor is one of two supervisors' commands, sensible or not.
func (w *walk) supervisor(s *State) Input {
	rng := w.rng
	who := []string{"supA", "supB"}[rng.IntN(2)]
	v := Supervisor{By: who, ID: w.id("s")}
	switch rng.IntN(6) {
	case 0:
		v.Command, v.Reason = "pause", []string{"", "camera", "dispute"}[rng.IntN(3)]
		if rng.IntN(4) == 0 {
			v.Since = w.x.at.Add(time.Duration(rng.IntN(7200)-3600) * time.Second)
		}
	case 1:
		v.Command = "resume"
	case 2:
		v.Command, v.Reason = "void", "misdeal"
	case 3, 4:
		v.Command, v.Reason = "correct", "misread"
		if c, ok := w.card(); ok {
			v.Card = c
		}
		switch rng.IntN(4) {
		case 0: // names none
		case 1:
			v.At = s.MisreadAt + 1 // another card
		default:
			v.At = s.MisreadAt
		}
	default:
		v.Command = "open"
	}
	return v
}

// encodeNumbered encodes a step's numbered events as a subscriber gets
// them.
func encodeNumbered(t *testing.T, st Step) []string {
	var out []string
	for _, ev := range st.Events {
		if ev.Seq == 0 {
			continue
		}
		b, err := json.Marshal(struct {
			Seq   uint64    `json:"seq"`
			Time  time.Time `json:"time"`
			Round string    `json:"round,omitempty"`
			Kind  string    `json:"kind"`
			Body  Body      `json:"body"`
		}{ev.Seq, ev.Time, ev.Round, ev.Kind(), ev.Body})
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}
