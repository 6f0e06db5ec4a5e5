package table

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/livetable/livetable/table/round"
)

// settledThenNext plays opening's round to its settlement and opens the
// next round (bets closed, two cards dealt): it returns the table and
// the two rounds' ids, the first settled, the second in play.
func settledThenNext(t *testing.T) (x *mt, first, second string) {
	t.Helper()
	x = opening(t)
	first = x.m.RoundID()
	x.cards("6d", "7c", "5h")
	x.must(Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d1"})
	x.cards("9s")
	require.Equal(t, PhaseSettled, x.m.State().Phase)
	fireTimer(t, x)
	require.Equal(t, PhaseBetting, x.m.State().Phase)
	x.must(BetsClosed{ID: "b2", Bets: []Bet{{Seat: 1, Player: "p1", Main: 1000}}})
	x.cards("Ts", "6d")
	second = x.m.RoundID()
	require.NotEqual(t, first, second)
	return x, first, second
}

// fireTimer fires the table's running timer (the settled round's pause
// before betting opens).
func fireTimer(t *testing.T, x *mt) {
	t.Helper()
	d := x.m.Timer()
	require.NotEmpty(t, d.Name, "a timer runs")
	x.at = d.At
	st, err := x.m.Apply(d.At, d.Fired())
	require.NoError(t, err)
	require.NoError(t, st.Fault)
}

// settledIn is whether evs settle a round (money moved or refunded).
func settledIn(evs []Event) bool {
	for _, ev := range evs {
		if ev.Kind() == "settled" {
			return true
		}
	}
	return false
}

// TestSupervisorNamesTheRound: from epochRoundFence a void or a correct
// naming a round (Supervisor.Round) is applied only to that round: one
// meant for a round that settled while it travelled (the console's click
// on the settled round, a signed void delayed within its window, a late
// tablectl) is refused (ErrWrongRound), the round in play and its money
// untouched. Without a round the command is judged as before.
func TestSupervisorNamesTheRound(t *testing.T) {
	tests := []struct {
		name    string
		run     func(t *testing.T) (x *mt, in Supervisor)
		refused bool
	}{
		{"void naming the round in play", func(t *testing.T) (*mt, Supervisor) {
			x, _, second := settledThenNext(t)
			return x, Supervisor{ID: "v", Command: "void", By: "sup", Round: second}
		}, false},
		{"void naming the previous round after it settled", func(t *testing.T) (*mt, Supervisor) {
			x, first, _ := settledThenNext(t)
			return x, Supervisor{ID: "v", Command: "void", By: "sup", Round: first}
		}, true},
		{"void naming no round voids the round in play, as before", func(t *testing.T) (*mt, Supervisor) {
			x, _, _ := settledThenNext(t)
			return x, Supervisor{ID: "v", Command: "void", By: "sup"}
		}, false},
		{"void naming the settled round while the table shows it settled", func(t *testing.T) (*mt, Supervisor) {
			x := opening(t)
			id := x.m.RoundID()
			x.cards("6d", "7c", "5h")
			x.must(Decision{Seat: 1, Player: "p1", Action: "stand", ID: "d1"})
			x.cards("9s")
			require.Equal(t, PhaseSettled, x.m.State().Phase)
			return x, Supervisor{ID: "v", Command: "void", By: "sup", Round: id}
		}, true},
		{"void naming a round while betting is open", func(t *testing.T) (*mt, Supervisor) {
			x := newMT(t)
			x.must(ShoeIn{}, ShoeChanged{ShoeID: "S1"})
			require.Equal(t, PhaseBetting, x.m.State().Phase)
			return x, Supervisor{ID: "v", Command: "void", By: "sup", Round: "#10:00:04"}
		}, true},
		{"correct naming the round in play", func(t *testing.T) (*mt, Supervisor) {
			x := opening(t)
			x.must(misreadN(2))
			c := correctWith("6d")
			c.ID, c.Round = "c", x.m.RoundID()
			return x, c
		}, false},
		{"correct naming another round", func(t *testing.T) (*mt, Supervisor) {
			x := opening(t)
			x.must(misreadN(2))
			c := correctWith("6d")
			c.ID, c.Round = "c", "#09:59:00"
			return x, c
		}, true},
		{"correct naming no round, as before", func(t *testing.T) (*mt, Supervisor) {
			x := opening(t)
			x.must(misreadN(2))
			c := correctWith("6d")
			c.ID = "c"
			return x, c
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, in := tt.run(t)
			before, seq, rid := x.fingerprint(), x.m.Seq(), x.m.RoundID()
			st, err := x.apply(in)
			if tt.refused {
				require.ErrorIs(t, err, ErrWrongRound)
				assert.Equal(t, "wrong_round", RefusalCode(err))
				assert.Empty(t, st.Events, "a refusal publishes nothing")
				assert.Equal(t, before, x.fingerprint(), "nothing changed")
				assert.Equal(t, seq, x.m.Seq())
				assert.Equal(t, rid, x.m.RoundID())
				return
			}
			require.NoError(t, err)
			require.NoError(t, st.Fault)
			if in.Command == "void" {
				assert.True(t, settledIn(st.Events), "the round in play is voided and refunded")
				assert.Equal(t, round.PhaseSettled, x.m.rnd.Phase())
			} else {
				assert.Zero(t, x.m.State().MisreadsPending, "the card is corrected")
			}
		})
	}
}

// TestEpoch8LateVoidReplays: testdata/epoch8-late-void is a journal the
// build before epochRoundFence (af54164, rules epoch 8) wrote, and the
// events it published replaying it: round #10:00:04 settles, round
// #10:00:15 is dealt, and a void a supervisor meant for the first round
// arrives (it named no round: that build had none to name) and voids the
// second. It replays into the same bytes under this build, labelled 8 or
// 9 (a void naming no round is judged as before). The same void naming
// the settled round is applied under epoch 8 (the older judgement) and
// refused under this epoch, the round in play untouched.
func TestEpoch8LateVoidReplays(t *testing.T) {
	const name = "epoch8-late-void"
	want := readFixtureLines(t, name, "events.jsonl")
	for _, epoch := range []int{epochSeenFence, CurrentRulesEpoch} {
		assert.Equal(t, want, replayedEvents(t, fixtureJSONL(t, name, epoch)), "epoch %d", epoch)
	}
	const voidAt = 16 // the void's line in journal.jsonl
	for _, tt := range []struct {
		epoch int
		want  error
	}{{epochSeenFence, nil}, {CurrentRulesEpoch, ErrWrongRound}} {
		j := fixtureJSONL(t, name, tt.epoch)
		in, err := DecodeInput(j.recs[voidAt])
		require.NoError(t, err)
		void := in.(Supervisor)
		require.Equal(t, "void", void.Command)
		require.Empty(t, void.Round, "the epoch-8 build named no round")
		j.recs, j.kinds, j.at = j.recs[:voidAt], j.kinds[:voidAt], j.at[:voidAt]
		m, _, err := replayed(t, j)
		require.NoError(t, err)
		require.Equal(t, "#10:00:15", m.RoundID())
		void.Round = "#10:00:04" // the round the supervisor looked at
		st, err := m.Apply(time.Date(2026, 11, 22, 10, 0, 20, 0, time.UTC), void)
		if tt.want != nil {
			require.ErrorIs(t, err, tt.want, "epoch %d", tt.epoch)
			assert.Empty(t, st.Events)
			assert.Equal(t, PhaseDealing, m.State().Phase, "round #10:00:15 plays on")
			continue
		}
		require.NoError(t, err, "epoch %d", tt.epoch)
		assert.True(t, settledIn(st.Events), "epoch 8 voids the round in play, as that build did")
	}
}

// TestSupervisorRoundEncoding: a supervisor command naming no round
// encodes (and hashes) as before the field, so the command ids of older
// journals keep their hashes; one naming a round carries it.
func TestSupervisorRoundEncoding(t *testing.T) {
	in := Supervisor{Command: "void", By: "sup", Reason: "wrong payout on the last round", ID: "v1"}
	b, err := EncodeInput(in)
	require.NoError(t, err)
	lines := readFixtureLines(t, "epoch8-late-void", "journal.jsonl")
	var e struct {
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[16]), &e))
	assert.JSONEq(t, string(e.Data), string(b))
	assert.Equal(t, string(e.Data), string(b), "the epoch-8 build's bytes")
	named := in
	named.Round = "#10:00:04"
	assert.NotEqual(t, commandHash(in), commandHash(named), "the round is part of the command's body")
	b, err = EncodeInput(named)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"round":"#10:00:04"`)
}
