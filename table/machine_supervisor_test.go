package table

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
)

// The supervisor's flows attacked with combinations on the pure machine:
// each command of a batch is refused with its typed error and changes
// nothing, or moves the table to a state whose instruction line tells the
// dealer and the supervisor what to do next (and following it brings the
// table back to betting); a void returns exactly the stakes taken, in
// minor units.

// Inputs the cases are made of.
var (
	advMisread  = DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #4: card misread", Pauses: true}
	advMisread2 = DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #5: card misread", Pauses: true}
	advSilent   = DeviceAlarm{Source: "shoe", Code: "silent", Message: "shoe silent for 10s", Pauses: true}
	advBack     = DeviceAlarm{Source: "shoe", Code: "connected", Message: "shoe connected"}
	advShuffler = DeviceAlarm{Source: "shuffler", Code: "timeout", Message: "shuffler: no answer for 5s", Pauses: true}
)

// sup is a supervisor command by supervisor "supA", shaped by opts.
func sup(cmd string, opts ...func(*Supervisor)) Supervisor {
	s := Supervisor{Command: cmd, By: "supA"}
	for _, o := range opts {
		o(&s)
	}
	return s
}

func by(who string) func(*Supervisor)     { return func(s *Supervisor) { s.By = who } }
func why(r string) func(*Supervisor)      { return func(s *Supervisor) { s.Reason = r } }
func cmdID(id string) func(*Supervisor)   { return func(s *Supervisor) { s.ID = id } }
func atCard(n int) func(*Supervisor)      { return func(s *Supervisor) { s.At = n } }
func withCard(c string) func(*Supervisor) { return func(s *Supervisor) { s.Card = card.MustParse(c) } }

// twoSeats opens a round of 000 with seat 1 (p1: 1001 and a 21+3 side
// bet of 500, an odd main so half of it for insurance rounds) and seat 2
// (p2: 2000), and deals cs: 6,001 + 500 + 2,000 taken.
func twoSeats(t *testing.T, cs ...string) *mt {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, BetsClosed{ID: "b1", Bets: []Bet{
		{Seat: 1, Player: "p1", Main: 1001, Side: map[string]int64{"21+3": 500}},
		{Seat: 2, Player: "p2", Main: 2000}}})
	x.cards(cs...)
	return x
}

type advCase struct {
	name  string
	start func(t *testing.T) *mt // nil: dealing
	batch []Input
	// refused is the sentinel each input of the batch is refused with,
	// nil for one applied.
	refused []error
	// next is the instruction line after the batch; paused whether the
	// table is paused.
	next   string
	paused bool
	// refund, when not 0, is what the void in the batch returns: every
	// wager on the round, net 0.
	refund int64
	check  func(t *testing.T, x *mt)
}

func TestSupervisorAdversarial(t *testing.T) {
	ins := func(in ...Input) []Input { return in }
	errs := func(e ...error) []error { return e }
	tests := []advCase{
		{name: "a misread while a supervisor has paused: resume refused, the correct leaves the supervisor's pause and its reason",
			batch:   ins(sup("pause", why("camera")), advMisread, sup("resume", by("supB")), sup("correct", withCard("5h"))),
			refused: errs(nil, nil, ErrMisreadPending, nil),
			next:    "stop: table paused (camera)", paused: true,
			check: func(t *testing.T, x *mt) {
				assert.Equal(t, []PauseReason{PauseSupervisor}, x.m.State().PauseReasons)
				assert.Equal(t, "camera", x.m.State().PauseReason)
			}},
		{name: "a supervisor's pause after a misread: the correct names the supervisor's reason, not the misread's (epoch 7)",
			batch:   ins(advMisread, sup("pause", why("camera")), sup("correct", withCard("5h"))),
			refused: errs(nil, nil, nil),
			next:    "stop: table paused (camera)", paused: true,
			check: func(t *testing.T, x *mt) {
				assert.Equal(t, "camera", x.m.State().PauseReason)
				_, err := x.apply(Decision{Seat: 1, Player: "p1", Action: "stand"})
				require.ErrorIs(t, err, ErrPaused)
				assert.Contains(t, err.Error(), "camera", "the refusal names the pause that stands")
			}},
		{name: "a supervisor's pause without a reason says which pause it is",
			batch: ins(advMisread, sup("pause"), sup("correct", withCard("5h"))), refused: errs(nil, nil, nil),
			next: "stop: table paused (supervisor)", paused: true},
		{name: "a misread while paused for a shuffler fault: corrected, the fault's pause stays",
			batch: ins(advShuffler, advMisread, sup("correct", withCard("5h"))), refused: errs(nil, nil, nil),
			next: "stop: table paused (shuffler: no answer for 5s)", paused: true},
		{name: "a misread, then the shoe is lost: the correct leaves the shoe's pause, named",
			batch:   ins(advMisread, advSilent, sup("correct", withCard("5h")), sup("resume")),
			refused: errs(nil, nil, nil, ErrShoeDown),
			next:    "stop: shoe not connected: check its cable; the cards pulled meanwhile come when it is back; supervisor resumes then, or voids the round", paused: true,
			check: func(t *testing.T, x *mt) {
				assert.Equal(t, "shoe silent for 10s", x.m.State().PauseReason)
			}},
		{name: "correct then void the same round",
			batch:   ins(advMisread, sup("correct", withCard("5h")), sup("void", why("misdeal")), sup("correct", withCard("5h"))),
			refused: errs(nil, nil, nil, ErrNoMisread),
			next:    "clear the cards: round voided, next round", refund: 1000},
		{name: "void then correct: the correct finds nothing to correct",
			batch:   ins(advMisread, sup("void", why("misdeal")), sup("correct", withCard("5h"), atCard(4))),
			refused: errs(nil, nil, ErrMisreadAt),
			next:    "clear the cards: round voided, next round", refund: 1000,
			check: func(t *testing.T, x *mt) {
				_, err := x.apply(sup("correct", withCard("5h"), atCard(4)))
				assert.ErrorIs(t, err, ErrNoMisread, "and says none waits")
			}},
		{name: "void during insurance, insurance taken: every wager back, half the odd main exactly",
			start:   func(t *testing.T) *mt { return twoSeats(t, "Ts", "8s", "Ah", "7c", "8d", "4h") },
			batch:   ins(InsuranceAnswer{Seat: 1, Player: "p1", Take: true, ID: "i1"}, sup("void", why("camera"))),
			refused: errs(nil, nil),
			next:    "clear the cards: round voided, next round", refund: 1001 + 500 + 500 + 2000},
		{name: "void during a pending decision, after a double",
			start: func(t *testing.T) *mt { return twoSeats(t, "6s", "8s", "9d", "5c", "8d", "4h") },
			batch: ins(Decision{Seat: 1, Player: "p1", Action: "double", ID: "d1"}, CardDrawn{Card: card.MustParse("Tc")},
				sup("void", why("camera"))),
			refused: errs(nil, nil, nil),
			next:    "clear the cards: round voided, next round", refund: 2002 + 500 + 2000},
		{name: "void during a split (000: no double after it)",
			start: func(t *testing.T) *mt { return twoSeats(t, "8s", "9s", "6d", "8c", "8d", "4h") },
			batch: ins(Decision{Seat: 1, Player: "p1", Action: "split", ID: "s1"}, CardDrawn{Card: card.MustParse("3c")},
				CardDrawn{Card: card.MustParse("2c")}, Decision{Seat: 1, Player: "p1", Action: "double", ID: "d1"},
				sup("void", why("camera"))),
			refused: errs(nil, nil, nil, round.ErrIllegalAction, nil),
			next:    "clear the cards: round voided, next round", refund: 1001 + 1001 + 500 + 2000},
		{name: "void while a split hand's card is misread",
			start: func(t *testing.T) *mt { return twoSeats(t, "8s", "9s", "6d", "8c", "8d", "4h") },
			batch: ins(Decision{Seat: 1, Player: "p1", Action: "split", ID: "s1"}, advMisread, sup("resume"),
				sup("void", why("misread"))),
			refused: errs(nil, nil, ErrMisreadPending, nil),
			next:    "clear the cards: round voided, next round", refund: 1001 + 1001 + 500 + 2000},
		{name: "two supervisors at once: pause, resume, correct, resume",
			batch: ins(advMisread, sup("pause", by("supA"), why("look")), sup("resume", by("supB")),
				sup("correct", by("supA"), withCard("5h")), sup("resume", by("supB"))),
			refused: errs(nil, nil, ErrMisreadPending, nil, nil),
			next:    "wait: seat 1 to decide"},
		{name: "two supervisors correct the same card: the second is told it was corrected",
			// The round waited for the hole card only: the second card
			// dealt unread is no one's once the first is corrected (set
			// aside, counted unread at shoe out).
			batch: ins(advMisread, advMisread2, sup("correct", by("supA"), withCard("5h"), atCard(4)),
				sup("correct", by("supB"), withCard("5h"), atCard(4)), sup("correct", by("supB"), withCard("9h"), atCard(5))),
			refused: errs(nil, nil, nil, ErrMisreadAt, ErrMisreadAt),
			next:    "wait: seat 1 to decide",
			check: func(t *testing.T, x *mt) {
				assert.Empty(t, x.m.State().MisreadsAt)
				assert.Equal(t, "card_set_aside", x.m.State().Alarms[0].Code)
				assert.Equal(t, 1, x.m.shoe.unread)
			}},
		{name: "two supervisors correct the same card while the round needs both",
			start: func(t *testing.T) *mt { return twoSeats(t) },
			batch: ins(advMisread, advMisread2, sup("correct", by("supA"), withCard("5h"), atCard(1)),
				sup("correct", by("supB"), withCard("5h"), atCard(1))),
			refused: errs(nil, nil, nil, ErrMisreadAt),
			next:    "stop: card not read (misread #5: card misread): supervisor corrects it or voids the round", paused: true,
			check: func(t *testing.T, x *mt) {
				assert.Equal(t, []int{2}, x.m.State().MisreadsAt)
			}},
		{name: "a correct naming a card that is not the one waiting",
			batch:   ins(advMisread, sup("correct", withCard("5h"), atCard(9)), sup("correct", withCard("5h"), atCard(3))),
			refused: errs(nil, ErrMisreadAt, ErrMisreadAt),
			next:    "stop: card not read (misread #4: card misread): supervisor corrects it or voids the round", paused: true},
		{name: "a correct naming the second of two cards waiting",
			batch:   ins(advMisread, advMisread2, sup("correct", withCard("5h"), atCard(5))),
			refused: errs(nil, nil, ErrMisreadAt),
			next:    "stop: 2 cards not read (next to correct: misread #4: card misread): supervisor corrects them in the order the dealer drew them, or voids the round", paused: true},
		{name: "a correct with no card, or no misread at all",
			batch:   ins(sup("correct", withCard("5h")), advMisread, sup("correct")),
			refused: errs(ErrNoMisread, nil, round.ErrIllegalAction),
			next:    "stop: card not read (misread #4: card misread): supervisor corrects it or voids the round", paused: true},
		{name: "resume while the shoe is down",
			batch: ins(advSilent, sup("resume")), refused: errs(nil, ErrShoeDown),
			next:   "stop: shoe not connected: check its cable; the cards pulled meanwhile come when it is back; supervisor resumes then, or voids the round",
			paused: true},
		{name: "void while the shoe is down: the line says the round is voided, resume waits for the shoe",
			batch:   ins(advMisread, advSilent, sup("void", why("shoe gone")), sup("resume"), sup("void")),
			refused: errs(nil, nil, nil, ErrShoeDown, round.ErrIllegalAction),
			next:    "stop: round voided: clear the cards; shoe not connected: check its cable; supervisor resumes once it is back",
			paused:  true, refund: 1000,
			check: func(t *testing.T, x *mt) {
				assert.Equal(t, "shoe silent for 10s", x.m.State().PauseReason, "the pause that stands is the shoe's (epoch 7)")
			}},
		{name: "the shoe lost between rounds: the line offers no void, which is refused",
			start: func(t *testing.T) *mt {
				x := dealing(t)
				x.cards("5h")
				x.must(Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d1"})
				x.cards("Kh") // settled
				return x
			},
			batch: ins(advSilent, sup("void"), sup("resume")), refused: errs(nil, round.ErrIllegalAction, ErrShoeDown),
			next:   "stop: shoe not connected: check its cable; the cards pulled meanwhile come when it is back; supervisor resumes then",
			paused: true,
			check: func(t *testing.T, x *mt) {
				_, err := x.apply(sup("resume"))
				assert.NotContains(t, err.Error(), "void")
			}},
		{name: "003: the burn a new shoe owes misread between rounds: correct it, no void offered",
			start: func(t *testing.T) *mt {
				x := newGameMT(t, "003")
				x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"})
				return x
			},
			batch: ins(advMisread, sup("void"), sup("resume")), refused: errs(nil, round.ErrIllegalAction, ErrMisreadPending),
			next:   "stop: card not read (misread #4: card misread): supervisor corrects it",
			paused: true,
			check: func(t *testing.T, x *mt) {
				_, err := x.apply(sup("resume"))
				assert.NotContains(t, err.Error(), "void")
				x.must(sup("correct", withCard("9s")))
				assert.Zero(t, x.m.State().Shoe.BurnPending, "burned")
			}},
		{name: "a void of a round already settled",
			batch: ins(CardDrawn{Card: card.MustParse("5h")}, Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d1"},
				CardDrawn{Card: card.MustParse("Kh")}, sup("void", why("late"))),
			refused: errs(nil, nil, nil, round.ErrIllegalAction),
			next:    "collect and pay"},
		{name: "a void of a round settled while a supervisor's pause stood",
			batch: ins(CardDrawn{Card: card.MustParse("5h")}, Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d1"},
				advMisread, sup("pause", why("look")), sup("correct", withCard("Kh")), sup("void", why("late"))),
			refused: errs(nil, nil, nil, nil, nil, round.ErrIllegalAction),
			next:    "stop: table paused (look)", paused: true},
		{name: "two voids: the second is refused",
			batch: ins(sup("void", why("a"), by("supA")), sup("void", why("b"), by("supB"))), refused: errs(nil, round.ErrIllegalAction),
			next: "clear the cards: round voided, next round", refund: 1000},
		{name: "a command id replayed with another body",
			batch: ins(advMisread, sup("pause", cmdID("x")), sup("resume", cmdID("x")), sup("void", cmdID("x")),
				sup("correct", withCard("5h"), cmdID("y")), sup("correct", withCard("6h"), cmdID("y"))),
			refused: errs(nil, nil, ErrCommandIDReused, ErrCommandIDReused, nil, ErrCommandIDReused),
			next:    "stop: table paused (supervisor)", paused: true,
			check: func(t *testing.T, x *mt) {
				before := x.fingerprint()
				st, err := x.apply(sup("pause", cmdID("x")))
				require.NoError(t, err)
				assert.True(t, st.Repeat, "the same body again: answered, not applied")
				assert.Equal(t, before, x.fingerprint())
			}},
		{name: "a batch for a round that does not exist, and for the last one",
			start: func(t *testing.T) *mt {
				x := dealing(t)
				x.cards("5h")
				return x
			},
			batch: ins(Decisions{ID: "c1", Round: "#09:00:00", Entries: []DecisionEntry{{Slot: 0, Action: "stand"}}},
				Decisions{ID: "c2", Round: "", Entries: []DecisionEntry{{Slot: 0, Action: "stand"}}}),
			refused: errs(round.ErrOutOfTurn, round.ErrOutOfTurn),
			next:    "wait: seat 1 to decide"},
		{name: "a correct naming a card of the last round",
			start: func(t *testing.T) *mt {
				x := dealing(t)
				x.must(advMisread, sup("correct", withCard("5h"), atCard(4)),
					Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d1"})
				x.cards("Kh") // settled
				x.fire()      // bets open
				x.must(BetsClosed{ID: "b2", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
				x.cards("2c")
				return x
			},
			batch: ins(advMisread, sup("correct", withCard("5h"), atCard(4))), refused: errs(nil, ErrMisreadAt),
			next: "stop: card not read (misread #4: card misread): supervisor corrects it or voids the round", paused: true,
			check: func(t *testing.T, x *mt) {
				assert.Equal(t, []int{7}, x.m.State().MisreadsAt)
			}},
		{name: "a pause dated after now keeps the player's time",
			start: func(t *testing.T) *mt {
				x := dealing(t)
				x.cards("5h")
				return x
			},
			batch:   ins(sup("pause", func(s *Supervisor) { s.Since = ckEpoch.Add(time.Hour) }), sup("open"), sup("resume"), sup("resume")),
			refused: errs(nil, round.ErrIllegalAction, nil, ErrNotPaused),
			next:    "wait: seat 1 to decide",
			check: func(t *testing.T, x *mt) {
				assert.Equal(t, x.at.Add(-time.Second).Add(9*time.Second), x.m.Timer().At, "the 9 s left when it paused")
			}},
		{name: "a lost-event gap's pause ended by a void names no reason after it",
			batch:   ins(SeqGap{LostFrom: 5, LostTo: 9, By: "op", Reason: "disk"}, sup("void", why("rebuilt"))),
			refused: errs(nil, nil),
			next:    "clear the cards: round voided, next round", refund: 1000,
			check: func(t *testing.T, x *mt) {
				assert.Empty(t, x.m.State().PauseReason)
			}},
		{name: "cards pulled during a restart's pause, then a void: set aside with the round's",
			batch: ins(sup("pause", by("system"), func(s *Supervisor) { s.Cause = PauseRestart; s.Reason = "restart mid-round" }),
				CardDrawn{Card: card.MustParse("5h")}, CardDrawn{Card: card.MustParse("9h")}, sup("void", why("restart"))),
			refused: errs(nil, nil, nil, nil),
			next:    "clear the cards: round voided, next round", refund: 1000,
			check: func(t *testing.T, x *mt) {
				assert.Empty(t, x.m.SetAside())
				assert.Equal(t, "card_set_aside", x.m.State().Alarms[len(x.m.State().Alarms)-1].Code)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Len(t, tt.refused, len(tt.batch), "a verdict per input")
			var x *mt
			if tt.start != nil {
				x = tt.start(t)
			} else {
				x = dealing(t)
			}
			var settlements []*round.Settlement
			for i, in := range tt.batch {
				before := x.fingerprint()
				st, err := x.apply(in)
				if tt.refused[i] != nil {
					require.ErrorIs(t, err, tt.refused[i], "input %d (%s %+v)", i, in.Kind(), in)
					assert.Equal(t, before, x.fingerprint(), "input %d: a refused input changes nothing", i)
					continue
				}
				require.NoError(t, err, "input %d (%s %+v)", i, in.Kind(), in)
				settlements = append(settlements, settlementsOf(st)...)
				assertPrompt(t, x)
			}
			s := x.m.State()
			assert.Equal(t, tt.next, s.Round.Next)
			assert.Equal(t, tt.paused, s.Paused)
			if tt.refund != 0 {
				require.Len(t, settlements, 1, "one settlement: the void's")
				assertVoidRefund(t, settlements[0], tt.refund)
			}
			if tt.check != nil {
				tt.check(t, x)
			}
			followPrompt(t, x)
		})
	}
}

func settlementsOf(st Step) []*round.Settlement {
	var out []*round.Settlement
	for _, ev := range st.Events {
		if e, ok := ev.Body.(round.Event); ok && e.Settlement() != nil {
			out = append(out, e.Settlement())
		}
	}
	return out
}

// assertVoidRefund: a void's settlement nets every wager to 0 and
// returns exactly the stakes taken: want, in minor units.
func assertVoidRefund(t *testing.T, s *round.Settlement, want int64) {
	t.Helper()
	require.True(t, s.Void)
	var back int64
	assert.Zero(t, s.Net)
	assert.Zero(t, s.Rounding)
	for _, sr := range s.Seats {
		assert.Zero(t, sr.Net, "seat %d", sr.Seat)
		assert.Zero(t, sr.MainNet, "seat %d", sr.Seat)
		for _, h := range sr.Hands {
			assert.Equal(t, round.OutcomeVoid, h.Outcome)
			assert.Zero(t, h.Net)
			back += h.Stake
		}
		for _, sd := range sr.Side {
			assert.Zero(t, sd.Net)
			back += sd.Stake
		}
		if sr.Insurance != nil {
			assert.Zero(t, sr.Insurance.Net)
			back += sr.Insurance.Stake
		}
	}
	assert.Equal(t, want, back, "the void returns the stakes taken")
}

// assertPrompt: the instruction line always says what to do, and a
// paused table's starts with "stop:".
func assertPrompt(t *testing.T, x *mt) {
	t.Helper()
	s := x.m.State()
	require.NotEmpty(t, s.Round.Next, "an instruction line")
	if s.Paused {
		assert.True(t, strings.HasPrefix(s.Round.Next, "stop:"), "paused: %q", s.Round.Next)
		assert.NotContains(t, s.Round.Next, "()", "a pause names its reason")
	}
	if strings.Contains(s.Round.Next, "voids the round") {
		assert.True(t, x.m.MidRound(), "%q offers a void: a round must be in play", s.Round.Next)
	}
}

// followPrompt plays the dealer and the supervisor as the instruction
// line tells them, until bets open: a table that cannot get there from
// what it says is stuck.
func followPrompt(t *testing.T, x *mt) {
	t.Helper()
	for range 60 {
		s := x.m.State()
		assertPrompt(t, x)
		next := s.Round.Next
		var in Input
		switch {
		case s.Phase == PhaseBetting || s.Phase == PhaseClosed:
			return
		case strings.Contains(next, "not read"):
			in = Supervisor{Command: "correct", By: "sup", Card: x.spareCard(), At: s.MisreadAt}
		case strings.Contains(next, "shoe not connected"):
			in = advBack
		case s.Paused:
			in = Supervisor{Command: "resume", By: "sup"}
		case strings.HasPrefix(next, "card to") || strings.HasPrefix(next, "hole card") || next == "burn one card":
			in = CardDrawn{Card: x.spareCard()}
		case strings.HasPrefix(next, "wait: seat"):
			seat := s.Round.Seats[0].Seat
			for _, sv := range s.Round.Seats {
				if strings.HasPrefix(next, fmt.Sprintf("wait: seat %d ", sv.Seat)) {
					seat = sv.Seat
				}
			}
			in = Decision{Seat: seat, Action: "stand"}
		case x.m.Timer().Name != "":
			d := x.m.Timer()
			x.at = d.At.Add(-time.Second)
			in = d.Fired()
		default:
			t.Fatalf("the line %q in phase %s leaves nothing to do", next, s.Phase)
		}
		st, err := x.apply(in)
		require.NoError(t, err, "following %q: %s %+v", next, in.Kind(), in)
		if st.Fault != nil {
			t.Logf("following %q: %v", next, st.Fault)
		}
	}
	t.Fatalf("bets never opened: %q", x.m.State().Round.Next)
}

// spareCard is a low card the shoe still holds (a 2 first: it busts
// no one, so the round goes on to its end).
func (x *mt) spareCard() card.Card {
	for _, r := range []string{"2", "3", "4", "5", "6"} {
		for _, su := range []string{"c", "d", "h", "s"} {
			c := card.MustParse(r + su)
			if x.m.checkCard(c, "") == "" {
				return c
			}
		}
	}
	x.t.Fatal("no spare card left in the shoe")
	return card.Card{}
}
