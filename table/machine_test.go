package table

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
	"github.com/livetable/livetable/table/round"
	"github.com/livetable/livetable/table/rules"
)

// mt drives a Machine in a test: a fixed start time, one second per input.
type mt struct {
	t  *testing.T
	m  *Machine
	at time.Time
}

func newMT(t *testing.T) *mt {
	t.Helper()
	rs, err := rules.Game("000")
	require.NoError(t, err)
	m, err := NewMachine(MachineConfig{Table: "t1", Rules: rs, SettleDelay: 4 * time.Second,
		BetsGrace: 5 * time.Second, ResumeGrace: 5 * time.Second})
	require.NoError(t, err)
	return &mt{t: t, m: m, at: ckEpoch}
}

// apply applies in one second after the last input.
func (x *mt) apply(in Input) (Step, error) {
	x.at = x.at.Add(time.Second)
	return x.m.Apply(x.at, in)
}

func (x *mt) must(ins ...Input) {
	x.t.Helper()
	for _, in := range ins {
		st, err := x.apply(in)
		require.NoError(x.t, err, "%s %+v", in.Kind(), in)
		require.NoError(x.t, st.Fault, "%s %+v", in.Kind(), in)
	}
}

func (x *mt) cards(cs ...string) {
	x.t.Helper()
	for _, c := range cs {
		x.must(CardDrawn{Card: card.MustParse(c)})
	}
}

// fire fires the running timer.
func (x *mt) fire() {
	x.t.Helper()
	d := x.m.Timer()
	require.NotEmpty(x.t, d.Name, "no timer runs")
	x.at = d.At
	_, err := x.m.Apply(x.at, d.Fired())
	require.NoError(x.t, err)
}

// fingerprint is everything the machine would checkpoint and publish.
func (x *mt) fingerprint() string {
	b, err := json.Marshal(struct {
		Ck  Checkpoint
		St  *State
		Pau []PauseReason
		Mis string
		Hel string
		Lnk shoeLink
		Asi string
	}{x.m.Checkpoint(), x.m.State(), x.m.pauses, x.m.misread, fmt.Sprintf("%+v", x.m.held), x.m.link, fmt.Sprint(x.m.aside)})
	require.NoError(x.t, err)
	return string(b)
}

// dealing opens a shoe and a round of 000 with seat 1 dealt Ts, 7c and
// the dealer 6d: the next card is the dealer's hole card.
func dealing(t *testing.T) *mt {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("Ts", "6d", "7c")
	require.Equal(t, "hole card to dealer", x.m.State().Round.Next)
	return x
}

// alarmCoded is the step's alarm with code, failing when there is none.
func alarmCoded(t *testing.T, st Step, code string) Alarm {
	t.Helper()
	for _, a := range alarmsOf(st) {
		if a.Code == code {
			return a
		}
	}
	t.Fatalf("no %s alarm in %v", code, alarmsOf(st))
	return Alarm{}
}

func alarmsOf(st Step) []Alarm {
	var out []Alarm
	for _, ev := range st.Events {
		if a, ok := ev.Body.(Alarm); ok {
			out = append(out, a)
		}
	}
	return out
}

// TestSupervisorSemantics: the supervisor's commands, on the pure Apply.
// A refused command returns its typed error and changes nothing.
func TestSupervisorSemantics(t *testing.T) {
	misread := DeviceAlarm{Source: "shoe", Code: "misread", Message: "misread #9: card misread", Pauses: true}
	tests := []machineCase{
		{"correct without a misread is refused", func(x *mt) {}, Supervisor{Command: "correct", By: "sup", Card: card.MustParse("Qh")},
			ErrNoMisread, nil},
		{"correct while paused without a misread is refused", func(x *mt) {
			x.must(Supervisor{Command: "pause", By: "sup", Reason: "camera"})
		}, Supervisor{Command: "correct", By: "sup", Card: card.MustParse("Qh")}, ErrNoMisread, nil},
		{"correct gives the round the card and resumes", func(x *mt) { x.must(misread) },
			Supervisor{Command: "correct", By: "sup", Card: card.MustParse("5h")}, nil,
			func(t *testing.T, x *mt, st Step) {
				s := x.m.State()
				assert.False(t, s.Paused, "the misread was the only reason")
				assert.Empty(t, s.Misread)
				assert.Equal(t, "wait: seat 1 to decide", s.Round.Next)
				assert.Equal(t, 4, s.Shoe.Dealt)
				assert.Equal(t, TimerDecision, x.m.Timer().Name)
			}},
		{"correct keeps a supervisor's own pause", func(x *mt) {
			x.must(misread, Supervisor{Command: "pause", By: "sup", Reason: "camera"})
		}, Supervisor{Command: "correct", By: "sup", Card: card.MustParse("5h")}, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.True(t, x.m.State().Paused)
				assert.Equal(t, []PauseReason{PauseSupervisor}, x.m.State().PauseReasons)
				assert.Len(t, x.m.State().Round.Dealer.Cards, 1, "the hole card is in (hidden)")
				x.must(Supervisor{Command: "resume", By: "sup"})
				assert.False(t, x.m.State().Paused)
			}},
		{"correct with a card the shoe cannot hold is refused", func(x *mt) {
			x.must(misread)
			x.m.shoe.comp = card.NewComposition(0) // every card dealt: nothing fits
		}, Supervisor{Command: "correct", By: "sup", Card: card.MustParse("5h")}, round.ErrIllegalAction, nil},
		{"correct without a card is refused", func(x *mt) { x.must(misread) },
			Supervisor{Command: "correct", By: "sup"}, round.ErrIllegalAction, nil},
		{"resume on a table not paused is refused", func(x *mt) {},
			Supervisor{Command: "resume", By: "sup"}, ErrNotPaused, nil},
		{"resume applies the held cards and stays resumed", func(x *mt) {
			x.must(Supervisor{Command: "pause", By: "sup"})
			x.cards("5h")
		}, Supervisor{Command: "resume", By: "sup"}, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.False(t, x.m.State().Paused)
				assert.Equal(t, "wait: seat 1 to decide", x.m.State().Round.Next)
			}},
		{"void leaves the dealer an instruction and no pause", func(x *mt) { x.must(misread) },
			Supervisor{Command: "void", By: "sup", Reason: "misdeal"}, nil,
			func(t *testing.T, x *mt, st Step) {
				s := x.m.State()
				assert.False(t, s.Paused)
				assert.Equal(t, PhaseSettled, s.Phase)
				assert.Equal(t, "clear the cards: round voided, next round", s.Round.Next)
				// A card already on its way is set aside, not an alarm
				// that pauses the table.
				st, err := x.apply(CardDrawn{Card: card.MustParse("2h")})
				require.NoError(t, err)
				require.NoError(t, st.Fault)
				require.Len(t, alarmsOf(st), 1)
				assert.Equal(t, "card_after_void", alarmsOf(st)[0].Code)
				assert.False(t, x.m.State().Paused)
				x.fire()
				assert.Equal(t, PhaseBetting, x.m.State().Phase)
				assert.Equal(t, "wait: bets open", x.m.State().Round.Next)
			}},
		{"void with no round in play is refused", func(x *mt) {
			x.must(misread, Supervisor{Command: "void", By: "sup"})
		}, Supervisor{Command: "void", By: "sup"}, round.ErrIllegalAction, nil},
		{"unknown command is refused", func(x *mt) {}, Supervisor{Command: "explode", By: "sup"}, round.ErrIllegalAction, nil},
		{"open while dealing is refused", func(x *mt) {}, Supervisor{Command: "open", By: "sup"}, round.ErrIllegalAction, nil},
		{"a decision while paused is refused", func(x *mt) {
			x.cards("5h")
			x.must(Supervisor{Command: "pause", By: "sup"})
		}, Decision{Seat: 1, Action: "stand"}, ErrPaused, nil},
		{"a decision out of turn is refused", func(x *mt) { x.cards("5h") },
			Decision{Seat: 2, Action: "stand"}, round.ErrOutOfTurn, nil},
		{"a stale timer is refused", func(x *mt) {}, TimerFired{Timer: "decision@1", Round: "1"}, ErrStaleTimer, nil},
		{"a checkpoint is refused", func(x *mt) {}, Checkpoint{Seq: 99}, round.ErrIllegalAction, nil},
	}
	runMachineCases(t, tests, nil, "")
}

// machineCase is one input on a table dealing (dealing), after setup:
// refused with wantErr (and nothing changed), or applied and checked.
type machineCase struct {
	name    string
	setup   func(x *mt)
	in      Input
	wantErr error
	check   func(t *testing.T, x *mt, st Step)
}

// runMachineCases plays each case on its own table. A refusal must be
// wantErr, say refusalSays (when set) and change nothing; an applied
// input must report no fault when faultFree says it should not (nil: not
// checked), then check judges it.
func runMachineCases(t *testing.T, tests []machineCase, faultFree func(Input) bool, refusalSays string) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := dealing(t)
			tt.setup(x)
			before := x.fingerprint()
			st, err := x.apply(tt.in)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if refusalSays != "" {
					assert.Contains(t, err.Error(), refusalSays)
				}
				assert.Equal(t, before, x.fingerprint(), "a refused input changes nothing")
				return
			}
			require.NoError(t, err)
			if faultFree != nil && faultFree(tt.in) {
				require.NoError(t, st.Fault)
			}
			tt.check(t, x, st)
		})
	}
}

// TestCommandLedger: a command id is applied once; the same body again
// gets the same answer, another body under the same id is refused.
func TestCommandLedger(t *testing.T) {
	x := newMT(t)
	x.must(ShoeChanged{ShoeID: "S1"})
	bets := BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}
	x.must(bets)
	before := x.fingerprint()
	st, err := x.apply(bets)
	require.NoError(t, err)
	assert.True(t, st.Repeat, "the same body: answered, not applied")
	assert.Equal(t, before, x.fingerprint())

	other := BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 5000}}}
	_, err = x.apply(other)
	require.ErrorIs(t, err, ErrCommandIDReused)
	assert.Contains(t, err.Error(), "id reused with a different command")
	_, err = x.apply(Supervisor{ID: "b1", Command: "void", By: "sup"})
	require.ErrorIs(t, err, ErrCommandIDReused, "another kind under the same id")
	assert.Equal(t, before, x.fingerprint())

	// The ledger survives a checkpoint with its hashes.
	y := newMT(t)
	require.NoError(t, y.m.Restore(roundTrip(t, x.m.Checkpoint())))
	_, err = y.apply(other)
	require.ErrorIs(t, err, ErrCommandIDReused)
	st, err = y.apply(bets)
	require.NoError(t, err)
	assert.True(t, st.Repeat)
}

func roundTrip(t *testing.T, ck Checkpoint) Checkpoint {
	t.Helper()
	data, err := EncodeInput(ck)
	require.NoError(t, err)
	in, err := DecodeInput(data)
	require.NoError(t, err)
	return in.(Checkpoint)
}

// TestMachineSeqGap: accepting lost events numbers the next ones above
// them, pauses the table and names the lost seqs, on the pure Apply.
func TestMachineSeqGap(t *testing.T) {
	x := newMT(t)
	x.must(Supervisor{Command: "open", By: "system"})
	require.Less(t, x.m.Seq(), uint64(100))
	st, err := x.apply(SeqGap{LostFrom: 5, LostTo: 240, By: "ops", Reason: "segment lost"})
	require.NoError(t, err)
	alarms := alarmsOf(st)
	require.Len(t, alarms, 1)
	assert.Equal(t, "seq_gap", alarms[0].Code)
	assert.Contains(t, alarms[0].Message, "seq 5-240;")
	assert.Equal(t, uint64(241), st.Events[0].Seq, "numbering continues above the lost seqs")
	assert.True(t, x.m.State().Paused)
	assert.Equal(t, []PauseReason{PauseSeqGap}, x.m.State().PauseReasons)

	_, err = x.apply(SeqGap{LostFrom: 9, LostTo: 3})
	require.ErrorIs(t, err, round.ErrIllegalAction)
	x.must(Supervisor{Command: "resume", By: "ops"})
	assert.Equal(t, PhaseBetting, x.m.State().Phase)
}

// heldCards pauses the table and pulls cards: each is checked by the
// integrity book on arrival and held.
func heldCards(x *mt, cs ...string) []Step {
	x.t.Helper()
	var out []Step
	for _, c := range cs {
		st, err := x.apply(CardDrawn{Card: card.MustParse(c)})
		require.NoError(x.t, err)
		st.Events = append([]Event(nil), st.Events...)
		out = append(out, st)
	}
	return out
}

// restart is a restart from a checkpoint: a new machine restored from
// the old one's checkpoint, through its JSON form.
func (x *mt) restart() *mt {
	x.t.Helper()
	y := newMT(x.t)
	y.at = x.at
	require.NoError(x.t, y.m.Restore(roundTrip(x.t, x.m.Checkpoint())))
	return y
}

// TestIntegrityAcrossRestore: the shoe's integrity book survives a
// checkpoint: composition, RFID codes, count and shuffle history.
func TestIntegrityAcrossRestore(t *testing.T) {
	t.Run("ninth ace of spades", func(t *testing.T) {
		x := newMT(t)
		x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, Supervisor{Command: "pause", By: "sup"})
		heldCards(x, "As", "As", "As", "As", "As")
		y := x.restart()
		y.must(Supervisor{Command: "pause", By: "sup"})
		steps := heldCards(y, "As", "As", "As", "As")
		for _, st := range steps[:3] {
			assert.NoError(t, st.Fault)
		}
		require.ErrorIs(t, steps[3].Fault, ErrIntegrity, "the 9th A♠ of 8 decks")
		assert.Contains(t, alarmCoded(t, steps[3], "shoe.integrity_alarm").Message, "over count: card As")
		assert.Contains(t, y.m.State().PauseReasons, PauseIntegrity)
	})
	t.Run("repeated RFID code", func(t *testing.T) {
		x := newMT(t)
		x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, Supervisor{Command: "pause", By: "sup"})
		x.must(CardDrawn{Card: card.MustParse("Td"), Code: "D03Td"})
		y := x.restart()
		y.must(Supervisor{Command: "pause", By: "sup"})
		st, err := y.apply(CardDrawn{Card: card.MustParse("Td"), Code: "D04Td"})
		require.NoError(t, err)
		require.NoError(t, st.Fault, "another copy of Td")
		st, err = y.apply(CardDrawn{Card: card.MustParse("Td"), Code: "D03Td"})
		require.NoError(t, err)
		require.ErrorIs(t, st.Fault, ErrIntegrity)
		assert.Contains(t, alarmCoded(t, st, "shoe.integrity_alarm").Message, `duplicate code: card Td code "D03Td"`)
	})
	t.Run("unshuffled shoe", func(t *testing.T) {
		x := newMT(t)
		order := []string{"2c", "9h", "Kd", "4s", "Jc", "7h", "3d", "Qs", "8c"}
		x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, Supervisor{Command: "pause", By: "sup"})
		heldCards(x, order...)
		x.must(ShoeOut{Returned: 416 - len(order)}, ShoeIn{}, ShoeChanged{ShoeID: "S2"})
		heldCards(x, order[:4]...)
		y := x.restart()
		y.must(Supervisor{Command: "pause", By: "sup"})
		steps := heldCards(y, order[4:7]...)
		assert.NoError(t, steps[0].Fault)
		assert.NoError(t, steps[1].Fault)
		require.ErrorIs(t, steps[2].Fault, ErrNotShuffled, "the 7th card in S1's order")
		assert.Equal(t, `shoe "S2" deals 7 cards in the same order as shoe "S1": not shuffled`, alarmCoded(t, steps[2], "shoe.shuffle_alarm").Message)
		assert.Contains(t, y.m.State().PauseReasons, PauseShuffle)
	})
	t.Run("count at shoe out", func(t *testing.T) {
		x := newMT(t)
		x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, Supervisor{Command: "pause", By: "sup"})
		heldCards(x, "2c", "3c")
		y := x.restart()
		st, err := y.apply(ShoeOut{Returned: 413})
		require.NoError(t, err)
		require.ErrorIs(t, st.Fault, ErrIntegrity)
		assert.Contains(t, alarmCoded(t, st, "shoe.integrity_alarm").Message, "2 dealt + 413 returned = 415 cards, composition is 416")
	})
}

// TestRefusedInputsChangeNothing: a flood of invalid commands leaves the
// machine as it was (the loop journals none of them).
func TestRefusedInputsChangeNothing(t *testing.T) {
	x := dealing(t)
	x.cards("5h")
	before := x.fingerprint()
	for i := range 1000 {
		var in Input
		switch i % 4 {
		case 0:
			in = Decision{ID: fmt.Sprint("f", i), Seat: 7, Action: "hit"}
		case 1:
			in = InsuranceAnswer{ID: fmt.Sprint("f", i), Seat: 1, Take: true}
		case 2:
			in = Supervisor{ID: fmt.Sprint("f", i), Command: "correct", By: "x", Card: card.MustParse("As")}
		default:
			in = BetsClosed{ID: fmt.Sprint("f", i)}
		}
		_, err := x.apply(in)
		require.Error(t, err)
	}
	assert.Equal(t, before, x.fingerprint())
	assert.Empty(t, x.m.cmds["f1"], "refused ids are not remembered")
}

// TestMachineReplays: the same inputs at the same times give the same
// events, from a fresh machine: what a journal replay relies on.
func TestMachineReplays(t *testing.T) {
	type rec struct {
		at time.Time
		in Input
	}
	var log []rec
	var evs1 []string
	x := newMT(t)
	run := func(in Input) {
		st, err := x.apply(in)
		if err != nil {
			return
		}
		log = append(log, rec{x.at, in})
		for _, ev := range st.Events {
			evs1 = append(evs1, fmt.Sprintf("%d %s", ev.Seq, ev.Kind()))
		}
	}
	run(ShoeIn{})
	run(ShoeChanged{ShoeID: "S1"})
	run(BetsClosed{Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	for _, c := range []string{"Ts", "6d", "7c", "5h"} {
		run(CardDrawn{Card: card.MustParse(c)})
	}
	run(Decision{Seat: 2, Action: "hit"}) // refused: not in the log
	run(Decision{Seat: 1, Action: "stand"})
	run(CardDrawn{Card: card.MustParse("9s")})
	run(x.m.Timer().Fired())

	y := newMT(t)
	var evs2 []string
	for _, r := range log {
		st, err := y.m.Apply(r.at, r.in)
		require.NoError(t, err)
		for _, ev := range st.Events {
			evs2 = append(evs2, fmt.Sprintf("%d %s", ev.Seq, ev.Kind()))
		}
	}
	assert.Equal(t, evs1, evs2)
	assert.Equal(t, x.fingerprint(), y.fingerprint())
	assert.True(t, strings.HasPrefix(evs1[len(evs1)-1], "0 state"))
}
