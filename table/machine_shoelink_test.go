package table

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/card"
)

// The shoe's link as the reader reports it through the bridge.
var (
	shoeLost = DeviceAlarm{Source: "shoe", Code: "silent", Pauses: true,
		Message: "silent: shoe disconnected for over 3s (serialport: device hung up)"}
	shoeConnected = DeviceAlarm{Source: "shoe", Code: "connected", Message: "connected: Livetable SIM-1 serial SIM0001"}
	shoeAlive     = DeviceAlarm{Source: "shoe", Code: "alive", Message: "alive: shoe heard again"}
)

// TestShoeUnpluggedMidRound: a shoe unplugged (or mute) for longer than
// the silence timeout while a round is dealt. The table stops with an
// instruction that says what to do; resume is refused while the shoe is
// down (ErrShoeDown), since the round cannot go on without it; the
// cards pulled meanwhile (the device holds them and sends them at the
// replug) are held and go to the round on resume, once, in order; a void
// ends the round but keeps the table stopped until the shoe is back.
func TestShoeUnpluggedMidRound(t *testing.T) {
	tests := []machineCase{
		{"the loss pauses with an instruction", func(x *mt) {}, shoeLost, nil,
			func(t *testing.T, x *mt, st Step) {
				s := x.m.State()
				assert.True(t, s.Paused)
				assert.Equal(t, []PauseReason{PauseDevice}, s.PauseReasons)
				assert.Equal(t, "silent: shoe disconnected for over 3s (serialport: device hung up)", s.PauseReason)
				assert.Equal(t, "stop: shoe not connected: check its cable; the cards pulled meanwhile come when it is back; supervisor resumes then, or voids the round", s.Round.Next)
				alarmCoded(t, st, "shoe.silent")
			}},
		{"resume while the shoe is down is refused", func(x *mt) { x.must(shoeLost) },
			Supervisor{Command: "resume", By: "sup"}, ErrShoeDown, nil},
		{"resume after a supervisor's own pause is refused too", func(x *mt) {
			x.must(shoeLost, Supervisor{Command: "pause", By: "sup", Reason: "camera"})
		}, Supervisor{Command: "resume", By: "sup"}, ErrShoeDown, nil},
		{"a shoe that was never lost is not journaled when it connects", func(x *mt) {},
			shoeConnected, ErrShoeUp, nil},
		{"a shoe already back is not booked again", func(x *mt) { x.must(shoeLost, shoeConnected) },
			shoeAlive, ErrShoeUp, nil},
		{"the replug is an alarm that pauses nothing, and changes the instruction", func(x *mt) { x.must(shoeLost) },
			shoeConnected, nil,
			func(t *testing.T, x *mt, st Step) {
				a := alarmCoded(t, st, "shoe.connected")
				assert.False(t, a.Pauses)
				s := x.m.State()
				assert.True(t, s.Paused, "the supervisor resumes")
				assert.Equal(t, "stop: shoe connected again: supervisor checks the cards on the table and resumes", s.Round.Next)
				assert.Equal(t, []string{"shoe.silent", "shoe.connected"}, alarmCodes(s.Alarms))
			}},
		{"a mute shoe heard again is back too", func(x *mt) { x.must(shoeLost) }, shoeAlive, nil,
			func(t *testing.T, x *mt, st Step) {
				assert.Equal(t, "stop: shoe connected again: supervisor checks the cards on the table and resumes", x.m.State().Round.Next)
			}},
		{"the card pulled while unplugged comes at the replug, held, and goes to the round on resume", func(x *mt) {
			x.must(shoeLost, shoeConnected)
			heldCards(x, "5h")
			assert.Equal(x.t, "stop: shoe connected again: supervisor checks the cards on the table and resumes "+
				"(1 card pulled during the pause, 5h: it goes to the round on resume)", x.m.State().Round.Next)
			assert.Len(x.t, x.m.State().Round.Dealer.Cards, 1, "nothing reached the round while paused")
		}, Supervisor{Command: "resume", By: "sup"}, nil,
			func(t *testing.T, x *mt, st Step) {
				s := x.m.State()
				assert.False(t, s.Paused)
				assert.Equal(t, "wait: seat 1 to decide", s.Round.Next, "5h is the hole card")
				assert.Equal(t, 4, s.Shoe.Dealt, "each card once")
				assert.Empty(t, s.Alarms)
			}},
		{"a void ends the round and keeps the table stopped until the shoe is back", func(x *mt) {
			x.must(shoeLost)
			heldCards(x, "5h")
		}, Supervisor{Command: "void", By: "sup", Reason: "shoe gone"}, nil,
			func(t *testing.T, x *mt, st Step) {
				s := x.m.State()
				assert.True(t, s.Paused)
				assert.Equal(t, PhasePaused, s.Phase)
				assert.Empty(t, x.m.Timer().Name, "no round opens")
				assert.False(t, x.m.MidRound())
				assert.Equal(t, "stop: round voided: clear the cards; shoe not connected: check its cable; supervisor resumes once it is back", s.Round.Next,
					"the round is voided: the line no longer asks for a void")
				_, err := x.apply(Supervisor{Command: "resume", By: "sup"})
				require.ErrorIs(t, err, ErrShoeDown)
				assert.NotContains(t, err.Error(), "void the round")
				x.must(shoeConnected)
				assert.Equal(t, "stop: round voided: clear the cards; shoe connected again: supervisor resumes", x.m.State().Round.Next)
				x.must(Supervisor{Command: "resume", By: "sup"})
				assert.False(t, x.m.State().Paused)
				assert.Equal(t, PhaseSettled, x.m.State().Phase)
				x.fire()
				assert.Equal(t, PhaseBetting, x.m.State().Phase)
			}},
	}
	runMachineCases(t, tests, func(Input) bool { return true }, "")
}

// TestShoeUnpluggedBeforeTheDeal: the shoe is lost as the round opens;
// the whole first deal is pulled while it is unplugged and comes at the
// replug: the instruction lists the held cards, the resume deals them in
// order, each once.
func TestShoeUnpluggedBeforeTheDeal(t *testing.T) {
	x := newMT(t)
	x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"}, BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}}, shoeLost)
	heldCards(x, "Ts", "6d", "7c", "5h")
	_, err := x.apply(Supervisor{Command: "resume", By: "sup"})
	require.ErrorIs(t, err, ErrShoeDown, "the shoe is not back yet")
	x.must(shoeConnected)
	assert.Equal(t, "stop: shoe connected again: supervisor checks the cards on the table and resumes "+
		"(4 cards pulled during the pause, Ts 6d 7c 5h: on resume the round takes them in that order as far as it needs cards; any left are set aside)", x.m.State().Round.Next)
	x.must(Supervisor{Command: "resume", By: "sup"})
	s := x.m.State()
	assert.Empty(t, s.Alarms, "the round needed all four: none set aside")
	assert.Equal(t, "wait: seat 1 to decide", s.Round.Next)
	assert.Equal(t, []card.Card{card.MustParse("Ts"), card.MustParse("7c")}, s.Round.Seats[0].Hands[0].Cards)
	assert.Equal(t, 4, s.Shoe.Dealt)
	assert.Equal(t, 4, s.Shoe.Booked)
}

// TestShoeLinkReplays: the link is rebuilt by a replay of the same
// inputs, so a restart while the shoe is down still refuses resume.
func TestShoeLinkReplays(t *testing.T) {
	x := dealing(t)
	x.must(shoeLost)
	y := newMT(t)
	for _, in := range []Input{ShoeIn{}, ShoeChanged{ShoeID: "S1"},
		BetsClosed{ID: "b1", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}},
		CardDrawn{Card: card.MustParse("Ts")}, CardDrawn{Card: card.MustParse("6d")}, CardDrawn{Card: card.MustParse("7c")}, shoeLost} {
		y.must(in)
	}
	assert.Equal(t, x.fingerprint(), y.fingerprint())
	_, err := y.apply(Supervisor{Command: "resume", By: "sup"})
	require.ErrorIs(t, err, ErrShoeDown)
}

func alarmCodes(as []Alarm) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.Code)
	}
	return out
}

// TestHeldCardNamesItsRound: the alarm of a card pulled while the table is
// paused, and of one set aside after a void, carries the round in play,
// as every other event of the round does (a backend that follows a round
// by its id missed them: they carried none).
func TestHeldCardNamesItsRound(t *testing.T) {
	x := dealing(t)
	id := x.m.RoundID()
	require.NotEmpty(t, id)
	x.must(shoeLost)
	st := heldCards(x, "5h")[0]
	var found bool
	for _, ev := range st.Events {
		if a, ok := ev.Body.(Alarm); ok && a.Code == "card_while_paused" {
			found = true
			assert.Equal(t, id, ev.Round)
		}
	}
	require.True(t, found)
	x.must(Supervisor{Command: "void", By: "sup", Reason: "shoe gone"}, shoeConnected, Supervisor{Command: "resume", By: "sup"})
	st = heldCards(x, "9c")[0]
	found = false
	for _, ev := range st.Events {
		if a, ok := ev.Body.(Alarm); ok && a.Code == "card_after_void" {
			found = true
			assert.Equal(t, id, ev.Round)
		}
	}
	require.True(t, found)
}
