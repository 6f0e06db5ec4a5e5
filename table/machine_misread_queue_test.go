package table

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// misreadN is the shoe's report of card frame n dealt unread.
func misreadN(n int) DeviceAlarm {
	return DeviceAlarm{Source: "shoe", Code: "misread", Message: fmt.Sprintf("misread #%02d: card misread", n), Pauses: true}
}

// opening opens a shoe and a round of 000 with seat 1 dealt Ts: the next
// cards are the dealer's up card, seat 1's second card, the hole card.
func opening(t *testing.T) *mt {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("Ts")
	require.Equal(t, "card to dealer", x.m.State().Round.Next)
	return x
}

func correctWith(c string) Supervisor {
	return Supervisor{Command: "correct", By: "sup", Card: card.MustParse(c)}
}

// roundCards is the round's cards as the state shows them: seat 1's, then
// the dealer's (the hole card hidden).
func roundCards(x *mt) (seat, dealer []card.Card) {
	r := x.m.State().Round
	if len(r.Seats) > 0 {
		seat = r.Seats[0].Cards
	}
	return seat, r.Dealer.Cards
}

func shoeOutClean(t *testing.T, x *mt, returned int) {
	t.Helper()
	st, err := x.apply(ShoeOut{Returned: returned})
	require.NoError(t, err)
	require.NoError(t, st.Fault)
	assert.Empty(t, alarmsOf(st), "the count at shoe out holds")
}

// TestMisreadQueue: the cards the shoe deals unread in one pause keep
// their place in deal order (epochMisreadQueue); each correct fills the
// oldest, the pause stays while any waits, a resume is refused meanwhile,
// and the cards read in between go to the round in the order drawn. Under
// epoch 1 the second unread card was counted and never corrected: the one
// correct resumed the table and the round took the shoe's next card in
// its place.
func TestMisreadQueue(t *testing.T) {
	resume := Supervisor{Command: "resume", By: "sup"}
	tests := []struct {
		name string
		run  func(t *testing.T, x *mt)
	}{
		{"two misreads in one pause are corrected oldest first", func(t *testing.T, x *mt) {
			x.must(misreadN(5), misreadN(6))
			s := x.m.State()
			assert.True(t, s.Paused)
			assert.Equal(t, 2, s.MisreadsPending)
			assert.Equal(t, "misread #05: card misread", s.Misread, "the next to correct is the oldest")
			assert.Equal(t, "stop: 2 cards not read (next to correct: misread #05: card misread): supervisor corrects them in the order the dealer drew them, or voids the round", s.Round.Next)
			_, err := x.apply(resume)
			require.ErrorIs(t, err, ErrMisreadPending)
			assert.Contains(t, err.Error(), "2 cards, the next to correct: misread #05")

			x.must(correctWith("6d"))
			s = x.m.State()
			assert.True(t, s.Paused, "one card still waits")
			assert.Equal(t, []PauseReason{PauseMisread}, s.PauseReasons)
			assert.Equal(t, 1, s.MisreadsPending)
			assert.Equal(t, "misread #06: card misread", s.Misread)
			assert.Equal(t, "misread #06: card misread", s.PauseReason, "the pause names the card still waiting, not the one corrected")
			assert.Equal(t, "stop: card not read (misread #06: card misread): supervisor corrects it or voids the round", s.Round.Next)
			_, d := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("6d")}, d, "the first correction is the dealer's up card")
			assert.Empty(t, x.m.Timer().Name)
			_, err = x.apply(resume)
			require.ErrorIs(t, err, ErrMisreadPending)

			x.must(correctWith("7c"))
			s = x.m.State()
			assert.False(t, s.Paused)
			assert.Zero(t, s.MisreadsPending)
			seat, _ := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("7c")}, seat)
			assert.Equal(t, "hole card to dealer", s.Round.Next)
			assert.Equal(t, 3, s.Shoe.Dealt)
			assert.Zero(t, x.m.shoe.unread)
		}},
		{"a card read after a misread waits for the correction", func(t *testing.T, x *mt) {
			x.must(misreadN(5))
			x.cards("7c") // held
			assert.Equal(t, 1, x.m.State().MisreadsPending)
			assert.Equal(t, "stop: card not read (misread #05: card misread): supervisor corrects it or voids the round (1 card pulled during the pause, 7c: it goes to the round on resume)", x.m.State().Round.Next)
			x.must(correctWith("6d"))
			s := x.m.State()
			assert.False(t, s.Paused)
			seat, d := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("6d")}, d)
			assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("7c")}, seat)
			assert.Equal(t, "hole card to dealer", s.Round.Next)
		}},
		{"a card held before the misread keeps its place", func(t *testing.T, x *mt) {
			x.must(Supervisor{Command: "pause", By: "sup", Reason: "camera"})
			x.cards("6d") // held: the dealer's up card
			x.must(misreadN(6), correctWith("7c"))
			s := x.m.State()
			assert.True(t, s.Paused, "the supervisor's own pause stays")
			assert.Equal(t, []PauseReason{PauseSupervisor}, s.PauseReasons)
			assert.Zero(t, s.MisreadsPending)
			_, d := roundCards(x)
			assert.Empty(t, d, "the correction waits behind the card drawn before it")
			x.must(resume)
			seat, d := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("6d")}, d)
			assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("7c")}, seat)
		}},
		{"misread, good read, misread", func(t *testing.T, x *mt) {
			x.must(misreadN(5))
			x.cards("7c")
			x.must(misreadN(7))
			assert.Equal(t, 2, x.m.State().MisreadsPending)
			assert.Contains(t, x.m.State().Round.Next, "stop: 2 cards not read (next to correct: misread #05")
			x.must(correctWith("6d"))
			assert.True(t, x.m.State().Paused)
			assert.Equal(t, "misread #07: card misread", x.m.State().Misread)
			x.must(correctWith("5h"))
			s := x.m.State()
			assert.False(t, s.Paused)
			seat, d := roundCards(x)
			assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("7c")}, seat)
			assert.Equal(t, []card.Card{card.MustParse("6d")}, d)
			assert.Equal(t, 1, x.m.State().Round.Dealer.Hidden, "and the hole card")
			assert.Equal(t, "wait: seat 1 to decide", s.Round.Next)
			assert.Equal(t, TimerDecision, x.m.Timer().Name)
			assert.Equal(t, 4, s.Shoe.Dealt)
		}},
		{"void with two pending: both stay counted, the pause goes", func(t *testing.T, x *mt) {
			x.must(misreadN(5), misreadN(6), Supervisor{Command: "void", By: "sup", Reason: "two cards unread"})
			s := x.m.State()
			assert.False(t, s.Paused)
			assert.Zero(t, s.MisreadsPending)
			assert.Equal(t, "clear the cards: round voided, next round", s.Round.Next)
			_, err := x.apply(correctWith("6d"))
			require.ErrorIs(t, err, ErrNoMisread)
			assert.Contains(t, err.Error(), "was voided: no card waits for a correction", "a correct that lost the race to a void says so")
			shoeOutClean(t, x, 416-1-2)
		}},
		{"a correction the table stays paused after runs no clock", func(t *testing.T, x *mt) {
			x.cards("6d", "7c") // the hole card next
			x.must(misreadN(7), Supervisor{Command: "pause", By: "sup", Reason: "camera"}, correctWith("5h"))
			s := x.m.State()
			assert.True(t, s.Paused)
			assert.Equal(t, PhasePaused, s.Phase)
			assert.Equal(t, "wait: seat 1 to decide", x.m.rnd.Next())
			assert.Empty(t, x.m.Timer().Name, "no decision timer while paused (epoch 1 ran it)")
			x.must(resume)
			require.Equal(t, TimerDecision, x.m.Timer().Name)
			assert.Equal(t, x.at.Add(x.m.cfg.Rules.DecisionTime), x.m.Timer().At, "the player's full time")
		}},
		{"a second unread card the round does not need is set aside", func(t *testing.T, x *mt) {
			x.cards("6d", "7c") // the hole card next
			x.must(misreadN(7), misreadN(8))
			assert.Equal(t, 2, x.m.State().MisreadsPending)
			st, err := x.apply(correctWith("5h"))
			require.NoError(t, err)
			a := alarmCoded(t, st, "card_set_aside")
			assert.Contains(t, a.Message, "misread #08")
			assert.False(t, a.Pauses)
			s := x.m.State()
			assert.False(t, s.Paused, "nothing left to correct")
			require.Len(t, s.Alarms, 1, "listed for the supervisor after the resume")
			assert.Equal(t, "card_set_aside", s.Alarms[0].Code)
			assert.Equal(t, "wait: seat 1 to decide", s.Round.Next)
			shoeOutClean(t, x, 416-4-1)
		}},
		{"a correction of a card the shoe cannot hold is refused with the reason", func(t *testing.T, x *mt) {
			x.must(misreadN(5), misreadN(6))
			x.m.shoe.comp = card.NewComposition(0) // every card dealt: nothing fits
			before := x.fingerprint()
			_, err := x.apply(correctWith("As"))
			require.ErrorIs(t, err, errIllegal)
			assert.Contains(t, err.Error(), `As cannot be the card on the table: over count (shoe "S1" has no As left): nothing changed`)
			assert.Equal(t, before, x.fingerprint(), "nothing changed")
		}},
		{"the shoe goes out during the pause: the correction is not booked to the next shoe", func(t *testing.T, x *mt) {
			x.cards("6d", "7c")
			x.must(misreadN(7))
			shoeOutClean(t, x, 416-3-1)
			x.must(ShoeIn{}, ShoeChanged{ShoeID: "S2"})
			assert.Equal(t, 1, x.m.State().MisreadsPending)
			x.must(correctWith("5h"))
			s := x.m.State()
			assert.False(t, s.Paused)
			assert.Zero(t, s.Shoe.Booked, "S2 has dealt nothing")
			shoeOutClean(t, x, 416)
		}},
		{"the cut card during the pause: the round ends, then the shoe changes", func(t *testing.T, x *mt) {
			x.cards("6d", "7c")
			x.must(misreadN(7), CutCardSeen{Source: "shoe"}, correctWith("5h"),
				Decision{Seat: 1, Player: "p1", Action: "stand"})
			x.cards("9s") // the dealer's 6+5+9 = 20
			assert.Equal(t, PhaseClosed, x.m.State().Phase)
			assert.Equal(t, "change shoe", x.m.State().Round.Next)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, opening(t)) })
	}
}

// TestMisreadOfTheBurn: game 003 burns the first card of a new shoe.
// The burn card dealt unread waits for its correction, before bets close
// as after; under epoch 1 a misread while bets were open left the burn
// owed, and the first card of the round was burned.
func TestMisreadOfTheBurn(t *testing.T) {
	x := newGameMT(t, "003")
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, misreadN(1))
	s := x.m.State()
	require.True(t, s.Paused)
	assert.Equal(t, 1, s.MisreadsPending)
	_, err := x.apply(Supervisor{Command: "resume", By: "sup"})
	require.ErrorIs(t, err, ErrMisreadPending)
	st, err := x.apply(correctWith("9s"))
	require.NoError(t, err)
	assert.Equal(t, []card.Card{card.MustParse("9s")}, burned(st))
	s = x.m.State()
	assert.False(t, s.Paused)
	assert.Zero(t, s.Shoe.BurnPending)
	assert.Equal(t, PhaseBetting, s.Phase)
	x.must(BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("Jh")
	assert.Equal(t, []card.Card{card.MustParse("Jh")}, x.m.State().Round.Seats[0].Cards, "the round's first card is not burned")
}

// TestOldShoesCardIsNotBurned: 003, a card of the round dealt unread,
// then the shoe changes before its correction: the new shoe's burn takes
// the new shoe's first card, and the correction goes to the round.
func TestOldShoesCardIsNotBurned(t *testing.T) {
	x := newGameMT(t, "003")
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("9s") // the burn
	x.must(misreadN(2))
	shoeOutClean(t, x, 416-1-1)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S2"})
	require.Equal(t, 1, x.m.State().Shoe.BurnPending)
	st, err := x.apply(correctWith("Jh"))
	require.NoError(t, err)
	assert.Empty(t, burned(st))
	assert.Equal(t, []card.Card{card.MustParse("Jh")}, x.m.State().Round.Seats[0].Cards)
	assert.Equal(t, 1, x.m.State().Shoe.BurnPending, "S2's burn is still owed")
}

// TestMisreadQueueReplays: a restart mid-pause (a journal replay, the
// machine rebuilt from nothing) finds the same cards waiting, in the
// same order, and a journal an epoch-1 build left with a misread pending
// carries it into the queue when it reaches epoch 2.
func TestMisreadQueueReplays(t *testing.T) {
	start := []Input{ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}, CardDrawn{Card: card.MustParse("Ts")}}
	t.Run("epoch 2 throughout", func(t *testing.T) {
		ins := append([]Input{RulesEpoch{Epoch: CurrentRulesEpoch}}, start...)
		ins = append(ins, misreadN(5), CardDrawn{Card: card.MustParse("7c")}, misreadN(7), correctWith("6d"))
		live := newMT(t)
		live.must(ins...)
		m, _, err := replayed(t, journalOf(t, ins...))
		require.NoError(t, err)
		assert.Equal(t, live.m.State(), m.State())
		assert.Equal(t, live.m.held, m.held)
		y := &mt{t: t, m: m, at: live.at}
		y.must(correctWith("5h"))
		seat, d := roundCards(y)
		assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("7c")}, seat)
		assert.Equal(t, []card.Card{card.MustParse("6d")}, d)
		assert.Equal(t, 1, y.m.State().Round.Dealer.Hidden, "and the hole card")
	})
	t.Run("a misread pending at the upgrade", func(t *testing.T) {
		// Journaled by an epoch-1 build (a misread it kept as the one
		// pending), then this build's record, then a second misread.
		ins := append(append([]Input{RulesEpoch{Epoch: epochPauseFlow}}, start...), misreadN(5), RulesEpoch{Epoch: CurrentRulesEpoch}, misreadN(6))
		m, _, err := replayed(t, journalOf(t, ins...))
		require.NoError(t, err)
		require.Equal(t, CurrentRulesEpoch, m.Epoch())
		assert.Equal(t, 2, m.State().MisreadsPending, "the older rules' misread, then the new one")
		assert.Equal(t, "misread #05: card misread", m.State().Misread)
		_, err = m.Apply(ckEpoch.Add(time.Duration(len(ins)+1)*time.Second), Supervisor{Command: "resume", By: "sup"})
		require.ErrorIs(t, err, ErrMisreadPending, "the older rules' card dealt unread still refuses a resume")
		y := &mt{t: t, m: m, at: ckEpoch.Add(time.Duration(len(ins)+1) * time.Second)}
		y.must(correctWith("6d"), correctWith("7c"))
		seat, d := roundCards(y)
		assert.Equal(t, []card.Card{card.MustParse("6d")}, d)
		assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("7c")}, seat)
		assert.False(t, y.m.State().Paused)
	})
	t.Run("under epoch 1 the second was never corrected", func(t *testing.T) {
		ins := append([]Input{RulesEpoch{Epoch: epochPauseFlow}}, start...)
		ins = append(ins, misreadN(5), misreadN(6), correctWith("6d"))
		m, _, err := replayed(t, journalOf(t, ins...))
		require.NoError(t, err)
		assert.False(t, m.paused(), "epoch 1 resumed at the one correction")
		assert.Equal(t, 1, m.shoe.unread, "and counted the second unread")
	})
	t.Run("pending at a void, counted through the next checkpoint", func(t *testing.T) {
		x := opening(t)
		x.must(misreadN(5), misreadN(6), Supervisor{Command: "void", By: "sup", Reason: "unread"})
		x.fire() // the settlement's pause: betting opens, a checkpoint
		require.Equal(t, PhaseBetting, x.m.State().Phase)
		require.Equal(t, 2, x.m.Checkpoint().Shoe.Unread)
		shoeOutClean(t, x.restart(), 416-1-2)
	})
}

// TestBurnInstruction: with the burn of a new shoe owed (003), the
// dealer's instruction is to burn, also once bets have closed; it said
// "card to seat 1" then, and the card the dealer put at seat 1 was
// burned.
func TestBurnInstruction(t *testing.T) {
	x := newGameMT(t, "003")
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	assert.Equal(t, "burn one card", x.m.State().Round.Next)
	x.cards("9s")
	assert.Zero(t, x.m.State().Shoe.BurnPending)
	assert.Equal(t, "card to seat 1", x.m.State().Round.Next)
}

// TestRefusedBeforeUnread: a card the integrity book refuses (a card of
// no shoe, a foreign card) and then a card dealt unread, in one pause.
// The correct goes to the unread card: the refused one may be no card
// the supervisor can name, and a resume sets it aside once nothing
// unread waits. (The oldest-first rule made the supervisor name a card
// for the foreign one, or void.)
func TestRefusedBeforeUnread(t *testing.T) {
	x := opening(t)
	for x.m.shoe.comp.Count(card.MustParse("Kd")) > 0 {
		require.NoError(t, x.m.shoe.comp.Take(card.MustParse("Kd")))
	}
	st, err := x.apply(CardDrawn{Card: card.MustParse("Kd")}) // a ninth K♦: refused
	require.NoError(t, err)
	require.ErrorIs(t, st.Fault, ErrIntegrity)
	x.must(misreadN(6))
	s := x.m.State()
	assert.Equal(t, 2, s.MisreadsPending)
	assert.Equal(t, "misread #06: card misread", s.Misread, "the next correct goes to the card dealt unread")
	_, err = x.apply(Supervisor{Command: "resume", By: "sup"})
	require.ErrorIs(t, err, ErrMisreadPending)

	x.must(correctWith("6d"))
	s = x.m.State()
	assert.True(t, s.Paused)
	assert.Equal(t, 1, s.MisreadsPending, "the refused card waits, for a correction or a resume")
	_, d := roundCards(x)
	assert.Empty(t, d, "the correction waits behind the refused card")
	x.must(Supervisor{Command: "resume", By: "sup"})
	_, d = roundCards(x)
	assert.Equal(t, []card.Card{card.MustParse("6d")}, d, "the refused card set aside, the corrected one the dealer's")
	assert.False(t, x.m.State().Paused)
}

// TestMisreadQueueRefusals: with two cards dealt unread in one pause, a
// resume and a correction that cannot be are refused, say why and change
// nothing (runMachineCases compares the whole machine before and after).
func TestMisreadQueueRefusals(t *testing.T) {
	two := func(x *mt) { x.must(misreadN(7), misreadN(8)) }
	t.Run("resume", func(t *testing.T) {
		runMachineCases(t, []machineCase{
			{"resume with two waiting", two, Supervisor{Command: "resume", By: "sup"}, ErrMisreadPending, nil},
			{"resume with two waiting under a supervisor's pause too", func(x *mt) {
				two(x)
				x.must(Supervisor{Command: "pause", By: "sup", Reason: "camera"})
			}, Supervisor{Command: "resume", By: "sup"}, ErrMisreadPending, nil},
		}, nil, "(2 cards, the next to correct: misread #07: card misread): correct them with the cards on the table, in the order the dealer drew them, or void the round")
	})
	t.Run("correct", func(t *testing.T) {
		runMachineCases(t, []machineCase{
			{"a card the shoe has no more of", func(x *mt) {
				two(x)
				x.m.shoe.comp = card.NewComposition(0)
			}, correctWith("Qh"), errIllegal, nil},
		}, nil, `Qh cannot be the card on the table: over count (shoe "S1" has no Qh left): nothing changed`)
		runMachineCases(t, []machineCase{
			{"no card", two, Supervisor{Command: "correct", By: "sup"}, errIllegal, nil},
		}, nil, "correct needs a card")
	})
}
